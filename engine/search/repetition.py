"""Detect a degenerate repetition loop at the end of a decoded sequence (a known Marian failure on odd input)."""

from __future__ import annotations

from collections.abc import Sequence

MAX_PERIOD = 6
MIN_REPEATS = 4
MIN_SPAN = 12


def repeating_tail(tokens: Sequence[int], max_period: int = MAX_PERIOD) -> bool:
    """True when the sequence ends with one block of 1–`max_period` tokens repeated at least MIN_REPEATS times,
    spanning at least MIN_SPAN tokens ("的的的的…" or "A B A B A B …")."""
    n = len(tokens)
    if n < MIN_SPAN:
        return False
    last = tokens[n - 1]
    for period in range(1, max_period + 1):
        repeats = max(MIN_REPEATS, -(-MIN_SPAN // period))
        span = period * repeats
        # a repeated block ends where the one before it ended: the common case (no loop) costs one comparison
        if n < span or tokens[n - 1 - period] != last:
            continue
        block = list(tokens[n - period :])
        if all(list(tokens[n - (k + 1) * period : n - k * period]) == block for k in range(1, repeats)):
            return True
    return False
