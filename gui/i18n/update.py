"""Refresh the translation files after changing user-visible strings.

    python -m gui.i18n.update

runs `pyside6-lupdate` over gui/ (new strings appear in qiao_zh_CN.ts as unfinished; translate them with Qt
Linguist or by hand) and `pyside6-lrelease` to compile the .qm the app loads. Both .ts and .qm are committed; a test
fails if either is out of date.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
GUI = HERE.parent
TS_FILES = [HERE / "qiao_zh_CN.ts"]


def tool(name: str) -> str:
    """pyside6-lupdate / pyside6-lrelease, from the same environment as this Python."""
    local = Path(sys.executable).with_name(name)
    return str(local) if local.exists() else (shutil.which(name) or name)


def sources() -> list[str]:
    return sorted(str(p) for p in GUI.rglob("*.py"))  # gui/quick/ too


def lupdate(ts: Path) -> None:
    cmd = [tool("pyside6-lupdate"), *sources(), "-source-language", "en", "-target-language", "zh_CN"]
    subprocess.run([*cmd, "-no-obsolete", "-locations", "none", "-ts", str(ts)], check=True)


def lrelease(ts: Path, qm: Path) -> None:
    subprocess.run([tool("pyside6-lrelease"), str(ts), "-qm", str(qm)], check=True)


def main() -> int:
    for ts in TS_FILES:
        lupdate(ts)
        lrelease(ts, ts.with_suffix(".qm"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
