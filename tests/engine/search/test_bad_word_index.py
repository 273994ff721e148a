"""BadWordIndex gives exactly the bans the one-word-at-a-time check gives (transformers' NoBadWordsLogitsProcessor
rule: a word's last token is banned where the history ends with the word's other tokens), for thousands of words."""

from __future__ import annotations

import numpy as np

from engine.search.scores import BadWordIndex


def _reference(hist: np.ndarray, cur_len: int, words) -> set[tuple[int, int]]:
    out = set()
    for word in words:
        m = len(word) - 1
        if m < 1 or m > cur_len:
            continue
        for r in range(hist.shape[0]):
            if list(hist[r, cur_len - m : cur_len]) == list(word[:-1]):
                out.add((r, int(word[-1])))
    return out


def _pairs(bans) -> set[tuple[int, int]]:
    return {(int(r), token) for rows, token in bans for r in rows}


def test_the_index_bans_what_the_word_by_word_check_bans():
    rng = np.random.default_rng(0)
    vocab = 12  # small, so histories really end with the words' beginnings
    words = [tuple(int(t) for t in rng.integers(0, vocab, size=rng.integers(2, 5))) for _ in range(3000)]
    index = BadWordIndex(words)
    hits = 0
    for _ in range(200):
        cur_len = int(rng.integers(1, 9))
        hist = rng.integers(0, vocab, size=(int(rng.integers(1, 9)), 10))
        want = _reference(hist, cur_len, words)
        assert _pairs(index.bans(hist, cur_len)) == want
        for r in range(hist.shape[0]):
            assert index.after(list(hist[r, :cur_len])) == {t for rr, t in want if rr == r}
        hits += len(want)
    assert hits > 1000  # the cases really ban something


def test_single_token_words_are_not_its_business_and_an_empty_index_is_false():
    assert not BadWordIndex([(5,), (7,)])
    index = BadWordIndex([(1, 2), (1, 3), (4, 1, 2)])
    hist = np.array([[0, 4, 1], [0, 2, 1]])
    assert _pairs(index.bans(hist, 3)) == {(0, 2), (0, 3), (1, 2), (1, 3)}
    assert index.after([0, 4, 1]) == {2, 3}
    assert index.after([0]) == set()
