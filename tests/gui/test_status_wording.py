"""The status bar and the word count say true things: a translation served from the cache or the user's kept
sentences says "reused" instead of "0 tokens/s", and counts of one are singular ("1 word", "1 token")."""

from __future__ import annotations

from engine.results import ORIGIN_CACHE, ORIGIN_MODEL, SentenceResult, Translation, TranslationStats
from gui import status_text


def stats(**kw) -> TranslationStats:
    base = dict(
        total_ms=3.0,
        first_token_ms=1.0,
        source_tokens=6,
        target_tokens=5,
        tokens_per_s=0.0,
        precision="int8",
        beams=4,
        sentences=1,
        sentences_reused=1,
    )
    base.update(kw)
    return TranslationStats(**base)


def sentence(origin: str) -> SentenceResult:
    return SentenceResult(index=0, source="Hi.", text="嗨。", source_span=(0, 3), target_span=(0, 2), origin=origin)


def test_a_translation_that_decoded_nothing_says_reused_not_zero_tokens_per_second():
    text = status_text.translation_summary(Translation(text="嗨。", stats=stats(), sentences=[sentence(ORIGIN_CACHE)]))
    assert "tokens/s" not in text and "reused, nothing decoded" in text
    assert "5 tokens" in text


def test_a_partly_reused_translation_says_how_much_beside_its_speed():
    result = Translation(
        text="嗨。嗨。",
        stats=stats(tokens_per_s=250.0, sentences=2),
        sentences=[sentence(ORIGIN_CACHE), sentence(ORIGIN_MODEL)],
    )
    text = status_text.translation_summary(result)
    assert "250 tokens/s" in text and "1 of 2 sentences reused" in text


def test_one_token_is_singular():
    text = status_text.translation_summary(
        Translation(text="嗨", stats=stats(target_tokens=1, tokens_per_s=90.0, sentences_reused=0))
    )
    assert "1 token ·" in text and "1 tokens" not in text and "reused" not in text


def test_the_real_window_says_reused_for_a_repeated_translation_and_counts_one_word(qtbot, make_window):
    window = make_window()
    window.source.setPlainText("hello")
    qtbot.waitUntil(lambda: window.source_pane.info.text() == "1 word", timeout=3000)
    window.source.setPlainText("Thank you very much.")
    qtbot.waitUntil(lambda: window.source_pane.info.text() == "4 words", timeout=3000)
    for _ in range(2):
        before = window.last_result
        window.translate()
        qtbot.waitUntil(lambda b=before: window.last_result is not b and not window.translating, timeout=20_000)
    assert window.last_result.sentences[0].origin == ORIGIN_CACHE
    message = window.status_message()
    assert "reused, nothing decoded" in message and "tokens/s" not in message, message
