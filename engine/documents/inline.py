"""Sharing one unit's translation back among its runs, so inline formatting survives translation.

The unit is translated as one text (a sentence split over Word runs or HTML tags stays one sentence for the model);
the runs then each get a contiguous share of that translation, in their original order. Guarantees, whatever the
mode: one string per run; a fixed run comes back verbatim; the shares of the other runs, concatenated, are exactly
the translation with the fixed runs' verbatim copies (where the model kept them) taken out once (markup runs, which
the model never sees, are only boundaries between runs, as HTML tags are) — no translated
character is lost or repeated, so the document says exactly what the translation says.

"align" units use each run's own translation to find where its meaning sits in the whole one ("Click <b>Save</b>"
→ the bold run's own translation 保存 is found in 点击保存以保留文件, so the bold lands on 保存): Chinese text is
matched by its longest common run of characters, other text by its longest common run of words. The located spans
that agree with reading order are kept (the best-scoring increasing chain), the text between them goes to the runs
between them, and where nothing is found the shares follow the runs' source lengths ("length" mode).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from difflib import SequenceMatcher

from engine.documents.model import Run, Unit

# A cut is moved to the nearest natural break within this many characters of its ideal place.
_BREAK_WINDOW = 12
# At most this many places are considered for one run's match (a repeated word): bounds the chain search.
_MAX_CANDIDATES = 6
# Above this many candidate places in one gap, only each run's best is kept (the chain search is quadratic in them).
_MAX_NODES = 320
# Longer run translations are matched by their first characters only: bounds the matcher's work per run.
_MAX_PROBE = 200
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_WORD = re.compile(r"\w+")
_LAYOUT = frozenset("\n\t")  # a fixed run of only these (a line break, a tab) is still found in the translation
# English words too common for one of them alone to show where a run's meaning is.
_COMMON_WORDS = (
    "the and for you your are was were not but with this that from have has had its our their they them his her "
    "she him who what when where which will would can could all any one"
)
_COMMON = frozenset(_COMMON_WORDS.split())


def runs_alone(unit: Unit) -> list[int]:
    """The runs of an "align" unit to translate on their own as well, for `distribute`'s run_translations: its
    runs with letters that are not fixed, when there are two or more of them; none otherwise."""
    if unit.split != "align":
        return []
    alone = [i for i, run in enumerate(unit.runs) if not run.fixed and any(ch.isalpha() for ch in run.text)]
    return alone if len(alone) >= 2 else []


def distribute(unit: Unit, translation: str, run_translations: Sequence[str | None] | None = None) -> list[str]:
    """One string per run of `unit` (see the module docstring).

    `run_translations[i]`, for "align" units, is run i's text translated on its own (None for fixed runs or when
    unknown): it is what lets a bold word keep its bold in the translation. Without them, or for "length" units,
    shares follow the runs' source lengths. ValueError when `run_translations` does not have one entry per run.
    """
    runs = unit.runs
    if run_translations is not None and len(run_translations) != len(runs):
        raise ValueError(f"run_translations has {len(run_translations)} entries for a unit of {len(runs)} runs")
    if len(runs) == 1:
        return [runs[0].text if runs[0].fixed else translation]
    hints = run_translations if unit.split == "align" else None
    anchors = _fixed_anchors(unit, translation)
    out: list[str] = [""] * len(runs)
    # Walk the gaps between located fixed runs: each gap's text goes to the translatable runs between them.
    pos = 0
    start_run = 0
    carry = ""  # text the model put before a fixed run that has no translatable run before it
    last_member: int | None = None
    for index, (begin, end) in [*anchors, (len(runs), (len(translation), len(translation)))]:
        gap = carry + translation[pos:begin]
        carry = ""
        members = [i for i in range(start_run, index) if not runs[i].fixed]
        for i in range(start_run, index):
            if runs[i].fixed:
                out[i] = runs[i].text
        if not members:
            # Text beside fixed runs only: it joins the previous translatable share, or the next one when there is
            # none before, so nothing is lost and the order is kept.
            if last_member is not None:
                out[last_member] += gap
            else:
                carry = gap
        elif hints is not None:
            _align(gap, members, unit, hints, out)
        else:
            _share(gap, members, unit, out)
        if members:
            last_member = members[-1]
        if index < len(runs):
            out[index] = runs[index].text
        pos = end
        start_run = index + 1
    return out


def _fixed_anchors(unit: Unit, translation: str) -> list[tuple[int, tuple[int, int]]]:
    """(run index, (start, end) in `translation`) of each fixed run found verbatim, in order, non-overlapping.
    Markup is not looked for: the translator never saw it; nor spaces, which any gap between words would match.
    A line break or tab is: the translation keeps the source's lines, and a Word <w:br/> whose "\n" was left in
    the share before it came back twice (a newline inside the text as well as the break)."""
    found = []
    pos = 0
    for i, run in enumerate(unit.runs):
        if not run.fixed or run.markup or not (run.text.strip() or _LAYOUT.intersection(run.text)):
            continue
        at = translation.find(run.text, pos)
        if at >= 0:
            found.append((i, (at, at + len(run.text))))
            pos = at + len(run.text)
    return found


def _align(text: str, members: list[int], unit: Unit, hints: Sequence[str | None], out: list[str]) -> None:
    """Give `text` to the runs `members` by where each one's own translation is found in it (see the module doc);
    members found nowhere share the text between their located neighbours by length."""
    runs = unit.runs
    sizes = [len(runs[i].text.strip()) for i in members]
    total = sum(sizes) or 1
    expected = []  # each member's middle, as a fraction of the source, to break ties between repeated matches
    acc = 0
    for size in sizes:
        expected.append((acc + size / 2) / total)
        acc += size
    matcher = _Matcher(text)
    candidates = [matcher.spans(hints[i], expected[k]) for k, i in enumerate(members)]
    chain = _best_chain(candidates)  # member position k -> (start, end), increasing, non-overlapping
    if not chain:
        _share(text, members, unit, out)
        return
    located = sorted(chain)
    # Cut points: starts[k] is where member k's share starts; members between located ones share what is between.
    starts = [0] * (len(members) + 1)
    starts[len(members)] = len(text)
    previous_k, previous_end = -1, 0
    for k in [*located, len(members)]:
        begin = chain[k][0] if k < len(members) else len(text)
        between = list(range(previous_k + 1, k))
        if between:
            # Unlocated members take what lies between their located neighbours' spans.
            segment_cuts = _length_cuts(text[previous_end:begin], [sizes[j] for j in between])
            for j, cut in zip(between, [0, *segment_cuts]):
                starts[j] = previous_end + cut
            if k < len(members):
                starts[k] = begin
        elif k < len(members):
            # Neighbours with nothing between them: the filler between the spans goes to one of them.
            neighbours = (members[previous_k], members[k]) if previous_k >= 0 else None
            starts[k] = begin if neighbours is None else _filler_cut(text, previous_end, begin, neighbours, runs)
        if k < len(members):
            previous_k, previous_end = k, chain[k][1]
    starts[0] = 0
    for k in range(1, len(members) + 1):  # keep the cuts monotone whatever rounding did
        starts[k] = min(max(starts[k], starts[k - 1]), len(text))
    starts[len(members)] = len(text)
    _fill_empty(text, starts, [runs[i].text for i in members])
    _tidy_edges(text, starts, [runs[i].text for i in members])
    for k, i in enumerate(members):
        out[i] = text[starts[k] : starts[k + 1]]


def _fill_empty(text: str, starts: list[int], sources: list[str]) -> None:
    """A run whose source has words never comes back empty while a neighbour has text to share: it and that
    neighbour share their text by source length instead (cuts `starts` in place; order and text unchanged).

    Without this a link or a bold phrase whose own translation is found nowhere (an idiom, a name the model
    renders differently) would vanish from the document — a Markdown link with its URL, an HTML <a> left empty.
    Formatting on about the right words is the lesser harm."""
    for k, source in enumerate(sources):
        if starts[k] < starts[k + 1] or not any(ch.isalpha() for ch in source):
            continue
        if k > 0 and starts[k] - starts[k - 1] >= 2:
            a = k - 1
        elif k + 1 < len(sources) and starts[k + 2] - starts[k + 1] >= 2:
            a = k
        else:
            continue
        segment = text[starts[a] : starts[a + 2]]
        cut = _length_cuts(segment, [len(sources[a].strip()), len(sources[a + 1].strip())])[0]
        starts[a + 1] = starts[a] + min(max(cut, 1), len(segment) - 1)


def _is_mark(ch: str) -> bool:
    return unicodedata.category(ch).startswith("P")


def _tidy_edges(text: str, starts: list[int], sources: list[str]) -> None:
    """Punctuation at a cut goes to the side whose source has punctuation there (or, when neither or both do, to
    the longer source): "The weather <b>is very nice</b>. We…" gives 天气<b>很好</b>。我们…, not <b>很好。</b>我们 —
    a bold full stop looks wrong, and Markdown would not even see `**很好。**我们` as bold (CommonMark's flanking
    rules). Cuts only move across marks, so the text and its order are unchanged; no share loses its last letter."""
    for k in range(1, len(sources)):
        left, right = sources[k - 1].strip(), sources[k].strip()
        if not left or not right:
            continue
        left_marked, right_marked = _is_mark(left[-1]), _is_mark(right[0])
        cut = starts[k]
        if not left_marked and (right_marked or len(right) > len(left)):
            # The left share's trailing marks move right, if a character that is not a mark stays on the left.
            moved = cut
            while moved > starts[k - 1] and _is_mark(text[moved - 1]):
                moved -= 1
            if moved > starts[k - 1]:
                cut = moved
        elif not right_marked and (left_marked or len(left) > len(right)):
            # The right share's leading marks move left, if a character that is not a mark stays on the right.
            moved = cut
            while moved < starts[k + 1] and _is_mark(text[moved]):
                moved += 1
            if moved < starts[k + 1]:
                cut = moved
        starts[k] = cut


def _filler_cut(text: str, end: int, begin: int, neighbours: tuple[int, int], runs: Sequence[Run]) -> int:
    """Where the text between two adjacent located spans is cut: whitespace goes where the source had it; other
    filler (particles, punctuation, spaces the source had not) goes to the run with the longer source, so a short
    formatted run stays tight."""
    filler = text[end:begin]
    if not filler:
        return begin
    left_text, right_text = runs[neighbours[0]].text, runs[neighbours[1]].text
    if not filler.strip():
        if right_text[:1].isspace() and not left_text[-1:].isspace():
            return end
        if left_text[-1:].isspace() and not right_text[:1].isspace():
            return begin
    # The filler's own edge spaces stay outside the run that gets it unless that run's source had them there.
    lead = len(filler) - len(filler.lstrip())
    trail = len(filler) - len(filler.rstrip())
    if len(left_text.strip()) >= len(right_text.strip()):
        return begin - trail if right_text[:1].isspace() and trail < len(filler) else begin
    return end if right_text[:1].isspace() or lead == len(filler) else end + lead


class _Matcher:
    """Finds where a run's own translation sits in a text: by characters for Chinese, by words otherwise."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.by_chars = bool(_CJK.search(text))
        if self.by_chars:
            self.tokens: list[str] = list(text)
            self.bounds = [(i, i + 1) for i in range(len(text))]
        else:
            found = list(_WORD.finditer(text))
            self.tokens = [m.group().casefold() for m in found]
            self.bounds = [m.span() for m in found]
        self.sequence = SequenceMatcher(None, autojunk=False)
        self.sequence.set_seq1(self.tokens)

    def spans(self, hint: str | None, expected: float) -> list[tuple[float, int, int]]:
        """(score, start, end) of the places `hint` matches best, at most _MAX_CANDIDATES; [] when none is good."""
        if not hint or not hint.strip() or not self.tokens:
            return []
        hint = hint.strip()[:_MAX_PROBE]
        probe = list(hint) if self.by_chars else [w.casefold() for w in _WORD.findall(hint)]
        if not probe:
            return []
        self.sequence.set_seq2(probe)
        match = self.sequence.find_longest_match(0, len(self.tokens), 0, len(probe))
        if match.size == 0:
            return []
        needle = self.tokens[match.a : match.a + match.size]
        if not self._meaningful(needle, len(probe)):
            return []
        found = []
        for at in self._occurrences(needle, match.a):
            start, end = self.bounds[at][0], self.bounds[at + match.size - 1][1]
            middle = (start + end) / 2 / max(len(self.text), 1)
            # Longer matches win; among equal ones, the one nearest the run's place in the source.
            found.append((match.size - abs(middle - expected) * 0.5, start, end))
        return found

    def _meaningful(self, needle: list[str], probe_size: int) -> bool:
        """A match worth trusting: a letter or digit in it, and more than one common character or short word
        unless the run's translation is itself that short."""
        if not any(any(ch.isalnum() for ch in token) for token in needle):
            return False
        if self.by_chars:
            return len(needle) >= 2 or probe_size == 1
        return len(needle) >= 2 or (len(needle[0]) >= 3 and needle[0] not in _COMMON) or probe_size == 1

    def _occurrences(self, needle: list[str], first: int) -> list[int]:
        """Token indices where `needle` occurs, the first one found by the matcher included."""
        size = len(needle)
        places = [first]
        head = needle[0]
        index = -1
        while len(places) < _MAX_CANDIDATES:
            try:
                index = self.tokens.index(head, index + 1)
            except ValueError:
                break
            if index != first and self.tokens[index : index + size] == needle:
                places.append(index)
        return sorted(places)


def _best_chain(candidates: list[list[tuple[float, int, int]]]) -> dict[int, tuple[int, int]]:
    """The highest-scoring choice of at most one span per member with spans increasing and not overlapping in
    member order (a weighted longest increasing chain; members × candidates is small and bounded)."""
    if sum(len(spans) for spans in candidates) > _MAX_NODES:  # a very long paragraph: each run's best place only
        candidates = [sorted(spans, reverse=True)[:1] for spans in candidates]
    nodes = [(k, score, start, end) for k, spans in enumerate(candidates) for score, start, end in spans]
    if not nodes:
        return {}
    best = [0.0] * len(nodes)
    back = [-1] * len(nodes)
    for n, (k, score, start, _end) in enumerate(nodes):
        best[n] = score
        for m in range(n):
            mk, _, _, m_end = nodes[m]
            if mk < k and m_end <= start and best[m] + score > best[n]:
                best[n] = best[m] + score
                back[n] = m
    n = max(range(len(nodes)), key=best.__getitem__)
    chain = {}
    while n >= 0:
        k, _, start, end = nodes[n]
        chain[k] = (start, end)
        n = back[n]
    return chain


def _length_cuts(text: str, weights: list[int]) -> list[int]:
    """Cut points (len(weights) - 1 of them) sharing `text` in proportion to `weights`, at natural breaks."""
    weights = [max(w, 0) for w in weights]
    if sum(weights) == 0:
        weights = [1] * len(weights)
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
    return cuts


def _share(text: str, members: list[int], unit: Unit, out: list[str]) -> None:
    """Give `text` to the runs `members` (translatable, consecutive in reading order) by source length."""
    cuts = _length_cuts(text, [len(unit.runs[i].text.strip()) for i in members])
    bounds = [0, *cuts, len(text)]
    _fill_empty(text, bounds, [unit.runs[i].text for i in members])
    _tidy_edges(text, bounds, [unit.runs[i].text for i in members])
    for k, i in enumerate(members):
        out[i] = text[bounds[k] : bounds[k + 1]]


def _natural_cut(text: str, ideal: int) -> int:
    """The break nearest `ideal`: after a space or punctuation mark; `ideal` itself when none is near. "Near" shrinks
    with the text, so a short share is not pushed to the far end of a short text (Chinese has no spaces)."""
    window = min(_BREAK_WINDOW, len(text) // 8)
    best = ideal
    best_distance = window + 1
    for cut in range(max(1, ideal - window), min(len(text), ideal + window) + 1):
        before = text[cut - 1]
        if before.isspace() or unicodedata.category(before).startswith("P"):
            distance = abs(cut - ideal)
            if distance < best_distance:
                best, best_distance = cut, distance
    return best
