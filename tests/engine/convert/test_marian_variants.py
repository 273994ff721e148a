"""Marian, complete: relu and gelu besides swish, separate source/target vocabularies, an untied output layer.

Each variant is a tiny random checkpoint built here (tests/engine/convert/marian_variants.py), then built into a
bundle by the real pipeline. Oracles: transformers' generate() on the same weights (greedy, and beam 4 where it
runs); with separate vocabularies transformers 4.57 cannot beam-search (it reshapes scores by the source vocabulary's
size), so optimum's ONNX export of the same model is the second, greedy oracle. Before this change relu stopped the
build with a raw ValueError and separate vocabularies or an untied head with a BuildError.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.engine.search_oracle import generate_rows, trim_generated

pytestmark = pytest.mark.torch
pytest.importorskip("torch")

VARIANTS = {
    "relu": {"activation": "relu"},
    "gelu-untied": {"activation": "gelu", "tied": False},
    "separate": {"separate": True},
    "separate-untied-relu": {"separate": True, "tied": False, "activation": "relu"},
}
SEPARATE = {name for name, kw in VARIANTS.items() if kw.get("separate")}


@pytest.fixture(scope="module")
def variants(tmp_path_factory):
    """name -> (checkpoint, bundle, manifest), each built on first use."""
    from engine.convert.pipeline import build_bundle
    from tests.conftest import FIXTURE_DIR
    from tests.engine.convert.marian_variants import build_variant

    root = tmp_path_factory.mktemp("variants")
    built: dict[str, tuple[Path, Path, dict]] = {}

    def get(name: str) -> tuple[Path, Path, dict]:
        if name not in built:
            ckpt = build_variant(root / name / "checkpoint", seed=len(built), **VARIANTS[name])
            out = root / name / "bundle"
            manifest = build_bundle(str(ckpt), out, eval_tsv=FIXTURE_DIR / "eval.tsv", eval_limit=8, quiet=True)
            built[name] = (ckpt, out, manifest)
        return built[name]

    return get


def _sources(rng: np.random.Generator, low: int, high: int, n: int) -> list[list[int]]:
    return [[int(t) for t in rng.integers(low, high, rng.integers(4, 14))] + [0] for _ in range(n)]


@pytest.mark.parametrize("name", list(VARIANTS))
def test_the_variant_builds_and_matches_generate(variants, name):
    from engine.families.marian.converter.checkpoint import load_marian
    from engine.pipeline.translator import Translator

    ckpt, bundle, manifest = variants(name)
    report = json.loads((bundle / "validation.json").read_text(encoding="utf-8"))
    assert report["passed"] and report["fp32_vs_pytorch"]["greedy"]["rate"] == 1.0
    assert manifest["config"]["activation"] == VARIANTS[name].get("activation", "swish")
    model = load_marian(ckpt)
    tr = Translator(bundle, precision="fp32", threads=1)
    low = 9  # past the specials and language tokens of either vocabulary layout
    rng = np.random.default_rng(7)
    sources = _sources(rng, low, model.config.vocab_size, 8)
    greedy = [tr.generate_ids([src], beams=1, max_length=24)[0] for src in sources[:5]]
    assert greedy == [generate_rows(model, [src], 1, 24)[0] for src in sources[:5]]
    assert len({tuple(g) for g in greedy}) == 5 and all(len(set(g)) > 3 for g in greedy)  # a varied model
    assert tr.generate_ids(sources[5:], beams=1, max_length=24) == generate_rows(model, sources[5:], 1, 24)  # padded
    if name in SEPARATE:
        assert report["fp32_vs_pytorch"]["beam4"] == {
            "skipped": "transformers cannot beam-search separate vocabularies"
        }
        return
    assert report["fp32_vs_pytorch"]["beam4"]["rate"] == 1.0
    for src in sources[:4]:
        assert tr.generate_ids([src], beams=4, max_length=24) == generate_rows(model, [src], 4, 24)


@pytest.mark.parametrize("name", sorted(SEPARATE))
def test_separate_vocabularies_match_optimums_onnx_export(variants, name, tmp_path):
    """The second oracle: optimum exports the same torch model (ONNX, its own graphs) and decodes greedily."""
    import torch
    from optimum.exporters.onnx import onnx_export_from_model
    from optimum.onnxruntime import ORTModelForSeq2SeqLM

    from engine.families.marian.converter.checkpoint import load_marian
    from engine.pipeline.translator import Translator

    ckpt, bundle, _ = variants(name)
    model = load_marian(ckpt)
    onnx_export_from_model(model, tmp_path / "optimum", task="text2text-generation-with-past")
    exported = ORTModelForSeq2SeqLM.from_pretrained(tmp_path / "optimum")
    sources = _sources(np.random.default_rng(11), 9, model.config.vocab_size, 6)
    ours = Translator(bundle, precision="fp32", threads=1)
    pad = model.config.pad_token_id
    for src in sources:
        with torch.no_grad():
            out = exported.generate(input_ids=torch.tensor([src]), num_beams=1, max_length=24)
        assert ours.generate_ids([src], beams=1, max_length=24) == trim_generated(out.tolist(), pad)


def test_a_separate_vocabulary_bundle_is_format_5_and_keeps_both_tables(variants):
    """Format 5 with its family (a Qiao that reads format 4 only refuses it instead of reading source ids through the
    target table); the target table sizes the logits, the scorer and the decoder's lookups, the source table the
    encoder's."""
    from engine.bundle.manifest import load_manifest
    from engine.families.marian.model import OnnxMarian

    ckpt, bundle, manifest = variants("separate-untied-relu")
    source_vocab = json.loads((ckpt / "vocab.json").read_text(encoding="utf-8"))
    target_vocab = json.loads((ckpt / "target_vocab.json").read_text(encoding="utf-8"))
    assert len(source_vocab) != len(target_vocab)
    assert (manifest["format_version"], manifest["family"]) == (5, "marian")
    assert manifest["config"]["vocab_size"] == manifest["tokenizer"]["vocab_size"] == len(target_vocab)
    assert manifest["config"]["source_vocab_size"] == manifest["tokenizer"]["source_vocab_size"] == len(source_vocab)
    for precision in ("fp32", "int8"):
        spec = manifest["precisions"][precision]
        assert spec["embedding"]["shape"][0] == len(target_vocab)
        assert spec["source_embedding"]["shape"][0] == len(source_vocab)
        assert spec["head"]  # untied: the output layer has a file of its own
        model = OnnxMarian(load_manifest(bundle), precision, threads=1)
        assert model.vocab_size == len(target_vocab)
        assert model._source_table.vocab == len(source_vocab)
    for name in ("relu", "gelu-untied"):  # shared vocabularies: format 5 too, one table
        shared = variants(name)[2]
        assert shared["format_version"] == 5 and "source_vocab_size" not in shared["config"]
        assert "source_embedding" not in shared["precisions"]["fp32"]
        assert "source_pieces_file" not in shared["tokenizer"]


def test_the_tokenizer_encodes_source_ids_and_decodes_target_ids(variants):
    """Separate vocabularies: encode numbers the source side's vocab.json (unknown runs and >>xx<< included), decode
    reads target_vocab.json, as MarianTokenizer with separate_vocabs does."""
    from transformers import MarianTokenizer as HfTokenizer

    from engine.bundle.manifest import load_manifest
    from engine.families.marian.tokenizer import MarianTokenizer

    ckpt, bundle, _ = variants("separate")
    ours = MarianTokenizer.from_manifest(load_manifest(bundle))
    ours.load_vocabulary()
    theirs = HfTokenizer.from_pretrained(str(ckpt))
    assert ours.separate_vocabularies
    texts = [">>cmn_Hant<< Where is the train station?", "Thank you 谢谢 very much.", ">>yue_Hans<< Good morning!"]
    assert ours.encode_batch(texts) == [theirs(t).input_ids for t in texts]
    target = json.loads((ckpt / "target_vocab.json").read_text(encoding="utf-8"))
    ids = [target[p] for p in ("▁", "你", "好", "。")] + [0]
    assert ours.decode(ids) == theirs.decode(ids, skip_special_tokens=True) == "你好。"
    assert ours.token_to_id("你") == target["你"]  # the target side, like pieces.json and id_to_piece


def test_int8_decodes_every_variant(variants):
    from engine.pipeline.translator import Translator

    for name in VARIANTS:
        _, bundle, _ = variants(name)
        texts = ["Thank you very much.", "Where is the train station?"]
        int8 = Translator(bundle, precision="int8", threads=1).translate_segments(texts)
        assert all(t.text for t in int8), name
