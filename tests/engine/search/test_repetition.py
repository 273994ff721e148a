from engine.search.repetition import repeating_tail


def test_detects_loops():
    assert repeating_tail([5] * 12)
    assert repeating_tail([1, 2, 3] + [7, 8] * 6)
    assert repeating_tail(list(range(10)) + [4, 5, 6] * 4)


def test_ignores_normal_output():
    assert not repeating_tail([5] * 11)  # too short to call it a loop
    assert not repeating_tail(list(range(40)))
    assert not repeating_tail([1, 2, 1, 2, 1, 2, 3])
    assert not repeating_tail([])


def _by_definition(tokens: list[int]) -> bool:
    """The rule as the docstring states it, spelled out slowly: some period p ≤ 6 whose last block repeats at
    least max(4, ⌈12/p⌉) times at the end."""
    for p in range(1, 7):
        repeats = max(4, -(-12 // p))
        if len(tokens) >= p * repeats and all(
            tokens[len(tokens) - p * k - p : len(tokens) - p * k] == tokens[len(tokens) - p :] for k in range(repeats)
        ):
            return True
    return False


def test_the_quick_rejection_keeps_every_answer():
    """The check runs after every token; its fast rejection (the token one period back differs) must not change
    an answer: near-misses (a loop broken at its end, one token short, a longer period) included."""
    import random

    rng = random.Random(0)
    cases = []
    for _ in range(2000):
        tokens = [rng.randrange(2, 6) for _ in range(rng.randrange(0, 30))]
        period = rng.randrange(1, 8)
        block = [rng.randrange(2, 6) for _ in range(period)]
        tokens += block * rng.randrange(0, 14)
        if rng.random() < 0.3:
            tokens.append(rng.randrange(2, 6))
        cases.append(tokens)
    assert sum(repeating_tail(t) for t in cases) > 200
    assert [repeating_tail(t) for t in cases] == [_by_definition(t) for t in cases]
