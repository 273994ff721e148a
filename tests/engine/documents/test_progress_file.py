"""The progress file: what it records, and that a torn, damaged or foreign file is never mixed into a document."""

from __future__ import annotations

import json
from pathlib import Path

from engine.documents import progress_file
from engine.documents.model import Run, Unit

UNITS = [
    Unit((Run("Hello "), Run("world"))),
    Unit((Run("Use "), Run("`code`", fixed=True), Run(" here."))),
    Unit((Run("Bye."),)),
]
FINGERPRINT = {"sha256": "ab" * 32, "format": "lines", "options": {"beams": None}, "target_lang": "zh"}


def written(tmp_path: Path, *steps) -> Path:
    path = progress_file.path_for(tmp_path / "doc.zh.lines")
    writer = progress_file.Writer(path, FINGERPRINT, fresh=True)
    for step in steps:
        writer.append(step)
    return path


def test_name_is_hidden_beside_the_result(tmp_path):
    assert progress_file.path_for(tmp_path / "report.zh.docx") == tmp_path / ".report.zh.docx.qiao-partial"


def test_round_trip(tmp_path):
    path = written(tmp_path, [(0, ["你好", "世界"])], [(2, ["再见。"])])
    assert progress_file.load(path, FINGERPRINT, UNITS) == {0: ["你好", "世界"], 2: ["再见。"]}
    header = json.loads(path.read_bytes().splitlines()[0])
    assert header == {"qiao_partial": progress_file.VERSION, "fingerprint": FINGERPRINT}
    assert path.read_bytes().isascii()  # no character of a text can be taken for a line break


def test_units_kept_in_the_source_language_say_so_and_an_unknown_kind_is_ignored(tmp_path):
    path = progress_file.path_for(tmp_path / "doc.zh.lines")
    writer = progress_file.Writer(path, FINGERPRINT, fresh=True)
    writer.append([(0, ["Hello ", "world"]), (1, ["用 ", "`code`", " 这里。"])], {0: "unit"})
    writer.append([(2, ["再见。 Bye."])], {2: "sentences"})
    with open(path, "a", encoding="utf-8") as stream:  # a kind this version does not know: the unit, without it
        stream.write(json.dumps({"i": 1, "runs": ["a", "`code`", "b"], "kept": "other"}) + "\n")
    kept: dict[int, str] = {}
    done = progress_file.load(path, FINGERPRINT, UNITS, kept)
    assert done == {0: ["Hello ", "world"], 1: ["a", "`code`", "b"], 2: ["再见。 Bye."]}
    assert kept == {0: "unit", 2: "sentences"}
    assert progress_file.load(path, FINGERPRINT, UNITS) == done  # without `kept`, as before


def test_nothing_is_written_until_a_unit_is_finished(tmp_path):
    path = written(tmp_path, [])
    assert not path.exists()
    assert progress_file.load(path, FINGERPRINT, UNITS) is None


def test_appending_to_a_resumed_file_keeps_one_header(tmp_path):
    path = written(tmp_path, [(0, ["a", "b"])])
    progress_file.Writer(path, FINGERPRINT, fresh=False).append([(2, ["c"])])
    assert progress_file.load(path, FINGERPRINT, UNITS) == {0: ["a", "b"], 2: ["c"]}
    assert len(path.read_bytes().splitlines()) == 3


def test_a_torn_last_line_is_dropped_and_cut_off(tmp_path):
    path = written(tmp_path, [(0, ["a", "b"])])
    good = path.read_bytes()
    with open(path, "ab") as stream:
        stream.write(b'{"i": 2, "runs": ["c')
    assert progress_file.load(path, FINGERPRINT, UNITS) == {0: ["a", "b"]}
    assert path.read_bytes() == good  # so the next append starts on a line of its own
    progress_file.Writer(path, FINGERPRINT, fresh=False).append([(2, ["c"])])
    assert progress_file.load(path, FINGERPRINT, UNITS) == {0: ["a", "b"], 2: ["c"]}


def test_a_complete_but_invalid_last_line_is_dropped_too(tmp_path):
    path = written(tmp_path, [(0, ["a", "b"])])
    with open(path, "ab") as stream:
        stream.write(b"\x00\x00\x00\n")  # what some file systems leave after a crash: zeros
    assert progress_file.load(path, FINGERPRINT, UNITS) == {0: ["a", "b"]}


def test_another_fingerprint_or_a_damaged_header_means_starting_over(tmp_path):
    path = written(tmp_path, [(0, ["a", "b"])])
    assert progress_file.load(path, {**FINGERPRINT, "sha256": "cd" * 32}, UNITS) is None
    assert progress_file.load(path, {**FINGERPRINT, "options": {"beams": 4}}, UNITS) is None
    path.write_bytes(b"not json\n" + path.read_bytes())
    assert progress_file.load(path, FINGERPRINT, UNITS) is None
    path.write_bytes(b"")
    assert progress_file.load(path, FINGERPRINT, UNITS) is None
    path.write_bytes(json.dumps({"qiao_partial": 99, "fingerprint": FINGERPRINT}).encode() + b"\n")
    assert progress_file.load(path, FINGERPRINT, UNITS) is None


def test_entries_that_do_not_fit_the_document_stop_the_reading(tmp_path):
    bad_entries = [
        (5, ["x"]),  # no such unit
        (2, ["x", "y"]),  # unit 2 has one run
        (1, ["Use ", "`changed`", " here."]),  # a fixed run is verbatim, always
    ]
    for entry in bad_entries:
        path = written(tmp_path, [(0, ["a", "b"])], [entry], [(2, ["c"])])
        assert progress_file.load(path, FINGERPRINT, UNITS) == {0: ["a", "b"]}
    path = written(tmp_path, [(0, ["a", "b"])])
    with open(path, "ab") as stream:
        stream.write(b'{"i": true, "runs": ["c"]}\n[1, 2]\n')
    assert progress_file.load(path, FINGERPRINT, UNITS) == {0: ["a", "b"]}


def test_remove(tmp_path):
    path = written(tmp_path, [(0, ["a", "b"])])
    progress_file.remove(path)
    assert not path.exists()
    progress_file.remove(path)  # already gone: fine


def test_a_last_record_without_its_line_end_is_torn_too(tmp_path):
    """The record may be whole and only its "\\n" missing: it is still cut off, so the next append starts a line."""
    path = written(tmp_path, [(0, ["a", "b"])])
    with open(path, "ab") as stream:
        stream.write(b'{"i":2,"runs":["c"]}')
    assert progress_file.load(path, FINGERPRINT, UNITS) == {0: ["a", "b"]}
    progress_file.Writer(path, FINGERPRINT, fresh=False).append([(2, ["d"])])
    assert progress_file.load(path, FINGERPRINT, UNITS) == {0: ["a", "b"], 2: ["d"]}
