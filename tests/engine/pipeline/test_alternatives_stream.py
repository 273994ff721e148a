"""Translator.iter_alternatives, the streaming form of Translator.alternatives, on the fixture: the candidate words
first (no rest), then the rests as they are decoded (one batch), then exactly the list alternatives() returns;
cancel and closing stop it and release the model."""

from __future__ import annotations

import itertools
import threading

import pytest

from engine.errors import InputError
from engine.options import TranslationOptions
from engine.pipeline.alternatives import SearchCancelled, forget_shared_start
from engine.pipeline.translator import Translator
from tests.conftest import FIXTURE_DIR

SOURCES = [
    line.split("\t")[0] for line in (FIXTURE_DIR / "corpus.tsv").read_text(encoding="utf-8").splitlines()[:60:12]
]


class After(threading.Event):
    """Set once it has been looked at `n` times: a cancel that comes in the middle of the decoding."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n

    def is_set(self) -> bool:
        self.n -= 1
        return self.n < 0


@pytest.fixture(scope="module")
def tr(bundle_dir):
    return Translator(bundle_dir, precision="fp32", threads=1)


def _clicks(tr, options):
    """(source, tokens, position) for a few sentences, at their start, middle and last token."""
    for source in SOURCES[:3]:
        tokens = tuple(tr.translate_sentence(source, options).tokens)
        for position in sorted({0, len(tokens) // 2, len(tokens) - 1}):
            yield source, tokens, position


@pytest.mark.parametrize("beams", [1, 4])
def test_words_first_then_the_rests_then_the_blocking_result(tr, beams):
    options = TranslationOptions(beams=beams)
    updates = 0
    for source, tokens, position in _clicks(tr, options):
        forget_shared_start(tr)
        lists = list(tr.iter_alternatives(source, tokens, position, options, k=4))
        final = tr.alternatives(source, tokens, position, options, k=4)
        assert lists[-1] == final, "the last list is what the blocking form returns"
        assert all(a.complete for a in final)
        first = lists[0]
        assert len(lists) >= 2 and not any(a.complete for a in first), "the words come before any rest"
        for a, f in zip(first, final, strict=True):
            assert a.tokens == (*tokens[:position], f.tokens[position]), "a word alone: the start and its token"
            assert (a.word, a.position) == (f.word, position)
            assert a.word and a.word in a.text
        for middle in lists[1:-1]:
            assert not all(a.complete for a in middle), "a list with every rest done is the final one"
            assert [a.word for a in middle] == [f.word for f in final], "rows keep their order"
            for a, f in zip(middle, final, strict=True):
                assert a.tokens[: position + 1] == f.tokens[: position + 1]
                if a.complete:
                    assert a == f, "a finished row is already its final entry"
                elif beams == 1:
                    assert f.tokens[: len(a.tokens)] == a.tokens, "greedy: the rest so far starts the final rest"
        assert all(x != y for x, y in itertools.pairwise(lists)), "a list comes only when something changed"
        updates += len(lists) - 2
    assert updates > 0, "some rests were shown while still being decoded"


def test_kept_decoder_states_change_nothing_in_the_stream(tr, bundle_dir):
    cold = Translator(bundle_dir, precision="fp32", threads=1)
    source = SOURCES[1]
    tokens = tr.translate_sentence(source).tokens
    for position in (len(tokens) - 1, 1, 3, 0):
        warm = list(tr.iter_alternatives(source, tokens, position, k=3))
        forget_shared_start(cold)
        assert warm == list(cold.iter_alternatives(source, tokens, position, k=3))


def test_cancel_stops_within_a_step(tr):
    source = SOURCES[0]
    tokens = tr.translate_sentence(source).tokens
    cancel = threading.Event()
    steps = tr.iter_alternatives(source, tokens, 0, k=4, cancel=cancel)
    first = next(steps)
    assert first and not any(a.complete for a in first)
    cancel.set()
    with pytest.raises(SearchCancelled):
        next(steps)
    # the model is free again (the generator released its lock), and the next request is whole
    assert tr.alternatives(source, tokens, 0, k=4) == list(tr.iter_alternatives(source, tokens, 0, k=4))[-1]


def test_a_cancel_set_before_it_starts_gives_nothing(tr):
    cancel = threading.Event()
    cancel.set()
    tokens = tr.translate_sentence(SOURCES[0]).tokens
    with pytest.raises(SearchCancelled):
        next(tr.iter_alternatives(SOURCES[0], tokens, 1, cancel=cancel))


def test_closing_early_releases_the_model(tr):
    source = SOURCES[2]
    tokens = tr.translate_sentence(source).tokens
    steps = tr.iter_alternatives(source, tokens, 1, k=3)
    next(steps)
    done = threading.Event()
    other: list = []

    def elsewhere() -> None:  # another thread would wait forever on a lock the closed generator kept
        other.append(tr.alternatives(source, tokens, 1, k=3))
        done.set()

    steps.close()
    thread = threading.Thread(target=elsewhere)
    thread.start()
    thread.join(60)
    assert done.is_set() and len(other[0]) == 3


def test_bad_input_is_an_input_error_on_first_use(tr):
    tokens = tr.translate_sentence(SOURCES[0]).tokens
    with pytest.raises(InputError):
        next(tr.iter_alternatives(SOURCES[0], tokens, len(tokens)))
    with pytest.raises(InputError):
        next(tr.iter_alternatives(SOURCES[0], tokens, 0, k=0))


def test_prepare_keeps_the_start_so_a_click_decodes_nothing_before_its_words(tr, bundle_dir):
    cold = Translator(bundle_dir, precision="fp32", threads=1)
    source = SOURCES[1]
    tokens = tr.translate_sentence(source).tokens
    forget_shared_start(tr)
    tr.prepare_alternatives(source, tokens)
    kept = tr.review_starts.start
    assert kept.fed == [tr.defaults.decoder_start_id, *tokens[:-1]], "every click position's start is decoded"
    for position in (len(tokens) - 1, 0, len(tokens) // 2):
        before = list(kept.fed)
        got = list(tr.iter_alternatives(source, tokens, position, k=3))
        assert tr.review_starts.start is kept and kept.fed[: len(before)] == before, "the click reused the start"
        forget_shared_start(cold)
        assert got == list(cold.iter_alternatives(source, tokens, position, k=3))


def test_a_cancelled_prepare_keeps_a_consistent_start(tr, bundle_dir):
    cold = Translator(bundle_dir, precision="fp32", threads=1)
    source = SOURCES[2]
    tokens = tr.translate_sentence(source).tokens
    forget_shared_start(tr)
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(SearchCancelled):
        tr.prepare_alternatives(source, tokens, cancel=cancel)
    assert tr.review_starts.start.fed == [], "cancelled before its first step"

    with pytest.raises(SearchCancelled):
        tr.prepare_alternatives(source, tokens, cancel=After(2))
    assert tr.review_starts.start.fed == [tr.defaults.decoder_start_id, tokens[0]], "two steps, then the cancel"
    for position in (len(tokens) - 1, 1):
        forget_shared_start(cold)
        assert tr.alternatives(source, tokens, position, k=3) == cold.alternatives(source, tokens, position, k=3)
    with pytest.raises(InputError):
        tr.prepare_alternatives(source, [])


def test_a_cancel_while_a_first_click_decodes_the_start_stops_before_any_list(tr):
    source = SOURCES[1]
    tokens = tr.translate_sentence(source).tokens
    forget_shared_start(tr)
    steps = tr.iter_alternatives(source, tokens, len(tokens) - 1, k=3, cancel=After(3))
    with pytest.raises(SearchCancelled):
        next(steps)
    assert len(tr.review_starts.start.fed) == 3 < len(tokens), "stopped inside the start, what it decoded kept"
