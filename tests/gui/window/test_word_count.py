"""The fast word count agrees with `str.split()` on every kind of whitespace, and is fast on megabytes."""

from __future__ import annotations

import random
import sys
import time

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


def test_megabytes_are_counted_exactly_faster_than_split_and_free_the_second_time():
    rnd = random.Random(5)
    words = ["the", "weather", "is", "nice", "today.", "桥", "naïve"]
    text = " ".join(rnd.choice(words) + rnd.choice([" ", "\n", "\n\n", "\u3000"]) for _ in range(1_000_000))
    start = time.perf_counter()
    expected = len(text.split())
    split_s = time.perf_counter() - start
    start = time.perf_counter()
    assert count_words(text) == expected
    fast_s = time.perf_counter() - start
    assert fast_s < split_s, f"count_words {fast_s:.3f} s, str.split {split_s:.3f} s"
    start = time.perf_counter()
    assert count_words(text) == expected
    assert time.perf_counter() - start < 0.01, "the same string again must be free"


def test_characters_are_counted_as_str_split_would_leave_them():
    rnd = random.Random(4)
    pieces = [*ALL_WHITESPACE, "a", "桥", "你好", "é", "😀", "\x00", "\u200b", "\ud800", "。"]
    for _ in range(400):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 40)))
        assert count_characters(text) == len("".join(text.split())), repr(text)
    assert count_characters("你好 世界。") == 5 and count_characters("") == 0
