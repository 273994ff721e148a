"""Translator.translate_sentence (one sentence, optionally from a forced prefix) and Translator.alternatives (other
words at a token position, the rest re-decoded) on the fixture."""

from __future__ import annotations

import threading

import pytest

from engine.errors import InputError
from engine.options import TranslationOptions
from engine.pipeline.alternatives import SearchCancelled
from engine.pipeline.translator import Translator
from engine.text.target_prefix import encode_target_prefix
from tests.conftest import FIXTURE_DIR
from tests.engine.convert.test_full_model import full_bundle  # noqa: F401 - the slow test's fixture

SOURCES = [
    line.split("\t")[0] for line in (FIXTURE_DIR / "corpus.tsv").read_text(encoding="utf-8").splitlines()[:60:12]
]


@pytest.fixture(scope="module")
def tr(bundle_dir):
    return Translator(bundle_dir, precision="fp32", threads=1)


@pytest.mark.parametrize("beams", [1, 4])
def test_translate_sentence_is_the_normal_translation(tr, beams):
    options = TranslationOptions(beams=beams)
    for source in SOURCES:
        result = tr.translate_sentence(source, options)
        lang = tr.tokenizer.token_to_id(tr.language_token(None))
        ids = [lang, *tr.tokenizer.encode(source)] if tr.pair.variants else tr.tokenizer.encode(source)
        assert list(result.tokens) == tr.generate_ids([ids], beams=beams)[0]
        assert result.text == tr.translate(source, options).text
        assert result.source_span == (0, len(source)) and result.target_span == (0, len(result.text))
        assert len(result.logprobs) == len(result.tokens) == len(result.token_spans)
        assert result.score is not None and result.score <= 0
        assert "".join(result.text[a:b] for a, b in result.token_spans).replace(" ", "") == result.text.replace(" ", "")


def test_translate_sentence_with_a_prefix(tr):
    source = SOURCES[1]
    full = tr.translate_sentence(source)
    shown = full.text[: max(1, len(full.text) // 2)]
    for prefix in (shown, list(full.tokens[:2])):
        result = tr.translate_sentence(source, prefix=prefix)
        forced = encode_target_prefix(tr.tokenizer, prefix) if isinstance(prefix, str) else prefix
        assert list(result.tokens[: len(forced)]) == list(forced)
        assert result.text.startswith(shown if isinstance(prefix, str) else tr.tokenizer.decode(forced))
    other = tr.translate_sentence(source, prefix="我不")
    assert other.text.startswith("我不") and other.text != full.text
    with pytest.raises(InputError):
        tr.translate_sentence(source, prefix=[tr.tokenizer.eos_id])
    with pytest.raises(InputError):
        tr.translate_sentence(source, prefix=[10**9])


def test_translate_sentence_nbest(tr):
    result = tr.translate_sentence(SOURCES[0], TranslationOptions(beams=4, alternatives=3))
    texts = [a.text for a in result.alternatives]
    assert 1 <= len(texts) <= 3
    assert len(set(texts)) == len(texts) and result.text not in texts
    assert all(a.score <= result.score + 1e-6 for a in result.alternatives)


def test_cancel_stops_a_sentence(tr):
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(SearchCancelled):
        tr.translate_sentence(SOURCES[0], cancel=cancel)
    with pytest.raises(SearchCancelled):
        tr.alternatives(SOURCES[0], tr.translate_sentence(SOURCES[0]).tokens, 0, cancel=cancel)


@pytest.mark.parametrize("beams", [1, 4])
def test_alternatives_rewrite_the_rest(tr, beams):
    options = TranslationOptions(beams=beams)
    checked = 0
    for source in SOURCES[:3]:
        current = tr.translate_sentence(source, options)
        tokens = list(current.tokens)
        for position in sorted({0, len(tokens) // 2, len(tokens) - 1}):
            alts = tr.alternatives(source, tokens, position, options, k=4)
            assert 1 <= len(alts) <= 4
            words = [a.word for a in alts]
            assert len(set(words)) == len(words) and all(words)
            for alt in alts:
                assert alt.position == position
                assert list(alt.tokens[:position]) == tokens[:position]
                assert alt.tokens[position] != tokens[position]
                again = tr.translate_sentence(source, options, prefix=alt.tokens[: position + 1])
                assert alt.text == again.text
                assert list(alt.tokens) == list(again.tokens)
                assert alt.score == pytest.approx(again.score, abs=1e-4)
                checked += 1
    assert checked >= 20


def test_k_is_respected_and_words_differ_from_the_current_one(tr):
    source = SOURCES[2]
    current = tr.translate_sentence(source)
    for k in (1, 2, 6):
        alts = tr.alternatives(source, current.tokens, 1, k=k)
        assert len(alts) == k
    here = tr.tokenizer.decode(current.tokens[:2])[len(tr.tokenizer.decode(current.tokens[:1])) :].strip()
    assert all(a.word != here for a in tr.alternatives(source, current.tokens, 1, k=6))


def test_kept_decoder_states_change_nothing(tr, bundle_dir):
    """Clicks that move left, right, to another sentence and back give what a first click gives."""
    from engine.pipeline.alternatives import forget_shared_start

    first = Translator(bundle_dir, precision="fp32", threads=1)
    sentences = [(s, tr.translate_sentence(s).tokens) for s in SOURCES[:3]]
    clicks = [(0, 3), (0, 1), (0, 2), (0, 0), (1, 2), (1, 0), (0, 3), (2, 1), (2, 2)]
    for i, position in clicks:
        source, tokens = sentences[i]
        position = min(position, len(tokens) - 1)
        kept = tr.alternatives(source, tokens, position, k=3)
        forget_shared_start(first)
        assert kept == first.alternatives(source, tokens, position, k=3)


@pytest.mark.parametrize("position", [-1, 99, 1.5, True, None])
def test_bad_positions_are_input_errors(tr, position):
    tokens = tr.translate_sentence(SOURCES[0]).tokens
    with pytest.raises(InputError):
        tr.alternatives(SOURCES[0], tokens, len(tokens) + 5 if position == 99 else position)


def test_bad_tokens_and_k_are_input_errors(tr):
    tokens = tr.translate_sentence(SOURCES[0]).tokens
    with pytest.raises(InputError):
        tr.alternatives(SOURCES[0], [], 0)
    with pytest.raises(InputError):
        tr.alternatives(SOURCES[0], tokens, 0, k=0)
    with pytest.raises(InputError):
        tr.alternatives(SOURCES[0], [-3, *tokens], 0)


@pytest.mark.slow
@pytest.mark.torch
def test_alternatives_benchmark_runs_on_the_full_model(full_bundle, capsys):  # noqa: F811
    """bench/alternatives.py, small: it prints a row per beam setting (no timing assertion)."""
    import importlib.util

    from tests.engine.convert.test_full_model import ROOT

    spec = importlib.util.spec_from_file_location("bench_alternatives", ROOT / "bench" / "alternatives.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    _, bundle = full_bundle
    assert bench.main(["--bundle", str(bundle), "--runs", "1", "--positions", "0,19", "--beams", "1", "--k", "2"]) == 0
    out = capsys.readouterr().out
    assert "beams 1     cold: pos 0:" in out and "beams 1     warm: pos 0:" in out and "pos 19:" in out
    assert "beams 1 prepared: pos 0:" in out and "prepare_alternatives, while the pointer rests:" in out
    assert "first ≤ 150 ms" in out and "first alternatives ≤ 150 ms at every position on a first (cold) click" in out
    assert "/" in out.split("beams 1     cold:")[1].splitlines()[0], "both times, first list and complete list"
