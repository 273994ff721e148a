"""Which styles of a Word document mean code (engine.documents.formats._code): read from its styles part.

A style means code by its name or id ("Source Code", "Verbatim Char", "Preformatted Text"), by a monospace font of
its own, or by being based on one that does (pandoc's highlighting styles, KeywordTok…, are based on Verbatim Char).
The document's default styles are never code by their font alone: a document typed all in Courier is still prose.
"""

from __future__ import annotations

from engine.documents.formats import _xml
from engine.documents.formats._code import code_style, monospace
from engine.documents.formats._zip import ZipArchive

_MAX_BASED_ON = 32  # a longer basedOn chain (or a loop) is not followed further


class _Styles(_xml.Handler):
    def __init__(self, namespaces: tuple[str, ...]) -> None:
        self._ns = namespaces
        self._current: str | None = None
        self._default = False
        self.styles: dict[str, tuple[str, str | None, bool]] = {}  # id -> (name, basedOn, code by itself)

    def _is(self, name: str, local: str) -> bool:
        return any(name == f"{ns}{_xml.SEP}{local}" for ns in self._ns)

    def _attr(self, attrs: dict[str, str], local: str) -> str:
        for ns in self._ns:
            value = attrs.get(f"{ns}{_xml.SEP}{local}")
            if value is not None:
                return value
        return ""

    def start(self, name: str, attrs: dict[str, str]) -> None:
        if self._is(name, "style"):
            self._current = self._attr(attrs, "styleId")
            self._default = self._attr(attrs, "default") in ("1", "true", "on")
            self.styles[self._current] = ("", None, False)
            return
        if self._current is None:
            return
        label, based_on, code = self.styles[self._current]
        if self._is(name, "name"):
            label = self._attr(attrs, "val")
        elif self._is(name, "basedOn"):
            based_on = self._attr(attrs, "val")
        elif self._is(name, "rFonts") and not self._default:
            code = code or any(monospace(self._attr(attrs, key)) for key in ("ascii", "hAnsi"))
        self.styles[self._current] = (label, based_on, code)

    def end(self, name: str) -> None:
        if self._is(name, "style"):
            self._current = None


def code_styles(archive: ZipArchive, part: str | None, namespaces: tuple[str, ...]) -> frozenset[str]:
    """The ids of the styles in `part` (the styles part; None: there is none) that mean code."""
    if part is None or part not in archive:
        return frozenset()
    handler = _Styles(namespaces)
    _xml.scan(archive.read(part), handler, part)
    styles = handler.styles
    found = set()
    for style_id in styles:
        current: str | None = style_id
        for _ in range(_MAX_BASED_ON):
            if current is None or current not in styles:
                break
            label, based_on, code = styles[current]
            if code or code_style(current) or code_style(label):
                found.add(style_id)
                break
            current = based_on
    return frozenset(found)
