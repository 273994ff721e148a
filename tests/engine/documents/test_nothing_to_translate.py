"""A paragraph, cell or cue that is only a URL, an e-mail address, a number or code is never sent to the model and
comes back byte for byte, in every format (one rule: engine.text.verbatim through Unit.translatable). Run on the real
engine and the tiny fixture model, which made up a Chinese sentence for each of them before."""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from engine.documents.job import DocumentJob, DocumentOptions
from engine.documents.model import Run, Unit
from engine.options import TranslationOptions
from engine.pipeline.translator import Translator

URL = "https://example.org/path?q=1"
EMAIL = "john@example.org"
NUMBER = "1,234.50"
CODE = "print(result)"
KEPT = (URL, EMAIL, NUMBER, CODE)
PROSE = "Thank you very much."
PROSE_ZH = "非常感谢。"


class Recording:
    """The real translator, recording every text the job sends it."""

    def __init__(self, translator: Translator) -> None:
        self.translator = translator
        self.texts: list[str] = []

    def translate_segments(self, segments: Iterable[str], options=None, *, cancel=None) -> Iterator:
        texts = list(segments)
        self.texts.extend(texts)
        return self.translator.translate_segments(texts, options, cancel=cancel)


@pytest.fixture(scope="module")
def translator(bundle_dir) -> Translator:
    return Translator(bundle_dir, precision="int8")


def _docx(split_url: bool = False) -> bytes:
    from docx import Document

    doc = Document()
    doc.add_paragraph(PROSE)
    url = doc.add_paragraph()
    if split_url:  # Word often cuts a pasted URL into several runs
        url.add_run(URL[:12])
        url.add_run(URL[12:]).bold = True
    else:
        url.add_run(URL)
    for text in (EMAIL, NUMBER, CODE):
        doc.add_paragraph(text)
    table = doc.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text = URL
    table.rows[0].cells[1].text = "See you tomorrow."
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def _srt() -> bytes:
    cues = [PROSE, *KEPT]
    return "".join(f"{i + 1}\n00:00:0{i},000 --> 00:00:0{i},900\n{text}\n\n" for i, text in enumerate(cues)).encode()


DOCUMENTS = {
    "a.txt": lambda: "\n\n".join([PROSE, *KEPT]).encode() + b"\n",
    "a.md": lambda: f"# {PROSE}\n\n{URL}\n\n<{EMAIL}>\n\n{NUMBER}\n\n`{CODE}`\n\n    {CODE}\n".encode(),
    "a.html": lambda: (
        f"<html><body><p>{PROSE}</p><p>{URL}</p><p><a href='mailto:{EMAIL}'>{EMAIL}</a></p>"
        f"<td>{NUMBER}</td><p><code>{CODE}</code></p><p>{CODE}</p></body></html>"
    ).encode(),
    "a.srt": _srt,
    "a.docx": _docx,
    "b.docx": lambda: _docx(split_url=True),
}


def _text(path: Path) -> str:
    """What a reader sees of the document: its text (Word: paragraphs and table cells, via python-docx)."""
    if path.suffix != ".docx":
        return path.read_text(encoding="utf-8")
    from docx import Document

    doc = Document(str(path))
    cells = [cell.text for table in doc.tables for row in table.rows for cell in row.cells]
    return "\n".join([p.text for p in doc.paragraphs] + cells)


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_nothing_to_translate_is_kept_in_every_format(tmp_path, translator, name):
    source = tmp_path / name
    source.write_bytes(DOCUMENTS[name]())
    recording = Recording(translator)
    job = DocumentJob(source, DocumentOptions(), TranslationOptions(), target_lang="zh")
    result = job.run(recording)
    assert result.error is None and result.output is not None
    sent = "\n".join(recording.texts)
    assert PROSE in sent
    for kept in KEPT:
        assert kept not in sent, f"{kept!r} was sent to the model"
    before, after = _text(source), _text(result.output)
    for kept in KEPT:  # each one still there, as often as before (no made-up sentence in its place)
        assert after.count(kept) == before.count(kept) > 0, kept
    assert PROSE_ZH in after and PROSE not in after


def test_the_rule_reads_a_units_runs_together():
    assert not Unit((Run("https://exam"), Run("ple.org/path?q=1"))).translatable
    assert Unit((Run("Read "), Run("{x}", fixed=True), Run(" now"))).translatable
    assert not Unit((Run(URL), Run(" "), Run(EMAIL))).translatable
    assert not Unit((Run("{x}", fixed=True),)).translatable
