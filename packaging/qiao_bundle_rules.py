"""What the frozen app may contain: shared by qiao.spec (pruning at build time) and check_dist.py (checking after).

A plain module in the `packaging/` scripts folder (never a package: a top-level `packaging` would shadow PyPA's).
Qt is handled by allow-list because its PyInstaller hook collects every plugin and translation a module *could*
use; the app uses QtCore, QtGui and QtWidgets on the desktop platforms only.
"""

from __future__ import annotations

import json
import posixpath
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

# Reverse-DNS id shared by the macOS bundle, the AppStream metainfo (resources/linux/<APP_ID>.metainfo.xml) and
# the Windows installer's AppId. A placeholder until the project's public home (GitHub organisation) is settled.
APP_ID = "io.github.qiao.Qiao"

# Build-only packages: present in a dev venv (the `build` extra), never allowed in the app. check_dist.py fails the
# build if any of these top-level names shows up in the frozen app's archive or folder.
FORBIDDEN_PACKAGES = (
    "torch",
    "torchvision",
    "transformers",
    "optimum",
    "sentencepiece",
    "onnx",  # the Python package (onnxruntime is fine: it is the runtime)
    "onnxscript",
    "sacrebleu",
    "safetensors",
    "huggingface_hub",
    "tensorflow",
    "jax",
)

# Every family keeps its checkpoint reader and graph builder in a `build` subpackage: build time only.
BUILD_MODULES = sorted(
    f"engine.families.{path.parent.parent.name}.converter"
    for path in (Path(__file__).resolve().parents[1] / "engine" / "families").glob("*/converter/__init__.py")
)

# Modules outside those packages that only the converters use: the ONNX graph writer both families build with.
SHARED_BUILD_MODULES = ("engine.bundle.graph_writer",)

# Qiao's own build-time code: the model-build pipeline (it imports torch; `qiao model build` says it needs
# qiao[build]), each family's converter (engine/families/<family>/converter/: onnx, sentencepiece) and what the
# converters share (SHARED_BUILD_MODULES: onnx). Excluded from the freeze, and check_dist.py fails the build if one of
# them (or a module under it) is in the archive anyway.
BUILD_ONLY_APP_MODULES = ("engine.convert", *BUILD_MODULES, *SHARED_BUILD_MODULES)

EXCLUDED_MODULES = [
    *FORBIDDEN_PACKAGES,
    *BUILD_ONLY_APP_MODULES,
    # optional imports of numpy/onnxruntime/… that pull in big or irrelevant trees
    "tkinter",
    "_tkinter",
    "matplotlib",
    "PIL",
    "IPython",
    "yaml",
    "psutil",
    "requests",
    "urllib3",
    "numpy.f2py",
    "numpy.testing",
    "numpy.random",  # the engine decodes deterministically; numpy only loads these lazily, on first use
    "numpy.fft",
    "numpy.polynomial",
    "numpy.distutils",
    "pytest",
    "unittest",
    "doctest",
    "pdb",
    "pydoc",
    "xmlrpc",
    "ssl",  # the app never opens a connection; hashlib keeps OpenSSL's libcrypto through _hashlib
    "ftplib",
    "http.server",
    "setuptools",
    "pkg_resources",
    "distutils",
    # Qt modules the app does not use (it imports QtCore, QtGui, QtWidgets only)
    *(
        f"PySide6.{m}"
        for m in (
            "QtNetwork",
            "QtOpenGL",
            "QtOpenGLWidgets",
            "QtQml",
            "QtQuick",
            "QtQuickWidgets",
            "QtQuickControls2",
            "QtSvg",
            "QtSvgWidgets",
            "QtWebEngineCore",
            "QtWebEngineWidgets",
            "QtWebEngineQuick",
            "QtWebChannel",
            "QtWebSockets",
            "QtMultimedia",
            "QtMultimediaWidgets",
            "Qt3DCore",
            "Qt3DRender",
            "Qt3DExtras",
            "QtPdf",
            "QtPdfWidgets",
            "QtSql",
            "QtTest",
            "QtPrintSupport",
            "QtDesigner",
            "QtUiTools",
            "QtHelp",
            "QtXml",
            "QtConcurrent",
            "QtCharts",
            "QtDataVisualization",
            "QtGraphs",
            "QtBluetooth",
            "QtPositioning",
            "QtSensors",
            "QtSerialPort",
            "QtStateMachine",
            "QtTextToSpeech",
            "QtSpatialAudio",
            "QtRemoteObjects",
            "QtScxml",
            "QtHttpServer",
            "QtNfc",
            "QtLocation",
            "QtAxContainer",
            "QtAsyncio",
            "",
        )
    ),
]

# Linux libraries the app takes from the system instead of bundling. Two kinds:
# - the graphics stack, which PyInstaller itself never bundles (it must match the system's driver): GL/EGL, DRM,
#   libxcb, Wayland's client libraries;
# - the desktop base every X11/Wayland session already has and that the PySide6 wheel already expects from the
#   system: X11 core, fontconfig/FreeType (they must read the system's own fonts.conf), GLib, D-Bus (with
#   systemd's client library), zlib and libgcc. The AppImage project's excludelist leaves the same ones out, for the
#   same reason: bundled copies of these break on newer distributions more often than missing ones do.
# Still bundled: libstdc++ and libffi (newer than on older distributions), the xcb-util family and libxcb-cursor
# (often missing: without them Qt 6's xcb plugin cannot load), xkbcommon, OpenSSL's libcrypto.
# check_dist.py lists these as the app's system requirements instead of failing on them.
_GRAPHICS_STACK = r"E?(Open)?GLX?\w*|drm|xcb|xcb-dri\w*|wayland-(client|cursor|egl|server)"
_DESKTOP_BASE = (
    r"X11|X11-xcb|Xau|Xdmcp|bsd|md|fontconfig|freetype|expat|png16|z|bz2|brotli(common|dec|enc)|glib-2\.0|"
    r"gthread-2\.0|gobject-2\.0|gio-2\.0|gmodule-2\.0|pcre2-8|dbus-1|systemd|gcrypt|gpg-error|lz4|zstd|lzma|cap|gcc_s"
)
SYSTEM_LIBRARIES = re.compile(rf"^lib({_GRAPHICS_STACK}|{_DESKTOP_BASE})\.so(\.\d+)*$")

# Qt plugins the app can use, per OS: "<plugin dir>/<file name without lib/extension>".
_PLUGINS = {
    "linux": {
        "platforms/qxcb",  # X11 (and XWayland)
        "platforms/qwayland",  # native Wayland
        "platforms/qoffscreen",  # headless runs (tests, `QT_QPA_PLATFORM=offscreen`)
        "wayland-shell-integration/xdg-shell",
        "wayland-decoration-client/bradient",  # window decorations where the compositor draws none (GNOME)
        "platforminputcontexts/composeplatforminputcontextplugin",  # dead keys, compose sequences
        "platforminputcontexts/ibusplatforminputcontextplugin",  # input methods
        "platformthemes/qxdgdesktopportal",  # portal file dialogs and colour scheme (no GTK needed)
    },
    "win32": {"platforms/qwindows", "platforms/qoffscreen", "styles/qmodernwindowsstyle"},
    "darwin": {"platforms/qcocoa", "platforms/qoffscreen", "styles/qmacstyle"},
}
# Qt's own translations: only those of the app's UI languages (English needs none).
QT_TRANSLATIONS = {"qtbase_zh_CN.qm"}
# Windows: a 20 MB software OpenGL fallback a widgets app never loads.
_DROP_FILES = {"opengl32sw.dll", "d3dcompiler_47.dll"}

_QT_DIR = re.compile(r"^PySide6/(?:Qt/)?(plugins|translations|qml|resources|metatypes|libexec)/(.+)$")
_LIB_STEM = re.compile(r"^(?:lib)?([^.]+)")


def _platform_key() -> str:
    return "win32" if sys.platform == "win32" else "darwin" if sys.platform == "darwin" else "linux"


def keep_entry(dest: str) -> bool:
    """Whether a collected file (its path inside the app folder) belongs in the app."""
    dest = dest.replace("\\", "/")
    name = dest.rsplit("/", 1)[-1]
    if name.lower() in _DROP_FILES or re.search(r"\.dist-info/RECORD$", dest):  # RECORD: pip's file list
        return False
    if _platform_key() == "linux" and "/" not in dest and SYSTEM_LIBRARIES.match(name):
        return False
    m = _QT_DIR.match(dest)
    if not m:
        return True
    kind, rest = m.groups()
    if kind == "translations":
        return name in QT_TRANSLATIONS
    if kind == "plugins":
        folder, _, file = rest.rpartition("/")
        stem = _LIB_STEM.match(file)
        return bool(stem) and f"{folder}/{stem.group(1)}" in _PLUGINS[_platform_key()]  # type: ignore[union-attr]
    return False  # QML, Qt Quick resources, metatypes, helper executables (QtWebEngineProcess)


def _is_plain_library(dest: str) -> bool:
    """A shared library that is only there because something links it (so it can be dropped when nothing does).

    Python extension modules, Qt plugins, the Python runtime and anything inside onnxruntime/ (which dlopen()s its
    provider library) are roots and always kept.
    """
    dest = dest.replace("\\", "/")
    name = dest.rsplit("/", 1)[-1].lower()
    if re.match(r"^(lib)?python\d", name) or name.endswith(".pyd") or ".cpython-" in name or ".abi3." in name:
        return False
    if not re.search(r"\.(so(\.\d+)*|dll|dylib)$", name):
        return False
    folder = dest.rsplit("/", 1)[0] if "/" in dest else ""
    return folder in ("", "PySide6", "PySide6/Qt/lib", "shiboken6")


def _basename(dest: str) -> str:
    return dest.replace("\\", "/").rsplit("/", 1)[-1].lower()


def drop_unlinked_libraries(
    binaries: Iterable[tuple[str, str, str]], imports_of: Callable[[str], Iterable[tuple[str, str | None]]]
) -> tuple[list[tuple[str, str, str]], list[str]]:
    """Remove shared libraries that no kept binary links any more (e.g. GTK after its Qt theme plugin went).

    `imports_of(src)` is PyInstaller's bindepend.get_imports. Returns (kept entries, dropped dest names).
    """
    entries = list(binaries)
    dropped: list[str] = []
    cache: dict[str, list[str]] = {}

    def links(src: str) -> list[str]:
        if src not in cache:
            cache[src] = [_basename(lib) for lib, _path in imports_of(src)]
        return cache[src]

    while True:
        needed: set[str] = set()
        for _dest, src, kind in entries:
            if kind != "SYMLINK":
                needed.update(links(src))
        keep = [e for e in entries if e[2] == "SYMLINK" or not _is_plain_library(e[0]) or _basename(e[0]) in needed]
        if len(keep) == len(entries):
            return keep, dropped
        dropped += [e[0] for e in entries if e not in keep]
        entries = keep


def drop_dangling_links(toc: Iterable[tuple[str, str, str]], present: set[str]) -> list[tuple[str, str, str]]:
    """Remove SYMLINK entries (dest, target relative to the link's folder) whose target is no longer collected."""
    out = []
    for dest, src, kind in toc:
        if kind == "SYMLINK":
            folder = posixpath.dirname(dest.replace("\\", "/"))
            if posixpath.normpath(posixpath.join(folder, src.replace("\\", "/"))) not in present:
                continue
        out.append((dest, src, kind))
    return out


def models_notice(bundles: Iterable[Path]) -> str:
    """The models' part of the app's copyright notice (macOS Info.plist): each embedded bundle by its folder name
    with the licence its manifest states, since the installers embed whichever model is best per direction
    (opus-mt: CC-BY-4.0; Mozilla's Firefox models: MPL-2.0)."""
    parts = []
    for bundle in bundles:
        raw = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
        parts.append(f"{bundle.name} ({raw['model']['license']})")
    return f"Models: {', '.join(parts)}." if parts else "No model embedded."
