"""Which glossary entries a source sentence triggers, as search constraints, and the spans kept verbatim anyway.

`constraints_for` finds each entry's source term in the sentence (case and whole-word rules per entry), resolves
overlaps (the longest match wins: "New York City" beats "New York"), adds the automatic do-not-translate spans of
`protected_spans` when `glossary.protect` is on, and turns each required target text into the token sequences the target
side could produce. A term found twice in one sentence gives one constraint: the constrained search can only require
that the output contains it, not how often. A term the target vocabulary cannot spell at all keeps `options=()`, so the
search reports it unmet rather than the term silently disappearing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Protocol

from engine.glossary import Glossary, GlossaryEntry
from engine.search.types import Constraint
from engine.text.protected import Span, longest_first, protected_matches
from engine.text.punctuation import is_cjk

WORD_START = "▁"
_MAX_PIECE = 24  # longer pieces are not looked for when spelling a term in the vocabulary


class VocabTokenizer(Protocol):
    """What matching needs of engine.families.marian.tokenizer.MarianTokenizer: the TARGET side, since a
    constraint is a sequence the decoder writes (with separate vocabularies source ids number other pieces)."""

    unk_id: int

    def encode_target(self, text: str) -> list[int]: ...

    def target_token_to_id(self, piece: str) -> int: ...


def _wordish(ch: str) -> bool:
    """A character that would continue a spaced-language word (so a whole-word match cannot stop next to it)."""
    return (ch.isalnum() or ch == "_") and not is_cjk(ch)


def _matches(entry: GlossaryEntry, source: str) -> Iterator[tuple[int, int]]:
    term = entry.source.strip()
    if not term:
        return
    pattern = re.compile(re.escape(term), 0 if entry.case_sensitive else re.IGNORECASE)
    whole = entry.whole_word and not any(is_cjk(c) for c in term)
    pos = 0
    while (m := pattern.search(source, pos)) is not None:
        a, b = m.span()
        pos = a + 1
        if whole and (
            (a > 0 and _wordish(source[a - 1]) and _wordish(term[0]))
            or (b < len(source) and _wordish(source[b]) and _wordish(term[-1]))
        ):
            continue
        yield a, b
        pos = b


def matched_spans(glossary: Glossary, source: str) -> list[Span]:
    """The glossary's hits in `source` plus (with `protect`) the automatic spans; overlaps resolved, longest
    first, in source order (one span per occurrence)."""
    spans: list[Span] = []
    for entry in glossary.entries:
        target = entry.source.strip() if entry.keep else (entry.target or "").strip()
        if not target:
            continue
        for a, b in _matches(entry, source):
            # a do-not-translate entry keeps the text as the sentence writes it ("QIAO" stays "QIAO")
            spans.append(Span(a, b, source[a:b] if entry.keep else target, entry.source.strip()))
    if glossary.protect:
        spans.extend(protected_matches(source))
    return longest_first(spans)


def constraints_for(glossary: Glossary | None, source: str, tokenizer: VocabTokenizer) -> tuple[Constraint, ...]:
    """One Constraint per distinct required target text of `source`, in source order (see the module doc)."""
    if not glossary or not source:
        return ()
    out: list[Constraint] = []
    seen: set[str] = set()
    for span in matched_spans(glossary, source):
        if span.target in seen:
            continue
        seen.add(span.target)
        out.append(Constraint(options=target_options(span.target, tokenizer), label=span.label))
    return tuple(out)


def target_options(text: str, tokenizer: VocabTokenizer) -> tuple[tuple[int, ...], ...]:
    """Token sequences that decode to `text` as the target side writes it: after a space or at the start
    (word-start marker "▁" first) and glued to the word before (no marker; how Chinese words follow each other).
    Each is spelled with the fewest target pieces; the tokenizer's own segmentation (`encode_target`) is added
    when the target vocabulary knows every piece. Sequences with an unknown piece are left out."""
    text = text.strip()
    if not text:
        return ()
    body = WORD_START.join(text.split())
    options: list[tuple[int, ...]] = []
    for spelled in (WORD_START + body, body):
        seq = _spell(spelled, tokenizer)
        if seq is not None and seq not in options:
            options.append(seq)
    encoded = tuple(tokenizer.encode_target(text))
    if encoded and tokenizer.unk_id not in encoded and encoded not in options:
        options.append(encoded)
    return tuple(options)


def _spell(text: str, tokenizer: VocabTokenizer) -> tuple[int, ...] | None:
    """The fewest-pieces segmentation of `text` into target pieces (longer first pieces win ties), or None."""
    n = len(text)
    best: list[tuple[int, tuple[int, ...]] | None] = [None] * (n + 1)
    best[n] = (0, ())
    unk = tokenizer.unk_id
    for i in range(n - 1, -1, -1):
        for j in range(min(n, i + _MAX_PIECE), i, -1):
            rest = best[j]
            if rest is None:
                continue
            piece_id = tokenizer.target_token_to_id(text[i:j])
            if piece_id == unk:
                continue
            cand = (rest[0] + 1, (piece_id, *rest[1]))
            current = best[i]
            if current is None or cand[0] < current[0]:
                best[i] = cand
    first = best[0]
    return first[1] if first is not None else None
