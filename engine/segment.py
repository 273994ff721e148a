"""Split pasted text into sentences to translate and the layout between them, so output keeps its structure.

Lines and paragraphs are split here (every newline is kept verbatim); sentences inside a line come from sentencex,
Wikimedia's rule-based segmenter (abbreviations, decimals, URLs), rather than from hand-written regexes.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from sentencex import segment as _sentencex_segment

_NEWLINES = re.compile(r"(\r\n|\r|\n|\u2028|\u2029)")


@dataclass(frozen=True)
class Segment:
    """A run of the source: a sentence to translate, or layout (newlines, indentation) to copy."""

    text: str
    translate: bool
    # Layout between two sentences of one line: Chinese joins such sentences without a space.
    inline_gap: bool = False


def has_letters(text: str) -> bool:
    """True when the text has something to translate (a letter in any script)."""
    return any(unicodedata.category(ch).startswith("L") for ch in text)


def split_sentences(line: str) -> list[str]:
    """Sentences of one line, whitespace trimmed, in order (concatenated with gaps they rebuild the line)."""
    return [s.strip() for s in _sentencex_segment("en", line) if s.strip()]


def segment_text(text: str) -> list[Segment]:
    """Sentences and layout of `text`; joining every segment's text gives back `text` exactly."""
    out: list[Segment] = []
    for part in _NEWLINES.split(text):
        if not part:
            continue
        if _NEWLINES.fullmatch(part) or not part.strip():
            out.append(Segment(part, translate=False))
            continue
        cursor = 0
        for sentence in split_sentences(part):
            start = part.find(sentence, cursor)
            if start < 0:  # the segmenter altered the text; fall back to translating the rest as one sentence
                break
            if start > cursor:
                gap = part[cursor:start]
                out.append(Segment(gap, translate=False, inline_gap=bool(out) and out[-1].translate))
            out.append(Segment(sentence, translate=has_letters(sentence)))
            cursor = start + len(sentence)
        if cursor < len(part):
            rest = part[cursor:]
            if rest.strip():
                lead = len(rest) - len(rest.lstrip())
                if lead:
                    out.append(Segment(rest[:lead], translate=False, inline_gap=bool(out) and out[-1].translate))
                out.append(Segment(rest.strip(), translate=has_letters(rest)))
                tail = rest[lead + len(rest.strip()) :]
                if tail:
                    out.append(Segment(tail, translate=False))
            else:
                out.append(Segment(rest, translate=False))
    return out
