"""The decoder's length limit per direction (engine.pipeline.length_limits): measured rules that leave room for the
issue's
63-token English, outputs stopped at the limit flagged as cut (result, CLI note, JSON), and at the same limit the
pipeline stops where generate() stops, not one token short."""

from __future__ import annotations

import io
import json
import sys

import pytest

from engine.pipeline import length_limits
from engine.pipeline.length_limits import DEFAULT_RULE, LengthRule, length_limit, length_rule, reached_limit
from engine.pipeline.translator import Translator
from engine.results import FLAG_CUT
from tests.conftest import FIXTURE_DIR, ZH_EN_FIXTURE_DIR


def test_the_issues_zh_en_sentence_has_room():
    """17 Chinese tokens whose memorised English is 63 tokens: the old 3 × 18 + 10 = 64 left 62 and a forced end."""
    limit = length_limit(17 + 1, 512, length_rule("zh-en"))
    assert limit >= 1 + 63 + 1  # start token, the 63 tokens, the end token
    assert not reached_limit(63, limit, forced_eos=True)
    assert reached_limit(62, 3 * 18 + 10, forced_eos=True)  # what the old rule did to it


def test_rules_per_direction_and_the_model_bound():
    assert length_rule("en-zh") == LengthRule(3.0, 12) and length_rule("zh-en") == LengthRule(4.0, 12)
    assert length_rule("ja-en") == length_rule(None) == DEFAULT_RULE
    assert length_limit(11, 512, length_rule("en-zh")) == 30 + 12 + 2
    assert length_limit(11, 512, length_rule("zh-en")) == 40 + 12 + 2
    assert length_limit(400, 512, length_rule("zh-en")) == 512
    assert length_limit(1, 512, LengthRule(0.0, 0)) == 2  # room for nothing but the start and end tokens


def test_reached_limit_with_and_without_a_forced_end():
    # limit 10 counts the start token: 9 positions. Forced end: 8 tokens then the end token fill them.
    assert reached_limit(8, 10, forced_eos=True) and not reached_limit(7, 10, forced_eos=True)
    # No forced end: 9 tokens without an end is the limit; 8 and an end of the model's own choosing is not.
    assert reached_limit(9, 10, forced_eos=False) and not reached_limit(8, 10, forced_eos=False)


@pytest.mark.parametrize(
    ("fixture", "src_col", "tgt_col"), [(FIXTURE_DIR, 2, 3), (ZH_EN_FIXTURE_DIR, 2, 3)], ids=["en-zh", "zh-en"]
)
def test_the_rule_covers_every_pair_of_the_fixtures_eval_sets(fixture, src_col, tgt_col):
    """The fixtures' eval.tsv (real sentence pairs) tokenised by their own SentencePiece models, as MarianTokenizer
    does: each target fits the room its direction's rule gives its source; no source gets less than the old rule's
    3 × (n + 1) + 10 gave (its room: that less the start and end tokens)."""
    spm = pytest.importorskip("sentencepiece")
    checkpoint = fixture / "checkpoint"
    source = spm.SentencePieceProcessor(model_file=str(checkpoint / "source.spm"))
    target = spm.SentencePieceProcessor(model_file=str(checkpoint / "target.spm"))
    rows = [line.split("\t") for line in (fixture / "eval.tsv").read_text(encoding="utf-8").splitlines()]
    key = "en-zh" if fixture == FIXTURE_DIR else "zh-en"
    rule = length_rule(key)
    worst = max(len(target.encode(r[tgt_col])) - rule.room(len(source.encode(r[src_col]))) for r in rows)
    assert len(rows) >= 200 and worst < 0, worst
    assert all(rule.room(n) >= 3 * (n + 1) + 10 - 2 for n in range(1, 300))


# -- the real pipeline on the fixtures, against transformers' generate() -----------------------------------------------


def _generate(hf, text: str, beams: int, max_length: int) -> list[int]:
    import torch

    tok, model = hf
    with torch.no_grad():
        out = model.generate(**tok([text], return_tensors="pt"), num_beams=beams, max_length=max_length)
    row = out[0].tolist()[1:]
    return row[: row.index(tok.eos_token_id)] if tok.eos_token_id in row else row


def _force_room(monkeypatch, key: str, room: int) -> None:
    """The direction's rule lowered to a fixed room (read at call time): every longer output is cut."""
    monkeypatch.setitem(length_limits.LENGTH_RULES, key, LengthRule(0.0, room))


def _column(path, k: int) -> list[str]:
    return [row.split("\t")[k] for row in path.read_text(encoding="utf-8").splitlines()]


SIDES = {
    "en-zh": (FIXTURE_DIR, ">>cmn_Hans<< ", _column(FIXTURE_DIR / "corpus.tsv", 0)),
    "zh-en": (ZH_EN_FIXTURE_DIR, "", _column(ZH_EN_FIXTURE_DIR / "eval.tsv", 2)),
}


@pytest.fixture(scope="module", params=sorted(SIDES))
def side(request):
    from tests.engine.search.test_decoding import load_hf

    fixture, tag, sources = SIDES[request.param]
    pytest.importorskip("torch")
    translator = Translator(fixture / "bundle", precision="fp32", threads=1)
    return request.param, translator, load_hf(fixture / "checkpoint"), tag, sources


@pytest.mark.torch
@pytest.mark.parametrize("beams", [1, 4])
def test_at_a_small_limit_the_pipeline_stops_where_generate_stops_and_says_so(monkeypatch, side, beams):
    key, tr, hf, tag, sources = side
    tr.clear_cache()
    _force_room(monkeypatch, key, 4)  # limit 6: start, 4 tokens, the forced end
    checked = 0
    for text in sources[:12]:
        result = tr.translate(text, beams=beams)
        (sentence,) = result.sentences
        expected = _generate(hf, tag + text, beams, 6)
        assert list(sentence.tokens) == expected, text
        cut = [f for f in sentence.flags if f.kind == FLAG_CUT]
        assert bool(cut) == (len(expected) == 4), (text, expected)
        checked += bool(cut)
    assert checked >= 8  # most fixture sentences are longer than 4 tokens


@pytest.mark.torch
def test_a_cut_sentence_reused_from_the_cache_keeps_its_flag_and_a_new_limit_decodes_again(monkeypatch, side):
    key, tr, _, _, sources = side
    tr.clear_cache()
    _force_room(monkeypatch, key, 3)
    first = tr.translate(sources[1], beams=1).sentences[0]
    again = tr.translate(sources[1], beams=1).sentences[0]
    assert (first.origin, again.origin) == ("model", "cache")
    assert first.flags == again.flags and any(f.kind == FLAG_CUT for f in again.flags)
    monkeypatch.undo()
    whole = tr.translate(sources[1], beams=1).sentences[0]
    assert whole.origin == "model" and len(whole.tokens) > 3 and not any(f.kind == FLAG_CUT for f in whole.flags)


@pytest.mark.torch
def test_with_the_real_rule_no_fixture_sentence_is_cut_and_all_match_generate(side):
    _, tr, hf, tag, sources = side
    tr.clear_cache()
    for text in sources[:40]:
        (sentence,) = tr.translate(text, beams=4).sentences
        assert list(sentence.tokens) == _generate(hf, tag + text, 4, 512), text
        assert not any(f.kind == FLAG_CUT for f in sentence.flags), text


@pytest.mark.torch
def test_translate_sentence_flags_a_cut_too(monkeypatch, side):
    """The review window's one-sentence path (a chosen word, then the rest re-decoded) has its own limit."""
    key, tr, _, _, sources = side
    _force_room(monkeypatch, key, 3)
    result = tr.translate_sentence(sources[0])
    assert len(result.tokens) == 3 and [f.kind for f in result.flags if f.kind == FLAG_CUT] == [FLAG_CUT]


def test_cli_notes_a_cut_sentence_and_flags_it_in_json(monkeypatch, capsys, bundle_dir):
    from engine.cli.main import main

    _force_room(monkeypatch, "en-zh", 3)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8"))
    text = "Good morning, everyone! Thank you very much."
    assert main(["translate", "--model", str(bundle_dir), "--beams", "1", text]) == 0
    _, err = capsys.readouterr()
    notes = [line for line in err.splitlines() if "length limit" in line]
    assert notes == [f"note: sentence {i}: {length_limits_detail()}" for i in (1, 2)], err
    assert main(["translate", "--model", str(bundle_dir), "--beams", "1", "--json", text]) == 0
    out, _ = capsys.readouterr()
    (record,) = [json.loads(line) for line in out.splitlines()]
    assert [s["cut"] for s in record["sentences"]] == [True, True]
    assert all({"kind": "cut", "detail": length_limits_detail()} in s["flags"] for s in record["sentences"])
    monkeypatch.undo()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8"))
    assert main(["translate", "--model", str(bundle_dir), "--beams", "1", "--json", text]) == 0
    out, _ = capsys.readouterr()
    assert [s["cut"] for s in json.loads(out)["sentences"]] == [False, False]


def length_limits_detail() -> str:
    from engine.results import CUT_DETAIL

    return CUT_DETAIL
