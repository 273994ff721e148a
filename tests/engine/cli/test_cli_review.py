"""`qiao translate`'s review data and flags: per-sentence records and scores in --json, --alternatives, --prefix,
--glossary, --no-guards, the notes on stderr, and hostile values for each."""

from __future__ import annotations

import io
import json
import sys
import types

import pytest

from engine.cli.main import main
from engine.errors import InputError
from engine.glossary import Glossary, GlossaryEntry
from engine.pipeline.translator import Translator
from tests.engine.cli_fakes import ReviewTranslator, install


def run(monkeypatch, capsys, argv, stdin=""):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8"))
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def review(monkeypatch):
    return install(monkeypatch, ReviewTranslator)


def translate(monkeypatch, capsys, bundle_dir, *args, stdin=""):
    return run(monkeypatch, capsys, ["translate", "--model", str(bundle_dir), *args], stdin)


def test_json_records_carry_every_sentence_and_its_score(monkeypatch, capsys, bundle_dir, review):
    code, out, err = translate(monkeypatch, capsys, bundle_dir, "--json", "--alternatives", "2", "Hi? a1")
    assert code == 0, err
    (record,) = [json.loads(line) for line in out.splitlines()]
    assert record["text"] == "Hi? a1" and record["scores"] == [-0.1, -0.1]
    first, second = record["sentences"]
    assert first == {
        "source": "Hi?",
        "text": "Hi?",
        "score": -0.1,
        "tokens": [
            {"id": ord("H"), "text": "H", "logprob": -0.1},
            {"id": ord("i"), "text": "i", "logprob": -0.1},
            {"id": ord("?"), "text": "?", "logprob": -2.0},
        ],
        "flags": [],
        "cut": False,
        "alternatives": [{"text": "Hi? (1)", "score": -2.0}, {"text": "Hi? (2)", "score": -3.0}],
        "origin": "model",
        "unmet": [],
    }
    assert second["flags"] == [{"kind": "numbers", "detail": "“a1” has a number"}]
    assert review.instances[0].options[0].alternatives == 2


def test_each_json_line_gets_its_sentences(monkeypatch, capsys, bundle_dir, review):
    code, out, _ = translate(monkeypatch, capsys, bundle_dir, "--json", stdin="one two\nthree\n")
    assert code == 0
    records = [json.loads(line) for line in out.splitlines()]
    assert [[s["text"] for s in r["sentences"]] for r in records] == [["one", "two"], ["three"]]
    assert [len(r["scores"]) for r in records] == [2, 1]


def test_plain_output_notes_flagged_sentences_on_stderr(monkeypatch, capsys, bundle_dir, review):
    code, out, err = translate(monkeypatch, capsys, bundle_dir, "fine 2021 ok")
    assert code == 0 and out == "fine 2021 ok\n"
    assert "note: sentence 2: “2021” has a number" in err.splitlines()
    assert "sentence 1" not in err and "sentence 3" not in err


def test_guards_are_on_unless_no_guards(monkeypatch, capsys, bundle_dir, review):
    translate(monkeypatch, capsys, bundle_dir, "hello")
    translate(monkeypatch, capsys, bundle_dir, "--no-guards", "hello")
    assert [t.options[0].guards for t in review.instances] == [True, False]


@pytest.mark.parametrize("value", ["8", "-1", "two", "1.5", "99999999999999999999"])
def test_alternatives_out_of_range_is_a_usage_error(capsys, value):
    with pytest.raises(SystemExit) as exc:
        main(["translate", "--alternatives", value, "hello"])
    assert exc.value.code == 2 and "--alternatives" in capsys.readouterr().err


def test_prefix_forces_the_start_of_the_one_sentence(monkeypatch, capsys, bundle_dir, review):
    code, out, err = translate(monkeypatch, capsys, bundle_dir, "--prefix", "我们", "Hello there.")
    assert code == 0, err
    assert out == "我们Hello there.\n"
    fake = review.instances[0]
    assert fake.seen == ["Hello there."] and fake.prefixes == ["我们"]
    code, out, _ = translate(monkeypatch, capsys, bundle_dir, "--json", "--prefix", "我", stdin="Hi.\n")
    record = json.loads(out)
    assert code == 0 and record["text"] == "我Hi." and record["scores"] == [-0.5]
    assert record["sentences"][0]["tokens"][0] == {"id": ord("我"), "text": "我", "logprob": -0.5}


@pytest.mark.parametrize(
    ("prefix", "text", "message"),
    [
        ("我们", "One sentence. And another one.", "the input has 2 sentences"),
        ("我们", "...", "the input has no sentence to translate"),
        ("", "Hello.", "--prefix is empty"),
        ("   ", "Hello.", "--prefix is empty"),
        ("我\x00们", "Hello.", r"control character \(U\+0000\)"),
        ("我\n们", "Hello.", r"control character \(U\+000A\)"),
        ("\x1b[31m", "Hello.", r"control character \(U\+001B\)"),
    ],
)
def test_bad_prefixes_are_clear_errors(monkeypatch, capsys, bundle_dir, review, prefix, text, message):
    import re

    code, out, err = translate(monkeypatch, capsys, bundle_dir, "--prefix", prefix, text)
    assert code != 0 and out == "" and re.search(message, err), err
    assert "Traceback" not in err


def glossary_module(monkeypatch, read):
    module = types.ModuleType("engine.glossary_io")
    module.read_glossary = read
    monkeypatch.setitem(sys.modules, "engine.glossary_io", module)


def test_glossary_file_becomes_the_requests_glossary(monkeypatch, capsys, bundle_dir, review, tmp_path):
    path = tmp_path / "terms.csv"
    path.write_text("Qiao,乔\n", encoding="utf-8")
    read = []

    def read_glossary(source, format=None):
        read.append(source)
        return Glossary((GlossaryEntry("Qiao", "乔"),))

    glossary_module(monkeypatch, read_glossary)
    code, _, err = translate(monkeypatch, capsys, bundle_dir, "--glossary", str(path), "Qiao")
    assert code == 0, err
    assert read == [path] and review.instances[0].options[0].glossary == Glossary((GlossaryEntry("Qiao", "乔"),))


def test_a_malformed_glossary_names_the_file_and_the_line(monkeypatch, capsys, bundle_dir, review, tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_text("a\tb\tc\td\te\n", encoding="utf-8")

    def read_glossary(source, format=None):
        raise InputError("line 1: 5 columns; a glossary has source, target, case, whole_word")

    glossary_module(monkeypatch, read_glossary)
    code, _, err = translate(monkeypatch, capsys, bundle_dir, "--glossary", str(path), "hi")
    assert code != 0 and str(path) in err and "line 1: 5 columns" in err and not review.instances


def test_a_glossary_that_is_not_utf8_is_a_clear_error(monkeypatch, capsys, bundle_dir, review, tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes("café,coffee\n".encode("latin-1"))
    glossary_module(monkeypatch, lambda source, format=None: source.read_text(encoding="utf-8"))
    code, _, err = translate(monkeypatch, capsys, bundle_dir, "--glossary", str(path), "hi")
    assert code != 0 and "not UTF-8" in err and "Traceback" not in err


@pytest.mark.parametrize("kind", ["missing", "folder"])
def test_a_glossary_path_that_is_no_file(monkeypatch, capsys, bundle_dir, review, tmp_path, kind):
    path = tmp_path / "nothing.csv" if kind == "missing" else tmp_path
    code, _, err = translate(monkeypatch, capsys, bundle_dir, "--glossary", str(path), "hi")
    expected = "no such file" if kind == "missing" else "is a folder"
    assert code != 0 and expected in err and str(path) in err and "Traceback" not in err


def test_a_build_without_glossary_io_says_so(monkeypatch, capsys, bundle_dir, review, tmp_path):
    monkeypatch.setitem(sys.modules, "engine.glossary_io", None)
    path = tmp_path / "terms.csv"
    path.write_text("a,b\n", encoding="utf-8")
    code, _, err = translate(monkeypatch, capsys, bundle_dir, "--glossary", str(path), "hi")
    assert code != 0 and "cannot read glossaries" in err


def test_help_documents_every_review_flag(capsys):
    with pytest.raises(SystemExit):
        main(["translate", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for flag in ("--alternatives K", "--prefix TEXT", "--glossary FILE", "--no-guards", '"sentences"', '"scores"'):
        assert flag in out


def test_the_real_model_fills_sentences_and_scores(monkeypatch, capsys, bundle_dir):
    code, out, err = translate(
        monkeypatch, capsys, bundle_dir, "--json", "--beams", "2", "--alternatives", "1", stdin="Thank you. Good!\n"
    )
    assert code == 0, err
    (record,) = [json.loads(line) for line in out.splitlines()]
    assert [s["source"] for s in record["sentences"]] == ["Thank you.", "Good!"]
    assert "".join(s["text"] for s in record["sentences"]) == record["text"]  # zh: nothing between them
    assert len(record["scores"]) == 2 and record["stats"]["beams"] == 2
    for s, ids in zip(record["sentences"], record["tokens"]):
        assert [t["id"] for t in s["tokens"]] == ids and s["origin"] == "model"
        assert "".join(t["text"] for t in s["tokens"]) == s["text"].replace(" ", "")


@pytest.mark.skipif(not hasattr(Translator, "translate_sentence"), reason="Translator.translate_sentence (H1)")
def test_the_real_model_forces_a_prefix(monkeypatch, capsys, bundle_dir):
    code, plain, err = translate(monkeypatch, capsys, bundle_dir, "Thank you.")
    assert code == 0, err
    start = plain.strip()[:1]
    code, out, err = translate(monkeypatch, capsys, bundle_dir, "--json", "--prefix", start, "Thank you.")
    assert code == 0, err
    assert json.loads(out)["text"].startswith(start)
