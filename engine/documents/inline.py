"""Sharing one unit's translation back among its runs, so inline formatting survives translation.

The unit is translated as one text (a sentence split over Word runs or HTML tags stays one sentence for the model);
the runs then each get a contiguous share of that translation, in their original order. Guarantees, whatever the
mode: one string per run; a fixed run comes back verbatim; the shares of the other runs, concatenated, are exactly
the translation with the fixed runs' verbatim copies (where the model kept them) taken out once — no translated
character is lost or repeated, so the document says exactly what the translation says.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from engine.documents.model import Unit

# A cut is moved to the nearest natural break within this many characters of its ideal place.
_BREAK_WINDOW = 12


def distribute(unit: Unit, translation: str, run_translations: Sequence[str | None] | None = None) -> list[str]:
    """One string per run of `unit` (see the module docstring).

    `run_translations[i]`, for "align" units, is run i's text translated on its own (None for fixed runs or when
    unknown): it is what lets a bold word keep its bold in the translation. Without them, or for "length" units,
    shares follow the runs' source lengths.
    """
    runs = unit.runs
    if len(runs) == 1:
        return [runs[0].text if runs[0].fixed else translation]
    anchors = _fixed_anchors(unit, translation)
    out: list[str] = [""] * len(runs)
    # Walk the gaps between located fixed runs: each gap's text goes to the translatable runs between them.
    pos = 0
    start_run = 0
    for index, (begin, end) in [*anchors, (len(runs), (len(translation), len(translation)))]:
        gap = translation[pos:begin]
        members = [i for i in range(start_run, index) if not runs[i].fixed]
        for i in range(start_run, index):
            if runs[i].fixed:
                out[i] = runs[i].text
        _share(gap, members, unit, out)
        if index < len(runs):
            out[index] = runs[index].text
        pos = end
        start_run = index + 1
    return out


def _fixed_anchors(unit: Unit, translation: str) -> list[tuple[int, tuple[int, int]]]:
    """(run index, (start, end) in `translation`) of each fixed run found verbatim, in order, non-overlapping."""
    found = []
    pos = 0
    for i, run in enumerate(unit.runs):
        if not run.fixed or not run.text.strip():
            continue
        at = translation.find(run.text, pos)
        if at >= 0:
            found.append((i, (at, at + len(run.text))))
            pos = at + len(run.text)
    return found


def _share(text: str, members: list[int], unit: Unit, out: list[str]) -> None:
    """Give `text` to the runs `members` (translatable, consecutive in reading order) by source length."""
    if not members:
        if text.strip():
            # No translatable run here (text the model put beside a fixed run): give it to the previous share so
            # nothing is lost; the caller's order keeps it next to where it was.
            last = max((i for i, run in enumerate(unit.runs) if not run.fixed and out[i]), default=None)
            if last is not None:
                out[last] += text
            else:
                first = next((i for i, run in enumerate(unit.runs) if not run.fixed), None)
                if first is not None:
                    out[first] += text
        return
    weights = [max(len(unit.runs[i].text.strip()), 0) for i in members]
    if sum(weights) == 0:
        weights = [1] * len(members)
    total = sum(weights)
    cuts = []
    acc = 0
    prev = 0
    for w in weights[:-1]:
        acc += w
        ideal = round(len(text) * acc / total)
        cut = max(prev, min(len(text), _natural_cut(text, ideal)))
        cuts.append(cut)
        prev = cut
    bounds = [0, *cuts, len(text)]
    for k, i in enumerate(members):
        out[i] = text[bounds[k] : bounds[k + 1]]


def _natural_cut(text: str, ideal: int) -> int:
    """The break nearest `ideal`: after a space or punctuation mark; `ideal` itself when none is near."""
    best = ideal
    best_distance = _BREAK_WINDOW + 1
    for cut in range(max(1, ideal - _BREAK_WINDOW), min(len(text), ideal + _BREAK_WINDOW) + 1):
        before = text[cut - 1]
        if before.isspace() or unicodedata.category(before).startswith("P"):
            distance = abs(cut - ideal)
            if distance < best_distance:
                best, best_distance = cut, distance
    return best
