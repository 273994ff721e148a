"""Which styles of an OpenDocument text mean code (engine.documents.formats._code), from its styles and its
automatic styles.

A style means code by its name or display name ("Preformatted Text", "Source Text", pandoc's "Source_Text"), by a
monospace font of its own (a font-face with style:font-pitch="fixed" or a monospace family), or through its parent
(LibreOffice's automatic P1 styles are children of "Preformatted_20_Text"). The document's "Standard" style is never
code by its font alone: a text typed all in Courier is still prose.
"""

from __future__ import annotations

from engine.documents.formats import _xml
from engine.documents.formats._code import code_style, monospace
from engine.documents.formats._zip import ZipArchive

STYLE = "urn:oasis:names:tc:opendocument:xmlns:style:1.0"
FO = "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"
SVG = "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"
_S = _xml.SEP
_MAX_PARENTS = 32
_PLAIN = frozenset(("Standard", "Default_20_Paragraph_20_Style"))


class _Styles(_xml.Handler):
    def __init__(self) -> None:
        self.fonts: dict[str, bool] = {}  # font-face name -> monospace
        self.styles: dict[str, tuple[str, str | None, str]] = {}  # name -> (display name, parent, font)
        self._current: str | None = None

    def start(self, name: str, attrs: dict[str, str]) -> None:
        if name == f"{STYLE}{_S}font-face":
            face = attrs.get(f"{STYLE}{_S}name", "")
            self.fonts[face] = (
                attrs.get(f"{STYLE}{_S}font-pitch") == "fixed"
                or monospace(attrs.get(f"{SVG}{_S}font-family", ""))
                or monospace(face)
            )
        elif name == f"{STYLE}{_S}style":
            self._current = attrs.get(f"{STYLE}{_S}name", "")
            self.styles[self._current] = (
                attrs.get(f"{STYLE}{_S}display-name", ""),
                attrs.get(f"{STYLE}{_S}parent-style-name"),
                "",
            )
        elif name == f"{STYLE}{_S}text-properties" and self._current is not None:
            font = attrs.get(f"{STYLE}{_S}font-name") or attrs.get(f"{FO}{_S}font-family") or ""
            display, parent, _ = self.styles[self._current]
            self.styles[self._current] = (display, parent, font)

    def end(self, name: str) -> None:
        if name == f"{STYLE}{_S}style":
            self._current = None


def code_styles(archive: ZipArchive, parts: tuple[str, ...] = ("styles.xml", "content.xml")) -> frozenset[str]:
    """The names of the paragraph and text styles in `parts` that mean code."""
    handler = _Styles()
    for part in parts:
        if part in archive:
            _xml.scan(archive.read(part), handler, part)
    fonts, styles = handler.fonts, handler.styles

    def own(name: str) -> bool:
        display, _parent, font = styles[name]
        if code_style(name) or (display and code_style(display)):
            return True
        return bool(font) and name not in _PLAIN and (fonts.get(font, False) or monospace(font))

    found = set()
    for name in styles:
        current: str | None = name
        for _ in range(_MAX_PARENTS):
            if current is None or current not in styles:
                break
            if own(current):
                found.add(name)
                break
            current = styles[current][1]
    return frozenset(found)
