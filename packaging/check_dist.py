"""Check a frozen app folder (dist/qiao) and report what is in it; exits 1 if it must not ship.

    python packaging/check_dist.py dist/qiao [--json report.json]

Fails when a build-only package (torch, transformers, optimum, sentencepiece, onnx, …) is inside, whether as a
module in the executable's archive, a folder, a shared library or package metadata; when Qiao's own build-time code
(engine.convert, a model family's converter under engine/families/<family>/converter/, the graph writer the
converters share) is in the archive; when a symbolic link dangles; and on Linux when a bundled library links
something that neither the app nor the system provides. Reports the installed size with and without the embedded
models, broken down by component.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from qiao_bundle_rules import BUILD_ONLY_APP_MODULES, FORBIDDEN_PACKAGES, SYSTEM_LIBRARIES

COMPONENTS = [  # first match wins; patterns are matched against the path inside the app folder
    ("models", r"^(_internal/)?models/|^Contents/Resources/models/"),
    ("Qt: ICU", r"libicu"),
    ("Qt: libraries and plugins", r"PySide6/|Qt6|libQt|libpyside|shiboken6"),
    ("onnxruntime", r"onnxruntime"),
    ("numpy and OpenBLAS", r"numpy"),
    ("tokenizers", r"tokenizers"),
    ("Python runtime and stdlib", r"libpython|python3|base_library\.zip|lib-dynload|\.pyd$|^(_internal/)?python"),
    ("executable (with the app's bytecode)", r"^qiao(-cli)?(\.exe)?$|^Contents/MacOS/"),
]


def executables(dist: Path) -> list[Path]:
    names = ["qiao", "qiao.exe", "qiao-cli.exe"]
    return [dist / n for n in names if (dist / n).is_file()]


def archive_modules(exe: Path) -> set[str]:
    """Module names inside the executable's PYZ archive (what `import` can find without the folder)."""
    from PyInstaller.archive.readers import CArchiveReader

    reader = CArchiveReader(str(exe))
    modules = {name for name in reader.toc if not name.endswith(".pyz")}
    for name in reader.toc:
        if name.endswith(".pyz"):
            modules.update(reader.open_embedded_archive(name).toc)
    return modules


def _forbidden_name(name: str) -> str | None:
    """The build-only package a module, folder, metadata folder or library name belongs to, if any."""
    n = name.lower().replace("-", "_")
    top = n.split(".")[0]
    for pkg in FORBIDDEN_PACKAGES:
        if top == pkg or re.fullmatch(rf"{pkg}_\d[\w.]*\.(dist|egg)_info", n):
            return pkg
        if re.fullmatch(rf"(lib)?{pkg}(_\w+)?\.(so(\.\d+)*|dylib|dll|pyd)", n):
            return pkg
    return None


def build_only_app_module(module: str) -> str | None:
    """The build-only part of Qiao itself a module belongs to (engine.convert, a family's `build` package), if any:
    the frozen app runs bundles, it never converts models."""
    return next((m for m in BUILD_ONLY_APP_MODULES if module == m or module.startswith(f"{m}.")), None)


def forbidden_contents(dist: Path) -> list[str]:
    """Every sign of a build-only package in the app: archive modules, folders, libraries, metadata."""
    found: list[str] = []
    for exe in executables(dist):
        for module in sorted(archive_modules(exe)):
            if _forbidden_name(module) or build_only_app_module(module):
                found.append(f"{exe.name}: module {module}")
    roots = {"_internal", "Frameworks", "Resources"}  # onedir's package folder; a macOS bundle's two halves
    for path in sorted(dist.rglob("*")):
        rel = path.relative_to(dist)
        top_level = len(rel.parts) == 1 or rel.parts[-2] in roots
        if (top_level or path.is_file()) and _forbidden_name(path.name):
            found.append(rel.as_posix())
    return found


def dangling_links(dist: Path) -> list[str]:
    return [str(p.relative_to(dist)) for p in dist.rglob("*") if p.is_symlink() and not p.exists()]


def unresolved_libraries(dist: Path) -> tuple[list[str], list[str]]:
    """Linux: (libraries a bundled ELF file needs that ldd cannot find, system libraries the app expects).

    A missing library is a problem unless it is one the desktop's graphics stack provides (SYSTEM_LIBRARIES), which
    PyInstaller leaves out on purpose; those are only listed (e.g. libwayland-cursor on a build host without Wayland).
    """
    if not sys.platform.startswith("linux"):
        return [], []
    problems: list[str] = []
    system: set[str] = set()
    for path in sorted(dist.rglob("*")):
        if path.is_symlink() or not path.is_file() or not _is_elf(path):
            continue
        proc = subprocess.run(["ldd", str(path)], capture_output=True, text=True)
        for lib, target in re.findall(r"^\s*(\S+) => (.*?)\s*(?:\(0x[0-9a-f]+\))?$", proc.stdout, re.M):
            if SYSTEM_LIBRARIES.match(lib):
                system.add(lib)
            elif target == "not found":
                problems.append(f"{path.relative_to(dist)}: needs {lib}")
        if proc.returncode != 0:  # e.g. "not a dynamic executable" for a library a bad strip corrupted
            problems.append(f"{path.relative_to(dist)}: ldd failed: {(proc.stderr or proc.stdout).strip()}")
    return problems, sorted(system)


def _is_elf(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(4) == b"\x7fELF"


def size_report(dist: Path) -> dict:
    """Installed size in bytes: total, models, the app without models, per component, and the largest files."""
    files = []
    for path in dist.rglob("*"):
        if path.is_file() and not path.is_symlink():
            files.append((path.relative_to(dist).as_posix(), path.stat().st_size))
    by_component: dict[str, int] = {}
    for rel, size in files:
        name = next((label for label, pattern in COMPONENTS if re.search(pattern, rel)), "other")
        by_component[name] = by_component.get(name, 0) + size
    total = sum(s for _, s in files)
    models = by_component.get("models", 0)
    return {
        "total_bytes": total,
        "models_bytes": models,
        "app_without_models_bytes": total - models,
        "files": len(files),
        "by_component": dict(sorted(by_component.items(), key=lambda kv: -kv[1])),
        "largest": [{"path": rel, "bytes": size} for rel, size in sorted(files, key=lambda f: -f[1])[:15]],
    }


def check(dist: Path) -> dict:
    """All checks and the size report, as one JSON-able dict; `ok` is False when the app must not ship."""
    report = {
        "dist": str(dist),
        "forbidden": forbidden_contents(dist),
        "dangling_links": dangling_links(dist),
        "size": size_report(dist),
    }
    report["unresolved_libraries"], report["system_libraries"] = unresolved_libraries(dist)
    report["ok"] = not (report["forbidden"] or report["dangling_links"] or report["unresolved_libraries"])
    return report


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="check a frozen Qiao app folder")
    parser.add_argument("dist", type=Path, nargs="?", default=Path("dist/qiao"))
    parser.add_argument("--json", type=Path, help="also write the report here")
    args = parser.parse_args(argv)
    if not executables(args.dist):
        print(f"check_dist: no qiao executable in {args.dist}", file=sys.stderr)
        return 1
    report = check(args.dist)
    size = report["size"]
    print(
        f"check_dist: {args.dist}: {_mb(size['app_without_models_bytes'])} without models "
        f"(+ {_mb(size['models_bytes'])} models), {size['files']} files"
    )
    for name, n in size["by_component"].items():
        print(f"  {n / 1e6:7.1f} MB  {name}")
    if report["system_libraries"]:
        print(f"  expects from the system: {', '.join(report['system_libraries'])}")
    for key, title in (
        ("forbidden", "build-only packages inside the app"),
        ("dangling_links", "dangling symbolic links"),
        ("unresolved_libraries", "libraries that cannot be resolved"),
    ):
        if report[key]:
            print(f"check_dist: FAILED: {title}:", file=sys.stderr)
            for item in report[key]:
                print(f"  - {item}", file=sys.stderr)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    if os.environ.get("GITHUB_STEP_SUMMARY") and report["ok"]:
        with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as fh:
            fh.write(f"Frozen app: {_mb(size['app_without_models_bytes'])} without models\n")
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
