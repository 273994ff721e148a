"""Every gui/quick string is found by lupdate under its own context, and has a proposed Chinese translation."""

from __future__ import annotations

import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from .proposed_zh import PROPOSED_ZH

HERE = Path(__file__).resolve().parent
QUICK = HERE.parents[2] / "gui" / "quick"


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
    assert found == set(PROPOSED_ZH), "proposed_zh.py out of step with the code"
    for (_, source), chinese in PROPOSED_ZH.items():
        for field in ("{sequence}", "{code}", "{name}", "{count:,}", "{limit:,}"):
            assert (field in source) == (field in chinese), (source, chinese)
