"""What marks text as code in documents that have no <code> element: style names and monospace fonts.

Word and OpenDocument files say "this is code" only through a paragraph or character style (pandoc writes "Source
Code" paragraphs and "Verbatim Char" runs; LibreOffice "Preformatted Text" and "Source Text"; Word "HTML Code") or
a monospace font (Courier, Consolas, Menlo…); LibreOffice's EPUB keeps only the font, in its CSS. The readers ask
these two questions, so code is kept verbatim in every format, as HTML's <pre>/<code> and Markdown's fences are.
"""

from __future__ import annotations

import re

# Style names (display names or ids; compared without spaces, underscores, hyphens and case) that mean code.
_CODE_STYLES = frozenset(
    name.replace(" ", "").lower()
    for name in (
        # paragraphs
        "Source Code",  # pandoc
        "Preformatted Text",  # LibreOffice (and its "Preformatted Text.sourceCode" children: by basedOn)
        "HTML Preformatted",  # Word
        "Code",
        "Code Block",
        "Macro Text",  # Word's style for code
        # characters
        "Verbatim Char",  # pandoc, and its highlighting styles (KeywordTok…) through basedOn
        "Source Text",  # LibreOffice, and pandoc's .odt (Source_Text)
        "HTML Code",
        "HTML Keyboard",
        "HTML Sample",
        "HTML Typewriter",
        "HTML Preformatted Char",
        "Code Char",
        "Inline Code",
    )
)
_NOT_NAME = re.compile(r"[\s_\-]+|_20_")
# Monospace families by name: any name containing "mono" (DejaVu Sans Mono, Liberation Mono, Noto Sans Mono, SF
# Mono, monospace itself…) and the common ones that do not say so.
_MONOSPACE = re.compile(
    r"mono|courier|consolas|menlo|monaco|source\s*code|lucida\s*(?:console|sans\s*typewriter)|inconsolata|"
    r"fira\s*code|jetbrains|cascadia\s*code|hack\b|fixedsys|terminal\b|typewriter|ocr[ -]?[ab]\b|^(?:fixed|tt)$",
    re.IGNORECASE,
)


def code_style(name: str) -> bool:
    """Whether a style's name or id (`Source Code`, `SourceCode`, `Preformatted_20_Text`) is one that means code."""
    return _NOT_NAME.sub("", name.replace("_20_", "")).lower() in _CODE_STYLES


def monospace(family: str) -> bool:
    """Whether a font family (or the first of a list, as LibreOffice and CSS write them: `'Menlo', monospace`) is
    monospace."""
    first = re.split(r"[;,]", family, maxsplit=1)[0].strip().strip("'\"").strip()
    return bool(first) and bool(_MONOSPACE.search(first))
