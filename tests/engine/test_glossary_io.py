"""Reading and writing glossaries as CSV/TSV: headers, comments, BOM, do-not-translate, errors with line numbers,
size limits, and a byte-exact round trip of awkward fields."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine import glossary_io
from engine.errors import InputError
from engine.glossary import Glossary, GlossaryEntry
from engine.glossary_io import format_glossary, read_glossary, write_glossary


def test_tsv_with_header_comments_blank_lines_and_defaults(tmp_path):
    path = tmp_path / "terms.tsv"
    path.write_text(
        "# my terms\nsource\ttarget\tcase_sensitive\twhole_word\n\nQiao\t\nGPU\t显卡\tyes\tno\n  # indented note\n"
        "train\t火车\n",
        encoding="utf-8",
    )
    g = read_glossary(path)
    assert g == Glossary(
        entries=(
            GlossaryEntry("Qiao", None, False, True),
            GlossaryEntry("GPU", "显卡", True, False),
            GlossaryEntry("train", "火车", False, True),
        ),
        protect=True,
    )
    assert g.entries[0].keep and not g.entries[1].keep


def test_csv_without_header_with_bom_and_crlf(tmp_path):
    path = tmp_path / "terms.csv"
    path.write_bytes('\ufeffNew York,纽约\r\n"Smith, John",约翰·史密斯,1\r\n'.encode())
    g = read_glossary(path)
    assert [(e.source, e.target, e.case_sensitive) for e in g.entries] == [
        ("New York", "纽约", False),
        ("Smith, John", "约翰·史密斯", True),
    ]


def test_header_columns_in_another_order_and_aliases():
    g = read_glossary("target,Source,Match case\n火车,train,no\n", format="csv")
    assert g.entries == (GlossaryEntry("train", "火车", False, True),)


def test_format_is_sniffed_from_text_when_not_named():
    assert read_glossary("a\tb,c\n").entries == (GlossaryEntry("a", "b,c"),)  # a tab: TSV
    assert read_glossary("a,b\n").entries == (GlossaryEntry("a", "b"),)  # no tab: CSV


def test_an_entry_whose_term_is_source_is_not_a_header():
    assert read_glossary("source,来源\n", format="csv").entries == (GlossaryEntry("source", "来源"),)


def test_later_line_for_the_same_term_wins():
    g = read_glossary("Qiao\t桥\nqiao\t乔\nQiao\tQiao\tyes\n")
    assert g.entries == (GlossaryEntry("qiao", "乔"), GlossaryEntry("Qiao", "Qiao", True, True))


def test_protect_comment():
    assert read_glossary("# protect: no\na\tb\n").protect is False
    assert read_glossary("# protect: yes\na\tb\n").protect is True


@pytest.mark.parametrize(
    ("text", "fmt", "line", "words"),
    [
        ("a\tb\n\tc\n", "tsv", 2, "no source term"),
        ("a,b\nc,d,maybe\n", "csv", 2, "case_sensitive must be yes or no, not 'maybe'"),
        ("a,b\nc,d,yes,no,extra\n", "csv", 2, "5 fields"),
        ('a,b\n"unclosed,x\n', "csv", 2, "line 2"),
        ("source\ttarget\tcolour\nx\ty\n", "tsv", 1, "unknown column 'colour'"),
    ],
)
def test_malformed_lines_name_the_line(text, fmt, line, words):
    with pytest.raises(InputError) as err:
        read_glossary(text, format=fmt)
    assert f"line {line}" in str(err.value)
    assert words in str(err.value)


def test_not_utf8_names_the_line(tmp_path):
    path = tmp_path / "g.tsv"
    path.write_bytes(b"a\tb\nc\t\xb9\xfe\n")
    with pytest.raises(InputError, match=r"g\.tsv, line 2: not UTF-8"):
        read_glossary(path)


def test_huge_file_is_refused_before_reading(tmp_path, monkeypatch):
    monkeypatch.setattr(glossary_io, "MAX_BYTES", 100)
    path = tmp_path / "big.csv"
    path.write_text("a,b\n" * 30, encoding="utf-8")
    with pytest.raises(InputError, match=r"big\.csv is 0\.0 MB; a glossary may be at most"):
        read_glossary(path)


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"), reason="POSIX FIFOs, /dev/zero")
@pytest.mark.timeout(30)
def test_devices_and_fifos_are_refused_without_reading(tmp_path):
    """Issue 27: `--glossary /dev/zero` read without limit (its size says 0) and a FIFO glossary hung."""
    from engine.cli.translate import _glossary

    fifo = tmp_path / "terms.tsv"
    os.mkfifo(fifo)
    for source in (fifo, str(fifo), "/dev/zero"):
        with pytest.raises(InputError, match="not a regular file"):
            read_glossary(source)
    with pytest.raises(InputError, match=r"--glossary /dev/zero: /dev/zero is not a regular file"):
        _glossary(Path("/dev/zero"))


def test_a_file_that_grows_past_the_limit_while_read_is_refused(tmp_path, monkeypatch):
    """The size is checked once open and the read stops one byte past the limit, whatever the size said."""
    path = tmp_path / "g.tsv"
    path.write_text("a\tb\n" * 10, encoding="utf-8")
    monkeypatch.setattr(glossary_io, "MAX_BYTES", 100)
    real_fstat = os.fstat
    monkeypatch.setattr(
        glossary_io.os, "fstat", lambda fd: os.stat_result((*real_fstat(fd)[:6], 0, *real_fstat(fd)[7:]))
    )
    path.write_text("a\tb\n" * 60, encoding="utf-8")
    with pytest.raises(InputError, match="a glossary may be at most"):
        read_glossary(path)


def test_too_many_entries_refused(monkeypatch):
    monkeypatch.setattr(glossary_io, "MAX_ENTRIES", 3)
    with pytest.raises(InputError, match="more than 3 entries"):
        read_glossary("".join(f"t{i}\tx\n" for i in range(5)))


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot read the glossary"):
        read_glossary(tmp_path / "none.tsv")


AWKWARD = Glossary(
    entries=(
        GlossaryEntry("Smith, John", "约翰, 史密斯", True, False),
        GlossaryEntry('say "hi"', "说“嗨”"),
        GlossaryEntry("tab\there", "制表\t符"),
        GlossaryEntry("two\nlines", "两\r\n行"),
        GlossaryEntry("#hashtag", "话题"),
        GlossaryEntry("Qiao"),
        GlossaryEntry("{name}", "{name}"),
    ),
    protect=False,
)


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
def test_round_trip_keeps_every_field(tmp_path, fmt):
    path = tmp_path / f"g.{fmt}"
    write_glossary(AWKWARD, path, fmt)
    assert read_glossary(path) == AWKWARD
    assert read_glossary(path.read_bytes().decode("utf-8"), format=fmt) == AWKWARD
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_written_file_is_plain_and_has_a_header(tmp_path):
    text = format_glossary(Glossary((GlossaryEntry("GPU", "显卡"),)), "csv")
    assert text == "source,target,case_sensitive,whole_word\nGPU,显卡,no,yes\n"


def test_write_is_atomic_a_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "g.tsv"
    write_glossary(Glossary((GlossaryEntry("a", "b"),)), path)
    before = path.read_bytes()

    def broken(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken)
    with pytest.raises(OSError):
        write_glossary(Glossary((GlossaryEntry("c", "d"),)), path)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["g.tsv"]


def test_unknown_format_is_refused(tmp_path):
    with pytest.raises(InputError, match="unknown glossary format"):
        read_glossary("a,b\n", format="xlsx")
    with pytest.raises(InputError, match="unknown glossary format"):
        write_glossary(Glossary(), tmp_path / "g.x", "xlsx")


# Terms a spreadsheet would run as formulas (CSV injection), and ones that only look close to them.
FORMULAS = Glossary(
    (
        GlossaryEntry('=HYPERLINK("http://evil.example","x")', "=1+1"),
        GlossaryEntry("+cmd", "-2"),
        GlossaryEntry("@SUM(A1)", "'=already quoted"),
        GlossaryEntry("-ish", None),
        GlossaryEntry("'til", "直到"),
        GlossaryEntry("e=mc2", "a-b"),
    )
)


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
def test_formula_cells_are_quoted_for_spreadsheets_and_read_back_exactly(tmp_path, fmt):
    import csv

    path = tmp_path / f"g.{fmt}"
    write_glossary(FORMULAS, path, fmt)
    text = path.read_text(encoding="utf-8")
    assert text.splitlines()[0] == glossary_io.EXPORT_MARK
    rows = list(csv.reader(text.splitlines()[1:], dialect="excel-tab" if fmt == "tsv" else "excel"))[1:]
    cells = [cell for row in rows for cell in row[:2] if cell]
    # no cell a spreadsheet would evaluate: each starts with a quote or an ordinary character
    assert not [c for c in cells if c[0] in "=+-@\t\r"]
    assert rows[0][:2] == ['\'=HYPERLINK("http://evil.example","x")', "'=1+1"]
    assert rows[2][1] == "''=already quoted"  # one quote added, one taken off again on import
    assert rows[4][0] == "'til" and rows[5][:2] == ["e=mc2", "a-b"]  # nothing added where nothing is needed
    assert read_glossary(path) == FORMULAS


def test_a_quote_typed_in_a_file_qiao_did_not_write_is_kept():
    g = read_glossary("'=x,y\n'-z,w\n", format="csv")
    assert [e.source for e in g.entries] == ["'=x", "'-z"]


def test_the_mark_survives_a_spreadsheet_padding_the_line():
    text = format_glossary(Glossary((GlossaryEntry("=a", "b"),)), "csv")
    padded = text.replace(glossary_io.EXPORT_MARK, glossary_io.EXPORT_MARK + ",,,")
    assert [e.source for e in read_glossary(padded, format="csv").entries] == ["=a"]
