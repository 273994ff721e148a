"""Which files `qiao translate-file IN...` takes: files as given, folders searched, results and hidden files skipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.documents import discover
from engine.documents.model import DocumentError
from tests.engine.documents import fakes


@pytest.fixture(autouse=True)
def lines_format(monkeypatch):
    fakes.install(monkeypatch)


def touch(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("Hello.\n", encoding="utf-8")


def rel(root: Path, paths: list[Path]) -> list[str]:
    return [p.relative_to(root).as_posix() for p in paths]


def test_folders_are_searched_recursively_for_supported_files(tmp_path):
    touch(tmp_path, "b.lines", "a.lines", "sub/c.LINES", "sub/deeper/d.lines", "notes.txt", "image.png")
    found = discover.expand([tmp_path], "zh")
    assert rel(tmp_path, found) == ["a.lines", "b.lines", "sub/c.LINES", "sub/deeper/d.lines"]


def test_hidden_folders_partial_files_and_results_are_skipped(tmp_path):
    touch(
        tmp_path,
        "a.lines",
        "a.zh.lines",  # our result for zh
        "a.en.lines",  # a result for another target: an input like any other
        ".hidden.lines",
        ".git/x.lines",
        "sub/.cache/y.lines",
        ".a.zh.lines.qiao-partial",
        ".a.zh.lines.abc123.tmp",
    )
    assert rel(tmp_path, discover.expand([tmp_path], "zh")) == ["a.en.lines", "a.lines"]
    assert rel(tmp_path, discover.expand([tmp_path], "en")) == ["a.lines", "a.zh.lines"]


def test_results_follow_the_name_template(tmp_path):
    touch(tmp_path, "a.lines", "zh-a.lines", "a.zh.lines")
    found = discover.expand([tmp_path], "zh", name_template="{lang}-{stem}{suffix}")
    assert rel(tmp_path, found) == ["a.lines", "a.zh.lines"]
    # A template with nothing to tell a result by (into another folder) skips nothing.
    assert len(discover.expand([tmp_path], "zh", name_template="{stem}{suffix}")) == 3


def test_files_are_taken_as_given(tmp_path):
    touch(tmp_path, "scan.pdf", "a.zh.lines", ".hidden.lines", "b.lines")
    given = [tmp_path / "scan.pdf", tmp_path / "b.lines", tmp_path / "a.zh.lines", tmp_path / ".hidden.lines"]
    assert discover.expand(given, "zh") == given  # in the order given; the job explains what it cannot read


def test_each_file_once(tmp_path):
    touch(tmp_path, "a.lines", "sub/b.lines")
    found = discover.expand([tmp_path / "a.lines", tmp_path, tmp_path / "sub" / ".." / "a.lines"], "zh")
    assert rel(tmp_path, found) == ["a.lines", "sub/b.lines"]


def test_a_forced_format_searches_its_own_extensions(tmp_path):
    touch(tmp_path, "a.lines", "b.txt")
    assert rel(tmp_path, discover.expand([tmp_path], "zh", format="lines")) == ["a.lines"]
    with pytest.raises(DocumentError, match="unknown document format"):
        discover.expand([tmp_path], "zh", format="nope")


def test_a_missing_path_is_an_error_before_anything(tmp_path):
    touch(tmp_path, "a.lines")
    with pytest.raises(DocumentError, match=r"missing\.lines: no such file or folder"):
        discover.expand([tmp_path / "a.lines", tmp_path / "missing.lines"], "zh")


def test_an_empty_folder_gives_nothing(tmp_path):
    assert discover.expand([tmp_path], "zh") == []
