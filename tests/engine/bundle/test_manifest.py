"""Bundle verification names exactly what is missing, truncated or modified."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from engine.bundle.manifest import MARIAN_ONLY_FORMAT, READABLE_FORMATS, load_manifest, verify_bundle, verify_files
from engine.cli.main import main
from engine.errors import BundleError, ModelNotFoundError
from engine.pipeline.translator import Translator
from tests.engine.bundles import rewrite


def err_kinds(bundle) -> list[str]:
    with pytest.raises(BundleError) as err:
        load_manifest(bundle)
    return [p.kind for p in err.value.issues]


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
    manifest = load_manifest(bundle_dir)
    raw = manifest.raw
    # the committed fixtures are format 4, read as Marian (tests/engine/families: format 5 and its family)
    assert raw["format_version"] == MARIAN_ONLY_FORMAT and manifest.family == "marian"
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
    assert [(p.kind, p.file) for p in err.value.issues] == [("size", "int8/decoder.onnx")]


def test_modified_file_is_reported(bundle_copy):
    target = bundle_copy / "fp32" / "embedding.bin"
    data = bytearray(target.read_bytes())
    data[1234] ^= 0xFF
    target.write_bytes(bytes(data))
    problems = verify_files(load_manifest(bundle_copy))
    assert [(p.kind, p.file) for p in problems] == [("hash", "fp32/embedding.bin")]
    assert problems[0].detail.startswith("fp32/embedding.bin: sha256")
    # only the FP32 precision is affected: INT8 still verifies on its own
    assert verify_files(load_manifest(bundle_copy), "int8") == []
    # a size-only check cannot see a flipped byte; a full check must
    assert verify_files(load_manifest(bundle_copy), "fp32", hashes=False) == []


def test_missing_file_is_reported(bundle_copy):
    (bundle_copy / "tokenizer.json").unlink()
    with pytest.raises(BundleError) as err:
        verify_bundle(bundle_copy, "int8")
    assert err.value.problems == ["tokenizer.json: missing"]
    assert [(p.kind, p.file) for p in err.value.issues] == [("missing", "tokenizer.json")]
    assert "tokenizer.json: missing" in str(err.value)


def test_corrupt_or_absent_manifest(bundle_copy, tmp_path):
    (bundle_copy / "manifest.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(BundleError, match="unreadable"):
        load_manifest(bundle_copy)
    (bundle_copy / "manifest.json").write_text(json.dumps({"format_version": 99}), encoding="utf-8")
    with pytest.raises(BundleError, match=r"format version 99.*newer Qiao: update Qiao"):
        load_manifest(bundle_copy)
    assert err_kinds(bundle_copy) == ["format"]
    old = json.dumps({"format_version": min(READABLE_FORMATS) - 1})
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

    from engine.bundle.verified_cache import VerifiedFiles

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
    assert problems and problems[0].detail.startswith("int8/embedding.bin: sha256")
    assert not VerifiedFiles(tmp_path / "cache.json").is_verified(
        target, manifest.raw["files"]["int8/embedding.bin"]["sha256"]
    )


@pytest.mark.parametrize("occurrence", [0, 1], ids=["in files", "in precisions"])
def test_a_flipped_byte_in_the_manifest_itself_is_caught(bundle_copy, capsys, occurrence):
    path = bundle_copy / "manifest.json"
    text = path.read_text(encoding="utf-8")
    at = [m.start() for m in re.finditer(re.escape('"fp32/decoder.onnx"'), text)]
    assert len(at) == 2
    i = at[occurrence] + len('"fp32/')
    path.write_text(text[:i] + "e" + text[i + 1 :], encoding="utf-8")  # fp32/decoder.onnx → fp32/eecoder.onnx
    with pytest.raises(BundleError, match=r"manifest\.json was changed or damaged after it was written"):
        verify_bundle(bundle_copy)
    assert main(["model", "verify", str(bundle_copy)]) == 1
    assert "manifest.json was changed or damaged" in capsys.readouterr().err


def test_a_changed_generation_default_breaks_the_seal(bundle_copy):
    path = bundle_copy / "manifest.json"
    path.write_text(path.read_text(encoding="utf-8").replace('"num_beams": 4', '"num_beams": 5'), encoding="utf-8")
    assert err_kinds(bundle_copy) == ["manifest"]


def test_layout_of_the_manifest_does_not_matter(bundle_copy):
    """The seal is over the content: re-indenting the file (an editor, a pretty-printer) keeps it valid."""
    path = bundle_copy / "manifest.json"
    path.write_text(json.dumps(json.loads(path.read_text(encoding="utf-8")), indent=4), encoding="utf-8")
    assert verify_bundle(bundle_copy).model_id == "qiao/tiny-marian-fixture"


def test_embedding_offset_must_be_where_the_decoder_keeps_it(bundle_copy):
    # A precision without a `head` file claims its decoder reads the output projection from the lookup table. The
    # offset is inside the file and before the scales, so only the graph's own external-data record can tell.
    def change(raw):
        raw["precisions"]["int8"].pop("head")
        raw["precisions"]["int8"]["embedding"].update(offset=64)

    rewrite(bundle_copy, change)
    load_manifest(bundle_copy)  # the schema alone cannot see it
    with pytest.raises(
        BundleError,
        match=r"precisions\.int8\.embedding\.offset: 64 .* is not where "
        r"int8/decoder\.onnx keeps its output projection",
    ):
        verify_bundle(bundle_copy, "int8")
    with pytest.raises(BundleError, match=r"embedding\.offset"):
        Translator(bundle_copy)


def test_an_int8_head_file_must_be_what_the_decoder_reads(bundle_copy):
    """INT8's head has its own file (manifest `head`): naming another file, or dropping the key (which claims the
    decoder reads the lookup table), is caught by comparing with the decoder graph's external data."""
    assert verify_bundle(bundle_copy, "int8").precisions["int8"]["head"] == "int8/head.bin"
    rewrite(bundle_copy, lambda raw: raw["precisions"]["int8"].update(head="int8/encoder.weights"))
    with pytest.raises(BundleError, match=r"precisions\.int8\.head: int8/encoder\.weights is not where "):
        verify_bundle(bundle_copy, "int8")
    rewrite(bundle_copy, lambda raw: raw["precisions"]["int8"].pop("head"))
    with pytest.raises(BundleError, match=r"precisions\.int8\.embedding\.offset: 0 .* is not where "):
        Translator(bundle_copy)


def test_a_missing_int8_head_file_is_named(bundle_copy):
    (bundle_copy / "int8" / "head.bin").unlink()
    with pytest.raises(BundleError, match=r"int8/head\.bin"):
        Translator(bundle_copy)
    assert verify_bundle(bundle_copy, "fp32").model_id  # FP32 does not need it


def test_files_of_one_precision_include_what_it_loads_from_elsewhere(bundle_copy):
    """A precision that loads a file from another precision's folder must verify that file too."""
    rewrite(bundle_copy, lambda raw: raw["precisions"]["int8"].update(encoder="fp32/encoder.onnx"))
    manifest = load_manifest(bundle_copy)
    assert "fp32/encoder.onnx" in manifest.files_for("int8")
    assert "fp32/encoder.weights" not in manifest.files_for("int8")  # found through the graph instead
    target = bundle_copy / "fp32" / "encoder.weights"
    data = bytearray(target.read_bytes())
    data[5] ^= 1
    target.write_bytes(bytes(data))
    assert [(p.kind, p.file) for p in verify_files(manifest, "int8")] == [("hash", "fp32/encoder.weights")]


def test_verify_cli_counts_and_refuses_a_missing_precision(bundle_dir, tmp_path, capsys):
    assert main(["model", "verify", str(bundle_dir)]) == 0
    assert "17 files verified" in capsys.readouterr().out
    dest = tmp_path / "b"
    shutil.copytree(bundle_dir, dest)
    rewrite(dest, lambda raw: raw["precisions"].pop("fp32"))
    assert main(["model", "verify", str(dest), "--precision", "fp32"]) == 1
    assert "precision fp32 is not in this bundle" in capsys.readouterr().err


def test_a_folder_that_cannot_be_read_is_a_clear_error(monkeypatch, tmp_path, capsys):
    """Run as a user without read access, stat() of the folder's contents fails (simulated: tests run as root)."""
    from pathlib import Path

    from engine.store.installed import find_bundle

    locked = tmp_path / "locked"
    locked.mkdir()
    real_stat = Path.stat

    def stat(self, *args, **kwargs):
        if self.parent == locked:
            raise PermissionError(13, "Permission denied", str(self))
        return real_stat(self, *args, **kwargs)

    monkeypatch.setattr(Path, "stat", stat)
    assert find_bundle(str(locked)) == locked  # found, so that loading it can say what is wrong
    with pytest.raises(BundleError, match=r"the model folder cannot be read \(Permission denied\)"):
        load_manifest(locked)
    assert main(["model", "verify", str(locked)]) == 1
    err = capsys.readouterr().err
    assert "cannot be read" in err and "Traceback" not in err
