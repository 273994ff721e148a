"""Bundle verification names exactly what is missing, truncated or modified."""

from __future__ import annotations

import json
import shutil

import pytest

from engine.errors import BundleError, ModelNotFoundError
from engine.manifest import FORMAT_VERSION, load_manifest, verify_bundle, verify_files


@pytest.fixture
def bundle_copy(bundle_dir, tmp_path):
    dst = tmp_path / "bundle"
    shutil.copytree(bundle_dir, dst)
    return dst


def test_intact_bundle_verifies(bundle_dir):
    manifest = verify_bundle(bundle_dir)
    assert manifest.model_id == "qiao/tiny-marian-fixture"
    assert "CC-BY-4.0" in manifest.license
    assert "Helsinki-NLP" in manifest.attribution
    assert set(manifest.precisions) == {"int8", "fp32"}
    assert manifest.scripts == {"hans": ">>cmn_Hans<<", "hant": ">>cmn_Hant<<"}


def test_manifest_records_what_the_engine_needs(bundle_dir):
    raw = load_manifest(bundle_dir).raw
    assert raw["format_version"] == FORMAT_VERSION
    assert {"torch", "transformers", "onnx", "onnxruntime"} <= set(raw["tools"])
    assert raw["model"]["revision"].startswith("local-sha256:")
    gen = raw["generation"]
    assert gen["num_beams"] == 4 and gen["max_length"] == 512
    assert gen["bad_words_ids"] == [[gen["pad_token_id"]]]
    assert gen["decoder_start_token_id"] == gen["pad_token_id"] and gen["eos_token_id"] == 0
    assert raw["graphs"]["decoder"]["inputs"][:2] == ["inputs_embeds", "encoder_attention_mask"]
    assert raw["graphs"]["encoder"]["outputs"][0] == "cross_k.0"
    for rel, entry in raw["files"].items():
        assert entry["size"] > 0 and len(entry["sha256"]) == 64, rel
    assert raw["validation"]["passed"] is True


def test_truncated_file_is_reported(bundle_copy):
    target = bundle_copy / "int8" / "decoder.onnx"
    data = target.read_bytes()
    target.write_bytes(data[: len(data) // 2])
    with pytest.raises(BundleError) as err:
        verify_bundle(bundle_copy)
    assert any("int8/decoder.onnx" in p and "truncated" in p for p in err.value.problems)
    assert len(err.value.problems) == 1


def test_modified_file_is_reported(bundle_copy):
    target = bundle_copy / "fp32" / "embedding.bin"
    data = bytearray(target.read_bytes())
    data[1234] ^= 0xFF
    target.write_bytes(bytes(data))
    problems = verify_files(load_manifest(bundle_copy))
    assert problems == [p for p in problems if p.startswith("fp32/embedding.bin: sha256")]
    assert len(problems) == 1
    # only the FP32 precision is affected: INT8 still verifies on its own
    assert verify_files(load_manifest(bundle_copy), "int8") == []
    # a size-only check cannot see a flipped byte; a full check must
    assert verify_files(load_manifest(bundle_copy), "fp32", hashes=False) == []


def test_missing_file_is_reported(bundle_copy):
    (bundle_copy / "tokenizer.json").unlink()
    with pytest.raises(BundleError) as err:
        verify_bundle(bundle_copy, "int8")
    assert err.value.problems == ["tokenizer.json: missing"]
    assert "tokenizer.json: missing" in str(err.value)


def test_corrupt_or_absent_manifest(bundle_copy, tmp_path):
    (bundle_copy / "manifest.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(BundleError, match="unreadable"):
        load_manifest(bundle_copy)
    (bundle_copy / "manifest.json").write_text(json.dumps({"format_version": 99}), encoding="utf-8")
    with pytest.raises(BundleError, match=r"format version 99.*newer Qiao: update Qiao"):
        load_manifest(bundle_copy)
    old = json.dumps({"format_version": FORMAT_VERSION - 1})
    (bundle_copy / "manifest.json").write_text(old, encoding="utf-8")
    with pytest.raises(BundleError, match="older Qiao: build or download the model again"):
        load_manifest(bundle_copy)
    with pytest.raises(ModelNotFoundError, match=r"no manifest\.json"):
        load_manifest(tmp_path)
    with pytest.raises(ModelNotFoundError, match="no model bundle"):
        load_manifest(tmp_path / "nowhere")


def test_unknown_precision(bundle_dir):
    with pytest.raises(BundleError, match="precision fp16 is not in this bundle"):
        verify_bundle(bundle_dir, "fp16")


def test_verified_cache_skips_rehashing_only_unchanged_files(bundle_copy, tmp_path):
    import os

    from engine.verified_cache import VerifiedFiles

    cache = VerifiedFiles(tmp_path / "cache.json")
    manifest = load_manifest(bundle_copy)
    assert verify_files(manifest, cache=cache) == []
    assert (tmp_path / "cache.json").is_file()
    reloaded = VerifiedFiles(tmp_path / "cache.json")
    target = bundle_copy / "int8" / "embedding.bin"
    assert reloaded.is_verified(target, manifest.raw["files"]["int8/embedding.bin"]["sha256"])
    # Same size, different bytes, new mtime: the cache must not vouch for it.
    data = bytearray(target.read_bytes())
    data[7] ^= 0x01
    target.write_bytes(bytes(data))
    os.utime(target, ns=(1, 1))
    problems = verify_files(manifest, cache=reloaded)
    assert problems and problems[0].startswith("int8/embedding.bin: sha256")
