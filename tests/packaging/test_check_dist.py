"""check_dist: build-only packages are found wherever they hide; sizes are attributed to components."""

from __future__ import annotations

import check_dist
import pytest
from check_dist import _forbidden_name, build_only_app_module, dangling_links, forbidden_contents, size_report


@pytest.mark.parametrize(
    ("name", "pkg"),
    [
        ("torch", "torch"),
        ("torch.nn.functional", "torch"),
        ("torch-2.13.0.dist-info", "torch"),
        ("libtorch_cpu.so", "torch"),
        ("transformers", "transformers"),
        ("optimum", "optimum"),
        ("sentencepiece", "sentencepiece"),
        ("libsentencepiece.so.0", "sentencepiece"),
        ("onnx", "onnx"),
        ("onnx.helper", "onnx"),
        ("onnxruntime", None),
        ("libonnxruntime.so.1.20.0", None),
        ("onnxruntime-1.32.0.dist-info", None),
        ("numpy", None),
        ("tokenizers", None),
    ],
)
def test_forbidden_names(name, pkg):
    assert _forbidden_name(name) == pkg


def test_forbidden_contents_in_a_folder(tmp_path):
    internal = tmp_path / "_internal"
    (internal / "torch" / "lib").mkdir(parents=True)
    (internal / "torch" / "lib" / "libtorch_cpu.so").write_bytes(b"")
    (internal / "transformers-4.57.6.dist-info").mkdir()
    (internal / "onnxruntime" / "capi").mkdir(parents=True)
    (internal / "onnxruntime" / "capi" / "libonnxruntime_providers_shared.so").write_bytes(b"")
    (internal / "models" / "opus-mt-en-zh" / "int8").mkdir(parents=True)
    (internal / "models" / "opus-mt-en-zh" / "int8" / "encoder.onnx").write_bytes(b"x" * 10)  # a model, not onnx
    found = forbidden_contents(tmp_path)
    assert found == [
        "_internal/torch",
        "_internal/torch/lib/libtorch_cpu.so",
        "_internal/transformers-4.57.6.dist-info",
    ]


def test_dangling_links_and_sizes(tmp_path):
    (tmp_path / "_internal" / "models").mkdir(parents=True)
    (tmp_path / "_internal" / "models" / "m.bin").write_bytes(b"m" * 100)
    (tmp_path / "_internal" / "libicudata.so.73").write_bytes(b"i" * 10)
    (tmp_path / "qiao").write_bytes(b"e" * 5)
    (tmp_path / "_internal" / "gone.so").symlink_to("nowhere.so")
    assert dangling_links(tmp_path) == ["_internal/gone.so"]
    size = size_report(tmp_path)
    assert size["total_bytes"] == 115 and size["models_bytes"] == 100 and size["app_without_models_bytes"] == 15
    assert size["by_component"]["Qt: ICU"] == 10


@pytest.mark.parametrize(
    ("module", "part"),
    [
        ("engine.convert", "engine.convert"),
        ("engine.convert.export", "engine.convert"),
        ("engine.families.bergamot.converter", "engine.families.bergamot.converter"),
        ("engine.families.bergamot.converter.convert", "engine.families.bergamot.converter"),
        ("engine.families.marian.converter.graphs", "engine.families.marian.converter"),
        ("engine.bundle.graph_writer", "engine.bundle.graph_writer"),  # the converters' shared ONNX writer
        ("engine.bundle.writing", None),
        ("engine.bundle.manifest", None),
        ("engine.families.bergamot", None),
        ("engine.families.bergamot.model", None),
        ("engine.families.bergamot.shortlist", None),
        ("engine.families.marian.model", None),
        ("engine.converter", None),
    ],
)
def test_build_only_app_modules(module, part):
    assert build_only_app_module(module) == part


def test_a_family_converter_in_the_archive_fails_the_check(tmp_path, monkeypatch):
    """The frozen app runs bundles; a converter module that slipped into its archive would pull onnx in with it."""
    (tmp_path / "qiao").write_bytes(b"")
    archive = {
        "engine.families.bergamot",
        "engine.families.bergamot.model",
        "engine.families.bergamot.converter.reader",
    }
    monkeypatch.setattr(check_dist, "archive_modules", lambda exe: archive)
    assert forbidden_contents(tmp_path) == ["qiao: module engine.families.bergamot.converter.reader"]
