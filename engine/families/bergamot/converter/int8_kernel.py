"""The integer arithmetic of an INT8 product on this CPU, for the numpy reference's int8 imitation (build time).

Both int8 engines multiply activations shifted to uint8 (0..254) by int8 weights. With VNNI (vpdpbusd) every
product is summed exactly in int32. Without it (AVX2, AVX-512 before VNNI) both ONNX Runtime's MLAS and bergamot's
intgemm use vpmaddubsw, which adds each pair of adjacent products (k, k+1) into an int16 and saturates it at
±32767/−32768 before summing in int32. The pair (k, k+1) is the same in both, and so are the saturated pairs: under
emulated AVX2 and AVX-512BW CPUs (tests/tools/cpuid_mask), ORT's INT8 graphs gave the saturating imitation's tokens on
199/200 and 200/200 sentences of the tiny models and 40/40 of the full-shape one, against 110/200 and 0/40 for the
exact imitation. So the build's INT8 check compares with the imitation of the kernel ORT takes here:
`saturates()` asks ORT itself (one tiny product whose pairs overflow int16), and `product()` computes a_q · q
either way.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

SHIFT = 127  # the activations' zero point: clip(round(x·alpha), ±127) + 127 as uint8
INT16_MIN, INT16_MAX = -32768, 32767
PROBE_DEPTH = 64  # k of the probe product: 32 pairs of 254·127 + 254·127 = 64,516 each


@dataclass(frozen=True)
class RiskyPairs:
    """The adjacent weight pairs (k, k+1) of a [K, N] int8 matrix that some uint8 activations can push past int16:
    254·(sum of the pair's positive weights) > 32767 or 254·(sum of its negative ones) < −32768. Only these need
    the pairwise sum; elsewhere the exact product is the saturating one."""

    first: np.ndarray  # k of each pair's first row
    column: np.ndarray
    w1: np.ndarray
    w2: np.ndarray

    @classmethod
    def of(cls, q: np.ndarray) -> RiskyPairs:
        w = q.astype(np.int32)
        if w.shape[0] % 2:
            w = np.concatenate([w, np.zeros((1, w.shape[1]), np.int32)])
        even, odd = w[0::2], w[1::2]
        top = (np.maximum(even, 0) + np.maximum(odd, 0)) * (2 * SHIFT)
        bottom = (np.minimum(even, 0) + np.minimum(odd, 0)) * (2 * SHIFT)
        pair, column = np.nonzero((top > INT16_MAX) | (bottom < INT16_MIN))
        return cls(2 * pair, column, even[pair, column], odd[pair, column])

    def of_columns(self, columns: np.ndarray, width: int) -> RiskyPairs:
        """These pairs of the matrix's `columns` (distinct ids below `width`), numbered by their place in it."""
        place = np.full(width, -1, np.int64)
        place[columns] = np.arange(len(columns))
        kept = place[self.column] >= 0
        return RiskyPairs(self.first[kept], place[self.column[kept]], self.w1[kept], self.w2[kept])


def product(a_q: np.ndarray, q: np.ndarray, *, saturate: bool, risky: RiskyPairs | None = None) -> np.ndarray:
    """a_q · q in float32 for quantised activations a_q ([M, K], integers in ±127) and int8 weights q ([K, N]): the
    exact product, or with `saturate` the one vpmaddubsw gives ((a_q + 127) · q, each adjacent pair's sum clamped
    to int16, minus 127 · the column sums). `risky`: RiskyPairs.of(q), when the caller keeps it."""
    exact = a_q @ np.asarray(q, dtype=np.float32)
    if not saturate:
        return exact
    pairs = RiskyPairs.of(q) if risky is None else risky
    if pairs.first.size == 0:
        return exact
    shifted = a_q.astype(np.int32) + SHIFT
    if shifted.shape[1] % 2:
        shifted = np.concatenate([shifted, np.full((shifted.shape[0], 1), SHIFT, np.int32)], axis=1)
    sums = shifted[:, pairs.first] * pairs.w1 + shifted[:, pairs.first + 1] * pairs.w2
    excess = (sums - np.clip(sums, INT16_MIN, INT16_MAX)).astype(np.float32)
    lost = np.zeros_like(exact)
    np.add.at(lost.T, pairs.column, excess.T)  # columns may repeat: add each pair's loss to its column
    return exact - lost


@functools.lru_cache(maxsize=1)
def saturates() -> bool:
    """Whether ONNX Runtime's u8·s8 kernel saturates its pair sums on this CPU (no VNNI): one MatMulIntegerToFloat
    of uint8 254 (zero point 127) by int8 127 over PROBE_DEPTH, whose exact value is 127·127·PROBE_DEPTH."""
    from onnx import TensorProto, helper

    from engine.bundle.graph_writer import GraphWriter
    from engine.runtime.sessions import inference_session, session_options

    g = GraphWriter()
    inputs = [
        "a",
        g.weight("b", np.full((PROBE_DEPTH, 8), 127, np.int8)),
        g.const("a_scale", 1.0, np.float32),
        g.const("b_scale", 1.0, np.float32),
        g.const("a_zero", SHIFT, np.uint8),
    ]
    g.op("MatMulIntegerToFloat", inputs, ["y"], ms=True)
    model = g.model(
        "int8_kernel_probe",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [1, PROBE_DEPTH])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])],
    )
    session = inference_session(model.SerializeToString(), session_options(threads=1))
    (y,) = session.run(None, {"a": np.full((1, PROBE_DEPTH), 2 * SHIFT, np.uint8)})
    return bool(y[0, 0] != SHIFT * SHIFT * PROBE_DEPTH)
