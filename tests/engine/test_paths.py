"""engine.paths: every per-user folder and `QIAO_*` variable in one documented place, and the README agrees."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from engine import paths

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("engine", "gui", "packaging", "bench", "docs", ".github", "Makefile")
# `QIAO_*` names in the source that are not environment variables.
NOT_VARIABLES = {
    "QIAO_HOME_DIRS": "packaging/offline_trace.py's tuple of Qiao's folders under HOME",
    "QIAO_BENCH_READY": "bench/worker.py's stdout marker",
}
NAME = re.compile(r"\bQIAO_[A-Z0-9_]*[A-Z0-9]\b")  # `QIAO_NOTARY_*` (a family, spelled out nearby) is no name
TEXT_SUFFIXES = {".py", ".sh", ".ps1", ".spec", ".iss", ".yml", ".yaml", ".md", ".toml", ".txt", ".cfg", ""}


def _source_files() -> list[Path]:
    files = []
    for entry in SCANNED:
        top = ROOT / entry
        candidates = [top] if top.is_file() else sorted(top.rglob("*")) if top.is_dir() else []
        files += [p for p in candidates if p.is_file() and p.suffix in TEXT_SUFFIXES and "__pycache__" not in p.parts]
    return files


def _names_in(text: str) -> set[str]:
    return set(NAME.findall(text)) - set(NOT_VARIABLES)


def _readme_section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("\n## Files and environment variables\n")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def _table_rows() -> str:
    """The README's variable table rows, as rendered from engine.paths.ENV_VARS."""
    return "\n".join(f"| `{v.name}` | {v.read_by} | {v.meaning} | {v.default} |" for v in paths.ENV_VARS)


def test_every_qiao_variable_in_the_source_is_in_the_table():
    table = {v.name for v in paths.ENV_VARS}
    found: dict[str, list[str]] = {}
    for path in _source_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for name in _names_in(text):
            found.setdefault(name, []).append(path.relative_to(ROOT).as_posix())
    assert "QIAO_MODEL_DIR" in found and "QIAO_CODESIGN_IDENTITY" in found, "the scan found nothing: wrong folders?"
    missing = {name: where for name, where in found.items() if name not in table}
    assert not missing, f"QIAO_* variables read but not in engine.paths.ENV_VARS: {missing}"
    assert len(table) == len(paths.ENV_VARS), "a variable is listed twice"


def test_readme_lists_every_variable_exactly_as_the_table_says():
    section = _readme_section()
    assert _table_rows() in section, f"README's variable table is out of date; its rows should be:\n{_table_rows()}"
    assert _names_in(section) == {v.name for v in paths.ENV_VARS}, "README names a variable the table lacks"


def test_readme_lists_each_folders_linux_and_macos_location(tmp_path, monkeypatch):
    from platformdirs.macos import MacOS
    from platformdirs.unix import Unix

    monkeypatch.setenv("HOME", str(tmp_path))
    for var in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(var, raising=False)
    section = _readme_section()
    for system in (Unix(paths.APP_NAME, appauthor=False), MacOS(paths.APP_NAME, appauthor=False)):
        for folder in (system.user_config_dir, system.user_state_dir, system.user_cache_dir, system.user_data_dir):
            shown = "~/" + Path(folder).relative_to(tmp_path).as_posix()
            assert f"`{shown}`" in section, f"{type(system).__name__}: {shown} missing from the README"


@pytest.mark.parametrize(
    ("var", "folder"),
    [(paths.CONFIG_DIR, paths.config_dir), (paths.STATE_DIR, paths.state_dir), (paths.CACHE_DIR, paths.cache_dir)],
)
def test_each_folder_override_moves_its_folder(var, folder, tmp_path, monkeypatch):
    monkeypatch.setenv(var.name, str(tmp_path / "moved"))
    assert folder() == tmp_path / "moved"
    assert var in paths.FOLDER_OVERRIDES


def test_files_live_in_their_folders(tmp_path, monkeypatch):
    for var in paths.FOLDER_OVERRIDES:
        monkeypatch.setenv(var.name, str(tmp_path / var.name))
    assert paths.settings_file() == tmp_path / "QIAO_CONFIG_DIR" / "qiao.ini"
    assert paths.autosave_file() == tmp_path / "QIAO_STATE_DIR" / "source.txt"
    assert paths.verified_files_file() == tmp_path / "QIAO_CACHE_DIR" / "verified-files.json"


def test_model_dir_and_startup_probe_overrides(tmp_path, monkeypatch):
    monkeypatch.delenv("QIAO_MODEL_DIR", raising=False)
    monkeypatch.delenv("QIAO_STARTUP_PROBE", raising=False)
    assert paths.model_dir_override() is None and paths.startup_probe_file() is None
    monkeypatch.setenv("QIAO_MODEL_DIR", "~/bundle")
    monkeypatch.setenv("QIAO_STARTUP_PROBE", str(tmp_path / "probe.txt"))
    assert paths.model_dir_override() == Path.home() / "bundle"
    assert paths.startup_probe_file() == str(tmp_path / "probe.txt")
    monkeypatch.setenv("QIAO_MODEL_DIR", "")
    assert paths.model_dir_override() is None, "an empty variable is unset (as before)"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the XDG layout is Linux's")
def test_a_fresh_home_puts_every_folder_under_home_named_qiao(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    for var in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(var, raising=False)
    for var in paths.ENV_VARS:
        monkeypatch.delenv(var.name, raising=False)
    assert paths.config_dir() == tmp_path / ".config" / "Qiao"
    assert paths.state_dir() == tmp_path / ".local" / "state" / "Qiao"
    assert paths.cache_dir() == tmp_path / ".cache" / "Qiao"
    assert paths.data_dir() == tmp_path / ".local" / "share" / "Qiao"
    assert paths.user_bundle_dir() == tmp_path / ".local" / "share" / "Qiao" / "models" / "opus-mt-en-zh"


def test_data_dir_override_moves_the_models_and_downloads(tmp_path, monkeypatch):
    monkeypatch.setenv("QIAO_DATA_DIR", str(tmp_path / "data"))
    assert paths.data_dir() == tmp_path / "data"
    assert paths.models_dir() == tmp_path / "data" / "models"
    assert paths.downloads_dir() == tmp_path / "data" / "models" / ".downloads"
    assert paths.user_bundle_dir() == tmp_path / "data" / "models" / paths.BUNDLE_NAME
    monkeypatch.setenv("QIAO_DATA_DIR", "")
    assert paths.data_dir() != tmp_path / "data", "an empty variable is unset"


def test_catalogue_url_override(monkeypatch):
    monkeypatch.delenv("QIAO_CATALOGUE_URL", raising=False)
    assert paths.catalogue_url_override() is None
    monkeypatch.setenv("QIAO_CATALOGUE_URL", "https://mirror.example/catalogue.json")
    assert paths.catalogue_url_override() == "https://mirror.example/catalogue.json"
