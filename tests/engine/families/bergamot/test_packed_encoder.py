"""The packed Bergamot encoder (products on the batch's real tokens only) against the padded graph Qiao wrote before
(padded_encoder.py, Marian's layout): the same cross K/V on every real token, INT8 bit for bit and FP32 to float
rounding, and the same decoder step; and the engine's index inputs (engine.families.bergamot.model.packed)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.families.bergamot.architecture import Architecture, positions
from engine.families.bergamot.converter.graphs import MASK_FACTOR, Weights, build_encoder
from engine.families.bergamot.model import _indices, packed
from tests.engine.families.bergamot.direct import random_architecture, random_params
from tests.engine.families.bergamot.test_graphs import Graphs, int8_model, packed_feeds, session

pytest.importorskip("onnx")

from tests.engine.families.bergamot.padded_encoder import build_padded_encoder

# rows of very different lengths (one of a single token), each ending in </s> = 0
UNEQUAL = [[5, 9, 22, 3, 0], [0], [11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 0], [7, 0]]
BATCHES = {"unequal": UNEQUAL, "equal": [[5, 9, 22, 0], [7, 8, 2, 0], [11, 3, 4, 0]], "one": [[11, 12, 13, 0]]}


def padded(rows: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    width = max(map(len, rows))
    ids = np.zeros((len(rows), width), np.int64)
    mask = np.zeros((len(rows), width), np.int64)
    for r, row in enumerate(rows):
        ids[r, : len(row)], mask[r, : len(row)] = row, 1
    return ids, mask


def both(arch: Architecture, weights: Weights, precision: str, rows: list[list[int]], threads: int = 1):
    """The cross K/V of the packed graph and of the padded reference for `rows`, and the mask."""
    ids, mask = padded(rows)
    new = session(build_encoder(arch, weights, precision)[0], threads)
    old = session(build_padded_encoder(arch, weights, precision), threads)
    bias = np.where(mask == 1, np.float32(0.0), MASK_FACTOR).astype(np.float32)
    reference = old.run(None, {"ids": ids, "mask_bias": bias, "positions": positions(0, ids.shape[1], arch.dim)})
    return new.run(None, packed_feeds(ids, mask == 1, arch)), reference, mask


def real(cross: list[np.ndarray], mask: np.ndarray) -> list[np.ndarray]:
    """Each K [B,H,Dh,S] and V [B,H,S,Dh] at the real tokens only, flattened row after row (padding slots hold
    whatever the mask hides)."""
    heads_first = [np.moveaxis(c, 3, 2) if n % 2 == 0 else c for n, c in enumerate(cross)]  # [B,H,S,Dh]
    return [np.concatenate([x[b][:, mask[b] == 1].ravel() for b in range(len(mask))]) for x in heads_first]


@pytest.mark.parametrize("batch", list(BATCHES))
@pytest.mark.parametrize("stored", [False, True], ids=["quantised here", "stored int8"])
def test_int8_cross_keys_and_values_are_the_padded_graphs_bit_for_bit(batch: str, stored: bool) -> None:
    """Integer products and per-row float ops: skipping the padding rows changes no real token's bits."""
    arch = random_architecture(source_vocab=50, target_vocab=70, tied=True)
    weights, _ = int8_model(arch, seed=7, stored=stored)
    for threads in (1, 2):
        mine, reference, mask = both(arch, weights, "int8", BATCHES[batch], threads)
        assert [c.shape for c in mine] == [c.shape for c in reference]  # the padded layout the decoder reads
        for a, b in zip(real(mine, mask), real(reference, mask)):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("batch", list(BATCHES))
def test_fp32_cross_keys_and_values_are_the_padded_graphs_to_float_rounding(batch: str) -> None:
    arch = random_architecture(heads=4, dim=32, encoder_layers=3)
    mine, reference, mask = both(arch, Weights(random_params(arch, seed=8)), "fp32", BATCHES[batch])
    for a, b in zip(real(mine, mask), real(reference, mask)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=2e-6 * np.abs(b).max())


def test_the_decoder_reads_the_packed_encoders_keys_as_the_padded_ones() -> None:
    """What the padding slots hold (another token's keys, not the padding embedding's) reaches no logit, state or
    alignment: the step over both encoders' K/V is the same to the bit (INT8)."""
    arch = random_architecture()
    weights, _ = int8_model(arch, seed=9)
    graphs = Graphs(arch, weights, "int8", shortlisted=False)
    mine, reference, mask = both(arch, weights, "int8", UNEQUAL)
    bias = np.where(mask == 1, np.float32(0.0), MASK_FACTOR).astype(np.float32)
    states = [np.zeros((len(UNEQUAL), arch.dim), np.float32) for _ in range(arch.decoder_layers)]
    tokens = np.zeros(len(UNEQUAL), np.int64)
    for t in range(4):
        a = graphs.step(mine, bias, tokens, t, states)
        b = graphs.step(reference, bias, tokens, t, states)
        for x, y in zip([a[0], *a[1], a[2]], [b[0], *b[1], b[2]]):
            np.testing.assert_array_equal(x, y)
        states, tokens = a[1], np.argmax(a[0], axis=1)


def reference_indices(mask: np.ndarray, heads: int):
    """`packed`'s indices written out by loops: tokens in row order; a real slot's head row t·H+h."""
    b, s = mask.shape
    pad = np.full((b, heads, s), -1, np.int64)
    pack, at = [], []
    t = 0
    for r in range(b):
        for j in range(s):
            if mask[r, j]:
                pad[r, :, j] = [t * heads + h for h in range(heads)]
                pack.append([(r * heads + h) * s + j for h in range(heads)])
                at.append(j)
                t += 1
    return pad, np.array(pack, np.int64).reshape(-1, heads), np.array(at, np.int64)


@pytest.mark.parametrize("lengths", [[1], [1, 1, 1], [6, 6, 6], [9], [1, 40, 2], [40, 1], [3, 17, 17, 5]], ids=str)
def test_the_index_inputs_place_every_token_and_round_trip_its_heads(lengths: list[int]) -> None:
    heads = 4
    rows = [list(range(100 * (r + 1), 100 * (r + 1) + n)) for r, n in enumerate(lengths)]
    ids, mask = padded(rows)
    tokens, pad_index, pack_index, at = packed(ids, mask, heads)
    pad, pack, where = reference_indices(mask, heads)
    np.testing.assert_array_equal(tokens, np.concatenate(rows))
    np.testing.assert_array_equal(at, where)
    np.testing.assert_array_equal(pack_index, pack)
    real_slots = pad >= 0
    np.testing.assert_array_equal(pad_index[real_slots], pad[real_slots])
    t = len(tokens)
    assert pad_index.shape == (len(mask), heads, mask.shape[1]) and pad_index.dtype == np.int64
    assert np.all((pad_index >= 0) & (pad_index < t * heads))  # a padding slot reads a real head row
    # the graph's two gathers: packed head rows → padded [B,H,S,·] → packed again
    x = np.random.default_rng(0).standard_normal((t * heads, 3))
    padded_heads = x[pad_index]
    np.testing.assert_array_equal(padded_heads.reshape(-1, 3)[pack_index].reshape(-1, 3), x)


def test_rows_without_padding_take_shared_read_only_indices_equal_to_the_general_ones() -> None:
    ids, mask = padded([[4, 5, 6, 0], [7, 8, 9, 0]])
    first, second = packed(ids, mask, 8), packed(ids + 1, mask, 8)
    slots = np.arange(ids.size, dtype=np.int64)
    for shared, again, general in zip(first[1:], second[1:], _indices(slots, slots, mask.shape, 8)):
        assert shared is again and not shared.flags.writeable
        np.testing.assert_array_equal(shared, general)
    np.testing.assert_array_equal(second[0], ids.reshape(-1) + 1)
