"""Markdown: prose is translated where it stands; code, HTML, front matter, link targets and markup are kept, and
emphasis stays around the right words."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from engine.documents import registry
from engine.documents.formats import markdown
from engine.documents.formats._mdinline import inline_spans
from engine.documents.inline import distribute
from engine.documents.model import DocumentError, Run
from engine.pipeline.translator import Translator
from tests.engine.documents.text_support import CORPUS, assert_fuzz_safe, identity, translated, upper

README = """\
---
title: Qiao
tags: [translation, offline]
---

# Getting **started** with Qiao #

Qiao translates *offline*. See [the guide](https://example.com/guide "Guide (v2)") or
<https://example.com> and https://example.org/path. Run `qiao --help` for <kbd>help</kbd>&nbsp;now[^1].

> Please open the window.
> It is raining __today__.

- I like green tea.
  She does not eat meat.
- Where is the `train` station?
   1. Turn left at the next corner.

| Item | Price `usd` |
|:-----|------:|
| Coffee \\| tea | 5 dollars |

Setext heading
==============

```python
print("Hello, how are you?")
```

    indented code is not translated

<div class="note">
An HTML block is left as it is.
</div>

$$
E = mc^2
$$

[guide]: https://example.com/guide "Title"

[^1]: This is a footnote.

See [guide] and [the docs][guide] and ![alt text](img.png "Image"), snake_case and 2 * 3.
"""

EXPECTED_UPPER = """\
---
title: Qiao
tags: [translation, offline]
---

# GETTING **STARTED** WITH QIAO #

QIAO TRANSLATES *OFFLINE*. SEE [THE GUIDE](https://example.com/guide "Guide (v2)") OR
<https://example.com> AND https://example.org/path. RUN `qiao --help` FOR <kbd>HELP</kbd>&nbsp;NOW[^1].

> PLEASE OPEN THE WINDOW.
> IT IS RAINING __TODAY__.

- I LIKE GREEN TEA.
  SHE DOES NOT EAT MEAT.
- WHERE IS THE `train` STATION?
   1. TURN LEFT AT THE NEXT CORNER.

| ITEM | PRICE `usd` |
|:-----|------:|
| COFFEE \\| TEA | 5 DOLLARS |

SETEXT HEADING
==============

```python
print("Hello, how are you?")
```

    indented code is not translated

<div class="note">
An HTML block is left as it is.
</div>

$$
E = mc^2
$$

[guide]: https://example.com/guide "Title"

[^1]: THIS IS A FOOTNOTE.

SEE [guide] AND [THE DOCS][guide] AND ![ALT TEXT](img.png "Image"), SNAKE_CASE AND 2 * 3.
"""


def runs(unit) -> list[tuple[str, bool]]:
    return [(run.text, run.fixed) for run in unit.runs]


def test_units_are_the_prose_blocks_in_reading_order():
    doc = markdown.read(README.encode())
    assert [unit.written for unit in doc.units] == [
        "Getting **started** with Qiao",
        'Qiao translates *offline*. See [the guide](https://example.com/guide "Guide (v2)") or\n'
        "<https://example.com> and https://example.org/path. Run `qiao --help` for <kbd>help</kbd>&nbsp;now[^1].",
        "Please open the window.\nIt is raining __today__.",
        "I like green tea.\nShe does not eat meat.",
        "Where is the `train` station?",
        "Turn left at the next corner.",
        "Item",
        "Price `usd`",
        "Coffee \\| tea",
        "5 dollars",
        "Setext heading",
        "[^1]: This is a footnote.",
        'See [guide] and [the docs][guide] and ![alt text](img.png "Image"), snake_case and 2 * 3.',
        "alt text",  # the image's alt text: a unit of its own, as HTML's alt is
    ]
    assert all(unit.split == "align" for unit in doc.units)
    # What the translator reads: no emphasis delimiters, brackets, destinations, tags or images (as in HTML);
    # code, URLs and entities stay as context.
    assert doc.units[0].source == "Getting started with Qiao"
    assert doc.units[1].source == (
        "Qiao translates offline. See the guide or\n<https://example.com> and https://example.org/path. Run "
        "`qiao --help` for help&nbsp;now."
    )
    assert doc.units[-2].source == "See [guide] and the docs and , snake_case and 2 * 3."


def test_inline_markup_is_fixed_and_prose_is_not():
    doc = markdown.read(README.encode())
    assert runs(doc.units[0]) == [
        ("Getting ", False),
        ("**", True),
        ("started", False),
        ("**", True),
        (" with Qiao", False),
    ]
    assert runs(doc.units[1]) == [
        ("Qiao translates ", False),
        ("*", True),
        ("offline", False),
        ("*", True),
        (". See ", False),
        ("[", True),
        ("the guide", False),
        ('](https://example.com/guide "Guide (v2)")', True),
        (" or\n", False),
        ("<https://example.com>", True),
        (" and ", False),
        ("https://example.org/path", True),
        (". Run ", False),
        ("`qiao --help`", True),
        (" for ", False),
        ("<kbd>", True),
        ("help", False),
        ("</kbd>", True),
        ("&nbsp;", True),
        ("now", False),
        ("[^1]", True),
        (".", False),
    ]
    assert [run.markup for run in doc.units[1].runs if run.fixed] == [
        True,
        True,
        True,
        True,
        False,
        False,
        False,
        True,
        True,
        False,
        True,
    ]
    assert runs(doc.units[-2]) == [
        ("See ", False),
        ("[guide]", True),  # a shortcut reference: its text is the label
        (" and ", False),
        ("[", True),
        ("the docs", False),
        ("][guide]", True),
        (" and ", False),
        ('![alt text](img.png "Image")', True),
        (", snake_case and 2 * 3.", False),
    ]


def test_render_changes_only_the_prose():
    doc = markdown.read(README.encode())
    assert doc.render(upper(doc), target="zh").decode() == EXPECTED_UPPER


def test_identity_gives_back_the_same_bytes_crlf_and_bom_included():
    for data in (README.encode(), codecs.BOM_UTF8 + README.replace("\n", "\r\n").encode()):
        doc = markdown.read(data)
        assert len(doc.units) == 14
        assert doc.render(identity(doc), target="zh") == data
    crlf = markdown.read(codecs.BOM_UTF8 + README.replace("\n", "\r\n").encode())
    assert crlf.render(upper(crlf), target="zh") == codecs.BOM_UTF8 + EXPECTED_UPPER.replace("\n", "\r\n").encode()


def test_bold_markers_stay_around_a_translated_word():
    doc = markdown.read(b"The **meeting** starts at 3 o'clock.\n")
    assert runs(doc.units[0]) == [
        ("The ", False),
        ("**", True),
        ("meeting", False),
        ("**", True),
        (" starts at 3 o'clock.", False),
    ]
    # The translator reads the sentence without its markers; the bold word's own translation places them.
    assert doc.units[0].source == "The meeting starts at 3 o'clock."
    doc = markdown.read(b"**Meeting** starts at 3 o'clock.\n")
    new = distribute(doc.units[0], "会议3点开始。", [None, "会议", None, "3点开始。"])
    assert doc.render([new], target="zh").decode() == "**会议**3点开始。\n"


def test_markup_around_a_word_left_without_text_is_taken_out():
    doc = markdown.read(b"Qiao translates *offline* and [the guide](https://example.com) helps.\n")
    new = ["Qiao离线翻译，", "*", "", "*", "", "[", "", "](https://example.com)", "指南有帮助。"]
    assert [run.text for run in doc.units[0].runs][1:4] == ["*", "offline", "*"]
    # `**` would show as two asterisks and `[ ](url)` as an empty link: both pairs go
    assert doc.render([new], target="zh").decode() == "Qiao离线翻译，指南有帮助。\n"


def test_a_footnote_definition_keeps_its_label():
    doc = markdown.read(b"Text[^note].\n\n[^note]: The report is due on Friday.\n")
    assert [(run.text, run.fixed) for run in doc.units[1].runs] == [
        ("[^note]: ", True),
        ("The report is due on Friday.", False),
    ]
    out = doc.render([None, distribute(doc.units[1], "报告要在周五之前交。")], target="zh")
    assert out.decode() == "Text[^note].\n\n[^note]: 报告要在周五之前交。\n"


def test_a_paragraph_translation_continues_on_the_blocks_own_lines():
    doc = markdown.read(b"> - First line\n>   second line\n\nPlain\r\n")
    out = doc.render([["One\nTwo\nThree\n\nFour"], ["A\nB"]], target="zh")
    assert out == b"> - One\n>   Two\n>   Three\n>   Four\n\nA\r\nB\r\n"


def test_headings_and_cells_stay_on_one_line_and_pipes_are_escaped():
    doc = markdown.read(b"## Old title\n\n| a | b |\n|---|---|\n| c | d |\n")
    out = doc.render([["New\ntitle"], ["x|y"], None, None, ["z"]], target="zh")
    assert out == b"## New title\n\n| x\\|y | b |\n|---|---|\n| c | z |\n"


def test_toml_front_matter_and_reference_definitions_are_untouched():
    source = "+++\ntitle = 'Qiao'\n+++\n\nHello, how are you?\n\n[docs]: https://example.com\n"
    doc = markdown.read(source.encode())
    assert [unit.source for unit in doc.units] == ["Hello, how are you?"]
    assert doc.render([["你好，你最近怎么样？"]], target="zh").decode() == source.replace(
        "Hello, how are you?", "你好，你最近怎么样？"
    )


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("-\ttab item\n\tcontinued\n", "-\tTAB ITEM\n\tCONTINUED\n"),
        ("1. one\n\n   > quoted in list\n   > more\n", "1. ONE\n\n   > QUOTED IN LIST\n   > MORE\n"),
        ("hard break  \nnext\\\nlast\n", "HARD BREAK  \nNEXT\\\nLAST\n"),
        ("Multi\nline setext\n---\n", "MULTI\nLINE SETEXT\n---\n"),
        ("-\n  late start\n", "-\n  LATE START\n"),
        ('a <span\nclass="x">b</span> c\n', 'A <span\nclass="x">B</span> C\n'),
        ("* * *\n\n+ plus item\n", "* * *\n\n+ PLUS ITEM\n"),
        ("<!-- comment -->\n\ntext after\n", "<!-- comment -->\n\nTEXT AFTER\n"),
        ("- [ ] task item\n- [x] done\n", "- [ ] TASK ITEM\n- [x] DONE\n"),
        ("&copy; 2024 Qiao\n", "&copy; 2024 QIAO\n"),
    ],
)
def test_more_constructs(source, expected):
    doc = markdown.read(source.encode())
    assert doc.render(identity(doc), target="zh") == source.encode()
    assert doc.render(upper(doc), target="zh").decode() == expected


T, F, M, A = "text", "fixed", "markup", "alt"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain words", [("plain words", T)]),
        ("a `code` b", [("a ", T), ("`code`", F), (" b", T)]),
        ("``a ` b`` c", [("``a ` b``", F), (" c", T)]),
        ("no `closing", [("no `closing", T)]),
        ("2 * 3 * 4", [("2 * 3 * 4", T)]),
        ("snake_case_name", [("snake_case_name", T)]),
        ("~~gone~~ now", [("~~", M), ("gone", T), ("~~", M), (" now", T)]),
        ("\\*not emphasis\\*", [("\\*not emphasis\\*", T)]),
        ("mail <me@example.com> now", [("mail ", T), ("<me@example.com>", F), (" now", T)]),
        ("see www.example.com.", [("see ", T), ("www.example.com", F), (".", T)]),
        ("[a [nested] link](u)", [("[", M), ("a [nested] link", T), ("](u)", M)]),
        ("[unknown] brackets", [("[unknown] brackets", T)]),
        ("x <!-- note --> y", [("x ", T), ("<!-- note -->", M), (" y", T)]),
        ("a ![the cat](c.png) b", [("a ", T), ("![", M), ("the cat", A), ("](c.png)", M), (" b", T)]),
        ("![a][b]![c](d)", [("![", M), ("a", A), ("][b]![", M), ("c", A), ("](d)", M)]),
        (
            "x[^1] &amp; <b>y</b>",
            [("x", T), ("[^1]", M), (" ", T), ("&amp;", F), (" ", T), ("<b>", M), ("y", T), ("</b>", M)],
        ),
    ],
)
def test_inline_spans(text, expected):
    assert [(text[a:b], kind) for a, b, kind in inline_spans(text)] == expected


def test_runs_cover_the_source_exactly():
    doc = markdown.read(README.encode())
    for unit in doc.units:
        assert unit.runs == tuple(Run(run.text, run.fixed, run.markup) for run in unit.runs)
        assert all(run.text for run in unit.runs)


def test_binary_is_refused():
    with pytest.raises(DocumentError):
        markdown.read(b"# Title\x00\x01\x02")


def test_the_registry_finds_it():
    assert registry.for_path(Path("README.md")) is markdown.FORMAT
    assert registry.for_path(Path("notes.markdown")) is markdown.FORMAT


def test_fuzzed_input_is_refused_or_read_never_a_crash():
    assert assert_fuzz_safe(markdown.read, README.encode(), seed=2) > 20


def test_hostile_nesting_and_huge_lines_stay_fast():
    import time

    for data in (b"[" * 30_000, b"> " * 30_000 + b"x", b"`" * 30_001, b"*a" * 30_000, b"[a](" * 20_000):
        started = time.monotonic()
        doc = markdown.read(data)
        assert doc.render(identity(doc), target="zh") == data
        assert time.monotonic() - started < 10


@pytest.fixture(scope="module")
def en_zh(bundle_dir):
    return Translator(bundle_dir, precision="fp32", threads=1)


def test_end_to_end_with_the_tiny_model(en_zh):
    source = (
        "# Good morning, everyone!\n\n"
        "The weather is very nice.\n\n"
        "- I like green tea.\n"
        "- Where is the train station?\n\n"
        "> Please open the window.\n\n"
        "```\nThank you very much.\n```\n\n"
        "| Thank you very much. |\n|---|\n| See you tomorrow. |\n"
    )
    doc = markdown.read(source.encode())
    out = doc.render(translated(doc, en_zh), target="zh").decode()
    c = CORPUS
    assert out == (
        f"# {c['Good morning, everyone!']}\n\n"
        f"{c['The weather is very nice.']}\n\n"
        f"- {c['I like green tea.']}\n"
        f"- {c['Where is the train station?']}\n\n"
        f"> {c['Please open the window.']}\n\n"
        "```\nThank you very much.\n```\n\n"
        f"| {c['Thank you very much.']} |\n|---|\n| {c['See you tomorrow.']} |\n"
    )


def _strong_texts(text: str) -> list[str]:
    """The text inside every strong emphasis markdown-it sees in `text` (what a Markdown viewer would make bold)."""
    from markdown_it import MarkdownIt

    found, inside = [], False
    for block in MarkdownIt("commonmark").parse(text):
        for token in block.children or []:
            if token.type == "strong_open":
                inside, found = True, [*found, ""]
            elif token.type == "strong_close":
                inside = False
            elif inside and token.type == "text":
                found[-1] += token.content
    return found


@pytest.mark.parametrize(
    ("share", "bold"),
    [("很好。", "很好"), ("，很好", "很好"), (" 很好 ", "很好"), ("。", None), ("", None)],
)
def test_emphasis_stays_emphasis_whatever_its_share_starts_or_ends_with(share, bold):
    """CommonMark sees `**很好。**我们` as text with asterisks: the marks go outside the delimiters; a share with no
    word left loses them (never literal `**` on the page)."""
    doc = markdown.read(b"The weather is **very nice** today. We are going.\n")
    (unit,) = doc.units
    assert [r.text for r in unit.runs] == ["The weather is ", "**", "very nice", "**", " today. We are going."]
    out = doc.render([["天气", "**", share, "**", "我们走了。"]], target="zh").decode()
    assert "**" not in out.replace("**" + (bold or "\0") + "**", "")
    assert _strong_texts(out) == ([bold] if bold else [])
    assert out.replace("**", "").replace("\n", "") == "天气" + share + "我们走了。"


def _code_spans(text: str) -> list[str]:
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parseInline(text)[0].children
    return [token.content for token in tokens if token.type == "code_inline"]


def test_two_code_spans_stay_two_when_the_text_between_comes_back_empty():
    doc = markdown.read(b"Run `a` `b` now.\n")
    unit = doc.units[0]
    assert [(run.text, run.fixed) for run in unit.runs] == [
        ("Run ", False),
        ("`a`", True),
        (" ", False),
        ("`b`", True),
        (" now.", False),
    ]
    # The model put nothing between the two spans (Chinese has no spaces): the share of " " is empty.
    out = doc.render([["运行", "`a`", "", "`b`", "。"]], target="zh").decode()
    assert out == "运行`a` `b`。\n"  # before: 运行`a``b`。, which Markdown reads as one span "a``b"
    assert _code_spans(out) == ["a", "b"]


def test_a_backtick_the_model_writes_in_prose_cannot_move_the_code_spans():
    """Issue 27 item 4, seen in nodejs's path.md: the model (which reads the spans as context) gave ", resolving "
    the share "`'." and `path`, `'..'`, `'.'` came back as the spans "path``'.'" and "报告要在周"."""
    source = "The given `path`, resolving `'..'` and `'.'` segments.\n"
    doc = markdown.read(source.encode())
    assert _code_spans(source) == ["path", "'..'", "'.'"]
    out = doc.render([["给定", "`path`", "`'.", "`'..'`", "报告要在周", "`'.'`", "段。"]], target="zh").decode()
    assert _code_spans(out) == ["path", "'..'", "'.'"]
    assert out == "给定`path`\\`'.`'..'`报告要在周`'.'`段。\n"
    untouched = markdown.read(b"A lone ` stays.\n")  # a run left as it was is written byte for byte
    assert untouched.render([None], target="zh") == b"A lone ` stays.\n"


def test_an_image_alt_text_is_translated_as_a_unit_of_its_own():
    source = 'See ![A cat on a desk](cat.png "Cat") here.\n\n![The computer is on the desk.](pc.png)\n'
    doc = markdown.read(source.encode())
    assert [unit.source for unit in doc.units] == ["See  here.", "A cat on a desk", "", "The computer is on the desk."]
    assert [unit.translatable for unit in doc.units] == [True, True, False, True]
    # The alt text alone is translated; the image's path and title and the paragraph around it are kept.
    out = doc.render([None, ["桌子上的[猫]"], None, ["电脑在桌子上。"]], target="zh").decode()
    assert out == 'See ![桌子上的\\[猫\\]](cat.png "Cat") here.\n\n![电脑在桌子上。](pc.png)\n'
    both = doc.render([["看", doc.units[0].runs[1].text, "这里。"], ["猫"], None, None], target="zh").decode()
    assert both.startswith('看![猫](cat.png "Cat")这里。\n\n![The computer is on the desk.](pc.png)')


def test_an_alt_text_in_a_table_cell_cannot_end_the_cell():
    doc = markdown.read(b"| a | ![A cat](i.png) |\n|---|---|\n| c | d |\n")
    alt = next(i for i, unit in enumerate(doc.units) if unit.source == "A cat")
    translations: list = [None] * len(doc.units)
    translations[alt] = ["左|右"]
    assert (
        doc.render(translations, target="zh")
        == b"| a | ![\xe5\xb7\xa6\\|\xe5\x8f\xb3](i.png) |\n|---|---|\n| c | d |\n"
    )
