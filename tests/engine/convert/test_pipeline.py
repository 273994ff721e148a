"""The model-build pipeline end to end on the tiny checkpoint, ONNX-vs-PyTorch numerics, and clear errors."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from engine.errors import BuildError, CheckpointError

pytestmark = pytest.mark.torch
pytest.importorskip("torch")


@pytest.fixture(scope="module")
def built(tmp_path_factory, checkpoint_dir):
    from engine.convert.pipeline import build_bundle
    from tests.conftest import FIXTURE_DIR

    out = tmp_path_factory.mktemp("pipeline") / "bundle"
    manifest = build_bundle(
        str(checkpoint_dir), out, eval_tsv=FIXTURE_DIR / "eval.tsv", eval_limit=16, quiet=True, model_id="tiny"
    )
    return out, manifest


def test_pipeline_writes_a_verified_bundle(built):
    from engine.manifest import verify_bundle

    out, _ = built
    assert verify_bundle(out).model_id == "tiny"
    for rel in ("tokenizer.json", "validation.json", "MODEL_LICENSE.txt", "fp32/decoder.onnx", "int8/embedding.bin"):
        assert (out / rel).is_file(), rel
    report = json.loads((out / "validation.json").read_text(encoding="utf-8"))
    assert report["passed"] and report["sentences"] == 16
    assert report["fp32_vs_pytorch"]["greedy"]["rate"] == 1.0
    assert report["fp32_vs_pytorch"]["beam4"]["rate"] == 1.0
    assert report["scores"]["fp32"]["bleu"] == report["scores"]["pytorch"]["bleu"] > 50
    assert "CC-BY-4.0" in (out / "MODEL_LICENSE.txt").read_text(encoding="utf-8")


def test_embedding_is_stored_once_per_precision(built):
    """Only embedding.bin holds the vocabulary matrix: the decoder's output projection reads it from there, and no
    graph or weights file carries a copy of its own (the plain export stores it three times)."""
    import onnx

    out, manifest = built
    cfg = manifest["config"]
    table = cfg["vocab_size"] * cfg["d_model"]
    for precision, bytes_per in (("fp32", 4), ("int8", 1)):
        embedding = out / precision / "embedding.bin"
        assert embedding.stat().st_size >= table * bytes_per
        files_with_the_table = []
        for graph in ("encoder", "decoder"):
            model = onnx.load(str(out / precision / f"{graph}.onnx"), load_external_data=False)
            for init in model.graph.initializer:
                if np.prod(init.dims) < table:
                    continue
                assert init.data_location == onnx.TensorProto.EXTERNAL, f"{precision}/{graph}: {init.name} inline"
                location = {e.key: e.value for e in init.external_data}["location"]
                files_with_the_table.append((graph, location))
        assert files_with_the_table == [("decoder", "embedding.bin")], precision


def test_int8_graphs_are_really_quantized(built):
    import onnx

    out, _ = built
    for graph in ("encoder", "decoder"):
        ops = [n.op_type for n in onnx.load(str(out / "int8" / f"{graph}.onnx"), load_external_data=False).graph.node]
        assert ops.count("MatMulInteger") >= 4, graph
        assert "MatMul" not in ops, graph  # every weight MatMul became integer arithmetic
    dec = onnx.load(str(out / "int8" / "decoder.onnx"), load_external_data=False)
    head = [n for n in dec.graph.node if n.op_type == "MatMulNBits"]
    assert len(head) == 1 and {a.name: a.i for a in head[0].attribute}["bits"] == 8


def test_onnx_fp32_logits_match_pytorch(built, checkpoint_dir):
    import torch
    from transformers import MarianMTModel, MarianTokenizer

    from engine.manifest import load_manifest
    from engine.onnx_model import OnnxMarian

    out, _ = built
    tok = MarianTokenizer.from_pretrained(str(checkpoint_dir))
    model = MarianMTModel.from_pretrained(str(checkpoint_dir)).eval()
    onnx_model = OnnxMarian(load_manifest(out), "fp32", threads=1)
    texts = [">>cmn_Hans<< Where is the train station?", ">>cmn_Hant<< Thank you very much for the help."]
    enc = tok(texts, return_tensors="pt", padding=True)
    prefix = [[tok.pad_token_id, 10, 20, 30], [tok.pad_token_id, 40, 50, 60]]
    with torch.no_grad():
        expected = model(**enc, decoder_input_ids=torch.tensor(prefix)).logits.numpy()
    state = onnx_model.encode(enc["input_ids"].numpy(), enc["attention_mask"].numpy())
    run = onnx_model.start(state, max_len=8)
    for step in range(4):
        logits = run.step(np.array([p[step] for p in prefix]))
        np.testing.assert_allclose(logits, expected[:, step], rtol=1e-4, atol=1e-4)


def test_missing_checkpoint_file_is_a_clear_error(tmp_path, checkpoint_dir):
    from engine.convert.checkpoint import resolve_checkpoint

    broken = tmp_path / "ckpt"
    shutil.copytree(checkpoint_dir, broken)
    (broken / "target.spm").unlink()
    with pytest.raises(CheckpointError, match=r"missing target\.spm"):
        resolve_checkpoint(str(broken))
    (broken / "model.safetensors").unlink()
    with pytest.raises(CheckpointError, match=r"target\.spm, model\.safetensors or pytorch_model\.bin"):
        resolve_checkpoint(str(broken))


def test_offline_hub_id_is_a_clear_error(monkeypatch, tmp_path):
    from engine.convert.checkpoint import resolve_checkpoint

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    with pytest.raises(CheckpointError, match="cannot download"):
        resolve_checkpoint("Helsinki-NLP/opus-mt-en-zh")
    with pytest.raises(CheckpointError, match="no such directory"):
        resolve_checkpoint("./not/here")


def test_refuses_to_overwrite_and_fails_closed(tmp_path, checkpoint_dir):
    from engine.convert.pipeline import build_bundle
    from tests.conftest import FIXTURE_DIR

    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "keep.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(BuildError, match="not empty"):
        build_bundle(str(checkpoint_dir), occupied, quiet=True)
    assert (occupied / "keep.txt").read_text(encoding="utf-8") == "mine"
    # A margin INT8 cannot meet (it must *gain* 100 BLEU) fails the build, and leaves no bundle behind.
    out = tmp_path / "never"
    with pytest.raises(BuildError, match="INT8 loses"):
        build_bundle(
            str(checkpoint_dir), out, eval_tsv=FIXTURE_DIR / "eval.tsv", eval_limit=8, bleu_margin=-100, quiet=True
        )
    assert not out.exists()


def test_eval_tsv_formats(tmp_path):
    from engine.convert.validate import read_eval_tsv

    plain = tmp_path / "plain.tsv"
    plain.write_text("Hello.\t你好。\nBye.\t再见。\n", encoding="utf-8")
    assert read_eval_tsv(plain).tags == ["cmn_Hans", "cmn_Hans"]
    tatoeba = tmp_path / "tatoeba.tsv"
    tatoeba.write_text("eng\tcmn_Hant\tHello.\t你好。\n", encoding="utf-8")
    got = read_eval_tsv(tatoeba)
    assert got.tags == ["cmn_Hant"] and got.sources == ["Hello."] and got.references == ["你好。"]
    bad = tmp_path / "bad.tsv"
    bad.write_text("only one column\n", encoding="utf-8")
    with pytest.raises(BuildError, match="expected 2 columns"):
        read_eval_tsv(bad)


def test_offline_build_falls_back_to_builtin_sentences():
    from engine.convert.validate import tatoeba_or_builtin

    chosen = tatoeba_or_builtin(limit=10, timeout=1)
    assert chosen.name == "builtin" and chosen.references is None and len(chosen.sources) == 10
