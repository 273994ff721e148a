"""Where each sentence of a finished translation is in an editor, kept right while the text is edited.

No widgets here: `SentenceRanges` holds, per sentence, its result, its current character range and who owns its
text now, and moves the ranges for each change the document reports. It keeps its own copy of the text, so a change
is narrowed to the characters that really differ (QTextDocument sometimes reports a whole block as changed), and
the sentences' texts are read without asking the document. Ranges live in two plain lists (starts, ends) so a
72 000-sentence document is set up and edited without building an object per sentence.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import chain
from operator import itemgetter, le

from engine.results import SentenceResult

EDIT_ORIGIN_USER = "user"  # the user typed it
EDIT_ORIGIN_ALTERNATIVE = "alternative"  # the user chose an alternative (the rest re-decoded)
EDIT_ORIGIN_MEMORY = "memory"  # the user's earlier version, brought back by the translation memory


def narrow_change(old: str, new: str) -> tuple[int, int, int]:
    """(offset, removed, added) of the part of `old` that really became something else in `new`."""
    n = min(len(old), len(new))
    head = 0
    while head < n and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < n - head and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]:
        tail += 1
    return head, len(old) - head - tail, len(new) - head - tail


def spans_fit(spans: Sequence[tuple[int, int]], length: int) -> bool:
    """The spans are in reading order, none overlapping the next, all within a text of `length` characters."""
    if not spans:
        return True
    flat = list(chain.from_iterable(spans))  # start0, end0, start1, end1, …: each must not pass the next
    return flat[0] >= 0 and flat[-1] <= length and all(map(le, flat[:-1], flat[1:]))


class SentenceRanges:
    """The sentences of one editor, in reading order, with their current ranges in `text`.

    `original(i)` is what sentence i's result says (the model's output, a chosen alternative, a remembered edit);
    `origin(i)` is None while that text is untouched, else EDIT_ORIGIN_*; `was(i)` is the origin before the user
    typed in it (it comes back if they type the text back)."""

    def __init__(self) -> None:
        self.text = ""
        self.results: list[SentenceResult] = []
        self.starts: list[int] = []
        self.ends: list[int] = []
        self._base = ""  # the text when the sentences were set: originals are read from it
        self._base_spans: list[tuple[int, int]] = []
        self._own: dict[int, str] = {}  # originals that are not in the base text (replaced sentences)
        self._origins: dict[int, str] = {}
        self._was: dict[int, str] = {}

    def reset(
        self,
        text: str,
        results: Sequence[SentenceResult] = (),
        spans: Sequence[tuple[int, int]] = (),
        origins: dict[int, str] | None = None,
    ) -> None:
        self.text = self._base = text
        self.results = list(results)
        self._base_spans = list(spans)
        self.starts = list(map(itemgetter(0), spans))
        self.ends = list(map(itemgetter(1), spans))
        self._own = {}
        self._origins = dict(origins or {})
        self._was = dict(self._origins)

    @property
    def items(self) -> list[SentenceResult]:
        return self.results

    def __len__(self) -> int:
        return len(self.results)

    def span(self, i: int) -> tuple[int, int]:
        return (self.starts[i], self.ends[i])

    def current(self, i: int) -> str:
        """Sentence i's text as the editor shows it now."""
        return self.text[self.starts[i] : self.ends[i]]

    def original(self, i: int) -> str:
        if i in self._own:
            return self._own[i]
        a, b = self._base_spans[i]
        return self._base[a:b]

    def origin(self, i: int) -> str | None:
        return self._origins.get(i)

    def set_origin(self, i: int, origin: str | None, *, was: bool = False) -> None:
        """Whose text sentence i is now; `was`: and what it goes back to when the user types its text back."""
        if origin is None:
            self._origins.pop(i, None)
        else:
            self._origins[i] = origin
        if was:
            if origin is None:
                self._was.pop(i, None)
            else:
                self._was[i] = origin

    def was(self, i: int) -> str | None:
        return self._was.get(i)

    def owned(self) -> list[int]:
        """The sentences whose text is the user's (typed, chosen or remembered), in order."""
        return sorted(self._origins)

    def index_at(self, pos: int) -> int | None:
        """The sentence at character position `pos` (a cursor right after a sentence's last character is still
        in it, unless the next sentence starts there)."""
        i = bisect_right(self.starts, pos) - 1
        # Empty (deleted) sentences share their start with the next one: take the last one that holds `pos`
        while i >= 0 and self.starts[i] == self.ends[i]:
            i -= 1
        if i < 0:
            return None
        if self.starts[i] <= pos < self.ends[i] or (self.ends[i] == pos and self.starts[i] < pos):
            return i
        return None

    def replace(self, i: int, result: SentenceResult, text: str, new_text: str) -> None:
        """Sentence i now says `text` (already put in the editor, whose whole text is `new_text`)."""
        start, end = self.starts[i], self.ends[i]
        delta = len(text) - (end - start)
        self.text = new_text
        self.results[i] = result
        self.ends[i] = start + len(text)
        for k in range(i + 1, len(self.starts)):
            self.starts[k] += delta
            self.ends[k] += delta
        self._own[i] = text

    def apply(self, pos: int, removed: int, added: int, new_text: str) -> list[int]:
        """The document replaced `removed` characters at `pos` by `added` characters of `new_text` (the whole new
        text): move every range, and return the sentences whose own characters changed."""
        old_segment = self.text[pos : pos + removed]
        new_segment = new_text[pos : pos + added]
        self.text = new_text
        head, removed, added = narrow_change(old_segment, new_segment)
        if removed == 0 and added == 0:
            return []
        return self._move(pos + head, removed, added)

    def _shift(self, k: int, delta: int) -> None:
        starts, ends = self.starts, self.ends
        for j in range(k, len(starts)):
            starts[j] += delta
            ends[j] += delta

    def _move(self, pos: int, removed: int, added: int) -> list[int]:
        starts, ends = self.starts, self.ends
        n = len(starts)
        if removed == 0:
            owner = self._insertion_owner(pos)
            if owner is None:
                self._shift(bisect_left(starts, pos), added)
                return []
            ends[owner] += added
            self._shift(owner + 1, added)
            return [owner]
        cut_end = pos + removed
        delta = added - removed
        touched: list[int] = []
        k = bisect_right(ends, pos)  # the first sentence ending after the cut starts
        while k < n and starts[k] < cut_end:
            first = not touched
            touched.append(k)
            if starts[k] >= pos:
                starts[k] = pos if first else pos + added
            if ends[k] >= cut_end:
                ends[k] += delta
            else:  # its tail was cut: the first sentence cut gets the new text, a later one ends empty
                ends[k] = pos + added if first else starts[k]
            k += 1
        self._shift(k, delta)
        return touched

    def _insertion_owner(self, pos: int) -> int | None:
        """Text typed at `pos` belongs to the sentence it extends (start < pos <= end), else to the one it
        starts (start == pos)."""
        i = bisect_left(self.ends, pos)
        if i < len(self.starts) and self.starts[i] < pos <= self.ends[i]:
            return i
        j = bisect_left(self.starts, pos)
        if j < len(self.starts) and self.starts[j] == pos:
            return j
        return None
