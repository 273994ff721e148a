"""The translator's text pipeline on the fixture: wrapped lines, punctuation, the sentence cache, options, and
calls that would deadlock."""

from __future__ import annotations

import threading

import pytest

from engine.errors import InputError
from engine.options import TranslationOptions
from engine.pipeline.translator import Translator
from engine.results import StreamEvent, Translation
from engine.text import punctuation
from tests.conftest import FIXTURE_DIR

ROWS = [r.split("\t") for r in (FIXTURE_DIR / "corpus.tsv").read_text(encoding="utf-8").splitlines()]
POPULATION = "The population of the city is 3 million."


@pytest.fixture(scope="module")
def fp32(bundle_dir):
    return Translator(bundle_dir, precision="fp32", threads=1)


@pytest.fixture
def tr(fp32):
    fp32.clear_cache()
    return fp32


def collect(tr, text, options=None):
    events: list[StreamEvent] = []
    result = tr.translate(text, options, on_event=events.append)
    assert "".join(e.delta for e in events) == result.text  # the streaming contract, whatever the options
    return result


class SearchSpy:
    """Counts the sentences the translator sends to the decoder."""

    def __init__(self, tr, monkeypatch):
        self.rows: list[int] = []
        real = tr._search

        def spy(batch, params, max_lengths):
            self.rows.append(len(batch))
            return real(batch, params, max_lengths)

        monkeypatch.setattr(tr, "_search", spy)


# -- wrapped lines ------------------------------------------------------------------------------------------------
def test_a_wrapped_sentence_translates_like_the_one_line_sentence(tr):
    one_line = tr.translate(POPULATION, beams=1).text
    wrapped = "The population of the\ncity is 3 million."
    joined = collect(tr, wrapped, TranslationOptions(beams=1))
    assert joined.text == one_line and joined.stats.sentences == 1  # the break inside it is gone
    kept = collect(tr, wrapped, TranslationOptions(beams=1, join_wrapped_lines=False))
    assert kept.stats.sentences == 2 and kept.text.count("\n") == 1 and kept.text != one_line


def test_layout_around_a_joined_sentence_is_kept(tr):
    text = f"{ROWS[0][0]}\n\nThe population of the\r\ncity is 3 million.\n- {ROWS[1][0]}\n"
    out = collect(tr, text, TranslationOptions(beams=1)).text
    parts = out.split("\n")
    assert parts[0] == tr.translate(ROWS[0][0], beams=1).text and parts[1] == ""
    assert parts[2].rstrip("\r") == tr.translate(POPULATION, beams=1).text and parts[2].endswith("\r") is False
    assert out.count("\n") == text.count("\n") - 1 and out.endswith("\n")


# -- punctuation --------------------------------------------------------------------------------------------------
def test_normalisation_is_applied_per_finished_sentence_and_streams_consistently(tr, monkeypatch):
    text = " ".join(r[0] for r in ROWS[:6])
    raw = collect(tr, text, TranslationOptions(beams=1, normalize_punctuation=False)).text
    calls: list[str] = []

    def marking(sentence: str) -> str:  # a stand-in that changes something the fixture's output has
        calls.append(sentence)
        return sentence.replace("。", "|")

    han = punctuation.RULES["han"]
    monkeypatch.setitem(punctuation.RULES, "han", punctuation.TargetRules(marking, han.stable_prefix))
    tr.clear_cache()
    marked = collect(tr, text, TranslationOptions(beams=1))
    assert marked.text == raw.replace("。", "|") and "|" in marked.text
    assert calls
    calls.clear()
    assert collect(tr, text, TranslationOptions(beams=1, normalize_punctuation=False)).text == raw and not calls


def test_times_in_the_output_stay_half_width(tr):
    assert "8:30" in tr.translate("It is 8:30 in the morning.").text


# -- the sentence cache -------------------------------------------------------------------------------------------
def long_text(n: int = 40) -> str:
    lines = [" ".join(r[0] for r in ROWS[i : i + 4]) for i in range(0, n, 4)]
    return "\n".join(lines)


@pytest.mark.parametrize("beams", [1, 4])
def test_an_edit_decodes_only_the_changed_sentence(bundle_dir, tr, monkeypatch, beams):
    text = long_text()
    first = tr.translate(text, beams=beams)
    assert first.stats.sentences == 40 and first.stats.sentences_reused == 0
    edited = text.replace(ROWS[37][0], ROWS[90][0])
    spy = SearchSpy(tr, monkeypatch)
    events: list[StreamEvent] = []
    second = tr.translate(edited, beams=beams, on_event=events.append)
    assert sum(spy.rows) == 1  # one sentence decoded …
    assert second.stats.sentences_reused == 39  # … the other 39 reused
    cold = Translator(bundle_dir, precision="fp32", threads=1).translate(edited, beams=beams)
    assert second.text == cold.text and second.tokens == cold.tokens
    assert second.stats.target_tokens == cold.stats.target_tokens
    assert events[0].sentences_done >= 36  # the unchanged sentences before the edit appear at once


def test_other_settings_and_another_precision_do_not_reuse(tr):
    text = long_text(8)
    tr.translate(text, beams=1)
    assert tr.translate(text, beams=1).stats.sentences_reused == 8
    assert tr.translate(text, beams=2).stats.sentences_reused == 0
    assert tr.translate(text, beams=1, variant="hant").stats.sentences_reused == 0
    tr.set_precision("int8")
    try:
        assert tr.translate(text, beams=1).stats.sentences_reused == 0
    finally:
        tr.set_precision("fp32")
    assert tr.translate(text, beams=1).stats.sentences_reused == 0  # the cache followed the model


def test_cancelled_sentences_are_not_cached(bundle_dir, tr):
    text = long_text()
    cancel = threading.Event()

    def on_event(event):
        if event.sentences_done >= 3:
            cancel.set()

    partial = tr.translate(text, beams=1, cancel=cancel, on_event=on_event)
    assert partial.cancelled
    finished = sum(1 for t in partial.tokens if t)
    again = tr.translate(text, beams=1)
    assert 3 <= again.stats.sentences_reused <= finished < 40
    cold = Translator(bundle_dir, precision="fp32", threads=1).translate(text, beams=1)
    assert again.text == cold.text and again.tokens == cold.tokens


def test_the_cache_stays_within_its_bounds(tr):
    cache = tr.sentence_cache
    cache.max_entries = 5
    try:
        tr.translate(long_text(), beams=1)
        assert len(cache) == 5
        cache.max_entries, cache.max_bytes = 1000, 3000
        tr.translate(long_text(), beams=1)
        assert 0 < cache.nbytes <= 3000 and len(cache) < 40
    finally:
        cache.max_entries, cache.max_bytes = type(cache)().max_entries, type(cache)().max_bytes


# -- options ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("options", "message"),
    [
        (TranslationOptions(beams=0), "between 1 and 8"),
        (TranslationOptions(beams=9), "between 1 and 8"),
        (TranslationOptions(beams="4"), "whole number"),  # type: ignore[arg-type]
        (TranslationOptions(beams=True), "whole number"),
        (TranslationOptions(variant="latn"), "unknown variant 'latn'; this model offers hans, hant"),
        (TranslationOptions(variant=3), "variant must be"),  # type: ignore[arg-type]
        (TranslationOptions(join_wrapped_lines="yes"), "join_wrapped_lines must be true or false"),  # type: ignore[arg-type]
        (TranslationOptions(normalize_punctuation=1), "normalize_punctuation must be"),  # type: ignore[arg-type]
        ({"beams": 1}, "options must be TranslationOptions"),
    ],
)
def test_bad_options_get_one_clear_error(tr, options, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        tr.translate("Hello.", options)
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        next(tr.translate_segments(["Hello."], options))


# -- calls from inside a running stream ---------------------------------------------------------------------------
@pytest.mark.parametrize("call", ["set_precision", "set_threads", "translate", "generate_ids"])
def test_engine_calls_inside_a_stream_loop_fail_instead_of_hanging(tr, call):
    box: list[object] = []

    def run():
        try:
            for item in tr.stream(ROWS[0][0], beams=1):
                if isinstance(item, StreamEvent):
                    if call == "set_precision":
                        tr.set_precision("int8")
                    elif call == "set_threads":
                        tr.set_threads(2)
                    elif call == "translate":
                        tr.translate("Hello.")
                    else:
                        tr.generate_ids([[5, 0]])
        except RuntimeError as exc:
            box.append(str(exc))  # the message only: the traceback would keep the stream (and its lock) alive

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(30)
    assert not worker.is_alive(), f"{call} inside a stream() loop hung"
    assert box and "inside a running stream()" in box[0]
    assert tr.precision == "fp32" and tr.threads == 1
    assert isinstance(tr.translate(ROWS[0][0]), Translation)  # the stream released the model when it closed


def test_set_precision_from_another_thread_waits_for_the_stream(tr):
    stream = tr.stream(long_text(8), beams=1)
    next(stream)
    switched = threading.Event()
    worker = threading.Thread(target=lambda: (tr.set_precision("int8"), switched.set()), daemon=True)
    worker.start()
    assert not switched.wait(0.5)  # waits while the stream holds the model …
    items = list(stream)
    assert isinstance(items[-1], Translation) and items[-1].stats.precision == "fp32"
    assert switched.wait(30)  # … and switches once it is done
    tr.set_precision("fp32")
