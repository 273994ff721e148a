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
    from engine.bundle.manifest import verify_bundle

    out, manifest = built
    assert (manifest["format_version"], manifest["family"]) == (5, "marian")  # format 5: the family it names
    assert verify_bundle(out).model_id == "tiny" and verify_bundle(out).family == "marian"
    for rel in ("tokenizer.json", "validation.json", "MODEL_LICENSE.txt", "fp32/decoder.onnx", "int8/embedding.bin"):
        assert (out / rel).is_file(), rel
    report = json.loads((out / "validation.json").read_text(encoding="utf-8"))
    assert report["passed"] and report["sentences"] == 16
    assert report["fp32_vs_pytorch"]["greedy"]["rate"] == 1.0
    assert report["fp32_vs_pytorch"]["beam4"]["rate"] == 1.0
    assert report["scores"]["fp32"]["bleu"] == report["scores"]["pytorch"]["bleu"] > 50
    assert report["bleu_tokenize"] == "zh" and report["direction"] == "en-zh"  # Chinese target: per character
    # a local folder that is no Helsinki-NLP opus-mt id, with no licence on its card: said so, not credited to OPUS
    assert "License: unknown licence: check the model card" in (out / "MODEL_LICENSE.txt").read_text(encoding="utf-8")


def test_languages_come_from_the_checkpoint(built):
    """en→zh: tokenizer_config says eng→zho; every target token of the vocabulary Qiao can name is a variant (the
    two it offered before first, so settings and --variant hans/hant mean what they did)."""
    _, manifest = built
    languages = manifest["languages"]
    assert (languages["source"]["code"], languages["target"]["code"]) == ("en", "zh")
    assert [(v["key"], v["token"], v["name"]) for v in languages["variants"]] == [
        ("hans", ">>cmn_Hans<<", "Simplified"),
        ("hant", ">>cmn_Hant<<", "Traditional"),
        ("cmn", ">>cmn<<", "Mandarin"),
        ("yue_hans", ">>yue_Hans<<", "Cantonese (Simplified)"),
        ("yue_hant", ">>yue_Hant<<", "Cantonese (Traditional)"),
        ("zho_hans", ">>zho_Hans<<", "Chinese (Simplified)"),
    ]
    assert languages["default_variant"] == "hans" and languages["joiner"] == "" and languages["segmenter"] == "en"
    assert manifest["validation"]["bleu_tokenize"] == "zh"
    assert manifest["model"]["attribution"].startswith("Translation model: tiny, licence unknown")


@pytest.fixture(scope="module")
def built_zh_en(tmp_path_factory, zh_en_checkpoint_dir):
    from engine.convert.pipeline import build_bundle
    from tests.conftest import ZH_EN_FIXTURE_DIR

    out = tmp_path_factory.mktemp("pipeline-zh-en") / "bundle"
    manifest = build_bundle(
        str(zh_en_checkpoint_dir), out, eval_tsv=ZH_EN_FIXTURE_DIR / "eval.tsv", eval_limit=16, quiet=True
    )
    return out, manifest


def test_zh_en_checkpoint_builds_a_zh_en_bundle(built_zh_en):
    """zho→eng in tokenizer_config, no language tokens in the vocabulary: no variants, English joiner, BLEU with
    sacrebleu's 13a (word) tokenisation, no >>tag<< on the eval rows."""
    from engine.bundle.manifest import verify_bundle

    out, manifest = built_zh_en
    assert manifest["languages"] == {
        "source": {"code": "zh", "name": "Chinese", "script": "han"},
        "target": {"code": "en", "name": "English", "script": "latin"},
        "variants": [],
        "default_variant": None,
        "joiner": " ",
        "segmenter": "zh",
        "self_test": "非常感谢。",
    }
    assert verify_bundle(out).pair.key == "zh-en"
    report = json.loads((out / "validation.json").read_text(encoding="utf-8"))
    assert report["passed"] and report["direction"] == "zh-en" and report["bleu_tokenize"] == "13a"
    assert report["fp32_vs_pytorch"]["greedy"]["rate"] == report["fp32_vs_pytorch"]["beam4"]["rate"] == 1.0
    assert report["scores"]["fp32"]["bleu"] > 80
    assert (
        report["samples"][0]["source"] == "大家早上好！" and report["samples"][0]["fp32"] == "Good morning, everyone!"
    )
    license_text = (out / "MODEL_LICENSE.txt").read_text(encoding="utf-8")
    assert "Translation model: checkpoint, licence unknown" in license_text  # the folder's name: no --model-id
    assert "opus-mt-en-zh" not in license_text


def _unnamed_copy(src, dest):
    """A checkpoint whose tokenizer_config names no languages (and whose folder name is no opus-mt-XX-YY)."""
    shutil.copytree(src, dest)
    (dest / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 512}), encoding="utf-8")
    return dest


def test_every_known_target_token_is_a_variant_and_others_are_not():
    """Before, only >>cmn_Hans<< and >>cmn_Hant<< were offered, whatever else the model could write."""
    from engine.languages import MAX_VARIANTS, default_pair

    tokens = [">>cmn_Latn<<", ">>yue_Hant<<", ">>fra<<", ">>lzh<<", ">>cmn_Hant<<", ">>cmn_Hira<<"]
    pair = default_pair("en", "zh", tokens)
    assert [v.key for v in pair.variants] == ["hant", "yue_hant", "lzh"] and pair.default_variant == "hant"
    assert default_pair("zh", "en", [">>eng<<"]).variants[0].name == "English"
    many = [f">>{c}<<" for c in ("cmn", "zho", "yue", "lzh", "wuu", "gan", "hak", "nan")]
    many += [f">>{c}_{s}<<" for c in ("cmn", "zho", "yue", "lzh", "wuu") for s in ("Hans", "Hant")]
    assert len(default_pair("en", "zh", many).variants) == MAX_VARIANTS


def test_overrides_name_the_pair_of_a_checkpoint_that_names_none(tmp_path, zh_en_checkpoint_dir):
    from engine.convert.pipeline import build_bundle
    from tests.conftest import ZH_EN_FIXTURE_DIR

    ckpt = _unnamed_copy(zh_en_checkpoint_dir, tmp_path / "local-model")
    with pytest.raises(CheckpointError, match="does not name its languages; pass --source and --target"):
        build_bundle(str(ckpt), tmp_path / "refused", quiet=True)
    assert not (tmp_path / "refused").exists()
    manifest = build_bundle(
        str(ckpt),
        tmp_path / "out",
        eval_tsv=ZH_EN_FIXTURE_DIR / "eval.tsv",
        eval_limit=8,
        quiet=True,
        source_lang="zho",  # Marian's names work as well as Qiao's
        target_lang="en",
    )
    assert manifest["languages"]["source"]["code"] == "zh" and manifest["languages"]["target"]["code"] == "en"
    assert manifest["validation"]["bleu_tokenize"] == "13a"


def test_overrides_beat_what_the_checkpoint_says(checkpoint_dir):
    from engine.families.marian.converter.checkpoint import resolve_checkpoint

    named = resolve_checkpoint(str(checkpoint_dir))
    assert (named.source_lang, named.target_lang) == ("en", "zh")
    relabelled = resolve_checkpoint(str(checkpoint_dir), source_lang="zh", target_lang="en")
    assert (relabelled.source_lang, relabelled.target_lang) == ("zh", "en")
    agreeing = resolve_checkpoint(str(checkpoint_dir), target_lang="zho")  # the source still from the checkpoint
    assert (agreeing.source_lang, agreeing.target_lang) == ("en", "zh")
    with pytest.raises(CheckpointError, match=r"both 'en' \(the checkpoint's own names; override with"):
        resolve_checkpoint(str(checkpoint_dir), target_lang="en")


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"source_lang": "fr"}, r"unknown source language 'fr': Qiao supports en, zh"),
        ({"source_lang": "en", "target_lang": "klingon"}, r"unknown target language 'klingon'"),
        ({"source_lang": "zh", "target_lang": "zho"}, r"source and target are both 'zh'"),
    ],
)
def test_unknown_or_equal_languages_are_refused(checkpoint_dir, overrides, message):
    from engine.families.marian.converter.checkpoint import resolve_checkpoint

    with pytest.raises(CheckpointError, match=message):
        resolve_checkpoint(str(checkpoint_dir), **overrides)


def test_a_checkpoint_naming_an_unknown_language_says_how_to_override(tmp_path, checkpoint_dir):
    from engine.families.marian.converter.checkpoint import resolve_checkpoint

    ckpt = tmp_path / "ckpt"
    shutil.copytree(checkpoint_dir, ckpt)
    (ckpt / "tokenizer_config.json").write_text(json.dumps({"source_lang": "fra", "target_lang": "eng"}))
    with pytest.raises(CheckpointError, match=r"unknown source language 'fra'.*override with --source/--target"):
        resolve_checkpoint(str(ckpt))
    assert resolve_checkpoint(str(ckpt), source_lang="en", target_lang="zh").source_lang == "en"
    named_by_id = _unnamed_copy(checkpoint_dir, tmp_path / "opus-mt-zh-en")
    assert (resolve_checkpoint(str(named_by_id)).source_lang, resolve_checkpoint(str(named_by_id)).target_lang) == (
        "zh",
        "en",
    )


def test_unknown_language_fails_before_any_download(monkeypatch, tmp_path):
    from engine.families.marian.converter import checkpoint

    def no_download(*args, **kwargs):
        raise AssertionError("downloaded although the language is unknown")

    monkeypatch.setattr(checkpoint, "_download", no_download)
    with pytest.raises(CheckpointError, match="unknown target language 'de'"):
        checkpoint.resolve_checkpoint("Helsinki-NLP/opus-mt-en-de", target_lang="de")


def test_cli_build_takes_source_and_target(monkeypatch, capsys, tmp_path, checkpoint_dir):
    from engine.cli import main as cli

    seen = {}

    def fake_build(source, out, **kwargs):
        seen.update(kwargs, source=source)
        raise CheckpointError("stop here")

    monkeypatch.setattr("engine.convert.pipeline.build_bundle", fake_build)
    argv = ["model", "build", "--from", str(checkpoint_dir), "--out", str(tmp_path / "o"), "--source", "zh"]
    assert cli.main([*argv, "--target", "en", "--quiet"]) == 1
    assert seen["source_lang"] == "zh" and seen["target_lang"] == "en"
    assert "qiao: stop here" in capsys.readouterr().err
    monkeypatch.undo()
    code = cli.main(["model", "build", "--from", str(checkpoint_dir), "--out", str(tmp_path / "o"), "--source", "fr"])
    assert code == 1 and "unknown source language 'fr'" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_attribution_names_the_model_built():
    from engine.families.marian.converter.checkpoint import opus_attribution

    text = opus_attribution("Helsinki-NLP/opus-mt-zh-en")
    assert text.startswith("Translation model: opus-mt-zh-en by Helsinki-NLP") and "en-zh" not in text
    assert "CC-BY-4.0" in text
    from engine.families.marian.converter.checkpoint import checkpoint_attribution

    assert "Helsinki-NLP" not in checkpoint_attribution("me/my-marian", None)[1]  # not theirs: not credited to them


def _big_tensor_files(out, precision: str, table: int) -> list[tuple[str, str]]:
    """(graph, file) of every initializer at least as large as the vocabulary matrix, each one external."""
    import onnx

    found = []
    for graph in ("encoder", "decoder"):
        model = onnx.load(str(out / precision / f"{graph}.onnx"), load_external_data=False)
        for init in model.graph.initializer:
            if np.prod(init.dims) < table:
                continue
            assert init.data_location == onnx.TensorProto.EXTERNAL, f"{precision}/{graph}: {init.name} inline"
            found.append((graph, {e.key: e.value for e in init.external_data}["location"]))
    return found


def test_embedding_is_stored_once_in_fp32_and_the_int8_head_has_its_own_copy(built):
    """FP32: only embedding.bin holds the vocabulary matrix, and the decoder's output projection reads it from there
    (the plain export stores it three times). INT8 (default "columns" head): embedding.bin holds the 8-bit table the
    lookups read and no graph loads it; the head's [d_model, vocab] int8 copy is head.bin, named by the manifest and
    derived from embedding.bin by the engine, not shipped (the manifest's `derived` says how, and its sha256)."""
    from engine.bundle.manifest import sha256_file

    out, manifest = built
    cfg = manifest["config"]
    table = cfg["vocab_size"] * cfg["d_model"]
    assert (out / "fp32" / "embedding.bin").stat().st_size >= table * 4
    assert _big_tensor_files(out, "fp32", table) == [("decoder", "embedding.bin")]
    assert (out / "int8" / "embedding.bin").stat().st_size >= table
    assert _big_tensor_files(out, "int8", table) == [("decoder", "head.bin")]
    assert manifest["precisions"]["int8"]["head"] == "int8/head.bin"
    assert "head" not in manifest["precisions"]["fp32"]
    assert not (out / "int8" / "head.bin").exists() and "int8/head.bin" not in manifest["files"]
    entry = manifest["derived"]["int8/head.bin"]
    assert entry["from"] == "int8/embedding.bin" and entry["method"] == "int8-columns-from-blocks"
    assert sha256_file(out / "int8" / "embedding.bin") == manifest["files"]["int8/embedding.bin"]["sha256"]


def test_the_recorded_head_is_what_the_engine_derives(built):
    """The build writes the head with the engine's own derivation, so the sha256 it records is what every load
    computes from embedding.bin (and the validation the build ran loaded exactly that)."""
    import hashlib

    from engine.runtime.derived import columns_head_file

    out, manifest = built
    data = columns_head_file(out / "int8" / "embedding.bin", manifest["precisions"]["int8"]["embedding"])
    entry = manifest["derived"]["int8/head.bin"]
    assert (len(data), hashlib.sha256(data).hexdigest()) == (entry["size"], entry["sha256"])


def test_int8_graphs_are_really_quantized(built):
    import onnx

    from engine.runtime.derived import aligned, columns_head_file

    out, manifest = built
    for graph in ("encoder", "decoder"):
        ops = [n.op_type for n in onnx.load(str(out / "int8" / f"{graph}.onnx"), load_external_data=False).graph.node]
        assert ops.count("MatMulInteger") >= 4, graph
        assert "MatMul" not in ops, graph  # every weight MatMul became integer arithmetic
    dec = onnx.load(str(out / "int8" / "decoder.onnx"), load_external_data=False)
    head = [n for n in dec.graph.node if n.name == "lm_head_cols"]
    assert len(head) == 1 and head[0].op_type == "DynamicQuantizeMatMul"
    assert not [n for n in dec.graph.node if n.op_type == "MatMulNBits"]
    cfg = manifest["config"]
    vocab, dim = cfg["vocab_size"], cfg["d_model"]
    where = {
        i.name: {e.key: e.value for e in i.external_data} for i in dec.graph.initializer if i.name.startswith("lm_head")
    }
    assert where == {
        "lm_head_cols": {"location": "head.bin", "offset": "0", "length": str(dim * vocab)},
        "lm_head_col_scales": {"location": "head.bin", "offset": str(aligned(dim * vocab)), "length": str(vocab * 4)},
    }
    data = columns_head_file(out / "int8" / "embedding.bin", manifest["precisions"]["int8"]["embedding"])
    weights = np.frombuffer(data, dtype=np.int8, count=dim * vocab).reshape(dim, vocab)
    scales = np.frombuffer(data, dtype=np.float32, count=vocab, offset=aligned(dim * vocab))
    assert scales.shape == (vocab,) and (scales > 0).all()
    assert np.abs(weights.astype(np.int16)).max() == 63  # 7-bit: no 16-bit saturation without VNNI


def test_column_quantization_is_per_token_and_within_half_a_step():
    from engine.runtime.derived import COLUMN_LEVELS, quantize_columns

    rng = np.random.default_rng(3)
    weight = rng.standard_normal((50, 16)).astype(np.float32) * rng.uniform(0.01, 5, size=(50, 1)).astype(np.float32)
    weight[7] = 0.0  # an all-zero row must not divide by zero
    q, scales = quantize_columns(weight)
    assert q.shape == (16, 50) and q.dtype == np.int8 and scales.shape == (50,)
    assert np.abs(q.astype(np.int16)).max() == COLUMN_LEVELS
    back = q.T.astype(np.float32) * scales[:, None]
    assert (np.abs(back - weight) <= scales[:, None] / 2 + 1e-7).all()
    assert (q[:, 7] == 0).all()
    # each token's largest weight maps to ±63 exactly: the scale is that row's own
    assert (np.abs(q.astype(np.int16)).max(axis=0)[np.abs(weight).max(axis=1) > 0] == COLUMN_LEVELS).all()


def test_the_blocks_head_is_still_built_on_request(tmp_path, checkpoint_dir):
    """`--int8-head blocks`: MatMulNBits over embedding.bin itself (stored once, 33 MB less at full size); the engine
    loads either, and both give the FP32 tokens on the fixture's memorised sentences."""
    import onnx

    from engine.bundle.manifest import verify_bundle
    from engine.convert.pipeline import build_bundle
    from engine.pipeline.translator import Translator
    from tests.conftest import FIXTURE_DIR

    out = tmp_path / "blocks"
    manifest = build_bundle(
        str(checkpoint_dir), out, eval_tsv=FIXTURE_DIR / "eval.tsv", eval_limit=8, quiet=True, int8_head="blocks"
    )
    verify_bundle(out)
    assert "head" not in manifest["precisions"]["int8"] and not (out / "int8" / "head.bin").exists()
    cfg = manifest["config"]
    assert _big_tensor_files(out, "int8", cfg["vocab_size"] * cfg["d_model"]) == [("decoder", "embedding.bin")]
    dec = onnx.load(str(out / "int8" / "decoder.onnx"), load_external_data=False)
    head = [n for n in dec.graph.node if n.op_type == "MatMulNBits"]
    assert len(head) == 1 and {a.name: a.i for a in head[0].attribute}["bits"] == 8
    assert "MatMulNBits" in manifest["precisions"]["int8"]["quantization"]
    texts = ["Thank you very much.", "Where is the train station?"]
    blocks = [t.text for t in Translator(out, precision="int8").translate_segments(texts)]
    fp32 = [t.text for t in Translator(out, precision="fp32").translate_segments(texts)]
    assert blocks == fp32 and all(blocks)


def test_an_unknown_int8_head_is_refused_before_any_work(tmp_path, checkpoint_dir):
    from engine.convert.pipeline import build_bundle

    with pytest.raises(BuildError, match="unknown INT8 head 'nibbles'"):
        build_bundle(str(checkpoint_dir), tmp_path / "x", eval_limit=4, quiet=True, int8_head="nibbles")
    assert not (tmp_path / "x").exists()


def test_onnx_fp32_logits_match_pytorch(built, checkpoint_dir):
    import torch
    from transformers import MarianMTModel, MarianTokenizer

    from engine.bundle.manifest import load_manifest
    from engine.families.marian.model import OnnxMarian

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
    from engine.families.marian.converter.checkpoint import resolve_checkpoint

    broken = tmp_path / "ckpt"
    shutil.copytree(checkpoint_dir, broken)
    (broken / "target.spm").unlink()
    with pytest.raises(CheckpointError, match=r"missing target\.spm"):
        resolve_checkpoint(str(broken))
    (broken / "model.safetensors").unlink()
    with pytest.raises(CheckpointError, match=r"target\.spm, model\.safetensors or pytorch_model\.bin"):
        resolve_checkpoint(str(broken))


def test_offline_hub_id_is_a_clear_error(monkeypatch, tmp_path):
    from engine.families.marian.converter.checkpoint import resolve_checkpoint

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
    assert read_eval_tsv(plain).tags == [None, None]  # the bundle's default variant
    tatoeba = tmp_path / "tatoeba.tsv"
    tatoeba.write_text("eng\tcmn_Hant\tHello.\t你好。\n", encoding="utf-8")
    got = read_eval_tsv(tatoeba)
    assert got.tags == ["cmn_Hant"] and got.sources == ["Hello."] and got.references == ["你好。"]
    bad = tmp_path / "bad.tsv"
    bad.write_text("only one column\n", encoding="utf-8")
    with pytest.raises(BuildError, match="expected 2 columns"):
        read_eval_tsv(bad)
    # a Tatoeba file of the other direction validates nothing: refused, naming the row
    with pytest.raises(
        BuildError, match=r"tatoeba\.tsv:1: source language 'eng', but the model translates from Chinese"
    ):
        read_eval_tsv(tatoeba, source="zh")
    assert read_eval_tsv(tatoeba, source="en").sources == ["Hello."]
    reverse = tmp_path / "reverse.tsv"
    reverse.write_text("cmn_Hans\teng\t你好。\tHello.\nyue_Hant\teng\t你好。\tHello.\n", encoding="utf-8")
    assert read_eval_tsv(reverse, source="zh").tags == ["eng", "eng"]  # yue is no language Qiao checks


def test_wrong_direction_eval_file_fails_before_the_export(tmp_path, zh_en_checkpoint_dir, monkeypatch):
    from engine.convert.pipeline import build_bundle
    from engine.families.marian.converter import graphs
    from tests.conftest import FIXTURE_DIR

    monkeypatch.setattr(graphs, "build_encoder", lambda model: pytest.fail("exported before reading --eval"))
    with pytest.raises(BuildError, match="but the model translates from Chinese"):
        build_bundle(str(zh_en_checkpoint_dir), tmp_path / "out", eval_tsv=FIXTURE_DIR / "eval.tsv", quiet=True)


TATOEBA_SAMPLE = "\n".join(
    [
        "eng\tcmn_Hans\tThank you.\t谢谢。",
        "eng\tcmn_Hant\tThank you.\t謝謝。",
        "eng\tyue_Hans\tThank you.\t唔该。",
        "eng\tcmn_Hans\tSee you.\t再见。",
        "a malformed line",
    ]
)


def test_tatoeba_rows_per_direction():
    from engine.convert.validate import TATOEBA, tatoeba_rows

    en_zh = tatoeba_rows(TATOEBA["en-zh"], TATOEBA_SAMPLE, limit=10)
    assert en_zh.name == "tatoeba-eng-zho"
    assert en_zh.sources == ["Thank you.", "See you."] and en_zh.references == ["谢谢。", "再见。"]
    assert en_zh.tags == ["cmn_Hans", "cmn_Hans"]
    zh_en = tatoeba_rows(TATOEBA["zh-en"], TATOEBA_SAMPLE, limit=10)
    assert zh_en.name == "tatoeba-zho-eng"
    assert zh_en.sources == ["谢谢。", "謝謝。", "再见。"]  # Simplified and Traditional Mandarin, not Cantonese
    assert zh_en.references == ["Thank you.", "Thank you.", "See you."] and zh_en.tags == ["eng"] * 3
    assert len(tatoeba_rows(TATOEBA["zh-en"], TATOEBA_SAMPLE, limit=2).sources) == 2
    assert tatoeba_rows(TATOEBA["zh-en"], "nothing here", limit=5) is None


@pytest.mark.parametrize(("pair", "first"), [("en-zh", "The weather is nice today."), ("zh-en", "今天天气很好。")])
def test_offline_build_falls_back_to_builtin_sentences(pair, first):
    from engine.convert.validate import tatoeba_or_builtin

    chosen = tatoeba_or_builtin(pair, limit=10, timeout=1)
    assert chosen.name == "builtin" and chosen.references is None and len(chosen.sources) == 10
    assert chosen.sources[0] == first and chosen.tags == [None] * 10


@pytest.mark.parametrize(("sentences", "allowed"), [(40, 1), (99, 1), (100, 1), (250, 2), (500, 5)])
def test_fp32_beam_search_may_differ_on_one_sentence_or_one_percent(sentences, allowed):
    from engine.convert.validate import beam_disagreements_allowed

    assert beam_disagreements_allowed(sentences) == allowed


def test_language_prefix_follows_the_model():
    from engine.convert.validate import _language_prefix

    tokens = [">>cmn_Hans<<", ">>cmn_Hant<<"]
    assert _language_prefix("cmn_Hant", tokens, ">>cmn_Hans<<") == ">>cmn_Hant<< "
    assert _language_prefix(None, tokens, ">>cmn_Hans<<") == ">>cmn_Hans<< "
    assert _language_prefix("eng", [], None) == "" and _language_prefix(None, [], None) == ""


def test_cli_build_reports_the_direction(capsys, tmp_path, zh_en_checkpoint_dir):
    from engine.cli import main as cli
    from tests.conftest import ZH_EN_FIXTURE_DIR

    out = tmp_path / "bundle"
    argv = ["model", "build", "--from", str(zh_en_checkpoint_dir), "--out", str(out), "--quiet"]
    assert cli.main([*argv, "--eval", str(ZH_EN_FIXTURE_DIR / "eval.tsv"), "--eval-limit", "8"]) == 0
    printed = capsys.readouterr().out
    assert f"bundle: {out} (Chinese → English)" in printed and "fp32 BLEU" in printed
