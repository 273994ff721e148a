"""Shared by the HTML and EPUB tests: what a page's markup is (to compare before and after), made-up and real
translations."""

from __future__ import annotations

from html.parser import HTMLParser

from engine.documents.formats.html import _chunks as chunks
from engine.documents.inline import distribute
from engine.documents.model import Extracted

# Attributes a translation may change (everything else about a tag must come back as it was).
TRANSLATED_ATTRS = {"alt", "title", "placeholder", "aria-label", "lang", "xml:lang"}
UNTOUCHED_TEXT = {"script", "style", "pre", "code", "kbd", "textarea"}


class _Markup(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.events: list[tuple] = []
        self.texts: list[str] = []
        self.stack: list[str] = []

    def _attrs(self, tag: str, attrs: list[tuple[str, str | None]]) -> tuple:
        keep = []
        values = dict(attrs)
        for name, value in attrs:
            if name in TRANSLATED_ATTRS:
                continue
            if name == "content" and values.get("name") == "description":
                continue
            if name == "value" and values.get("type") in ("submit", "button", "reset"):
                continue
            keep.append((name, value))
        return tuple(keep)

    def handle_starttag(self, tag, attrs):
        self.events.append(("start", tag, self._attrs(tag, attrs)))
        self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.events.append(("startend", tag, self._attrs(tag, attrs)))

    def handle_endtag(self, tag):
        self.events.append(("end", tag))
        if tag in self.stack:
            while self.stack.pop() != tag:
                pass

    def _untouched(self) -> bool:
        return any(tag in UNTOUCHED_TEXT for tag in self.stack)

    def handle_data(self, data):
        if self._untouched():
            self.events.append(("raw", data))
        self.texts.append(data)

    def handle_entityref(self, name):
        if self._untouched():
            self.events.append(("raw", f"&{name};"))

    def handle_charref(self, name):
        if self._untouched():
            self.events.append(("raw", f"&#{name};"))

    def handle_comment(self, data):
        self.events.append(("comment", data))

    def handle_decl(self, decl):
        self.events.append(("decl", decl))

    def handle_pi(self, data):
        self.events.append(("pi", data))

    def unknown_decl(self, data):
        self.events.append(("unknown", data))


def markup(text: str) -> list[tuple]:
    """The page's tags (attributes a translation may change left out), comments, declarations, and the raw text
    of script/style/pre/code: what must be identical before and after translation."""
    parser = _Markup()
    for chunk in chunks(text):  # fed as the reader feeds it (html.parser's result depends on it, see _chunks)
        parser.feed(chunk)
    parser.close()
    return parser.events


def made_up(document: Extracted) -> list[list[str]]:
    """Every translatable run replaced by a recognisable text with characters that need escaping."""
    return [
        [run.text if run.fixed else f"«{run.text.strip().upper()}»<&>" for run in unit.runs] for unit in document.units
    ]


def translate(document: Extracted, translator) -> list[list[str]]:
    """The document translated as the job runner does: each unit whole, each run alone, then shared."""
    units = document.units
    whole = [t.text for t in translator.translate_segments([unit.source for unit in units])]
    pieces = [(i, k) for i, unit in enumerate(units) for k, run in enumerate(unit.runs) if not run.fixed]
    alone = [t.text for t in translator.translate_segments([units[i].runs[k].text for i, k in pieces])]
    hints: list[list[str | None]] = [[None] * len(unit.runs) for unit in units]
    for (i, k), text in zip(pieces, alone):
        hints[i][k] = text
    return [distribute(unit, text, hint) for unit, text, hint in zip(units, whole, hints)]
