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
