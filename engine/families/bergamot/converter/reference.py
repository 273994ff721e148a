"""A numpy forward pass of a Bergamot model: greedy decoding exactly as bergamot-translator computes it (marian-dev's
transformer.h, cells.h SSRU, generic.cpp output layer, beam_search.cpp with beam 1), written from
/work/shared/research/bergamot-format.md §2e and checked token for token against bergamot itself
(tests/engine/families/bergamot/test_reference_oracle.py).

It is the yardstick the engine's ONNX graphs are compared with: by the build, which refuses a bundle whose FP32
greedy output differs from it on the check sentences (engine.families.bergamot.converter.convert), and by the tests. So
it stays plain: one sentence, float32, no batching. `int8=True` imitates intgemm (activations quantised with the
stored alpha, or 127/max|A| without alphas, rounded to nearest even and clamped to ±127; weights as stored), which
agrees with bergamot's int8 statistically only (its kernels' accumulation and the CPU's instruction set differ);
`saturate=True` adds what the u8·s8 kernels of CPUs without VNNI do, int16 saturation of each adjacent pair's sum
(int8_kernel.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from engine.families.bergamot.converter import int8_kernel
from engine.families.bergamot.converter.reader import Checkpoint

EOS = 0
UNK = 1
MAX_LENGTH_FACTOR = 2.0  # Firefox's max-length-factor
MASK_VALUE = np.float32(-99999999.0)

Observer = Callable[[str, np.ndarray], None]


def positions(start: int, count: int, dim: int) -> np.ndarray:
    """Marian's sinusoidal position signal (node_initializers.cpp): [sin half | cos half], float32 arithmetic."""
    half = dim // 2
    increment = np.float32(math.log(np.float32(10000.0))) / (np.float32(dim / 2) - np.float32(1.0))
    inv = np.exp(np.arange(half, dtype=np.float32) * -np.float32(increment)).astype(np.float32)
    p = np.arange(start, start + count, dtype=np.float32)[:, None]
    v = (p * inv[None, :]).astype(np.float32)
    return np.concatenate([np.sin(v), np.cos(v)], axis=1).astype(np.float32)


def layer_norm(x: np.ndarray, scale: np.ndarray, bias: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    return (centred / np.sqrt(var + np.float32(eps)) * scale + bias).astype(np.float32)


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)


def log_softmax(x: np.ndarray) -> np.ndarray:
    finite = x.max(axis=-1, keepdims=True)
    shifted = x - finite
    return (shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))).astype(np.float32)


@dataclass
class Result:
    """Greedy output: the tokens (the final </s> included when emitted), each step's log-probabilities over the
    whole target vocabulary (-inf outside the shortlist and at <unk>), and each step's soft alignment (head 0 of
    the alignment layer's cross-attention, over the source positions)."""

    tokens: list[int]
    step_logprobs: list[np.ndarray] = field(default_factory=list)
    alignments: list[np.ndarray] = field(default_factory=list)

    @property
    def token_logprobs(self) -> list[float]:
        return [float(lp[t]) for lp, t in zip(self.step_logprobs, self.tokens)]

    @property
    def text_ids(self) -> list[int]:
        """The tokens without the final </s> (what is detokenised)."""
        return self.tokens[:-1] if self.tokens and self.tokens[-1] == EOS else list(self.tokens)


class Forward:
    """The model's computation, float or int8-imitating; `observe(weight name, activation)` sees the input of every
    multiply by a weight matrix (the statistics Marian's --dump-quantmult collects for alphas). `saturate`: the int8
    products as a CPU without VNNI computes them (int8_kernel.product)."""

    def __init__(
        self, checkpoint: Checkpoint, int8: bool = False, observe: Observer | None = None, saturate: bool = False
    ) -> None:
        self.ck = checkpoint
        self.arch = checkpoint.arch
        self.p = checkpoint.params
        self.int8 = int8 and checkpoint.is_int8
        self.observe = observe
        self.saturate = saturate
        self._output_q: tuple[np.ndarray, np.float32] | None = None
        self._risky: dict[str, int8_kernel.RiskyPairs] = {}  # per weight, kept only when saturating

    def _risky_pairs(self, name: str, q: np.ndarray) -> int8_kernel.RiskyPairs | None:
        if not self.saturate:
            return None
        if name not in self._risky:
            self._risky[name] = int8_kernel.RiskyPairs.of(q)
        return self._risky[name]

    # --- multiplies ---

    def _quantise_a(self, x: np.ndarray, name: str) -> tuple[np.ndarray, np.float32]:
        alpha = np.float32(self.ck.alphas[name]) if self.ck.alphas else np.float32(127.0) / np.float32(np.abs(x).max())
        return np.clip(np.rint(x * alpha), -127, 127).astype(np.float32), alpha

    def matmul(self, x: np.ndarray, name: str, bias: str | None = None) -> np.ndarray:
        """x @ W (+ b) for the weight `name` ([in, out])."""
        if self.observe is not None:
            self.observe(name, x)
        if self.int8 and name in self.ck.int8:
            a_q, alpha = self._quantise_a(x, name)
            w = self.ck.int8[name]
            product = int8_kernel.product(a_q, w.q, saturate=self.saturate, risky=self._risky_pairs(name, w.q))
            y = product * (np.float32(1.0) / (alpha * w.qm))
        else:
            y = x @ self.p[name]
        if bias is not None:
            y = y + self.p[bias]
        return y.astype(np.float32)

    def output(self, h: np.ndarray, columns: np.ndarray | None) -> np.ndarray:
        """Logits over `columns` (all target ids when None): h @ table[columns].T + b[columns]."""
        name = self.arch.output_weight
        table = self.p[name]
        if self.observe is not None:
            self.observe(name, h)
        bias = self.p["decoder_ff_logit_out_b"]
        if columns is not None:
            bias = bias[columns]
        if self.int8:
            if self._output_q is None:
                if name in self.ck.int8 and "Wemb" not in name:
                    raw = self.ck.int8[name]
                    self._output_q = (raw.q.astype(np.float32), raw.qm)
                else:  # a dequantised (or float) table is quantised again at run time: qm' = 127 / max|W|
                    qm = np.float32(127.0) / np.float32(np.abs(table).max())
                    self._output_q = (np.clip(np.rint(table * qm), -127, 127).astype(np.float32), qm)
            q, qm = self._output_q
            alpha_name = name if name in self.ck.alphas else "none"
            a_q, alpha = self._quantise_a(h, alpha_name) if self.ck.alphas else self._quantise_a(h, name)
            w = q if columns is None else q[columns]
            risky = self._risky_pairs("output", q.T)
            if risky is not None and columns is not None:
                risky = risky.of_columns(columns, q.shape[0])
            product = int8_kernel.product(a_q, w.T, saturate=self.saturate, risky=risky)
            return (product * (np.float32(1.0) / (alpha * qm)) + bias).astype(np.float32)
        w = table if columns is None else table[columns]
        return (h @ w.T + bias).astype(np.float32)

    # --- blocks ---

    def attention(
        self, prefix: str, q_in: np.ndarray, kv: tuple[np.ndarray, np.ndarray]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Multi-head attention (heads are contiguous slices), post-norm residual; returns (output, head-0 weights)."""
        heads, d = self.arch.heads, self.arch.head_dim
        q = self.matmul(q_in, f"{prefix}_Wq", f"{prefix}_bq")
        k, v = kv
        t_q, t_k = q.shape[0], k.shape[0]
        qh = q.reshape(t_q, heads, d).transpose(1, 0, 2)
        kh = k.reshape(t_k, heads, d).transpose(1, 0, 2)
        vh = v.reshape(t_k, heads, d).transpose(1, 0, 2)
        scores = (qh @ kh.transpose(0, 2, 1)) * np.float32(1.0 / math.sqrt(d))
        weights = softmax(scores.astype(np.float32))
        joined = (weights @ vh).transpose(1, 0, 2).reshape(t_q, heads * d)
        out = self.matmul(joined, f"{prefix}_Wo", f"{prefix}_bo")
        return layer_norm(out + q_in, self.p[f"{prefix}_Wo_ln_scale"], self.p[f"{prefix}_Wo_ln_bias"]), weights[0]

    def keys_values(self, prefix: str, ctx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.matmul(ctx, f"{prefix}_Wk", f"{prefix}_bk"), self.matmul(ctx, f"{prefix}_Wv", f"{prefix}_bv")

    def ffn(self, prefix: str, x: np.ndarray) -> np.ndarray:
        hidden = np.maximum(self.matmul(x, f"{prefix}_W1", f"{prefix}_b1"), np.float32(0))
        out = self.matmul(hidden, f"{prefix}_W2", f"{prefix}_b2")
        return layer_norm(out + x, self.p[f"{prefix}_ffn_ln_scale"], self.p[f"{prefix}_ffn_ln_bias"])

    def encode(self, source_ids: Sequence[int]) -> np.ndarray:
        e = self.arch.dim_emb
        table = self.p[self.arch.src_embedding]
        x = table[np.asarray(source_ids, dtype=np.int64)] * np.float32(math.sqrt(e)) + positions(0, len(source_ids), e)
        x = x.astype(np.float32)
        for layer in range(1, self.arch.enc_depth + 1):
            prefix = f"encoder_l{layer}_self"
            x, _ = self.attention(prefix, x, self.keys_values(prefix, x))
            x = self.ffn(f"encoder_l{layer}_ffn", x)
        return x

    def ssru(self, layer: int, x: np.ndarray, c_prev: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        prefix = f"decoder_l{layer}_rnn"
        x_tilde = self.matmul(x, f"{prefix}_W")
        f = self.matmul(x, f"{prefix}_Wf", f"{prefix}_bf")
        gate = (np.float32(1.0) / (np.float32(1.0) + np.exp(-f))).astype(np.float32)
        c = (gate * c_prev + (np.float32(1.0) - gate) * x_tilde).astype(np.float32)
        h = np.maximum(c, np.float32(0))
        return layer_norm(h + x, self.p[f"{prefix}_ffn_ln_scale"], self.p[f"{prefix}_ffn_ln_bias"]), c


def allowed_columns(
    checkpoint: Checkpoint, source_ids: Sequence[int], shortlist: np.ndarray | None
) -> np.ndarray | None:
    return None if shortlist is None else np.asarray(shortlist, dtype=np.int64)


def decode(
    checkpoint: Checkpoint,
    source_ids: Sequence[int],
    shortlist: np.ndarray | None = None,
    *,
    int8: bool = False,
    saturate: bool = False,
    observe: Observer | None = None,
    max_length_factor: float = MAX_LENGTH_FACTOR,
) -> Result:
    """Greedy decoding of one sentence (`source_ids` end with </s>); `shortlist` is the sorted target ids allowed
    (engine.families.bergamot.shortlist.Shortlist.allowed), log-softmax then runs over those columns only.
    `saturate` (with `int8`): the products as on a CPU without VNNI (int8_kernel.product)."""
    fw = Forward(checkpoint, int8=int8, observe=observe, saturate=saturate)
    arch = checkpoint.arch
    e = arch.dim_emb
    memory = fw.encode(source_ids)
    cached = [fw.keys_values(f"decoder_l{layer}_context", memory) for layer in range(1, arch.dec_depth + 1)]
    states = [np.zeros((1, e), dtype=np.float32) for _ in range(arch.dec_depth)]
    columns = None if shortlist is None else np.asarray(shortlist, dtype=np.int64)
    trg_table = checkpoint.params[arch.trg_embedding]
    max_len = max_length_factor * len(source_ids)
    result = Result(tokens=[])
    previous: int | None = None
    for t in range(10_000):
        emb = np.zeros((1, e), dtype=np.float32) if previous is None else trg_table[[previous]]
        x = (emb * np.float32(math.sqrt(e)) + positions(t, 1, e)).astype(np.float32)
        alignment = None
        for layer in range(1, arch.dec_depth + 1):
            x, states[layer - 1] = fw.ssru(layer, x, states[layer - 1])
            x, weights = fw.attention(f"decoder_l{layer}_context", x, cached[layer - 1])
            if layer == arch.alignment_layer:
                alignment = weights[0]
            x = fw.ffn(f"decoder_l{layer}_ffn", x)
        logits = fw.output(x, columns)[0]
        if columns is None:
            logits[UNK] = -np.inf
            full = log_softmax(logits[None, :])[0]
        else:
            logits = np.where(columns == UNK, -np.inf, logits).astype(np.float32)
            full = np.full(arch.trg_vocab_size, -np.inf, dtype=np.float32)
            full[columns] = log_softmax(logits[None, :])[0]
        token = int(np.argmax(full))
        result.tokens.append(token)
        result.step_logprobs.append(full)
        if alignment is not None:
            result.alignments.append(alignment)
        # beam_search.cpp: before step t's beam is added the history holds the start beam and t steps; t + 1
        # reaching max-length-factor x the source width (</s> included) ends the search after this token
        if token == EOS or len(result.tokens) >= max_len:
            break
        previous = token
    return result


def greedy(checkpoint: Checkpoint, source_ids: Sequence[int], shortlist: np.ndarray | None = None) -> list[int]:
    """The float model's greedy tokens for one sentence (final </s> included when emitted)."""
    return decode(checkpoint, source_ids, shortlist).tokens
