"""Slow tier: the full-size random model with opus-mt-en-zh's exact shape, through the real pipeline.

pytest -m slow        (builds .cache/full-random/{checkpoint,bundle} on first use, ~5 minutes on 2 cores)
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from engine.families.marian.converter.opus_mt_config import carries_opus_mt_config
from tests.engine.search_oracle import generate_rows

pytestmark = [pytest.mark.slow, pytest.mark.torch]

ROOT = Path(__file__).resolve().parents[3]
CACHE = ROOT / ".cache" / "full-random"
MB = 1e6


def _full_model_module():
    spec = importlib.util.spec_from_file_location("full_model", ROOT / "bench" / "full_model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _current(bundle: Path) -> bool:
    """A cached bundle is reused only when this Qiao reads its format and it has today's decoder layout (one left
    by an older Qiao is rebuilt: its beams would take the repeated-state path, or its layer norms ORT's fused kernel,
    or it ships the INT8 head, not what bundles are built with) and opus-mt's real generation config."""
    from engine.bundle.manifest import FORMAT_VERSION

    try:
        raw = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
        fused_norms = b"SkipLayerNormalization" in (bundle / "fp32" / "decoder.onnx").read_bytes()
    except (OSError, ValueError):
        return False
    decoder = raw.get("graphs", {}).get("decoder", {})
    real_config = raw.get("generation", {}).get("renormalize_logits") is True  # opus-mt's generation config
    return (
        raw.get("format_version") == FORMAT_VERSION
        and decoder.get("beams_share_cross") is True
        and not fused_norms
        and real_config
        and "int8/head.bin" not in raw.get("files", {})  # built before the INT8 head was derived, not shipped
    )


@pytest.fixture(scope="module")
def full_bundle():
    pytest.importorskip("torch")
    checkpoint = CACHE / "checkpoint"
    bundle = CACHE / "bundle"
    full_model = _full_model_module()
    if not (checkpoint / "model.safetensors").is_file():
        tokenizer_from = ROOT / "tests" / "fixtures" / "tiny_marian" / "checkpoint"
        full_model.build_full_checkpoint(checkpoint, tokenizer_from)
    elif not carries_opus_mt_config(checkpoint, full_model.PAD_ID, full_model.EOS_ID):  # cached before it: weights stay
        (checkpoint / "generation_config.json").write_text(json.dumps(full_model.GENERATION_CONFIG), encoding="utf-8")
    if not _current(bundle):
        from engine.convert.pipeline import build_bundle

        build_bundle(str(checkpoint), bundle, eval_limit=16, quiet=True, overwrite=True, model_id="full-random")
    return checkpoint, bundle


def test_bundle_sizes_meet_targets(full_bundle):
    from engine.bundle.manifest import verify_bundle
    from engine.convert.pipeline import bundle_sizes

    _, bundle = full_bundle
    manifest = verify_bundle(bundle)
    sizes = bundle_sizes(bundle, manifest.raw)
    print({k: f"{v / MB:.1f} MB ({v / 2**20:.1f} MiB)" for k, v in sizes.items()})
    assert sizes["int8"] <= 80 * 2**20
    assert sizes["fp32"] <= 310 * 2**20
    assert manifest.raw["validation"]["passed"]


def test_the_int8_head_is_derived_as_faithfully_as_from_fp32(full_bundle):
    """The download ships no head.bin: the engine derives it from the 8-bit table in embedding.bin (into the user's
    cache). Its weights stay within 15 % of the error of a head quantized from the FP32 matrix itself (the shipped
    head before; measured +9.5 %), and the INT8 logits within 2 % of theirs (teacher-forced on FP32's greedy tokens;
    measured +0.1 %: the layers' own quantization dominates)."""
    from engine.bundle.manifest import load_manifest
    from engine.families.marian.model import OnnxMarian
    from engine.runtime.derived import aligned, columns_file, quantize_columns

    manifest = load_manifest(full_bundle[1])
    vocab, dim = manifest.config["vocab_size"], manifest.config["d_model"]
    assert not (full_bundle[1] / "int8" / "head.bin").exists()
    weight = np.fromfile(full_bundle[1] / "fp32" / "embedding.bin", dtype=np.float32).reshape(vocab, dim)
    direct = columns_file(*quantize_columns(weight))
    derived_model = OnnxMarian(manifest, "int8", threads=2)
    derived = bytes(derived_model._derived_head.data)

    def error(data: bytes) -> float:
        q = np.frombuffer(data, np.int8, count=vocab * dim).reshape(dim, vocab).astype(np.float32)
        scales = np.frombuffer(data, np.float32, count=vocab, offset=aligned(vocab * dim))
        return float(np.sqrt((((q * scales).T - weight) ** 2).mean()))

    assert error(direct) < error(derived) <= 1.15 * error(direct)
    # the same bundle with the head quantized from FP32 (as shipped before): a session over `direct`
    from engine.families.marian import head_cache
    from engine.runtime.sessions import inference_session, session_options

    fp32 = OnnxMarian(manifest, "fp32", threads=2)
    shipped_model = OnnxMarian(manifest, "int8", threads=2)
    view = head_cache.DerivedFile("int8/head.bin", np.frombuffer(direct, np.uint8), None, derived=True)
    options = session_options(2, spinning=True)
    names, view.values = head_cache.session_initializers(manifest, "int8/decoder.onnx", [view])
    options.add_external_initializers(names, view.values)
    shipped_model.decoder = inference_session(manifest.path("int8/decoder.onnx"), options)
    rng = np.random.default_rng(5)
    errors: dict[str, list[float]] = {"derived": [], "shipped": []}
    for _ in range(6):
        src = np.concatenate([rng.integers(100, 64000, rng.integers(8, 25)), [0]]).reshape(1, -1)
        runs = {
            k: m.start(m.encode(src, np.ones_like(src)), 24)
            for k, m in (("fp32", fp32), ("derived", derived_model), ("shipped", shipped_model))
        }
        token = np.array([manifest.generation["decoder_start_token_id"]])
        for _ in range(20):
            ref = runs["fp32"].step(token).copy()
            for key in errors:
                errors[key].append(float(np.sqrt(((runs[key].step(token) - ref) ** 2).mean()) / ref.std()))
            token = ref.argmax(-1)
    assert np.mean(errors["derived"]) <= 1.02 * np.mean(errors["shipped"])


@pytest.fixture(scope="module")
def oracle(full_bundle):
    import torch
    from transformers import MarianMTModel

    torch.set_num_threads(2)
    return MarianMTModel.from_pretrained(str(full_bundle[0])).eval()


@pytest.mark.parametrize("beams", [1, 4])
def test_fp32_matches_generate_on_the_full_model(full_bundle, oracle, beams):
    from engine.pipeline.translator import Translator

    tr = Translator(full_bundle[1], precision="fp32", threads=2)
    rng = np.random.default_rng(beams)
    sources = [[int(t) for t in rng.integers(100, 64000, rng.integers(5, 30))] + [0] for _ in range(12)]
    outs = []
    for src in sources[:8]:  # batch 1
        ours = tr.generate_ids([src], beams=beams, max_length=40)
        assert ours == generate_rows(oracle, [src], beams, 40)
        outs += ours
    batch = sources[8:]  # batched with padding
    assert tr.generate_ids(batch, beams=beams, max_length=40) == generate_rows(oracle, batch, beams, 40)
    assert len({t for o in outs for t in o}) > 20  # varied output, not one repeated token
