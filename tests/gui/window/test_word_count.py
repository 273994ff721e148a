"""The fast word count agrees with `str.split()` on every kind of whitespace, and is fast on megabytes."""

from __future__ import annotations

import random
import sys
import tracemalloc

from gui.window.word_count import count_characters, count_words

ALL_WHITESPACE = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]


def test_agrees_with_str_split_on_every_whitespace_character_and_mixed_scripts():
    rnd = random.Random(3)
    pieces = [*ALL_WHITESPACE, "a", "bridge", "桥", "é", "😀", "\x00", "\u200b", "\ufeff", "-", "\ud800"]
    for _ in range(400):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 40)))
        assert count_words(text) == len(text.split()), repr(text)
    for ws in ALL_WHITESPACE:
        text = f"one{ws}two{ws}{ws}three{ws}"
        assert count_words(text) == 3, f"U+{ord(ws):04X}"
    assert count_words("") == 0 and count_words("   ") == 0 and count_words("word") == 1


def _peak_bytes(call):
    """What `call()` returns and the most Python memory it held at once (tracemalloc: the same on every run)."""
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_megabytes_are_counted_exactly_without_an_object_per_word_and_free_the_second_time():
    """Why it is fast, checked without a clock: no per-word objects, so memory follows the text's size, not its
    word count (speed itself is `bench/word_count.py`'s job: a timed unit test fails on a busy CI machine)."""
    rnd = random.Random(5)
    words = ["the", "weather", "is", "nice", "today.", "桥", "naïve"]
    mixed = " ".join(rnd.choice(words) + rnd.choice([" ", "\n", "\n\n", "\u3000"]) for _ in range(1_000_000))
    two_letter_words = " ".join(["ab"] * 1_000_000)  # the most words per byte that each need an object from split
    for text in (mixed, two_letter_words):
        expected, split_peak = _peak_bytes(lambda t=text: len(t.split()))
        counted, peak = _peak_bytes(lambda t=text: count_words(t))
        assert counted == expected
        assert peak <= 3 * sys.getsizeof(text) < split_peak, (peak, sys.getsizeof(text), split_peak)
        again, peak_again = _peak_bytes(lambda t=text: count_words(t))
        assert again == expected and peak_again < 1024, "the same string again must be free"


def test_characters_are_counted_as_str_split_would_leave_them():
    rnd = random.Random(4)
    pieces = [*ALL_WHITESPACE, "a", "桥", "你好", "é", "😀", "\x00", "\u200b", "\ud800", "。"]
    for _ in range(400):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 40)))
        assert count_characters(text) == len("".join(text.split())), repr(text)
    assert count_characters("你好 世界。") == 5 and count_characters("") == 0
