"""Post-process a frozen app folder on Linux, then check it: the steps PyInstaller's own options cannot do safely.

    python packaging/finish_dist.py dist/qiao [--json report.json]

1. Strip symbol tables from ELF files that carry them (libpython from pyenv/python.org builds, extension modules):
   about 25 MB. PyInstaller's `strip=True` strips everything, which corrupts auditwheel-patched libraries
   (numpy.libs/…: "ELF load command address/offset not page-aligned"), so *.libs folders are skipped and every
   stripped file is checked with ldd and restored if it no longer loads.
2. Trim ICU's data library to what Qt uses (packaging/trim_icu.py): 32 MB → under 4 MB.
3. Run packaging/check_dist.py (forbidden packages, dangling links, unresolved libraries, size report).

On Windows and macOS only step 3 runs (DLLs carry no symbol tables; macOS binaries are signed by PyInstaller and
must not be modified afterwards).
"""

from __future__ import annotations

import argparse
import shutil
import struct
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_dist
import trim_icu


def has_symtab(path: Path) -> bool:
    """True for a little-endian ELF64 file with a .symtab section (what `strip` removes)."""
    with open(path, "rb") as fh:
        head = fh.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2:
            return False
        shoff = struct.unpack_from("<Q", head, 0x28)[0]
        shentsize, shnum = struct.unpack_from("<HH", head, 0x3A)
        fh.seek(shoff)
        table = fh.read(shentsize * shnum)
    return any(struct.unpack_from("<I", table, i * shentsize + 4)[0] == 2 for i in range(shnum))  # SHT_SYMTAB


def loads(path: Path) -> bool:
    return subprocess.run(["ldd", str(path)], capture_output=True).returncode == 0


def strip_dist(dist: Path) -> tuple[int, int]:
    """Strip what is safe to strip; returns (files stripped, bytes saved)."""
    strip = shutil.which("strip")
    if not strip:
        print("finish_dist: no `strip` found; skipping", file=sys.stderr)
        return 0, 0
    count = saved = 0
    for path in sorted(dist.rglob("*")):
        if path.is_symlink() or not path.is_file() or any(p.endswith(".libs") for p in path.parts):
            continue
        if path.name.startswith("libicudata") or not has_symtab(path):
            continue
        before = path.stat().st_size
        backup = path.with_name(path.name + ".unstripped")
        shutil.copy2(path, backup)
        subprocess.run([strip, "--strip-unneeded", str(path)], check=True)
        if loads(path):
            backup.unlink()
            count += 1
            saved += before - path.stat().st_size
        else:
            backup.replace(path)
            print(f"finish_dist: {path.relative_to(dist)} does not load once stripped; kept as it was", file=sys.stderr)
    return count, saved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="strip, trim ICU and check a frozen Qiao app folder")
    parser.add_argument("dist", type=Path, nargs="?", default=Path("dist/qiao"))
    parser.add_argument("--json", type=Path, help="write check_dist's report here")
    parser.add_argument("--keep-icu", action="store_true", help="leave ICU's data library as the wheel ships it")
    args = parser.parse_args(argv)
    if sys.platform.startswith("linux"):
        count, saved = strip_dist(args.dist)
        print(f"finish_dist: stripped {count} files, {saved / 1e6:.1f} MB saved")
        if not args.keep_icu:
            for lib in sorted(args.dist.rglob("libicudata.so.*")):
                if lib.is_symlink():
                    continue
                before, after, size_before, size_after = trim_icu.trim(lib)
                print(
                    f"finish_dist: {lib.relative_to(args.dist)}: ICU data {before} → {after} items, "
                    f"{size_before / 1e6:.1f} → {size_after / 1e6:.1f} MB"
                )
    check_args = [str(args.dist)] + (["--json", str(args.json)] if args.json else [])
    return check_dist.main(check_args)


if __name__ == "__main__":
    raise SystemExit(main())
