"""`qiao translate --direction auto` (the default) on both real fixture bundles installed into a scratch
QIAO_DATA_DIR with `qiao model import`, as README's "To try the app offline" does: each text goes to the direction
that reads its language, --json says which, and text no installed model reads is refused with the model to get."""

from __future__ import annotations

import io
import json
import sys

import pytest

from engine.cli.main import main
from tests.conftest import BUNDLE, ZH_EN_BUNDLE
from tests.engine import model_helpers

store = model_helpers.store


def run(monkeypatch, capsys, argv, stdin=""):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8"))
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def zh_en(text: str) -> str:
    """What the zh→en fixture itself gives for `text` (the oracle: the tiny INT8 model is not always right)."""
    from engine.pipeline.translator import Translator

    return Translator(ZH_EN_BUNDLE).translate(text).text


@pytest.fixture
def both(store, monkeypatch, capsys):
    for bundle in (BUNDLE, ZH_EN_BUNDLE):
        code, _, err = run(monkeypatch, capsys, ["model", "import", str(bundle)])
        assert code == 0, err
    return store


@pytest.fixture
def en_zh_only(store, monkeypatch, capsys):
    code, _, err = run(monkeypatch, capsys, ["model", "import", str(BUNDLE)])
    assert code == 0, err
    return store


def test_chinese_goes_to_zh_en_and_english_to_en_zh(both, monkeypatch, capsys):
    code, out, err = run(monkeypatch, capsys, ["translate", "非常感谢。"])
    assert (code, out) == (0, "Thank you very much.\n"), err
    code, out, err = run(monkeypatch, capsys, ["translate", "Thank you very much."])
    assert (code, out) == (0, "非常感谢。\n"), err
    code, out, err = run(monkeypatch, capsys, ["translate", "--direction", "auto", "明天见。"])
    assert (code, out) == (0, zh_en("明天见。") + "\n"), err


def test_json_records_say_the_direction_and_the_detected_language(both, monkeypatch, capsys):
    lines = [
        "Thank you very much.",
        "非常感谢。",
        "12345",  # no letters: stays in the direction of the line before
        "https://example.org/path?q=1",
        "これは日本語の文章です。",  # kana: Japanese, refused rather than read as Chinese
        "好",  # one Han character alone is Chinese
        "See you tomorrow.",
    ]
    code, out, err = run(monkeypatch, capsys, ["translate", "--json"], stdin="\n".join(lines) + "\n")
    assert code == 1 and "1 of 7 lines not translated" in err
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["direction"] for r in records] == ["en-zh", "zh-en", "zh-en", "zh-en", None, "zh-en", "en-zh"]
    assert [r["detected"]["language"] for r in records] == ["en", "zh", "unknown", "unknown", "ja", "zh", "en"]
    assert records[0]["text"] == "非常感谢。" and records[1]["text"] == "Thank you very much."
    assert records[2]["text"] == "12345" and records[3]["text"] == "https://example.org/path?q=1"
    assert "Japanese" in records[4]["error"] and records[4]["line"] == 5
    assert records[5]["text"] == zh_en("好") and records[6]["text"] == "明天见。"


def test_json_of_one_text_names_its_direction(both, monkeypatch, capsys):
    code, out, _ = run(monkeypatch, capsys, ["translate", "--json", "非常感谢。"])
    record = json.loads(out)
    assert (
        code == 0 and record["direction"] == "zh-en" and record["detected"] == {"language": "zh", "confidence": 100.0}
    )


def test_mixed_text_keeps_the_language_it_is_mostly_in(both, monkeypatch, capsys):
    lines = ["Thank you very much, 王先生.", "我买了一部 iPhone 手机。"]
    code, out, _ = run(monkeypatch, capsys, ["translate", "--json"], stdin="\n".join(lines) + "\n")
    assert code == 0
    assert [json.loads(line)["direction"] for line in out.splitlines()] == ["en-zh", "zh-en"]


def test_chinese_without_the_zh_en_model_is_refused_naming_the_model_to_get(en_zh_only, monkeypatch, capsys):
    code, out, err = run(monkeypatch, capsys, ["translate", "非常感谢。"])
    assert code == 1 and out == ""
    assert "looks Chinese" in err and "no zh-en" in err and "qiao model download opus-mt-zh-en" in err
    code, out, _ = run(monkeypatch, capsys, ["translate", "Thank you very much."])
    assert (code, out) == (0, "非常感谢。\n")


def test_a_forced_direction_translates_anyway_with_a_note(en_zh_only, monkeypatch, capsys):
    code, out, err = run(monkeypatch, capsys, ["translate", "--direction", "en-zh", "非常感谢。"])
    assert code == 0 and out.strip()
    assert "note: the text looks Chinese, and the en-zh model reads English" in err
    code, out, _ = run(monkeypatch, capsys, ["translate", "--json", "--direction", "en-zh", "非常感谢。"])
    record = json.loads(out)
    assert record["direction"] == "en-zh" and record["detected"]["language"] == "zh" and "note" in record


def test_japanese_is_refused_in_auto_mode(both, monkeypatch, capsys):
    code, out, err = run(monkeypatch, capsys, ["translate", "東京に行きます"])
    assert code == 1 and out == "" and "looks Japanese" in err and "only English and Chinese" in err


def test_an_unknown_direction_word_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["translate", "--direction", "sideways", "Hi"])
    assert exc.value.code == 2 and "not a language pair" in capsys.readouterr().err


def test_translate_file_detects_each_document(both, monkeypatch, capsys, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "en.txt").write_text("Thank you very much.\n", encoding="utf-8")
    (docs / "zh.txt").write_text("非常感谢。\n", encoding="utf-8")
    (docs / "ja.txt").write_text("これは日本語の文章です。\n", encoding="utf-8")
    code, out, err = run(monkeypatch, capsys, ["translate-file", str(docs)])
    assert code == 1, "the Japanese document is refused"
    assert (docs / "en.zh.txt").read_text(encoding="utf-8") == "非常感谢。\n"
    assert (docs / "zh.en.txt").read_text(encoding="utf-8") == "Thank you very much.\n"
    assert not (docs / "ja.zh.txt").exists() and not (docs / "ja.en.txt").exists()
    assert "ja.txt -> failed: the text looks Japanese" in out
    assert "zh.txt: looks Chinese, translated zh-en" in err
    code, out, _ = run(monkeypatch, capsys, ["translate-file", str(docs)])
    assert "en.zh.txt ->" not in out and "zh.en.txt ->" not in out, "earlier results of either direction are not inputs"


def test_translate_file_with_a_forced_direction_notes_a_document_it_does_not_read(
    en_zh_only, monkeypatch, capsys, tmp_path
):
    doc = tmp_path / "zh.txt"
    doc.write_text("非常感谢。\n", encoding="utf-8")
    code, _, err = run(monkeypatch, capsys, ["translate-file", "--direction", "en-zh", str(doc)])
    assert code == 0 and "note: the text looks Chinese, and the en-zh model reads English" in err
    other = tmp_path / "other.txt"
    other.write_text("非常感谢。\n", encoding="utf-8")
    code, out, _ = run(monkeypatch, capsys, ["translate-file", str(other)])
    assert code == 1 and "no zh-en" in out and "qiao model download opus-mt-zh-en" in out
