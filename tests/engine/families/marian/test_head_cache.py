"""The INT8 head a bundle derives instead of shipping (manifest `derived`): same tokens as the shipped head, derived
once into the per-user cache, checked, repaired when damaged, and in memory when the cache cannot be written."""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from engine.bundle.manifest import FORMAT_VERSION, dumps, load_manifest, verify_bundle
from engine.bundle.schema import SEAL, validate
from engine.errors import BundleError
from engine.families.marian import head_cache
from engine.families.marian.model import OnnxMarian
from engine.pipeline.translator import Translator
from engine.runtime.derived import columns_head_file
from tests.conftest import FIXTURE_DIR

HEAD = "int8/head.bin"


def make_derived(shipped: Path, out: Path) -> Path:
    """A copy of `shipped` (a bundle with int8/head.bin) as the build now writes it: head.bin derived, not shipped."""
    shutil.copytree(shipped, out)
    raw = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    data = columns_head_file(out / "int8" / "embedding.bin", raw["precisions"]["int8"]["embedding"])
    (out / HEAD).unlink()
    del raw["files"][HEAD]
    raw["format_version"] = FORMAT_VERSION
    if FORMAT_VERSION >= 5:
        raw.setdefault("family", "marian")
    raw["derived"] = {
        HEAD: {
            "from": "int8/embedding.bin",
            "method": "int8-columns-from-blocks",
            "size": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
        }
    }
    (out / "manifest.json").write_text(dumps(raw), encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def derived_dirs(tmp_path_factory, bundle_dir, zh_en_bundle_dir):
    root = tmp_path_factory.mktemp("derived")
    return {"en-zh": make_derived(bundle_dir, root / "en-zh"), "zh-en": make_derived(zh_en_bundle_dir, root / "zh-en")}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh per-user cache folder for one test."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("QIAO_CACHE_DIR", str(folder))
    return folder


def _count_derivations(monkeypatch) -> list[str]:
    calls: list[str] = []
    original = head_cache.DERIVERS["int8-columns-from-blocks"]

    def counted(source, spec):
        calls.append(str(source))
        return original(source, spec)

    monkeypatch.setitem(head_cache.DERIVERS, "int8-columns-from-blocks", counted)
    return calls


def _rows(tr: Translator, texts: list[str]) -> list[list[int]]:
    lang = [tr.tokenizer.token_to_id(tr.language_token(None))] if tr.pair.variants else []
    return [[*lang, *tr.tokenizer.encode(t)] for t in texts]


@pytest.mark.parametrize("direction", ["en-zh", "zh-en"])
def test_the_derived_head_gives_the_shipped_heads_tokens(derived_dirs, bundle_dir, zh_en_bundle_dir, direction):
    """Every corpus sentence, greedy and beam 4, in batches of 8: the same INT8 tokens as the head the fixture ships
    (derived from the 8-bit table rather than from FP32, 9 % of its weights differ by one level)."""
    shipped_dir = bundle_dir if direction == "en-zh" else zh_en_bundle_dir
    column = 0 if direction == "en-zh" else 1
    with open(FIXTURE_DIR / "corpus.tsv", encoding="utf-8") as fh:
        texts = [row[column] for row in csv.reader(fh, delimiter="\t")]
    shipped = Translator(shipped_dir, precision="int8", threads=1)
    derived = Translator(derived_dirs[direction], precision="int8", threads=1)
    assert derived._model._derived_head is not None and shipped._model._derived_head is None
    rows = _rows(shipped, texts)
    assert rows == _rows(derived, texts)
    for beams in (1, 4):
        for start in range(0, len(rows), 8):
            batch = rows[start : start + 8]
            assert derived.generate_ids(batch, beams=beams) == shipped.generate_ids(batch, beams=beams), (beams, start)


def test_the_head_is_derived_once_then_read_from_the_cache(derived_dirs, cache, monkeypatch):
    calls = _count_derivations(monkeypatch)
    manifest = verify_bundle(derived_dirs["en-zh"], "int8")
    first = OnnxMarian(manifest, "int8", threads=1)
    path = cache / "derived" / manifest.raw[SEAL] / HEAD
    assert len(calls) == 1 and first._derived_head.derived and first._derived_head.path == path
    assert hashlib.sha256(path.read_bytes()).hexdigest() == manifest.raw["derived"][HEAD]["sha256"]
    second = OnnxMarian(load_manifest(derived_dirs["en-zh"]), "int8", threads=1)
    assert len(calls) == 1 and not second._derived_head.derived
    assert not (derived_dirs["en-zh"] / HEAD).exists()  # never written into the bundle
    ids = np.array([[5, 6, 7, 0]], dtype=np.int64)
    logits = [m.start(m.encode(ids, np.ones_like(ids)), 4).step(np.array([2])).copy() for m in (first, second)]
    np.testing.assert_array_equal(logits[0], logits[1])


def test_fp32_derives_nothing(derived_dirs, cache, monkeypatch):
    calls = _count_derivations(monkeypatch)
    model = OnnxMarian(load_manifest(derived_dirs["en-zh"]), "fp32", threads=1)
    assert model._derived_head is None and calls == [] and not (cache / "derived").exists()


@pytest.mark.parametrize(
    "damage",
    [
        lambda p: p.write_bytes(p.read_bytes()[:-100]),  # truncated
        lambda p: p.write_bytes(b"\x7f" + p.read_bytes()[1:]),  # a changed byte, same size
        lambda p: p.unlink(),  # removed
        lambda p: (p.unlink(), p.mkdir()),  # something else in its place
    ],
    ids=["truncated", "changed", "removed", "a folder"],
)
def test_a_damaged_cache_copy_is_derived_again_silently(derived_dirs, cache, monkeypatch, damage):
    calls = _count_derivations(monkeypatch)
    manifest = load_manifest(derived_dirs["en-zh"])
    OnnxMarian(manifest, "int8", threads=1)
    path = cache / "derived" / manifest.raw[SEAL] / HEAD
    want = path.read_bytes()
    damage(path)
    model = OnnxMarian(manifest, "int8", threads=1)
    assert len(calls) == 2 and model._derived_head.derived
    assert path.read_bytes() == want


def test_a_stale_entry_in_the_verified_files_cache_does_not_hide_damage(derived_dirs, cache, monkeypatch):
    """The copy's stamp changed (rewritten in place): its sha256 is taken again and the damage found."""
    calls = _count_derivations(monkeypatch)
    manifest = load_manifest(derived_dirs["en-zh"])
    OnnxMarian(manifest, "int8", threads=1)
    path = cache / "derived" / manifest.raw[SEAL] / HEAD
    data = bytearray(path.read_bytes())
    data[1000] ^= 1
    with open(path, "r+b") as fh:  # same inode and size, new mtime
        fh.write(bytes(data))
    OnnxMarian(manifest, "int8", threads=1)
    assert len(calls) == 2


def test_a_cache_that_cannot_be_written_keeps_the_head_in_memory(derived_dirs, tmp_path, monkeypatch):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder should be", encoding="utf-8")
    monkeypatch.setenv("QIAO_CACHE_DIR", str(blocked))
    calls = _count_derivations(monkeypatch)
    tr = Translator(derived_dirs["en-zh"], precision="int8", threads=1)
    head = tr._model._derived_head
    assert head.path is None and head.derived and len(calls) == 1
    assert tr.translate("Thank you very much.").text == "非常感谢。"
    Translator(derived_dirs["en-zh"], precision="int8", threads=1)
    assert len(calls) == 2  # nothing cached: each load derives


def test_a_read_only_cache_folder_keeps_the_head_in_memory(derived_dirs, cache, monkeypatch):
    def refuse(path, data):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(head_cache, "write_file", refuse)
    model = OnnxMarian(load_manifest(derived_dirs["en-zh"]), "int8", threads=1)
    assert model._derived_head.path is None and len(model._derived_head.data) == model._derived_head.data.size


def test_a_damaged_table_is_a_bundle_error_not_a_wrong_head(derived_dirs, tmp_path, cache):
    """embedding.bin changed after the check (verify=False loads trust sizes only): what it derives differs from the
    manifest's sha256, and the load says which file is at fault instead of running a wrong head."""
    bundle = tmp_path / "bundle"
    shutil.copytree(derived_dirs["en-zh"], bundle)
    table = bundle / "int8" / "embedding.bin"
    data = bytearray(table.read_bytes())
    data[10] ^= 0x40
    table.write_bytes(bytes(data))
    with pytest.raises(BundleError) as caught:
        Translator(bundle, precision="int8", threads=1, verify=False)
    assert [p.file for p in caught.value.issues] == ["int8/embedding.bin"]
    assert "int8/head.bin, computed from int8/embedding.bin" in str(caught.value)
    assert not (cache / "derived" / load_manifest(bundle).raw[SEAL] / HEAD).exists()
    with pytest.raises(BundleError, match=r"int8/embedding\.bin: sha256"):  # a checked load stops before deriving
        Translator(bundle, precision="int8", threads=1)


def test_entries_no_load_used_for_long_are_removed_when_another_is_written(derived_dirs, cache, monkeypatch):
    import os
    import time

    old, recent = cache / "derived" / ("a" * 64), cache / "derived" / ("b" * 64)
    for folder in (old, recent):
        (folder / "int8").mkdir(parents=True)
        (folder / HEAD).write_bytes(b"x")
    long_ago = time.time() - head_cache.STALE_AFTER_S - 86400
    os.utime(old, (long_ago, long_ago))
    OnnxMarian(load_manifest(derived_dirs["en-zh"]), "int8", threads=1)
    assert not old.exists() and recent.exists()


def test_the_verifier_checks_the_head_against_the_derived_entry(derived_dirs, tmp_path):
    raw = json.loads((derived_dirs["en-zh"] / "manifest.json").read_text(encoding="utf-8"))
    raw["derived"][HEAD]["size"] = 100  # smaller than the weights the decoder graph reads from it
    bundle = tmp_path / "b"
    shutil.copytree(derived_dirs["en-zh"], bundle)
    (bundle / "manifest.json").write_text(dumps(raw), encoding="utf-8")
    with pytest.raises(BundleError, match=r"int8/decoder\.onnx: its weights run past the end of int8/head\.bin"):
        verify_bundle(bundle, "int8")


def _schema_problems(derived_dirs, change) -> list[str]:
    raw = json.loads((derived_dirs["en-zh"] / "manifest.json").read_text(encoding="utf-8"))
    change(raw)
    return [str(p) for p in validate(raw)]


def test_the_schema_accepts_the_derived_bundle(derived_dirs):
    assert _schema_problems(derived_dirs, lambda raw: None) == []


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda r: r["derived"][HEAD].update(method="magic"), "method: expected one of int8-columns-from-blocks"),
        (lambda r: r["derived"][HEAD].update({"from": "int8/encoder.weights"}), "from: expected the 8-bit embedding"),
        (lambda r: r["derived"][HEAD].update({"from": "../x"}), "points outside the model"),
        (lambda r: r["derived"][HEAD].update(sha256="abc"), "sha256: expected 64 lowercase hex digits"),
        (lambda r: r["derived"].update({"int8/other.bin": r["derived"][HEAD]}), "expected the head of a precision"),
        (lambda r: r["files"].update({HEAD: r["files"]["int8/embedding.bin"]}), "expected a file the bundle does not"),
        (lambda r: r.update(derived=[]), "derived: expected an object"),
    ],
)
def test_the_schema_refuses_a_derived_entry_it_cannot_trust(derived_dirs, change, message):
    problems = _schema_problems(derived_dirs, change)
    assert any(message in p for p in problems), problems


def test_a_format_4_bundle_may_not_derive(derived_dirs):
    def to_format_4(raw):
        raw["format_version"] = 4
        raw.pop("family", None)

    problems = _schema_problems(derived_dirs, to_format_4)
    assert any("derived: expected nothing in a format-4 bundle" in p for p in problems), problems
