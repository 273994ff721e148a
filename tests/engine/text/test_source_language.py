"""engine.text.source_language: the one detector (window, popup, CLI, documents, API) on mixed, short and ambiguous
text,
and the installed direction it picks."""

from __future__ import annotations

import pytest

from engine.api.languages import detect
from engine.text.source_language import CLEAR, UNKNOWN, choose_pair, detect_language

BOTH = ("en-zh", "zh-en")


@pytest.mark.parametrize(
    "text",
    [
        "12345",
        "3.14 × 2 = 6.28",
        "https://example.org/path?q=1",
        "www.example.org",
        "someone@example.org",
        "!!! …，。？",
        "",
        "   \n\t",
        "x",
        "3D",
        "😀👍",
    ],
)
def test_numbers_links_and_punctuation_are_unknown_and_change_nothing(text):
    found = detect_language(text)
    assert found.language == UNKNOWN and not found.clear
    choice = choose_pair(found, BOTH, "en-zh")
    assert choice.pair == "en-zh" and not choice.switched and choice.missing is None
    assert choose_pair(found, BOTH, "zh-en").pair == "zh-en"


@pytest.mark.parametrize(
    "text, language",
    [
        ("好", "zh"),  # one CJK character alone is Chinese
        ("今天天气很好", "zh"),
        ("苹果公司今天发布了新款 iPhone 手机。", "zh"),  # Chinese with an English brand name
        ("我在 https://example.org/a-very-long-english-looking-path 看到的。", "zh"),  # the link is not English
        ("I met 王小明 yesterday at the station.", "en"),  # English with a Chinese name
        ("Please send it to Zhang Wei (张伟) by Friday.", "en"),
        ("Hello", "en"),
        ("OK", "en"),
        ("東京に行きます", "ja"),  # kanji with kana: Japanese, not Chinese
        ("ありがとう", "ja"),
        ("カタカナ", "ja"),
        ("안녕하세요", "ko"),
    ],
)
def test_the_language_of_mixed_and_short_text(text, language):
    found = detect_language(text)
    assert found.language == language, found
    assert found.clear, found


def test_kana_in_chinese_text_only_counts_when_it_is_a_real_share():
    # U+30FB, the katakana middle dot, is how some Chinese text writes foreign names' dot: still Chinese
    assert detect_language("列奥纳多・达・芬奇是意大利画家。").language == "zh"


def test_a_short_even_mix_is_not_clear():
    found = detect_language("Apple 发布了新款 iPhone")
    assert found.language == "zh" and found.confidence < CLEAR and not found.clear
    assert choose_pair(found, BOTH, "en-zh").pair == "en-zh", "an unclear text never switches"


def test_a_huge_text_is_judged_by_its_start():
    found = detect_language("你好。" * 100_000 + "Hello " * 100_000)
    assert found.language == "zh" and found.confidence == 100.0


def test_chinese_in_the_english_direction_picks_zh_en_when_it_is_installed():
    choice = choose_pair(detect_language("你好，你最近怎么样？"), BOTH, "en-zh")
    assert (choice.pair, choice.switched, choice.missing) == ("zh-en", True, None)
    english = choose_pair(detect_language("Hello, how are you?"), BOTH, "zh-en")
    assert (english.pair, english.switched) == ("en-zh", True)


def test_the_direction_that_already_reads_the_text_is_kept():
    choice = choose_pair(detect_language("Hello, how are you?"), BOTH, "en-zh")
    assert (choice.pair, choice.switched) == ("en-zh", False)


def test_a_missing_pair_is_named_and_the_preferred_one_kept():
    choice = choose_pair(detect_language("你好"), ("en-zh",), "en-zh")
    assert (choice.pair, choice.switched, choice.missing) == ("en-zh", False, "zh-en")


def test_japanese_is_said_to_be_unsupported_not_read_as_chinese():
    choice = choose_pair(detect_language("これは日本語の文章です。"), BOTH, "en-zh")
    assert choice.unsupported == "ja" and choice.pair == "en-zh" and not choice.switched
    assert choose_pair(detect_language("東京に行きます"), BOTH, "zh-en").unsupported == "ja"


def test_the_api_lists_the_same_detection():
    assert detect("今天天气很好") == [("zh", 100.0), ("en", 0.0)]
    assert detect("https://example.org") == [("en", 0.0), ("zh", 0.0)]
    assert detect("I like 苹果 very much")[0][0] == "en"
    assert detect("東京に行きます")[0] == ("ja", 100.0)
