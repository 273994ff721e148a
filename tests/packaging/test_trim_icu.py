"""trim_icu: the ICU data package is rewritten faithfully, keeps what Qt uses, and Qt still works on top of it."""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
import trim_icu


def fake_header() -> bytes:
    info = struct.pack("<HHBBBB4s4s4s", 20, 0, 0, 0, 2, 0, b"CmnD", b"\x01\x00\x00\x00", b"\x00" * 4)
    return struct.pack("<HBB", 32, 0xDA, 0x27) + info + b"\x00" * (32 - 4 - len(info))


@pytest.mark.parametrize(
    ("name", "kept"),
    [
        ("icudt73l/root.res", True),
        ("icudt73l/en.res", True),
        ("icudt73l/en_US_POSIX.res", True),
        ("icudt73l/zh_Hant_TW.res", True),
        ("icudt73l/de.res", False),
        ("icudt73l/yue_Hans.res", False),
        ("icudt73l/likelySubtags.res", True),
        ("icudt73l/cnvalias.icu", True),
        ("icudt73l/nfkc.nrm", True),
        ("icudt73l/ibm-1047_P100-1995.cnv", False),
        ("icudt73l/rfc3491.spp", False),
        ("icudt73l/unames.icu", False),
        ("icudt73l/coll/root.res", True),
        ("icudt73l/coll/ucadata.icu", True),
        ("icudt73l/coll/zh.res", False),
        ("icudt73l/brkitr/cjdict.dict", False),
        ("icudt73l/brkitr/line.brk", True),
        ("icudt73l/translit/root.res", False),
        ("icudt73l/zone/zh_Hant.res", True),
        ("icudt73l/curr/fr.res", False),
    ],
)
def test_keep_item(name, kept):
    assert trim_icu.keep_item(name) is kept


def test_package_round_trip():
    items = [("icudt73l/a.res", b"A" * 5), ("icudt73l/b/c.icu", b"BC" * 20), ("icudt73l/z.res", b"")]
    header = fake_header()
    data = trim_icu.write_package(header, items)
    again_header, again = trim_icu.read_package(data)
    assert again_header == header and [n for n, _ in again] == [n for n, _ in items]
    for (_, blob), (_, read) in zip(items, again):  # an item reads back with its alignment padding, if any
        assert read.startswith(blob) and len(read) - len(blob) < 16 and not read[len(blob) :].strip(b"\0")
    assert struct.unpack_from("<I", data, 32)[0] == 3
    offsets = struct.unpack_from("<6I", data, 36)
    assert all(off % 16 == 0 for off in offsets[1::2])  # item data 16-byte aligned, as ICU expects


def test_rejects_what_is_not_icu_data():
    with pytest.raises(ValueError):
        trim_icu.read_package(b"\x20\x00\x00\x00" + b"\x00" * 60)
    with pytest.raises(ValueError):
        trim_icu.find_data_symbol(b"MZ" + b"\x00" * 100)


QT_PROBE = r"""
import sys
from PySide6.QtCore import QCollator, QLocale, QStringDecoder, QTimeZone
from PySide6.QtWidgets import QApplication
app = QApplication([])
c = QCollator(QLocale("en_US"))
print(sorted(["zebra", "Apple", "apple", "banana"], key=__import__("functools").cmp_to_key(c.compare)))
zh, tw = QLocale("zh_CN").nativeLanguageName(), QLocale("zh_TW").nativeLanguageName()
print(QLocale("tr_TR").toUpper("istanbul"), zh, tw)
tz = QTimeZone(b"Asia/Shanghai")
print(tz.displayName(QTimeZone.TimeType.StandardTime, QTimeZone.NameType.LongName, QLocale("en_US")))
print(QStringDecoder("GB18030").isValid())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ICU ships inside PySide6 only on Linux")
def test_qt_runs_on_the_trimmed_library(tmp_path):
    lib = next(Path(__import__("PySide6").__file__).parent.glob("Qt/lib/libicudata.so.*"), None)
    if lib is None or not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("needs the PySide6 wheel's libicudata and a C compiler")
    out = tmp_path / lib.name
    before, after, size_before, size_after = trim_icu.trim(lib, out)
    assert after < before / 4 and size_after < 6e6 < 30e6 < size_before
    env = {"QT_QPA_PLATFORM": "offscreen", "LD_PRELOAD": str(out), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-c", QT_PROBE], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "['apple', 'Apple', 'banana', 'zebra']"  # root collation still there
    assert lines[1] == "İSTANBUL 简体中文 繁體中文"  # locale data for en and zh kept; case mapping is in libicuuc
    assert lines[2] == "China Standard Time"
    assert lines[3] == "False"  # legacy code pages are gone, as intended (Qiao reads and writes UTF-8 only)
