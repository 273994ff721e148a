"""translate_segments (`qiao translate --json`, documents, the API): one result per text, in order, equal to
translate() alone, batched across texts, lazy."""

from __future__ import annotations

import threading

import pytest

import engine.pipeline.batching as batching
import engine.pipeline.requests as pipeline
from engine.options import TranslationOptions
from engine.pipeline.requests import MAX_CHARS
from engine.pipeline.translator import Translator
from tests.conftest import FIXTURE_DIR

ROWS = [r.split("\t") for r in (FIXTURE_DIR / "corpus.tsv").read_text(encoding="utf-8").splitlines()]
OVER_LONG = "word " * (MAX_CHARS // 5 + 1)
TEXTS = [
    ROWS[0][0],
    "",
    "   ",
    "\n\n\t\n",
    f"{ROWS[1][0]} {ROWS[2][0]}\n\n{ROWS[3][0]}\n",
    "The population of the\ncity is 3 million.",
    OVER_LONG,
    "😀🎉",
    *[r[0] for r in ROWS[4:40]],
    " ".join(r[0] for r in ROWS[40:52]),
]


def uncached(bundle_dir, precision: str) -> Translator:
    tr = Translator(bundle_dir, precision=precision, threads=1)
    tr.sentence_cache.max_entries = 0  # compare decoding with decoding
    return tr


class Counting:
    """An iterable that records how many texts were taken from it."""

    def __init__(self, texts):
        self.texts = list(texts)
        self.taken = 0

    def __iter__(self):
        for text in self.texts:
            self.taken += 1
            yield text


def search_calls(tr, monkeypatch) -> list[int]:
    rows: list[int] = []
    real = tr._search

    def spy(batch, params, max_lengths):
        rows.append(len(batch))
        return real(batch, params, max_lengths)

    monkeypatch.setattr(tr, "_search", spy)
    return rows


@pytest.mark.parametrize("beams", [1, 4])
def test_each_result_equals_translate_alone_in_fp32(bundle_dir, beams):
    options = TranslationOptions(beams=beams)
    single = uncached(bundle_dir, "fp32")
    batch = list(uncached(bundle_dir, "fp32").translate_segments(iter(TEXTS), options))
    assert len(batch) == len(TEXTS)
    for text, got in zip(TEXTS, batch):
        if text is OVER_LONG:
            assert got.error and "at most 1,000,000" in got.error and got.text == "" and got.stats is None
            continue
        want = single.translate(text, options)
        assert got.error is None and not got.cancelled
        assert (got.text, got.tokens) == (want.text, want.tokens), text[:60]
        for field in ("sentences", "source_tokens", "target_tokens", "beams", "precision"):
            assert getattr(got.stats, field) == getattr(want.stats, field), field


def test_int8_results_agree_with_translate_alone(bundle_dir):
    """INT8 quantises activations per batch, so batch neighbours can change a sentence (translate() has the same
    property); nearly all texts still agree token for token."""
    options = TranslationOptions(beams=1)
    single = uncached(bundle_dir, "int8")
    texts = [t for t in TEXTS if t is not OVER_LONG]
    batch = list(uncached(bundle_dir, "int8").translate_segments(texts, options))
    wants = [single.translate(t, options) for t in texts]
    assert [g.stats.sentences for g in batch] == [w.stats.sentences for w in wants]
    same = sum(g.tokens == w.tokens for g, w in zip(batch, wants))
    assert same >= 0.9 * len(texts)


def test_sentences_are_batched_across_texts(bundle_dir, monkeypatch):
    tr = uncached(bundle_dir, "fp32")
    calls = search_calls(tr, monkeypatch)
    texts = [r[0] for r in ROWS[:64]]
    results = list(tr.translate_segments(texts, TranslationOptions(beams=1)))
    assert len(results) == 64 and all(r.text for r in results)
    assert sum(calls) == 64 and len(calls) == 64 // batching.BATCH_SENTENCES  # not one call per text


def test_texts_are_read_lazily_and_results_stream(bundle_dir, monkeypatch):
    monkeypatch.setattr(pipeline, "WINDOW_SENTENCES", 16)
    tr = uncached(bundle_dir, "fp32")
    calls = search_calls(tr, monkeypatch)
    source = Counting(r[0] for r in (ROWS * 2)[:200])
    results = tr.translate_segments(source, TranslationOptions(beams=1))
    first = next(results)
    assert first.text and source.taken == 16  # one window read, not the whole input
    assert len(calls) == 1  # the first text came back after the first batch, not after its window
    rest = list(results)
    assert len(rest) == 199 and source.taken == 200
    assert [r.text for r in rest[:5]] == [tr.translate(r[0], beams=1).text for r in ROWS[1:6]]


def test_an_over_long_text_gets_its_own_error_and_the_batch_goes_on(bundle_dir):
    tr = uncached(bundle_dir, "fp32")
    results = list(tr.translate_segments([ROWS[0][0], OVER_LONG, 42, ROWS[1][0]]))  # type: ignore[list-item]
    assert [bool(r.error) for r in results] == [False, True, True, False]
    assert "at most 1,000,000" in results[1].error and "must be a string" in results[2].error
    assert results[3].text == tr.translate(ROWS[1][0]).text


def test_cancel_returns_what_was_read_and_reads_no_further(bundle_dir, monkeypatch):
    monkeypatch.setattr(pipeline, "WINDOW_SENTENCES", 24)
    tr = uncached(bundle_dir, "fp32")
    cancel = threading.Event()
    source = Counting(r[0] for r in ROWS[:100])
    results = []
    for result in tr.translate_segments(source, TranslationOptions(beams=1), cancel=cancel):
        results.append(result)
        cancel.set()
    assert source.taken == 24 and len(results) == 24  # one window, every text of it answered, in order
    assert not results[0].cancelled and results[-1].cancelled and results[-1].text == ""
    for r in results:  # a text that finished before the cancel is whole; the others say they were cancelled
        assert all(r.tokens) != r.cancelled
    assert results[0].stats.tokens_per_s > 0


def test_one_string_is_refused_not_split_into_characters(bundle_dir):
    from engine.errors import InputError

    with pytest.raises(InputError, match="iterable of texts"):
        next(Translator(bundle_dir, precision="fp32", threads=1).translate_segments("Hello."))  # type: ignore[arg-type]


def test_reused_sentences_count_in_batch_stats(bundle_dir):
    tr = Translator(bundle_dir, precision="fp32", threads=1)
    tr.translate(ROWS[0][0])
    first, second = tr.translate_segments([ROWS[0][0], ROWS[1][0]])
    assert first.stats.sentences_reused == 1 and second.stats.sentences_reused == 0


def test_translate_segments_answers_a_list_as_it_answers_an_iterator(bundle_dir):
    tr = uncached(bundle_dir, "fp32")
    segments = [ROWS[0][0], "", OVER_LONG, f"{ROWS[1][0]} {ROWS[2][0]}", "Table cell"]
    got = list(tr.translate_segments(segments, TranslationOptions(beams=1)))
    want = list(tr.translate_segments(iter(segments), TranslationOptions(beams=1)))
    assert [(r.text, r.tokens, r.error) for r in got] == [(r.text, r.tokens, r.error) for r in want]
    assert len(got) == len(segments) and got[2].error and got[1].text == ""
    assert got[3].text == tr.translate(segments[3], beams=1).text


def test_translate_segments_refuses_one_string(bundle_dir):
    from engine.errors import InputError

    with pytest.raises(InputError, match="not one string"):
        next(uncached(bundle_dir, "fp32").translate_segments("Hello."))  # type: ignore[arg-type]


def test_bulk_translation_has_one_name():
    """translate_segments is the bulk call the CLI, documents and the API use; no second name for it."""
    assert callable(Translator.translate_segments) and not hasattr(Translator, "translate_batch")
