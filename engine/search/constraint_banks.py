"""Bookkeeping for lexically constrained beam search: what a hypothesis has met, what it may produce next, and how
the beam is shared among hypotheses of equal progress (dynamic beam allocation, Post & Vilar 2018).

A hypothesis' progress is a `Progress`: the constraints it has met (a bitmask) and the matches in progress (a
constraint and how far into one of its tokenisations the hypothesis' last tokens go). Every start position is
tracked, so a match abandoned midway is simply dropped and one that restarts inside it is still seen. Its *bank* is
the number of constraint tokens met: the longest option of every met constraint plus the deepest match in progress.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.search.types import Constraint


@dataclass(frozen=True)
class Progress:
    met: int = 0  # bit c: constraint c met
    partial: tuple[tuple[int, int], ...] = ()  # (constraint, trie node) for every match in progress, sorted
    bank: int = 0  # constraint tokens met (see the module docstring)


class ConstraintSet:
    """The constraints of one sentence as one trie per constraint (its options share prefixes)."""

    def __init__(self, constraints: Sequence[Constraint]) -> None:
        self.count = len(constraints)
        self.all_met = (1 << self.count) - 1
        self._children: list[dict[int, int]] = []
        self._ends: list[bool] = []
        self._depth: list[int] = []
        self._roots: list[int] = []
        self._weight: list[int] = []
        empty = 0
        for c, constraint in enumerate(constraints):
            root = self._node(0)
            self._roots.append(root)
            self._weight.append(max((len(o) for o in constraint.options), default=0))
            for option in constraint.options:
                if not option:
                    empty |= 1 << c  # an empty tokenisation is met before anything is generated
                node = root
                for tok in option:
                    nxt = self._children[node].get(int(tok))
                    if nxt is None:
                        nxt = self._node(self._depth[node] + 1)
                        self._children[node][int(tok)] = nxt
                    node = nxt
                self._ends[node] = True
        self.total = sum(self._weight)
        self._firsts = {t for root in self._roots for t in self._children[root]}
        self.start = self._progress(empty, ())
        self._memo: dict[tuple[Progress, int], Progress] = {}

    def _node(self, depth: int) -> int:
        self._children.append({})
        self._ends.append(False)
        self._depth.append(depth)
        return len(self._children) - 1

    def _progress(self, met: int, partial: tuple[tuple[int, int], ...]) -> Progress:
        done = sum(w for c, w in enumerate(self._weight) if met >> c & 1)
        return Progress(met, partial, done + max((self._depth[node] for _, node in partial), default=0))

    def advance(self, state: Progress, token: int) -> Progress:
        """The progress after `token` is appended."""
        if not state.partial and token not in self._firsts:
            return state  # most tokens: nothing in progress, nothing starts
        key = (state, token)
        found = self._memo.get(key)
        if found is not None:
            return found
        met = state.met
        partial: set[tuple[int, int]] = set()
        steps = [(c, self._children[node].get(token)) for c, node in state.partial]
        steps += [(c, self._children[self._roots[c]].get(token)) for c in range(self.count)]
        for c, node in steps:
            if node is None or met >> c & 1:
                continue
            if self._ends[node]:
                met |= 1 << c
            else:
                partial.add((c, node))
        result = self._progress(met, tuple(sorted(p for p in partial if not met >> p[0] & 1)))
        self._memo[key] = result
        return result

    def next_tokens(self, state: Progress) -> set[int]:
        """Tokens that continue a match in progress or start an unmet constraint."""
        out: set[int] = set()
        for _, node in state.partial:
            out.update(self._children[node])
        for c in range(self.count):
            if not state.met >> c & 1:
                out.update(self._children[self._roots[c]])
        return out

    def complete(self, state: Progress) -> bool:
        return state.met == self.all_met

    def met_count(self, state: Progress) -> int:
        return state.met.bit_count()

    def unmet(self, state: Progress) -> list[int]:
        return [c for c in range(self.count) if not state.met >> c & 1]


def allocate(banks: Sequence[int], k: int) -> list[int]:
    """Which of the candidates (given best first, with their banks) fill a beam of `k`: the beam is divided evenly
    among the banks present (the remainder to the most advanced ones; with more banks than slots, one slot each to
    the `k - 1` most advanced and to the least, which keeps an unforced continuation alive); slots a bank cannot
    fill go to the best remaining candidates. Returns indices, best first."""
    if not banks:
        return []
    present = sorted(set(banks), reverse=True)
    if len(present) > k:
        present = present[: k - 1] + present[-1:] if k > 1 else present[:1]
    base, extra = divmod(k, len(present))
    quota = {bank: base + (i < extra) for i, bank in enumerate(present)}
    chosen, rest = [], []
    for i, bank in enumerate(banks):
        if quota.get(bank, 0) > 0:
            quota[bank] -= 1
            chosen.append(i)
        else:
            rest.append(i)
    chosen += rest[: k - len(chosen)]
    return sorted(chosen)
