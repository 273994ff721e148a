"""Every gui/quick string is found by lupdate under its own context, and the committed qiao_zh_CN.ts translates it
(tests/gui/test_i18n.py checks the .ts against all of gui/, placeholders included; this one catches a string that
lost its context, e.g. through a `tr` alias lupdate cannot see)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
QUICK = HERE.parents[2] / "gui" / "quick"
TS = HERE.parents[2] / "gui" / "i18n" / "qiao_zh_CN.ts"


def lupdate_tool() -> str | None:
    local = Path(sys.executable).with_name("pyside6-lupdate")
    return str(local) if local.exists() else shutil.which("pyside6-lupdate")


def test_lupdate_finds_every_string_with_a_context_and_each_has_chinese(tmp_path):
    tool = lupdate_tool()
    if tool is None:
        pytest.skip("pyside6-lupdate not installed")
    ts = tmp_path / "quick.ts"
    files = sorted(str(p) for p in QUICK.glob("*.py"))
    subprocess.run([tool, *files, "-locations", "none", "-ts", str(ts)], check=True, capture_output=True)
    found = {
        (ctx.findtext("name"), m.findtext("source"))
        for ctx in ET.parse(ts).getroot().iter("context")
        for m in ctx.iter("message")
    }
    assert found, "lupdate found no strings"
    assert {c for c, _ in found} == {"QuickPopup", "QuickShortcut"}, "a string without its context (a `tr` alias?)"
    translated = {
        (ctx.findtext("name"), m.findtext("source")): m.findtext("translation")
        for ctx in ET.parse(TS).getroot().iter("context")
        for m in ctx.iter("message")
    }
    for key in found:
        assert translated.get(key), f"{key} has no Chinese in qiao_zh_CN.ts (python -m gui.i18n.update, then translate)"
