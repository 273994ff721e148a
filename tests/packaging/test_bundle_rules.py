"""What qiao.spec keeps and drops: Qt allow-lists, orphaned libraries, dangling links, system libraries."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
import qiao_bundle_rules as rules

from .conftest import ROOT


def test_packaging_folder_does_not_shadow_pypa_packaging():
    """Run from the repository root (sys.path[0] = ''), `import packaging` must still find PyPA's library."""
    assert not (ROOT / "packaging" / "__init__.py").exists()
    code = "import packaging.version, sys; print(packaging.version.__file__)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "-packages" in out and not out.startswith(str(ROOT / "packaging"))


@pytest.mark.parametrize(
    ("dest", "kept"),
    [
        ("PySide6/Qt/translations/qtbase_zh_CN.qm", True),
        ("PySide6/Qt/translations/qtbase_de.qm", False),
        ("PySide6/Qt/translations/qt_zh_CN.qm", False),
        ("PySide6/Qt/qml/QtQuick/qmldir", False),
        ("PySide6/Qt/lib/libQt6Core.so.6", True),
        ("numpy/_core/_multiarray_umath.cpython-311-x86_64-linux-gnu.so", True),
        ("numpy-2.4.6.dist-info/RECORD", False),
        ("numpy-2.4.6.dist-info/LICENSE.txt", True),
        ("PySide6/opengl32sw.dll", False),
    ],
)
def test_keep_entry(dest, kept):
    assert rules.keep_entry(dest) is kept


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux plugin names")
@pytest.mark.parametrize(
    ("dest", "kept"),
    [
        ("PySide6/Qt/plugins/platforms/libqxcb.so", True),
        ("PySide6/Qt/plugins/platforms/libqwayland.so", True),
        ("PySide6/Qt/plugins/platforms/libqoffscreen.so", True),
        ("PySide6/Qt/plugins/platforms/libqvnc.so", False),
        ("PySide6/Qt/plugins/platforms/libqeglfs.so", False),
        ("PySide6/Qt/plugins/platformthemes/libqgtk3.so", False),
        ("PySide6/Qt/plugins/imageformats/libqjpeg.so", False),
        ("PySide6/Qt/plugins/tls/libqopensslbackend.so", False),
        ("PySide6/Qt/plugins/platforminputcontexts/libibusplatforminputcontextplugin.so", True),
        ("libX11.so.6", False),  # the desktop provides it
        ("libxcb-cursor.so.0", True),  # often missing, Qt's xcb plugin needs it
        ("libstdc++.so.6", True),
    ],
)
def test_keep_entry_linux(dest, kept):
    assert rules.keep_entry(dest) is kept


def test_unlinked_libraries_are_dropped_transitively():
    links = {
        "/s/qxcb.so": ["libQt6XcbQpa.so.6"],
        "/s/libQt6XcbQpa.so.6": ["libxcb-cursor.so.0"],
        "/s/libxcb-cursor.so.0": [],
        "/s/libgtk.so": ["libcairo.so.2"],  # was only needed by a dropped plugin
        "/s/libcairo.so.2": [],
        "/s/mod.cpython-311-x86_64-linux-gnu.so": [],
    }
    toc = [
        ("PySide6/Qt/plugins/platforms/libqxcb.so", "/s/qxcb.so", "BINARY"),
        ("PySide6/Qt/lib/libQt6XcbQpa.so.6", "/s/libQt6XcbQpa.so.6", "BINARY"),
        ("libxcb-cursor.so.0", "/s/libxcb-cursor.so.0", "BINARY"),
        ("libgtk-3.so.0", "/s/libgtk.so", "BINARY"),
        ("libcairo.so.2", "/s/libcairo.so.2", "BINARY"),
        ("pkg/mod.cpython-311-x86_64-linux-gnu.so", "/s/mod.cpython-311-x86_64-linux-gnu.so", "EXTENSION"),
        ("libQt6XcbQpa.so.6", "PySide6/Qt/lib/libQt6XcbQpa.so.6", "SYMLINK"),
    ]
    kept, dropped = rules.drop_unlinked_libraries(toc, lambda src: [(n, None) for n in links[src]])
    assert sorted(dropped) == ["libcairo.so.2", "libgtk-3.so.0"]
    assert [e[0] for e in kept] == [e[0] for e in toc if e[0] not in dropped]


def test_dangling_links_are_dropped():
    toc = [
        ("libQt6Svg.so.6", "PySide6/Qt/lib/libQt6Svg.so.6", "SYMLINK"),
        ("libQt6Core.so.6", "PySide6/Qt/lib/libQt6Core.so.6", "SYMLINK"),
        ("PySide6/Qt/lib/libQt6Core.so.6", "/x/libQt6Core.so.6", "BINARY"),
    ]
    present = {"PySide6/Qt/lib/libQt6Core.so.6"}
    assert [e[0] for e in rules.drop_dangling_links(toc, present)] == [
        "libQt6Core.so.6",
        "PySide6/Qt/lib/libQt6Core.so.6",
    ]


def test_every_build_only_package_is_excluded_from_analysis():
    for pkg in ("torch", "transformers", "optimum", "sentencepiece", "onnx", "engine.convert"):
        assert pkg in rules.EXCLUDED_MODULES
    assert "onnxruntime" not in rules.EXCLUDED_MODULES


def test_every_model_family_keeps_its_converter_out_and_its_runtime_in():
    """Each family's `build` package (onnx, sentencepiece at import) is excluded; its runtime modules are not."""
    families = sorted(p.parent.name for p in (ROOT / "engine" / "families").glob("*/__init__.py"))
    assert {"marian", "bergamot"} <= set(families)
    for family in families:
        assert f"engine.families.{family}.converter" in rules.EXCLUDED_MODULES
        assert f"engine.families.{family}.converter" in rules.BUILD_ONLY_APP_MODULES
    runtime = [m for m in rules.EXCLUDED_MODULES if m.startswith("engine.") and not m.endswith(".converter")]
    assert runtime == ["engine.convert", "engine.bundle.graph_writer"]


def _imports_onnx(path: Path) -> bool:
    """Whether a module imports the `onnx` package anywhere (a lazy import inside a function counts)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "onnx" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "onnx":
            return True
    return False


def test_every_engine_module_that_imports_onnx_is_build_only():
    """onnx is a build-only package (FORBIDDEN_PACKAGES): a module of Qiao's own that imports it must be excluded
    from the freeze too, wherever it lives (the converters, and what they share such as engine/bundle/
    graph_writer.py), or the app would carry a module that fails on import."""
    from check_dist import build_only_app_module

    modules = []
    for path in sorted((ROOT / "engine").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if _imports_onnx(path):
            modules.append(".".join(parts))
    assert "engine.bundle.graph_writer" in modules
    assert [m for m in modules if build_only_app_module(m) is None] == []


@pytest.mark.parametrize(
    ("name", "system"),
    [
        ("libGL.so.1", True),
        ("libwayland-client.so.0", True),
        ("libfontconfig.so.1", True),
        ("libz.so.1", True),
        ("libffi.so.8", False),
        ("libxkbcommon.so.0", False),
        ("libxcb-icccm.so.4", False),
        ("libcrypto.so.3", False),
    ],
)
def test_system_libraries(name, system):
    assert bool(rules.SYSTEM_LIBRARIES.match(name)) is system


def test_the_copyright_notice_names_each_embedded_model_with_its_own_licence(tmp_path):
    for name, license_ in (("firefox-translations-enzh-base-memory", "MPL-2.0"), ("opus-mt-zh-en", "CC-BY-4.0")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "manifest.json").write_text(json.dumps({"model": {"license": license_}}), encoding="utf-8")
    bundles = sorted(tmp_path.iterdir())
    assert rules.models_notice(bundles) == (
        "Models: firefox-translations-enzh-base-memory (MPL-2.0), opus-mt-zh-en (CC-BY-4.0)."
    )
    assert rules.models_notice([]) == "No model embedded."
