"""A bundle is untrusted input: every path it names must stay inside the bundle folder and be a regular file,
checked before anything is opened (absolute paths, `..`, symlinks out, devices, FIFOs, ONNX external data)."""

from __future__ import annotations

import os
import shutil

import pytest

from engine.bundle.manifest import load_manifest, verify_bundle
from engine.cli.main import main
from engine.errors import BundleError
from engine.pipeline.translator import Translator
from tests.engine.bundles import copy_bundle, relist, rewrite


@pytest.fixture
def bundle(bundle_dir, tmp_path):
    return copy_bundle(bundle_dir, tmp_path / "bundle")


def refused(bundle, capsys) -> list[tuple[str, str]]:
    """(kind, file) of each problem; the same refusal from verify, the Translator and both CLI commands."""
    with pytest.raises(BundleError) as err:
        verify_bundle(bundle)
    with pytest.raises(BundleError):
        Translator(bundle)
    assert main(["model", "verify", str(bundle)]) == 1
    assert main(["translate", "--model", str(bundle), "Thank you very much."]) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and captured.out == ""
    assert err.value.problems[0] in captured.err
    return [(p.kind, p.file) for p in err.value.issues]


def _entry(raw: dict, rel: str) -> dict:
    return raw["files"][rel]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        (("tokenizer", "file"), "/etc/passwd"),
        (("tokenizer", "pieces_file"), "../pieces.json"),
        (("tokenizer", "source_ids_file"), "int8/../../source_ids.json"),
        (("precisions", "int8", "embedding", "file"), "/dev/zero"),
        (("precisions", "fp32", "decoder"), "..\\fp32\\decoder.onnx"),
        (("graphs", "scorer", "file"), "C:/scorer.onnx"),
    ],
    ids=[
        "absolute tokenizer",
        "dotdot pieces",
        "dotdot in the middle",
        "/dev/zero embedding",
        "backslashes",
        "drive letter",
    ],
)
def test_paths_that_leave_the_bundle_are_refused(bundle, capsys, field, value):
    def change(raw):
        node = raw
        for key in field[:-1]:
            node = node[key]
        old = node[field[-1]]
        node[field[-1]] = value
        raw["files"][value] = raw["files"].pop(old)  # listed too, as a crafted bundle would

    rewrite(bundle, change)
    kinds = refused(bundle, capsys)
    assert ("outside", value) in kinds
    assert all(k in ("outside", "manifest") for k, _ in kinds)


def test_listed_file_outside_is_refused_even_if_nothing_loads_it(bundle, capsys):
    rewrite(bundle, lambda raw: raw["files"].update({"../../etc/passwd": _entry(raw, "MODEL_LICENSE.txt")}))
    assert refused(bundle, capsys) == [("outside", "../../etc/passwd")]


def test_symlinked_file_pointing_outside_is_refused(bundle, tmp_path, capsys):
    outside = tmp_path / "elsewhere.json"
    shutil.copy(bundle / "tokenizer.json", outside)  # same bytes: only where it lives is wrong
    (bundle / "tokenizer.json").unlink()
    (bundle / "tokenizer.json").symlink_to(outside)
    kinds = refused(bundle, capsys)
    assert kinds == [("outside", "tokenizer.json")]


def test_symlinked_precision_folder_pointing_outside_is_refused(bundle, tmp_path, capsys):
    shutil.move(bundle / "int8", tmp_path / "int8-elsewhere")
    (bundle / "int8").symlink_to(tmp_path / "int8-elsewhere", target_is_directory=True)
    kinds = refused(bundle, capsys)
    assert {k for k, _ in kinds} == {"outside"}
    assert {f for _, f in kinds} == {
        f"int8/{n}"
        for n in ("decoder.onnx", "decoder.weights", "embedding.bin", "encoder.onnx", "encoder.weights", "head.bin")
    }


def test_symlink_to_a_device_is_refused(bundle, capsys):
    (bundle / "int8" / "embedding.bin").unlink()
    (bundle / "int8" / "embedding.bin").symlink_to("/dev/zero")
    assert refused(bundle, capsys) == [("outside", "int8/embedding.bin")]


def test_symlink_inside_the_bundle_is_fine(bundle):
    os.replace(bundle / "pieces.json", bundle / "int8" / "pieces-real.json")
    (bundle / "pieces.json").symlink_to("int8/pieces-real.json")
    assert Translator(bundle).translate("Thank you very much.").text == "非常感谢。"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_and_folder_are_not_regular_files(bundle, capsys):
    # opening either FIFO would block forever: finishing at all shows nothing was opened before the check
    (bundle / "tokenizer.json").unlink()
    os.mkfifo(bundle / "tokenizer.json")
    (bundle / "int8" / "embedding.bin").unlink()
    os.mkfifo(bundle / "int8" / "embedding.bin")
    (bundle / "pieces.json").unlink()
    (bundle / "pieces.json").mkdir()
    kinds = refused(bundle, capsys)
    assert sorted(kinds) == [
        ("not-file", "int8/embedding.bin"),
        ("not-file", "pieces.json"),
        ("not-file", "tokenizer.json"),
    ]


def test_manifest_symlinked_outside_is_refused(bundle, tmp_path):
    shutil.move(bundle / "manifest.json", tmp_path / "manifest.json")
    (bundle / "manifest.json").symlink_to(tmp_path / "manifest.json")
    with pytest.raises(BundleError) as err:
        load_manifest(bundle)
    assert [(p.kind, p.file) for p in err.value.issues] == [("outside", "manifest.json")]


def _relocate_weights(bundle, graph: str, location: str) -> None:
    """Point every external-data entry of `graph` at `location`, and list the new graph's hash."""
    import onnx

    path = bundle / graph
    model = onnx.load(str(path), load_external_data=False)
    for tensor in model.graph.initializer:
        for entry in tensor.external_data:
            if entry.key == "location":
                entry.value = location
    path.write_bytes(model.SerializeToString())
    relist(bundle, graph)


@pytest.mark.parametrize(
    "location", ["../../outside.weights", "/etc/passwd", "sub/../../x.weights"], ids=["dotdot", "absolute", "mixed"]
)
def test_onnx_external_data_outside_the_bundle_is_refused(bundle, tmp_path, capsys, location):
    pytest.importorskip("onnx")
    shutil.copy(bundle / "int8" / "encoder.weights", tmp_path / "outside.weights")
    _relocate_weights(bundle, "int8/encoder.onnx", location)
    load_manifest(bundle)  # the manifest itself is fine: only the graph's own records lead out
    assert ("outside", "int8/encoder.onnx") in refused(bundle, capsys)


def test_onnx_external_data_must_be_listed(bundle, capsys):
    pytest.importorskip("onnx")
    shutil.copy(bundle / "int8" / "encoder.weights", bundle / "int8" / "extra.weights")
    _relocate_weights(bundle, "int8/encoder.onnx", "extra.weights")
    assert refused(bundle, capsys) == [("unlisted", "int8/extra.weights")]


def test_onnx_external_data_symlinked_outside_is_refused(bundle, tmp_path, capsys):
    shutil.move(bundle / "int8" / "decoder.weights", tmp_path / "decoder.weights")
    (bundle / "int8" / "decoder.weights").symlink_to(tmp_path / "decoder.weights")
    assert refused(bundle, capsys) == [("outside", "int8/decoder.weights")]
