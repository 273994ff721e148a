"""Batches: consecutive sentences, bounded in count and in decoder-cache positions."""

from __future__ import annotations

from engine.pipeline.batching import BATCH_POSITIONS, BATCH_SENTENCES, batches, length_limit


def test_length_limit_grows_with_the_source_and_stops_at_the_model():
    assert length_limit(10, 512) == 4 * 9 + 12 + 2  # the default rule: 9 source tokens and the end token
    assert length_limit(400, 512) == 512


def test_short_sentences_batch_by_count_in_order():
    got = list(batches([5] * 20, beams=1, model_max=512))
    assert [i for b in got for i in b] == list(range(20))
    assert all(len(b) <= BATCH_SENTENCES for b in got) and len(got) == -(-20 // BATCH_SENTENCES)


def test_long_sentences_batch_by_positions():
    lengths = [150, 150, 150, 10]
    for beams in (1, 4):
        for batch in batches(lengths, beams=beams, model_max=512):
            src = max(lengths[i] for i in batch)
            limit = max(length_limit(lengths[i], 512) for i in batch)
            assert len(batch) == 1 or len(batch) * beams * (src + limit) <= BATCH_POSITIONS


def test_a_pasted_paragraph_at_beam_4_is_one_batch():
    """Five everyday sentences of ~25 tokens (the bench's paragraph) decode together, not four and then one."""
    assert list(batches([25, 27, 24, 25, 23], beams=4, model_max=512)) == [[0, 1, 2, 3, 4]]


def test_an_over_budget_sentence_still_gets_its_own_batch():
    assert list(batches([600], beams=8, model_max=512)) == [[0]]


def test_limits_can_be_given():
    assert list(batches([1] * 5, beams=1, model_max=512, max_sentences=2)) == [[0, 1], [2, 3], [4]]
