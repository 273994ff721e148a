"""Shrink the ICU data library that the PySide6 wheel ships on Linux (libicudata.so.NN, 32 MB) to the few MB Qt needs.

Why: it is the single largest file of the frozen app, and Qiao uses almost none of it. Qt Core calls ICU only for
collation (QCollator), non-UTF text codecs, locale-specific case mapping and, where there is no tz database, time
zones; ICU's character properties and case mapping tables are compiled into libicuuc itself, not this data
library. So we keep ICU's core data (normalisation, converter aliases, time zones, supplemental and locale metadata,
the root collation and break rules) plus the English and Chinese locale bundles, and drop the 800-odd other locales,
the table-based legacy converters (*.cnv), the break-iterator dictionaries, stringprep profiles and character names.
A lookup for anything dropped fails cleanly inside ICU (U_MISSING_RESOURCE_ERROR) and Qt falls back (e.g. QCollator
compares code points); packaging/check_dist.py and tests/packaging exercise those paths against the trimmed library.

How: the library's only content is one exported symbol, `icudtNN_dat`, holding an ICU "common data" package (a
sorted table of contents + items). We read that package from the ELF file, keep the wanted items (same order, so
the table stays sorted for ICU's binary search), and link a new shared library with the same SONAME exporting the
same symbol (needs a C compiler: `cc`).

    python packaging/trim_icu.py dist/qiao/_internal/PySide6/Qt/lib/libicudata.so.73   # rewrites it in place
"""

from __future__ import annotations

import argparse
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

KEEP_LOCALES = re.compile(r"^(?:root|en|en_[A-Za-z0-9_]+|zh|zh_[A-Za-z0-9_]+)$")
LOCALE_NAME = re.compile(r"^[a-z]{2,3}(?:_[A-Za-z0-9]+)*$")  # "en_US_POSIX", "yue_Hant", not "likelySubtags"
DROP_EXTENSIONS = {"cnv", "spp", "cfu", "dict"}  # legacy code pages, stringprep, confusables, word dictionaries
DROP_ITEMS = {"unames.icu", "langInfo.res"}  # Unicode character names, locale-matcher distance tables
DROP_TREES = {"translit", "unit", "rbnf"}  # transliterators, unit names, number spell-out: Qt never uses them


def keep_item(name: str) -> bool:
    """Whether a package item ("icudt73l/coll/zh.res") is kept in the trimmed data."""
    parts = name.split("/")[1:]  # drop the package name
    base = parts[-1]
    stem, _, ext = base.rpartition(".")
    if ext in DROP_EXTENSIONS or base in DROP_ITEMS:
        return False
    if len(parts) > 1 and parts[0] in DROP_TREES:
        return False
    if ext == "res" and LOCALE_NAME.match(stem):
        if parts[0] == "coll":  # Chinese collation (pinyin, stroke: 0.7 MB) is for sorting Chinese; Qiao sorts none
            return stem == "root"
        return bool(KEEP_LOCALES.match(stem))
    return True


# ---- ELF: find the data symbol ------------------------------------------------------------------------------------


def find_data_symbol(elf: bytes) -> tuple[str, int, int]:
    """(symbol name, file offset, size) of the exported `icudt*_dat` symbol of a little-endian ELF64 library."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
        raise ValueError("not a little-endian ELF64 file")
    shoff = struct.unpack_from("<Q", elf, 0x28)[0]
    shentsize, shnum = struct.unpack_from("<HH", elf, 0x3A)
    sections = []
    for i in range(shnum):
        _name, kind, _flags, addr, off, size, link, _info, _align, _entsize = struct.unpack_from(
            "<IIQQQQIIQQ", elf, shoff + i * shentsize
        )
        sections.append((kind, addr, off, size, link))
    for kind, _addr, off, size, link in sections:
        if kind != 11:  # SHT_DYNSYM
            continue
        strtab_off = sections[link][2]
        for j in range(size // 24):
            st_name, _info, _other, shndx, value, sym_size = struct.unpack_from("<IBBHQQ", elf, off + j * 24)
            end = elf.index(b"\0", strtab_off + st_name)
            name = elf[strtab_off + st_name : end].decode()
            if re.fullmatch(r"icudt\d+_dat", name):
                _k, sec_addr, sec_off, _s, _l = sections[shndx]
                return name, sec_off + value - sec_addr, sym_size
    raise ValueError("no icudt*_dat symbol")


# ---- ICU common data package ("CmnD") -------------------------------------------------------------------------------


def read_package(data: bytes) -> tuple[bytes, list[tuple[str, bytes]]]:
    """(header bytes, [(item name, item bytes)]) of an ICU common data package."""
    header_size = struct.unpack_from("<H", data, 0)[0]
    if data[2:4] != b"\xda\x27" or data[12:16] != b"CmnD":
        raise ValueError("not an ICU common data package")
    count = struct.unpack_from("<I", data, header_size)[0]
    toc = [struct.unpack_from("<II", data, header_size + 4 + 8 * i) for i in range(count)]
    items = []
    for i, (name_off, data_off) in enumerate(toc):
        start = header_size + name_off
        name = data[start : data.index(b"\0", start)].decode("ascii")
        end = header_size + toc[i + 1][1] if i + 1 < count else len(data)
        items.append((name, data[header_size + data_off : end]))
    return data[:header_size], items


def write_package(header: bytes, items: list[tuple[str, bytes]]) -> bytes:
    """An ICU common data package with these items, in this order (ICU binary-searches the names)."""
    names = b"".join(name.encode("ascii") + b"\0" for name, _ in items)
    toc_size = 4 + 8 * len(items)
    names_start = toc_size
    data_start = (names_start + len(names) + 15) & ~15  # items are 16-byte aligned
    toc = [struct.pack("<I", len(items))]
    body = bytearray()
    name_off = names_start
    for name, blob in items:
        pad = (-len(body)) % 16
        body += b"\0" * pad
        toc.append(struct.pack("<II", name_off, data_start + len(body)))
        body += blob
        name_off += len(name) + 1
    out = bytearray(header)
    out += b"".join(toc)
    out += names
    out += b"\0" * (data_start - toc_size - len(names))
    out += body
    return bytes(out)


def soname_of(path: Path) -> str:
    out = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True, check=True).stdout
    m = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", out)
    return m.group(1) if m else path.name


def build_library(symbol: str, package: bytes, soname: str, out: Path) -> None:
    """Link a shared library that exports `symbol` = `package` (read-only, 16-byte aligned), like ICU's own."""
    with tempfile.TemporaryDirectory() as tmp:
        dat = Path(tmp) / "icudata.dat"
        dat.write_bytes(package)
        asm = Path(tmp) / "icudata.s"
        asm.write_text(
            f"\t.section .rodata\n\t.globl {symbol}\n\t.type {symbol}, @object\n\t.balign 16\n{symbol}:\n"
            f'\t.incbin "{dat}"\n\t.size {symbol}, . - {symbol}\n\t.section .note.GNU-stack,"",@progbits\n'
        )
        cc = shutil.which("cc") or shutil.which("gcc")
        if not cc:
            raise RuntimeError("trim_icu needs a C compiler (cc) to link the trimmed library")
        subprocess.run([cc, "-shared", "-nostdlib", f"-Wl,-soname,{soname}", "-o", str(out), str(asm)], check=True)


def trim(library: Path, out: Path | None = None) -> tuple[int, int, int, int]:
    """Trim `library` (in place unless `out`); returns (items before, items after, bytes before, bytes after)."""
    elf = library.read_bytes()
    symbol, offset, size = find_data_symbol(elf)
    header, items = read_package(elf[offset : offset + size])
    kept = [(name, blob) for name, blob in items if keep_item(name)]
    package = write_package(header, kept)
    target = out or library
    tmp = target.with_name(target.name + ".trimmed")
    build_library(symbol, package, soname_of(library), tmp)
    tmp.replace(target)
    return len(items), len(kept), len(elf), target.stat().st_size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library", type=Path, help="libicudata.so.NN to trim")
    parser.add_argument("--out", type=Path, help="write here instead of replacing the library")
    args = parser.parse_args(argv)
    before, after, size_before, size_after = trim(args.library, args.out)
    print(
        f"trim_icu: {args.library.name}: {before} → {after} items, {size_before / 1e6:.1f} → {size_after / 1e6:.1f} MB",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
