"""Constraint progress tracking and beam allocation (engine.search.constraint_banks), without a model."""

from __future__ import annotations

from engine.search.constraint_banks import ConstraintSet, allocate
from engine.search.types import Constraint


def _feed(cset: ConstraintSet, tokens):
    state = cset.start
    for t in tokens:
        state = cset.advance(state, t)
    return state


def test_a_multi_token_constraint_is_met_only_when_complete():
    cset = ConstraintSet([Constraint(((7, 8, 9),))])
    assert cset.next_tokens(cset.start) == {7}
    s = _feed(cset, [1, 7, 8])
    assert not cset.complete(s) and s.bank == 2 and cset.next_tokens(s) == {9, 7}
    assert cset.complete(cset.advance(s, 9)) and cset.advance(s, 9).bank == 3
    assert cset.next_tokens(cset.advance(s, 9)) == set()


def test_an_abandoned_match_is_reset_and_a_restart_inside_it_is_seen():
    cset = ConstraintSet([Constraint(((7, 7, 8),))])
    broken = _feed(cset, [7, 7, 5])
    assert broken.partial == () and broken.bank == 0 and cset.unmet(broken) == [0]
    assert cset.complete(_feed(cset, [7, 7, 7, 8]))  # the match starting at the second 7 survives
    assert not cset.complete(_feed(cset, [7, 5, 7, 8]))


def test_any_option_meets_the_constraint_and_banks_count_the_longest():
    cset = ConstraintSet([Constraint(((3, 4), (5,))), Constraint(((6,),))])
    assert cset.total == 3 and cset.next_tokens(cset.start) == {3, 5, 6}
    short = _feed(cset, [5])
    assert cset.unmet(short) == [1] and short.bank == 2
    both = _feed(cset, [3, 4, 1, 6])
    assert cset.complete(both) and cset.met_count(both) == 2 and both.bank == 3


def test_an_empty_option_is_met_from_the_start():
    cset = ConstraintSet([Constraint(((),)), Constraint(((2,),))])
    assert cset.unmet(cset.start) == [1]


def test_allocation_shares_the_beam_among_banks_and_refills_unused_slots():
    # best first; banks 0,0,0,0,1,2: four slots over three banks → 1 + 1 + 2, the extra slot to the top bank
    assert allocate([0, 0, 0, 0, 1, 2], 4) == [0, 1, 4, 5]
    assert allocate([0, 0, 0, 0, 2, 2], 4) == [0, 1, 4, 5]
    # one bank only: plain top-k
    assert allocate([0] * 6, 4) == [0, 1, 2, 3]
    # a bank with too few candidates: its slots go to the best remaining ones
    assert allocate([0, 0, 0, 0, 1], 4) == [0, 1, 2, 4]
    # more banks than slots: the most advanced banks get one each, and the least advanced one too
    assert allocate([0, 1, 2, 3, 4], 3) == [0, 3, 4]
    assert allocate([1, 3, 4, 1, 0], 1) == [2]
    assert allocate([], 4) == []
