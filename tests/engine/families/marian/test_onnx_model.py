"""The decoder run's cache bookkeeping (beam search's reorder, greedy's select), checked against numpy indexing."""

from __future__ import annotations

import numpy as np
import pytest

from engine.bundle.manifest import load_manifest
from engine.families.marian.model import EncoderState, OnnxMarian, _cross_shape
from engine.runtime.sessions import SHRINK_ARENA
from engine.search.decoding import shared_prefix


@pytest.fixture(scope="module")
def model(bundle_dir):
    return OnnxMarian(load_manifest(bundle_dir), "int8", threads=1)


def _run(model, rows: int, max_len: int):
    ids = np.tile(np.array([[5, 6, 7, 0]], dtype=np.int64), (rows, 1))
    return model.start(model.encode(ids, np.ones_like(ids)), max_len)


def _filled_run(model, length: int, seed: int):
    """A 4-row run whose cache holds random values, `length` positions counted as written; and a copy of it."""
    run = _run(model, rows=4, max_len=9)
    rng = np.random.default_rng(seed)
    for array in run.cache:
        array[...] = rng.standard_normal(array.shape)
    run.length = length
    return run, [array.copy() for array in run.cache]


@pytest.mark.parametrize("index", [[0, 0, 3, 1], [3, 2, 1, 0], [1, 1, 1, 1], [0, 1, 2, 2]])
def test_reorder_moves_each_rows_history(model, index):
    run, before = _filled_run(model, length=6, seed=len(index))
    run.reorder(np.array(index))
    for old, new in zip(before, run.cache):
        np.testing.assert_array_equal(new[:, :, :6], old[index, :, :6])
        np.testing.assert_array_equal(new[:, :, 6:], old[:, :, 6:])  # unfilled positions are left alone


def test_reorder_moves_only_the_positions_after_the_shared_prefix(model):
    """`shared[r]` positions of row r already hold its new history (the search knows from the tokens): left alone."""
    run, before = _filled_run(model, length=6, seed=7)
    index, shared = [1, 0, 3, 3], [2, 0, 4, 6]
    run.reorder(np.array(index), np.array(shared))
    for old, new in zip(before, run.cache):
        for row, (parent, start) in enumerate(zip(index, shared)):
            np.testing.assert_array_equal(new[row, :, :start], old[row, :, :start])
            np.testing.assert_array_equal(new[row, :, start:6], old[parent, :, start:6])
        np.testing.assert_array_equal(new[:, :, 6:], old[:, :, 6:])


def test_shared_prefix_counts_the_leading_equal_tokens():
    old = np.array([[[0, 5, 6, 7], [0, 5, 6, 8]], [[0, 1, 2, 3], [0, 1, 2, 3]]])
    new = np.array([[[0, 5, 6, 8], [0, 5, 6, 8]], [[0, 4, 2, 3], [0, 1, 2, 3]]])
    assert shared_prefix(old, new).tolist() == [3, 4, 1, 4]


@pytest.mark.parametrize("rows", [[0, 2], [1, 2, 3], [3], [0, 1, 2, 3]])
def test_select_keeps_each_remaining_rows_history_in_place(model, rows):
    run, before = _filled_run(model, length=5, seed=len(rows))
    buffers = [array.base if array.base is not None else array for array in run.cache]
    run.select(np.array(rows))
    for old, new, buffer in zip(before, run.cache, buffers):
        assert new.shape == (len(rows), *old.shape[1:]) and new.flags.c_contiguous
        assert np.shares_memory(new, buffer)  # compacted where it was: no second cache, not even briefly
        np.testing.assert_array_equal(new[:, :, :5], old[rows, :, :5])


def test_select_copies_the_callers_encoder_state_once_then_compacts_its_own(model):
    """The run must never write into the encoder state it was given (alternatives decode several runs over one);
    after the first select the kept rows are the run's own copy, compacted in place from then on."""
    ids = np.array([[5, 6, 7, 0], [8, 9, 0, 0], [5, 9, 8, 0], [6, 6, 0, 0]], dtype=np.int64)
    enc = model.encode(ids, (ids != 0).astype(np.int64))
    given = [c.copy() for c in enc.cross]
    run = model.start(enc, 6)
    run.select(np.array([1, 2, 3]))
    first = [c for c in run.enc.cross]
    assert not any(np.shares_memory(a, b) for a, b in zip(first, enc.cross))
    run.select(np.array([0, 2]))  # original rows 1 and 3
    for own, original, copy in zip(run.enc.cross, enc.cross, given):
        np.testing.assert_array_equal(original, copy)
        np.testing.assert_array_equal(own, copy[[1, 3]])
    assert all(np.shares_memory(a, b) for a, b in zip(run.enc.cross, first))
    np.testing.assert_array_equal(run.enc.mask, enc.mask[[1, 3]])
    assert np.isfinite(run.step(np.full(2, 3, dtype=np.int64))).all()


def _sentences(model, count: int):
    ids = np.array([[5, 6, 7, 0], [8, 9, 0, 0], [5, 9, 8, 0], [6, 6, 0, 0]][:count], dtype=np.int64)
    return model.encode(ids, (ids != 0).astype(np.int64))


def test_a_sentences_beams_share_its_encoder_state(bundle_dir):
    """The bundle's decoder reads one cross K/V row per sentence for all its beams (graphs.decoder.
    beams_share_cross): the run holds the encoder's rows as they are, and each beam's logits are what the same
    step gives with the state repeated per beam (the older bundles' layout, still accepted)."""
    model = OnnxMarian(load_manifest(bundle_dir), "fp32", threads=1)
    assert model.beams_share_cross
    enc = _sentences(model, 3)
    run = model.start(enc, 6, beams=4)
    assert run.group == 4 and run.logits.shape[0] == 12
    assert all(c.shape[0] == 3 and np.shares_memory(c, e) for c, e in zip(run.enc.cross, enc.cross))
    repeated = model.start(
        EncoderState(cross=[np.repeat(c, 4, axis=0) for c in enc.cross], mask=np.repeat(enc.mask, 4, axis=0)), 6
    )
    assert repeated.group == 1 and repeated.logits.shape[0] == 12
    tokens = np.array([3, 4, 5, 6] * 3, dtype=np.int64)
    for _ in range(3):
        np.testing.assert_allclose(run.step(tokens), repeated.step(tokens), rtol=0, atol=1e-4)
    run.select(np.array([4, 5, 6, 7]))  # the second sentence's beams
    repeated.select(np.array([4, 5, 6, 7]))
    assert [c.shape[0] for c in run.enc.cross] == [1] * len(enc.cross)
    np.testing.assert_allclose(run.step(tokens[:4]), repeated.step(tokens[:4]), rtol=0, atol=1e-4)


def test_a_bundle_whose_decoder_reads_a_row_per_beam_gets_the_state_repeated(model, monkeypatch):
    monkeypatch.setattr(model, "beams_share_cross", False)
    enc = _sentences(model, 2)
    run = model.start(enc, 6, beams=4)
    assert run.group == 1 and [c.shape[0] for c in run.enc.cross] == [8] * len(enc.cross)
    np.testing.assert_array_equal(run.enc.cross[0][4:], np.repeat(enc.cross[0][1:], 4, axis=0))
    assert np.isfinite(run.step(np.full(8, 3, dtype=np.int64))).all()


@pytest.mark.parametrize(
    ("beams", "rows"), [(4, [0, 1, 2]), (4, [1, 2, 3, 4]), (4, [4, 5, 6, 7, 0, 1, 2, 3]), (1, [1, 0]), (1, [0, 0])]
)
def test_select_refuses_rows_that_are_not_ascending_whole_sentences(model, beams, rows):
    run = model.start(_sentences(model, 2), 6, beams=beams)
    with pytest.raises(ValueError, match="ascending whole sentences"):
        run.select(np.array(rows))


def test_decoding_continues_after_reorder_and_select(model):
    """A step after a reorder and after dropping rows still runs on the rebound buffers."""
    run = _run(model, rows=4, max_len=8)
    tokens = np.full(4, 3, dtype=np.int64)
    first = run.step(tokens).copy()
    run.reorder(np.array([1, 1, 0, 2]))
    run.step(tokens)
    run.select(np.array([0, 3]))
    out = run.step(tokens[:2])
    assert out.shape == (2, first.shape[1]) and np.isfinite(out).all()
    run.reorder(np.array([1, 0]))
    assert np.isfinite(run.step(tokens[:2])).all()


def test_the_encoders_outputs_are_arrays_of_our_own_equal_to_the_sessions(model):
    """Returned by `run`, the cross K/V were views of ORT's arena: the region holding them could not be handed back
    by the run's arena shrink, and stayed reserved between requests (4 MB at opus-mt size after the soak's largest
    texts). Bound to arrays of our own, the values are the same."""
    ids = np.array([[5, 6, 7, 8, 0], [9, 10, 0, 1, 1]], dtype=np.int64)
    mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=np.int64)
    state = model.encode(ids, mask)
    feeds = {"inputs_embeds": model.embed(ids, source=True), "attention_mask": mask}
    expected = model.encoder.run(model._enc_out, feeds, SHRINK_ARENA)
    assert len(state.cross) == len(expected) == 2 * model.layers
    for ours, theirs in zip(state.cross, expected):
        assert ours.base is None and ours.flags.owndata  # numpy's memory, not a capsule over ORT's
        assert ours.shape == theirs.shape == (2, model.heads, 5, model.d_model // model.heads)
        np.testing.assert_array_equal(ours, theirs)


def test_an_encoder_output_of_another_layout_is_left_to_the_session():
    assert _cross_shape(["batch", 8, "src", 64], (3, 17)) == (3, 8, 17, 64)
    assert _cross_shape(["batch", "src", 512], (3, 17)) is None
    assert _cross_shape([1, 8, "src", 64], (1, 17)) is None
    assert _cross_shape(["batch", "heads", "src", 64], (3, 17)) is None


def test_only_the_decoder_spins_and_it_stops_between_steps(bundle_dir):
    """At 2 threads the decoder's pool spins between the kernels of a step (never the encoder's, which runs once a
    batch), and stops when each step returns, leaving the second core to the scoring and cache work between steps."""
    two = OnnxMarian(load_manifest(bundle_dir), "int8", threads=2)

    def entry(session, key: str) -> str:
        return session.get_session_options().get_session_config_entry(key)

    assert entry(two.decoder, "session.intra_op.allow_spinning") == "1"
    assert entry(two.decoder, "session.force_spinning_stop") == "1"
    assert entry(two.encoder, "session.intra_op.allow_spinning") == "0"
