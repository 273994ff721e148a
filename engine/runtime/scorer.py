"""Beam-search candidate scoring on onnxruntime: top-k log-probabilities per hypothesis in one small graph.

numpy needs ~4 ms per step to log-softmax 4×65001 logits and pick the best 8 of 260k; ORT's LogSoftmax and
TopK kernels do it in 0.3 ms. Only the best `2·beams` tokens of each hypothesis can enter the
global top `2·beams`, so ranking per-hypothesis top-k lists is exact.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnxruntime as ort

from engine.config import EngineConfig
from engine.runtime.sessions import SHRINK_ARENA, inference_session


class TopKScorer:
    """`top(logits, k)` → (log-probabilities, token ids) of the k best allowed tokens per row, best first.

    Runs the bundle's scorer.onnx (written by the build pipeline, see
    engine.families.marian.converter.graphs.build_scorer). Ties keep
    the lower token id first (ONNX TopK's rule), like transformers' topk over a row.
    """

    def __init__(
        self, path: Path, vocab: int, banned: list[int], threads: int = 1, config: EngineConfig | None = None
    ) -> None:
        """`config` (the engine's) sets the threads, unless automatic, and the execution provider."""
        self.mask = np.zeros(vocab, dtype=np.float32)  # −inf at the tokens every row is banned (single bad words)
        self.mask[banned] = -np.inf
        config = config or EngineConfig(threads=threads)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = config.threads or threads
        opts.inter_op_num_threads = 1
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.log_severity_level = 3
        # LogSoftmax and Add each make a [rows, vocab] float32 temporary per step (8.3 MB apiece at 32 rows × 65k).
        # Without the arena every step would map, fault in and unmap them (engine.runtime.native_memory keeps blocks
        # this
        # size out of the heap): the scorer's share of 8 sentences × 4 beams grew from 207 to 517 ms (1.09 → 1.44 s in
        # all; beam 4 alone 31 → 68 ms), full-size model, 2 threads, AMD EPYC. With it, the largest batch's would
        # stay reserved for good (15 MB after 20 requests at real scale): `top` releases them whenever the row count
        # changes (a new batch), so only the current batch's stay.
        self._session = inference_session(path, opts, config.ort_providers)
        self._rows = -1  # the row count of the previous call

    def top(self, logits: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        feeds = {"logits": logits, "mask": self.mask, "k": np.array([k], dtype=np.int64)}
        rows = logits.shape[0]
        values, ids = self._session.run(None, feeds, SHRINK_ARENA if rows != self._rows else None)
        self._rows = rows
        return values, ids
