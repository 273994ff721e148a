"""The same sentence, in each format's own emphasis syntax, reads the same to the model and comes back as the same
translated text (issue 27: Markdown sent `**` and `*` to the model, which gave 电脑在五楼 where .docx and .html gave
电脑在桌子上; .srt and .vtt cue tags reached it too)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.documents import registry
from engine.documents.inline import distribute, runs_alone
from tests.engine.documents.producer_shapes import (
    BOLD,
    ITALIC,
    make_docx,
    make_odt,
    pandoc_paragraph,
    pandoc_run,
    pandoc_words,
)

SENTENCE = "The computer is on the desk."
DOCUMENTS = {
    "t.txt": SENTENCE.encode() + b"\n",
    "t.md": b"The **computer** is on the *desk*.\n",
    "t.html": b"<!DOCTYPE html><html><body><p>The <b>computer</b> is on the <i>desk</i>.</p></body></html>",
    "t.docx": make_docx(
        pandoc_paragraph(
            pandoc_words("The ")
            + pandoc_run("computer", BOLD)
            + pandoc_words(" is on the ")
            + pandoc_run("desk", ITALIC)
            + pandoc_run(".")
        )
    ),
    "t.srt": b"1\n00:00:01,000 --> 00:00:03,000\nThe <b>computer</b> is on the <i>desk</i>.\n",
    "font.srt": b'1\n00:00:01,000 --> 00:00:03,000\n{\\an8}The <font color="#ffff00">computer</font> is on the '
    b'<font face="Arial">desk</font>.\n',
    "t.vtt": b"WEBVTT\n\n00:01.000 --> 00:03.000\n<v Li>The <b>computer</b> is on the <i>desk</i>.\n",
    "c.vtt": b"WEBVTT\n\n00:01.000 --> 00:03.000\nThe <c.yellow>computer</c> is <00:00:02.000>on the <u>desk</u>.\n",
    "t.odt": make_odt(
        '<text:p text:style-name="First_20_paragraph">The <text:span text:style-name="T1">computer</text:span> is '
        'on the <text:span text:style-name="T2">desk</text:span>.</text:p>'
    ),
}


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_the_model_reads_the_same_sentence(name):
    doc = registry.for_path(Path(name)).read(DOCUMENTS[name])
    assert [unit.source for unit in doc.units if unit.translatable] == [SENTENCE]


def test_every_format_gives_the_same_translated_text(bundle_dir):
    from engine.pipeline.translator import Translator

    translator = Translator(Path(bundle_dir))
    texts = {}
    for name, data in DOCUMENTS.items():
        doc = registry.for_path(Path(name)).read(data)
        unit = next(unit for unit in doc.units if unit.translatable)
        alone = runs_alone(unit)
        answers = [t.text for t in translator.translate_segments([unit.source, *(unit.runs[r].text for r in alone)])]
        hints: list = [None] * len(unit.runs)
        for r, text in zip(alone, answers[1:], strict=True):
            hints[r] = text
        shares = distribute(unit, answers[0], hints if alone else None)
        texts[name] = "".join(share for run, share in zip(unit.runs, shares, strict=True) if not run.markup)
    assert set(texts.values()) == {translator.translate(SENTENCE).text}, texts
