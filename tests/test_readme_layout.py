"""README's Development table names every module of engine/ and gui/, and no module that is gone: a newcomer reads
the tree from it, so a module added without its line (or removed with its line left) is a mistake the table would
keep silently. Each folder's modules are looked for in its own row or the nearest row above it (a family's
converter/ in the family's row, engine/documents/formats/ in the documents row)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
TABLE_HEADING = "| Path | What it holds |"
PACKAGES = ("engine", "gui")


def table_rows() -> dict[str, str]:
    """{"engine/bundle": row text, "engine": the root row, …} from the Development table."""
    lines = README.read_text(encoding="utf-8").splitlines()
    start = lines.index(TABLE_HEADING) + 2
    rows = {}
    for line in lines[start:]:
        if not line.startswith("| `"):
            break
        first, _, rest = line[2:].partition(" | ")
        path = re.match(r"`([^`]+)`", first)
        assert path is not None, line
        rows[path.group(1).rstrip("/")] = rest
    return rows


def modules() -> dict[Path, list[str]]:
    """Every folder of engine/ and gui/ holding Python modules, with its modules' file names (no __init__.py)."""
    found: dict[Path, list[str]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "__pycache__" in path.parts or path.name == "__init__.py":
                continue
            found.setdefault(path.parent.relative_to(ROOT), []).append(path.name)
    return found


def row_for(folder: Path, rows: dict[str, str]) -> tuple[str, str]:
    """The row of `folder`, or of the nearest folder above it that has one."""
    for candidate in (folder, *folder.parents):
        if candidate.as_posix() in rows:
            return candidate.as_posix(), rows[candidate.as_posix()]
    raise AssertionError(f"no row in README's Development table for {folder} or a folder above it")


def named(module: str, row: str) -> bool:
    """`name.py`, or a format named by its stem (`txt`), or a `_`-prefixed helper where the row says they exist."""
    stem = module.removesuffix(".py")
    if f"`{module}`" in row or f"`{stem}`" in row:
        return True
    return stem.startswith("_") and "`_`-prefixed" in row


def test_every_module_of_engine_and_gui_is_named_in_its_row():
    rows = table_rows()
    missing = [
        f"{folder}/{module} (row {row_for(folder, rows)[0]})"
        for folder, names in modules().items()
        for module in names
        if not named(module, row_for(folder, rows)[1])
    ]
    assert missing == [], "README's Development table lacks " + ", ".join(missing)


@pytest.mark.parametrize("package", PACKAGES)
def test_every_module_a_row_names_exists(package):
    rows = table_rows()
    gone = []
    for key, row in rows.items():
        if key.split("/")[0] != package:
            continue
        folder = ROOT / key
        for module in re.findall(r"`([A-Za-z0-9_]+\.py)`", row):
            if not any(folder.rglob(module)):
                gone.append(f"{key}: {module}")
    assert gone == [], "README's Development table names modules that are gone: " + ", ".join(gone)


def test_the_check_sees_the_tree():
    """The two checks above are not vacuous: the table and the tree are both read."""
    rows = table_rows()
    assert {"engine", "engine/bundle", "gui", "gui/window", "gui/models"} <= set(rows)
    assert "writing.py" in modules()[Path("engine/bundle")]
    assert not named("graph_writer.py", "`writing.py`")
