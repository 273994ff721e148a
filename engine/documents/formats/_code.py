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


# A class selector, alone or on an element: `.span4`, `span.code` (no combinators, attributes or pseudo-classes).
_CLASS_SELECTOR = re.compile(r"(?:[A-Za-z][\w-]*)?\.(-?[_A-Za-z][\w-]*)")
_FONT_PROPERTIES = frozenset(("font-family", "font"))
_MAX_NESTING = 32  # @media/@supports blocks deeper than this are skipped, so a file of "{{{…" costs no memory
MAX_CSS_CHARS = 1_000_000  # a stylesheet is read this far (a real one is a few KB): bounds the time a hostile one takes


def code_classes(css: str) -> frozenset[str]:
    """The classes a stylesheet sets in a monospace font: `.span4 { font-family: 'Courier New'; }` is how
    LibreOffice's EPUB marks code. Simple rule parsing (comments dropped, rules inside @media read too), linear in
    the text's length whatever it holds, and only its first MAX_CSS_CHARS characters."""
    css = _without_comments(css[:MAX_CSS_CHARS])
    found: set[str] = set()
    stack: list[list] = []  # [selector, body start, has a nested block]
    deeper = 0  # blocks opened past _MAX_NESTING
    last = 0
    for brace in re.finditer(r"[{}]", css):
        at = brace.start()
        if brace.group() == "{":
            if len(stack) >= _MAX_NESTING:
                deeper += 1
            else:
                if stack:
                    stack[-1][2] = True
                stack.append([css[last:at], at + 1, False])
        elif deeper:
            deeper -= 1
        elif stack:
            selector, start, nested = stack.pop()
            if not nested and _sets_monospace(css[start:at]):
                for part in selector.split(","):
                    match = _CLASS_SELECTOR.fullmatch(part.strip())
                    if match:
                        found.add(match.group(1))
        last = at + 1
    return frozenset(found)


def _without_comments(css: str) -> str:
    pieces = []
    pos = 0
    while (start := css.find("/*", pos)) >= 0:
        pieces.append(css[pos:start])
        end = css.find("*/", start + 2)
        pos = len(css) if end < 0 else end + 2
        pieces.append(" ")
    pieces.append(css[pos:])
    return "".join(pieces)


def _sets_monospace(declarations: str) -> bool:
    for declaration in declarations.split(";"):
        name, colon, value = declaration.partition(":")
        if colon and name.strip().lower() in _FONT_PROPERTIES and monospace(value.replace("!important", "")):
            return True
    return False
