"""Split pasted text into sentences to translate and the layout between them, so output keeps its structure.

Lines and paragraphs are split here; sentences inside a line come from sentencex, Wikimedia's rule-based segmenter
(abbreviations, decimals, URLs), rather than from hand-written regexes.

Hard-wrapped text (a sentence broken over lines, as copied from a PDF or an e-mail) would be translated line by
line into nonsense, so lines that continue a sentence are joined first (engine.text.wrapping decides which). A joined
sentence is one Segment whose `text` is the source span, line breaks included, and whose `source` is the sentence
the model reads: its translation appears once, where its first line began, and the line breaks inside it are gone.
Everything not joined keeps its layout verbatim. Concatenating every segment's `text` always rebuilds the input.

The source language decides the rules (`Segmentation`, from the bundle's language pair): sentencex's rules for its
code (Chinese: sentences end at 。！？ and their half-width forms, a closing ” or ） stays with its sentence, "……"
and ；are pauses inside one), and whether hard-wrapped lines join with a space or with nothing (Chinese).
Two sentences of one line always get a layout segment between them, empty when the source had no gap (Chinese), so
the assembler can put the target's joiner there.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass

from sentencex import segment as _sentencex_segment

from engine.languages import LanguagePair
from engine.text.verbatim import nothing_to_translate
from engine.text.wrapping import JOIN_DEHYPHEN, JOIN_SPACE, Line, join_decisions

_NEWLINES = re.compile(r"(\r\n|\r|\n|\u2028|\u2029)")


@dataclass(frozen=True)
class Segment:
    """A run of the source: a sentence to translate, or layout (newlines, indentation) to copy."""

    text: str  # the source span, verbatim
    translate: bool
    # Layout between two sentences of one line: Chinese joins such sentences without a space.
    inline_gap: bool = False
    # The sentence as the model reads it, when it differs from `text` (wrapped lines joined); None: `text`.
    source: str | None = None

    @property
    def sentence(self) -> str:
        """What to translate: the joined sentence, or the text itself."""
        return self.text if self.source is None else self.source


@dataclass(frozen=True)
class Segmentation:
    """How a source language is segmented: sentencex's code for it, and whether its words are space-separated."""

    language: str = "en"  # sentencex language code (a pair's `segmenter`)
    spaced: bool = True  # False: wrapped lines join with nothing (Chinese), never dehyphenated

    @classmethod
    def of(cls, pair: LanguagePair) -> Segmentation:
        """The rules for a bundle's source language, read from its manifest's pair (nothing assumed)."""
        return cls(language=pair.segmenter, spaced=pair.source.spaced)


ENGLISH = Segmentation()


def has_letters(text: str) -> bool:
    """True when the text has something to translate (a letter in any script)."""
    return any(unicodedata.category(ch).startswith("L") for ch in text)


def split_sentences(line: str, language: str = "en") -> list[str]:
    """Sentences of one line, whitespace trimmed, in order (concatenated with gaps they rebuild the line)."""
    return [s.strip() for s in _sentencex_segment(language, line) if s.strip()]


def split_lines(text: str) -> list[Line]:
    """Every line with its offset and its line break ("" for the last line)."""
    parts = _NEWLINES.split(text)
    lines: list[Line] = []
    pos = 0
    for k in range(0, len(parts), 2):
        content = parts[k]
        newline = parts[k + 1] if k + 1 < len(parts) else ""
        lines.append(Line(pos, content, newline))
        pos += len(content) + len(newline)
    return lines


def segment_text(text: str, join_wrapped_lines: bool = True, language: Segmentation = ENGLISH) -> list[Segment]:
    """Sentences and layout of `text`; joining every segment's text gives back `text` exactly."""
    if not isinstance(language, Segmentation):
        raise TypeError(f"language must be a Segmentation, not {type(language).__name__}")
    lines = split_lines(text)
    joins = join_decisions(lines, language.spaced) if join_wrapped_lines else [None] * max(len(lines) - 1, 0)
    out: list[Segment] = []
    group: list[Line] = []
    seps: list[str] = []
    for k, line in enumerate(lines):
        group.append(line)
        sep = joins[k] if k < len(joins) else None
        if sep is not None:
            seps.append(sep)
            continue
        _segment_region(text, group, seps, out, language.language)
        if line.newline:
            out.append(Segment(line.newline, translate=False))
        group, seps = [], []
    return out


def _joined(group: list[Line], seps: list[str]) -> tuple[str, list[int], list[int]]:
    """The group's lines as one line, and where each piece starts in it and in the source (for mapping back)."""
    if len(group) == 1:
        return group[0].content, [0], [group[0].start]
    parts: list[str] = []
    starts: list[int] = []
    origins: list[int] = []
    length = 0
    for k, line in enumerate(group):
        content = line.content
        lead = 0 if k == 0 else len(content) - len(content.lstrip())
        stop = len(content) if k == len(group) - 1 else len(content.rstrip())
        piece = content[lead:stop]
        if k < len(seps) and seps[k] == JOIN_DEHYPHEN:  # a hyphenated break: "trans-" + "lation"
            piece = piece[:-1]
        starts.append(length)
        origins.append(line.start + lead)
        parts.append(piece)
        length += len(piece)
        if k < len(seps):
            sep = " " if seps[k] == JOIN_SPACE else ""
            parts.append(sep)
            length += len(sep)
    return "".join(parts), starts, origins


def _segment_region(text: str, group: list[Line], seps: list[str], out: list[Segment], language: str) -> None:
    """Segments for one line, or for lines joined into one, from its first character to its last."""
    region_start = group[0].start
    region_end = group[-1].start + len(group[-1].content)
    if region_end == region_start:
        return
    joined, starts, origins = _joined(group, seps)

    def origin(j: int) -> int:
        k = bisect.bisect_right(starts, j) - 1
        return origins[k] + (j - starts[k])

    if not joined.strip():
        out.append(Segment(text[region_start:region_end], translate=False))
        return
    spans: list[tuple[int, int]] = []
    cursor = 0
    for sentence in split_sentences(joined, language):
        start = joined.find(sentence, cursor)
        if start < 0:  # the segmenter altered the text; fall back to translating the rest as one sentence
            break
        spans.append((start, start + len(sentence)))
        cursor = start + len(sentence)
    rest = joined[cursor:]
    if rest.strip():
        lead = len(rest) - len(rest.lstrip())
        spans.append((cursor + lead, cursor + lead + len(rest.strip())))
    pos = region_start
    for n, (a, b) in enumerate(spans):
        src_a, src_b = origin(a), origin(b - 1) + 1
        if n and src_a == pos:  # two sentences with nothing between them ("你好。我是学生！"): an empty gap
            out.append(Segment("", translate=False, inline_gap=out[-1].translate))
        elif src_a > pos:
            gap = text[pos:src_a]
            # between two sentences of one line: the target's joiner; a line break between them stays as it is
            inline = bool(out) and out[-1].translate and not _NEWLINES.search(gap)
            out.append(Segment(gap, translate=False, inline_gap=inline))
        span = text[src_a:src_b]
        sentence = joined[a:b]
        # a sentence that is only a URL, an address, a number or code is kept as it is (engine.text.verbatim)
        keep = nothing_to_translate(sentence)
        out.append(Segment(span, translate=not keep, source=None if sentence == span else sentence))
        pos = src_b
    if pos < region_end:
        out.append(Segment(text[pos:region_end], translate=False))
