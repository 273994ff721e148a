"""Damage the verified-files cache cannot see (same size and mtime) surfaces while loading; it must be reported as
the damaged file, in words, with the fix — never as a raw InvalidProtobuf / UTF-8 error or a traceback."""

from __future__ import annotations

import pytest

from engine.bundle.manifest import load_manifest
from engine.bundle.verified_cache import VerifiedFiles
from engine.cli.main import main
from engine.errors import BundleError
from engine.pipeline.translator import Translator
from tests.engine.bundles import copy_bundle, flip_byte_keep_stamp, relist


@pytest.fixture
def bundle(bundle_dir, tmp_path):
    dest = copy_bundle(bundle_dir, tmp_path / "bundle")
    Translator(dest, threads=1)  # primes the verified-files cache: the next start trusts size + mtime + inode
    return dest


def _op_type_offset(path) -> int:
    """A byte inside a node's op_type field (protobuf tag 4: 0x22, then the length), not inside a node's name."""
    op = b"MultiHeadAttention"
    return path.read_bytes().index(b"\x22" + bytes([len(op)]) + op) + 2 + 3


def _cached(bundle, rel: str) -> bool:
    sha = load_manifest(bundle).raw["files"][rel]["sha256"]
    return VerifiedFiles().is_verified(bundle / rel, sha)


@pytest.mark.parametrize(
    ("rel", "where"),
    [("int8/decoder.onnx", _op_type_offset), ("tokenizer.json", lambda p: 12), ("int8/decoder.onnx", lambda p: 0)],
    ids=["graph op type (ORT fails)", "tokenizer not UTF-8 (tokenizers fails)", "graph header (protobuf walk)"],
)
def test_bit_rot_behind_the_cache_is_reported_as_the_changed_file(bundle, capsys, rel, where):
    assert _cached(bundle, rel)
    flip_byte_keep_stamp(bundle / rel, where(bundle / rel))
    with pytest.raises(BundleError) as err:
        Translator(bundle, threads=1)
    assert [(p.kind, p.file) for p in err.value.issues] == [("hash", rel)]
    assert not _cached(bundle, rel)  # the stale entry is gone: the next start hashes it again
    assert main(["translate", "--model", str(bundle), "Thank you very much."]) == 1
    captured = capsys.readouterr()
    assert f"{rel}: sha256" in captured.err
    assert "Traceback" not in captured.err and "InvalidProtobuf" not in captured.err


def test_set_precision_reports_damage_in_the_other_precision(bundle):
    translator = Translator(bundle, threads=1)
    Translator(bundle, precision="fp32", threads=1)  # the fp32 files are now in the cache too
    flip_byte_keep_stamp(bundle / "fp32" / "decoder.onnx", _op_type_offset(bundle / "fp32" / "decoder.onnx"))
    with pytest.raises(BundleError) as err:
        translator.set_precision("fp32")
    assert [(p.kind, p.file) for p in err.value.issues] == [("hash", "fp32/decoder.onnx")]
    assert translator.precision == "int8"
    assert translator.translate("Thank you very much.").text == "非常感谢。"  # INT8 keeps working


@pytest.mark.parametrize(
    ("rel", "content"),
    [
        ("tokenizer.json", b"\xff\xfe not a tokenizer"),
        ("pieces.json", b'["only", "three", "pieces"]'),
        ("source_ids.json", b"[1, 2, 3]"),
        ("scorer.onnx", b"\x08\x07"),
    ],
    ids=["tokenizer", "pieces", "source ids", "scorer"],
)
def test_a_file_that_matches_its_hash_but_cannot_load_is_damaged(bundle, capsys, rel, content):
    (bundle / rel).write_bytes(content)
    relist(bundle, rel)  # a builder wrote a broken file and hashed it: every check passes, the load fails
    with pytest.raises(BundleError) as err:
        Translator(bundle, threads=1)
    (issue,) = err.value.issues
    assert (issue.kind, issue.file) == ("damaged", rel)
    assert issue.detail.startswith(f"{rel} matches its sha256 but cannot be loaded (")
    assert issue.detail.endswith("the model is damaged; build or download the model again")
    assert main(["translate", "--model", str(bundle), "Hello"]) == 1
    err_text = capsys.readouterr().err
    assert "build or download the model again" in err_text and "Traceback" not in err_text


def test_a_graph_whose_names_differ_from_the_manifest_is_damaged(bundle):
    onnx = pytest.importorskip("onnx")  # the build extra edits the graph

    path = bundle / "int8" / "encoder.onnx"
    model = onnx.load(str(path), load_external_data=False)
    model.graph.input[1].name = "mask"
    for node in model.graph.node:
        node.input[:] = ["mask" if n == "attention_mask" else n for n in node.input]
    path.write_bytes(model.SerializeToString())
    relist(bundle, "int8/encoder.onnx")
    with pytest.raises(BundleError) as err:
        Translator(bundle, threads=1)
    (issue,) = err.value.issues
    assert (issue.kind, issue.file) == ("damaged", "int8/encoder.onnx")
    assert "inputs/outputs" in issue.detail
