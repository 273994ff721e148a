"""Full-width punctuation next to CJK characters, and the streaming property the translator relies on."""

from __future__ import annotations

import random

import pytest

from engine.text.punctuation import ascii_stable_prefix, normalize, rules_for, stable_prefix, to_ascii

CASES = [
    # (model output, expected)
    ("你好,世界!", "你好，世界！"),
    ("你好吗?", "你好吗？"),
    ("你好吗?!", "你好吗？！"),
    ("注意:明天下雨;带伞", "注意：明天下雨；带伞"),
    ("你好 , 世界 !", "你好，世界！"),  # a full-width mark carries its own spacing
    ("他说: Hello, world", "他说：Hello, world"),  # the Latin comma stays
    ("函数(function)很好", "函数（function）很好"),  # a pair converts together
    ("(中文)", "（中文）"),
    ("函数f(x)的值", "函数f(x)的值"),  # a formula's brackets touch no CJK character
    ("我想...", "我想……"),
    ("等等..好", "等等..好"),  # two dots are not an ellipsis
    # numbers, times, ratios, decimals
    ("共3,000元", "共3,000元"),
    ("下午3:30开始", "下午3:30开始"),
    ("比分1:2。", "比分1:2。"),
    ("增长3.5%", "增长3.5%"),
    ("现在是早上8:30。", "现在是早上8:30。"),
    # Latin text, URLs, e-mail addresses
    ("Hello, world! How are you?", "Hello, world! How are you?"),
    ("请访问https://example.com/a?b=1&c=2:8080", "请访问https://example.com/a?b=1&c=2:8080"),
    ("访问https://example.com/?q=1,谢谢", "访问https://example.com/?q=1，谢谢"),
    ("写信给a.b@example.com,谢谢", "写信给a.b@example.com，谢谢"),
    ("时间12:30,地点A", "时间12:30，地点A"),
    # already full-width, empty, line structure
    ("天气很好。", "天气很好。"),
    ("", ""),
    ("你好,\n(注意)", "你好，\n（注意）"),
    ("end of line ,\n中文", "end of line ,\n中文"),  # context never crosses a line break
]


@pytest.mark.parametrize(("raw", "expected"), CASES)
def test_normalize(raw, expected):
    assert normalize(raw) == expected


def test_normalize_is_idempotent():
    for raw, _ in CASES:
        once = normalize(raw)
        assert normalize(once) == once


def test_a_stable_prefix_never_changes_later():
    """What the translator streams, normalize(stable_prefix(p)) for a prefix p, is a prefix of the final text."""
    rng = random.Random(7)
    alphabet = ["中", "文", "a", "B", "1", "2", ",", "!", "?", ":", ";", "(", ")", ".", " ", "\n", "…", "。"]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        final = normalize(text)
        previous = ""
        for cut in range(len(text) + 1):
            shown = normalize(stable_prefix(text[:cut]))
            assert final.startswith(shown), (text, cut, shown, final)
            assert shown.startswith(previous)  # what is shown only grows
            previous = shown


# -- latin target (zh→en output) ----------------------------------------------------------------------------------
ASCII_CASES = [
    ("Hello，world。", "Hello, world."),
    ("Yes！ Really？", "Yes! Really?"),
    ("He said：hi；then left", "He said: hi; then left"),
    ("apples、pears", "apples, pears"),
    ("word ，next", "word, next"),  # no space before a closing mark
    ("a （note） here", "a (note) here"),
    ("see（note）", "see (note)"),
    ("3，000 people at 12：30", "3,000 people at 12:30"),  # numbers stay numbers
    ("Wait……what", "Wait...what"),
    ("Wait…", "Wait…"),  # one ellipsis character is English too
    ("Hello。”", "Hello.”"),
    ("x\u3000y", "x y"),
    ("李明，你好", "李明，你好"),  # Chinese the model left as it was keeps its marks
    ("Hello, world! (ok)", "Hello, world! (ok)"),
    ("Hi。\nNext", "Hi.\nNext"),
    ("", ""),
]


@pytest.mark.parametrize(("raw", "expected"), ASCII_CASES)
def test_to_ascii(raw, expected):
    assert to_ascii(raw) == expected
    assert to_ascii(expected) == expected  # idempotent


def test_an_ascii_stable_prefix_never_changes_later():
    rng = random.Random(11)
    alphabet = ["中", "a", "B", "1", "，", "。", "！", "（", "）", "：", "…", " ", "\u3000", "\n", "”", ".", ","]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        final = to_ascii(text)
        previous = ""
        for cut in range(len(text) + 1):
            shown = to_ascii(ascii_stable_prefix(text[:cut]))
            assert final.startswith(shown), (text, cut, shown, final)
            assert shown.startswith(previous)
            previous = shown


def test_rules_follow_the_target_script():
    assert rules_for("han").normalize("你好,世界") == "你好，世界"
    assert rules_for("latin").normalize("Hello，world") == "Hello, world"
    assert rules_for("cyrillic") is None  # a script without rules: output left as the model wrote it
