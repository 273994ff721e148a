"""engine.documents.inline: a unit's translation shared among its runs, by meaning ("align") or length."""

from __future__ import annotations

import random
import time

import pytest

from engine.documents.inline import _Matcher, distribute
from engine.documents.model import Run, Unit


def unit(*texts: str | tuple[str, bool], split: str = "align") -> Unit:
    runs = tuple(Run(t) if isinstance(t, str) else Run(t[0], fixed=t[1]) for t in texts)
    return Unit(runs, split=split)


def translatable_text(u: Unit, shares: list[str]) -> str:
    return "".join(share for run, share in zip(u.runs, shares) if not run.fixed)


def assert_guarantees(u: Unit, translation: str, shares: list[str]) -> None:
    """One string per run; fixed runs verbatim; the translatable shares are the translation minus the fixed
    runs' copies that distribute located (in order, each once)."""
    assert len(shares) == len(u.runs)
    for run, share in zip(u.runs, shares):
        if run.fixed:
            assert share == run.text
    rest = translation
    pos = 0
    for run in u.runs:
        if run.fixed and not run.markup and (run.text.strip() or "\n" in run.text or "\t" in run.text):
            at = rest.find(run.text, pos)
            if at >= 0:
                rest = rest[:at] + rest[at + len(run.text) :]
                pos = at
    if any(not run.fixed for run in u.runs):  # with no translatable run, there is nowhere to put the rest
        assert translatable_text(u, shares) == rest


def test_a_line_break_run_is_taken_out_of_the_share_before_it():
    """A Word paragraph "Thank you very much.<tab/>See you tomorrow.<br/>Can you help me?" is one text with a tab and
    a line break as fixed runs. The translation keeps the line ("…明天见。\n你能帮我吗？") and drops the tab; the
    "\n" stayed in the share before the break, so the document got a newline inside the text and the <w:br/>."""
    u = unit("Thank you very much.", ("\t", True), "See you tomorrow.", ("\n", True), "Can you help me?")
    translation = "非常感谢。明天见。\n你能帮我吗？"
    for hints in (None, ["非常感谢。", None, "明天见。", None, "你能帮我吗？"]):
        shares = distribute(u, translation, hints)
        assert shares == ["非常感谢。", "\t", "明天见。", "\n", "你能帮我吗？"], hints
        assert_guarantees(u, translation, shares)


# -- align: by meaning ------------------------------------------------------------------------------------------


def test_bold_word_gets_its_own_translation_in_chinese():
    u = unit("Click ", "Save", " to keep your file.")
    translation = "点击保存以保留您的文件。"
    shares = distribute(u, translation, ["点击", "保存", "保留您的文件。"])
    assert shares == ["点击", "保存", "以保留您的文件。"]


def test_bold_word_found_even_when_the_length_share_would_miss_it():
    # By length the short first run would get about a fifth of the text; its meaning is at the end.
    u = unit("Save", " your work before you close the window.")
    translation = "关闭窗口之前请保存"
    shares = distribute(u, translation, ["保存", "在关闭窗口之前你的工作。"])
    # Out of reading order in the target: the chain keeps the run whose match is longer, the bold one still
    # gets a contiguous share and nothing is lost.
    assert_guarantees(u, translation, shares)
    assert "".join(shares) == translation


def test_english_target_by_words():
    u = unit("点击", "保存", "以保留您的文件。")
    translation = "Click Save to keep your file."
    shares = distribute(u, translation, ["Click", "save", "to keep your file."])
    assert shares == ["Click ", "Save", " to keep your file."]


def test_whitespace_goes_where_the_source_had_it():
    u = unit("Read ", "the manual", " first.")
    translation = "Lisez le manual first."
    shares = distribute(u, translation, ["Lisez", "manual", "first."])
    # "le" is the translation of "the": it joins the longer neighbour; the space before it stays outside.
    assert shares == ["Lisez ", "le manual", " first."]


def test_fixed_runs_come_back_verbatim_and_are_taken_out_of_the_shares():
    u = unit("See ", ("https://example.org/help", True), " for the ", "details", ".")
    translation = "详情请见 https://example.org/help 。"
    shares = distribute(u, translation, ["看", None, "为了", "详情", "。"])
    assert shares[1] == "https://example.org/help"
    assert_guarantees(u, translation, shares)
    assert "https" not in translatable_text(u, shares)


def test_code_run_inside_a_sentence():
    u = unit("Run ", ("ls -l", True), " to list the ", "files", ".")
    translation = "运行 ls -l 列出文件。"
    shares = distribute(u, translation, ["运行", None, "列出", "文件", "。"])
    assert shares[1] == "ls -l"
    assert shares[3] == "文件"
    assert_guarantees(u, translation, shares)


def test_repeated_words_are_matched_in_reading_order():
    u = unit("The ", "cat", " sees the ", "cat", ".")
    translation = "猫看见猫。"
    shares = distribute(u, translation, ["这", "猫", "看见", "猫", "。"])
    assert shares[1] == "猫"
    assert shares[3] == "猫"
    assert_guarantees(u, translation, shares)


def test_repeated_words_in_an_english_target():
    u = unit("我的", "猫", "看见了你的", "猫", "。")
    translation = "My cat saw your cat."
    shares = distribute(u, translation, ["my", "cat", "saw your", "cat", "."])
    assert shares == ["My ", "cat", " saw your ", "cat", "."]


def test_one_common_word_is_not_trusted():
    english = _Matcher("The weather is fine today")
    assert english.spans("the day", 0.5) == []  # "the" alone says nothing about where the run's meaning is
    assert [(start, end) for _, start, end in english.spans("weather report", 0.5)] == [(4, 11)]
    chinese = _Matcher("我的朋友的书")
    assert chinese.spans("的书籍", 0.5) == [(pytest.approx(2, abs=0.5), 4, 6)]  # 的书: two characters
    assert chinese.spans("的人", 0.5) == []  # one common character


def test_run_translations_not_found_fall_back_to_length():
    u = unit("Hello ", "world")
    translation = "你好世界"
    by_length = distribute(u, translation, None)
    assert distribute(u, translation, ["xyz", "qqq"]) == by_length
    assert distribute(u, translation, [None, None]) == by_length
    assert_guarantees(u, translation, by_length)


def test_single_common_character_is_not_trusted():
    # "的" is everywhere in Chinese: a one-character overlap of a longer run translation is no evidence.
    u = unit("the book of ", "my friend")
    shares = distribute(u, "我的朋友的书", ["的书籍", "我朋友"])
    assert_guarantees(u, "我的朋友的书", shares)


def test_empty_and_whitespace_runs():
    u = unit("Hello", " ", "", "world")
    translation = "Bonjour le monde"
    shares = distribute(u, translation, ["Bonjour", "", None, "monde"])
    assert shares[0].startswith("Bonjour")
    assert shares[3].endswith("monde")
    assert_guarantees(u, translation, shares)


def test_all_fixed_runs():
    u = unit(("a.py", True), ("b.py", True))
    for translation in ("a.py b.py", "", "完全不同"):
        shares = distribute(u, translation, [None, None])
        assert shares == ["a.py", "b.py"]


def test_empty_translation():
    u = unit("Click ", "Save")
    assert distribute(u, "", ["点击", "保存"]) == ["", ""]


def test_single_run_gets_the_whole_translation():
    assert distribute(unit("Hello"), "你好", ["你好"]) == ["你好"]
    assert distribute(unit(("x = 1", True)), "x = 1 的", None) == ["x = 1"]


def test_length_units_ignore_run_translations():
    u = unit("Click ", "Save", " to keep your file.", split="length")
    translation = "点击保存以保留您的文件。"
    assert distribute(u, translation, ["点击", "保存", "保留您的文件。"]) == distribute(u, translation, None)


def test_wrong_number_of_run_translations_is_a_programming_error():
    with pytest.raises(ValueError, match="entries"):
        distribute(unit("a", "b"), "ab", ["a"])


def test_length_share_of_a_short_chinese_text_is_not_pushed_to_its_end():
    u = unit("Hello ", "world", split="length")
    shares = distribute(u, "你好，世界。", None)
    assert shares == ["你好，", "世界。"]


# -- property test: the guarantees whatever the input -----------------------------------------------------------

_ALPHABET = "abc de的是保存文件。，.!  \n"


def _random_text(rng: random.Random, most: int) -> str:
    return "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, most)))


@pytest.mark.parametrize("seed", range(400))
def test_guarantees_hold_for_random_units(seed):
    rng = random.Random(seed)
    runs = []
    for _ in range(rng.randint(1, 8)):
        fixed = rng.random() < 0.2
        runs.append(Run(_random_text(rng, 8) or "x", fixed=fixed) if fixed else Run(_random_text(rng, 10)))
    u = Unit(tuple(runs), split=rng.choice(["align", "align", "length"]))
    pieces = [_random_text(rng, 12)]
    for run in runs:
        if run.fixed and rng.random() < 0.7:
            pieces.append(run.text)
        pieces.append(_random_text(rng, 12))
    translation = "".join(pieces)
    hints = [None if run.fixed or rng.random() < 0.2 else _random_text(rng, 6) for run in runs]
    if rng.random() < 0.3:  # hints copied from the translation: real matches
        for i, run in enumerate(runs):
            if not run.fixed and translation:
                a = rng.randrange(len(translation))
                hints[i] = translation[a : a + rng.randint(1, 6)]
    shares = distribute(u, translation, hints)
    assert_guarantees(u, translation, shares)


def test_cost_is_bounded_for_a_long_paragraph():
    """1,200 characters of Chinese in 50 runs: well under a second (no quadratic work per run)."""
    rng = random.Random(7)
    words = ["保存", "文件", "窗口", "打开", "关闭", "设置", "翻译", "文档", "的", "了", "是", "在"]
    runs = []
    hints = []
    translation_parts = []
    for i in range(50):
        part = "".join(rng.choice(words) for _ in range(12))
        translation_parts.append(part)
        runs.append(Run(f"English words of run {i} "))
        hints.append(part[2:10])
    translation = "".join(translation_parts)
    u = Unit(tuple(runs))
    started = time.perf_counter()
    shares = distribute(u, translation, hints)
    elapsed = time.perf_counter() - started
    assert_guarantees(u, translation, shares)
    assert elapsed < 1.0, f"distribute took {elapsed:.2f}s"


def test_a_run_with_words_never_comes_back_empty():
    """The tiny model's own translation of a link's words is found nowhere: the link still gets text (it and its
    neighbour share by length), so the link — and, in Markdown, its URL — does not vanish from the document."""
    u = unit("The weather is ", "very nice", ". We are going to ", "Beijing", " next week.")
    translation = "天气很好。我们下周去北京。"
    hints = ["天气是", "非常好", "。我们要去", "乒乓球", "下周。"]  # 'Beijing' alone: garbage, found nowhere
    shares = distribute(u, translation, hints)
    assert_guarantees(u, translation, shares)
    assert all(shares), shares
    by_length = distribute(unit("The weather is ", "very nice", " next week.", split="length"), "天气很好下周")
    assert all(by_length), by_length


def test_an_empty_share_is_kept_when_there_is_nothing_to_share():
    u = unit("Hello ", "world")
    assert distribute(u, "你", [None, None]) in (["你", ""], ["", "你"])


def test_punctuation_at_a_cut_goes_where_the_source_had_it():
    """'<b>is very nice</b>. We…': the full stop belongs to the plain run, not inside the bold."""
    u = unit("The weather ", "is very nice", ". We are going.")
    translation = "天气很好。我们走了。"
    shares = distribute(u, translation, ["天气", "很好。", "我们走了。"])
    assert_guarantees(u, translation, shares)
    assert shares == ["天气", "很好", "。我们走了。"]
    # and the other way: a run whose source starts with no mark does not start with one
    u = unit("Hello, ", "my friend", " is here.")
    shares = distribute(u, "你好，我的朋友在这里。", ["你好，", "，我的朋友", "在这里。"])
    assert shares[1][0] != "，" and "".join(shares) == "你好，我的朋友在这里。"
