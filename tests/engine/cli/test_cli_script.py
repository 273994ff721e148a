"""`qiao translate --variant hant` with a model that writes Simplified only (issue 29: a feature that cannot apply
says so): the tiny Firefox-family en→zh bundle (no script token, as Firefox's) chosen for en→zh, the tiny opus-mt
fixture (>>cmn_Hans<< / >>cmn_Hant<<) beside it or not. The real engine translates; the command says once on stderr
what was written instead and which installed model writes Traditional, and --json records the variant written.
`qiao translate-file --variant hant` says it once per run and writes (and records in its job) Simplified."""

from __future__ import annotations

import io
import json
import sys

from engine.cli.main import main
from engine.options import TranslationOptions
from engine.pipeline.translator import Translator
from tests.engine import model_helpers

store = model_helpers.store
TEXT = "Thank you very much."
FIREFOX, OPUS = model_helpers.FIREFOX_ENZH, model_helpers.OPUS_ENZH


def run(monkeypatch, capsys, argv: list[str], stdin: bytes = b"") -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


install = model_helpers.install_enzh


def expected(bundle, variant: str | None = None, text: str = TEXT) -> str:
    return Translator(bundle, precision="int8").translate(text, TranslationOptions(variant=variant)).text


def test_traditional_of_a_simplified_only_model_is_noted_and_recorded_as_simplified(monkeypatch, capsys, install):
    models = install(FIREFOX, OPUS)
    code, out, err = run(monkeypatch, capsys, ["translate", "--variant", "hant", "--json", TEXT])
    assert code == 0, err
    record = json.loads(out)
    assert record["variant"] == "hans" and record["direction"] == "en-zh"
    assert record["text"] == expected(models[FIREFOX]) and record["text"]
    assert (
        f"note: {FIREFOX} writes Simplified Chinese only: this translation is in Simplified, not Traditional "
        f"({OPUS} writes Traditional: --model {OPUS})"
    ) in err


def test_the_note_is_said_once_for_many_lines_and_each_record_says_simplified(monkeypatch, capsys, install):
    install(FIREFOX, OPUS)
    code, out, err = run(monkeypatch, capsys, ["translate", "--variant", "hant", "--json"], b"Hello.\nGood night.\n")
    assert code == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["variant"] for r in records] == ["hans", "hans"]
    assert err.count(f"note: {FIREFOX} writes Simplified Chinese only") == 1


def test_plain_output_says_it_too(monkeypatch, capsys, install):
    models = install(FIREFOX)
    code, out, err = run(monkeypatch, capsys, ["translate", "--variant", "hant", TEXT])
    assert code == 0 and out == expected(models[FIREFOX]) + "\n"
    assert "this translation is in Simplified, not Traditional" in err
    assert f"no installed en-zh model writes Traditional: `qiao model download {OPUS}` gets one" in err


def test_a_model_that_writes_traditional_writes_it_without_a_note(monkeypatch, capsys, install):
    models = install(FIREFOX, OPUS)
    code, out, err = run(monkeypatch, capsys, ["translate", "--model", OPUS, "--variant", "hant", "--json", TEXT])
    assert code == 0 and "note:" not in err
    record = json.loads(out)
    assert record["variant"] == "hant" and record["text"] == expected(models[OPUS], "hant")


def test_simplified_asked_of_the_simplified_only_model_is_no_news(monkeypatch, capsys, install):
    install(FIREFOX)
    code, out, err = run(monkeypatch, capsys, ["translate", "--variant", "hans", "--json", TEXT])
    assert code == 0 and "note:" not in err and json.loads(out)["variant"] == "hans"
    code, out, err = run(monkeypatch, capsys, ["translate", "--json", TEXT])
    assert code == 0 and "note:" not in err and json.loads(out)["variant"] == "hans", "the default is what it writes"


def test_an_unknown_variant_is_still_an_error(monkeypatch, capsys, install):
    install(FIREFOX)
    code, out, err = run(monkeypatch, capsys, ["translate", "--model", FIREFOX, "--variant", "latn", TEXT])
    assert code == 1 and out == "" and "unknown variant 'latn'" in err


# `qiao translate-file --variant hant`: the same note once per run, and the documents written in Simplified.


def _documents(folder, count: int = 2) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"doc{i}.txt" for i in range(count)]
    for path in paths:
        path.write_text(f"{TEXT}\nI like green tea.\n", encoding="utf-8")  # both translated (not empty) by the fixtures
    return [str(p) for p in paths]


def test_translate_file_notes_traditional_once_per_run_and_writes_simplified(monkeypatch, capsys, install, tmp_path):
    install(FIREFOX, OPUS)
    docs = _documents(tmp_path / "in")
    argv = ["translate-file", *docs, "--variant", "hant", "--out", str(tmp_path / "hant")]
    code, out, err = run(monkeypatch, capsys, argv)
    assert code == 0, err
    note = (
        f"note: {FIREFOX} writes Simplified Chinese only: this translation is in Simplified, not Traditional "
        f"({OPUS} writes Traditional: --model {OPUS})"
    )
    assert err.count(note) == 1 and err.count("note:") == 1, err  # two documents, one note
    assert len(out.splitlines()) == 2
    simplified = ["translate-file", *docs, "--variant", "hans", "--out", str(tmp_path / "s")]
    code, _, err = run(monkeypatch, capsys, simplified)
    assert code == 0 and "note:" not in err
    for name in ("doc0.zh.txt", "doc1.zh.txt"):
        written = (tmp_path / "hant" / name).read_text(encoding="utf-8")
        assert written and written == (tmp_path / "s" / name).read_text(encoding="utf-8")


def test_translate_file_runs_the_variant_written_so_its_progress_records_it(monkeypatch, capsys, install, tmp_path):
    """The job (and so its progress file, which a resumed run must match) carries Simplified, the script written,
    as the window's document jobs do; without another model the note says how to get one."""
    import engine.cli.documents as documents

    jobs = []

    class SpyJob(documents.DocumentJob):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            jobs.append(self)

    monkeypatch.setattr(documents, "DocumentJob", SpyJob)
    install(FIREFOX)
    code, _, err = run(monkeypatch, capsys, ["translate-file", *_documents(tmp_path, 1), "--variant", "hant"])
    assert code == 0, err
    assert [job.translation.variant for job in jobs] == ["hans"]
    assert f"no installed en-zh model writes Traditional: `qiao model download {OPUS}` gets one" in err


def test_translate_file_with_a_model_that_writes_traditional_has_no_note(monkeypatch, capsys, install, tmp_path):
    models = install(FIREFOX, OPUS)
    argv = ["translate-file", *_documents(tmp_path, 1), "--model", OPUS, "--variant", "hant"]
    code, _, err = run(monkeypatch, capsys, argv)
    assert code == 0 and "note:" not in err, err
    written = (tmp_path / "doc0.zh.txt").read_text(encoding="utf-8")
    assert expected(models[OPUS], "hant") in written
