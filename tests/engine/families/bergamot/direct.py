"""A direct numpy computation of the Bergamot architecture, written from the facts file (§2e) and nothing of the
graph builder: random parameters by Marian name, the encoder, one SSRU decoder step, greedy decoding. In float64
for the FP32 graphs' check, or as Marian's int8 arithmetic (activations clip(round(A·alpha), ±127), int8 weights,
rescaled by 1/(alpha·qm)) for the INT8 graphs' check: on a CPU without VNNI with the u8·s8 kernel's int16 saturation
of each adjacent pair's sum (vpmaddubsw), pair by pair, as ORT computes there.
"""

from __future__ import annotations

import math

import numpy as np

from engine.families.bergamot.architecture import Architecture

UNK = 1
EOS = 0


def random_architecture(**changes) -> Architecture:
    """A tiny model; tied-all unless `changes` set a tying flag or separate vocabulary sizes."""
    base: dict = dict(dim=32, ffn=64, heads=4, encoder_layers=2, decoder_layers=2, source_vocab=60, target_vocab=60)
    base["tied_all"] = not ({"tied", "tied_src", "source_vocab"} & set(changes))
    base.update(changes)
    return Architecture(**base)  # type: ignore[arg-type]


def parameter_names(arch: Architecture) -> list[str]:
    """Every parameter the computation reads, by Marian name (facts §2c)."""
    names = sorted({arch.source_table, arch.target_table, arch.output_table, "decoder_ff_logit_out_b"})
    for i in range(1, arch.encoder_layers + 1):
        p = f"encoder_l{i}"
        names += [f"{p}_self_{w}" for w in ("Wq", "bq", "Wk", "bk", "Wv", "bv", "Wo", "bo")]
        names += [f"{p}_self_Wo_ln_scale", f"{p}_self_Wo_ln_bias"]
        names += [f"{p}_ffn_{w}" for w in ("W1", "b1", "W2", "b2")]
        names += [f"{p}_ffn_ffn_ln_scale", f"{p}_ffn_ffn_ln_bias"]
    for i in range(1, arch.decoder_layers + 1):
        p = f"decoder_l{i}"
        names += [f"{p}_rnn_W", f"{p}_rnn_Wf", f"{p}_rnn_bf", f"{p}_rnn_ffn_ln_scale", f"{p}_rnn_ffn_ln_bias"]
        names += [f"{p}_context_{w}" for w in ("Wq", "bq", "Wk", "bk", "Wv", "bv", "Wo", "bo")]
        names += [f"{p}_context_Wo_ln_scale", f"{p}_context_Wo_ln_bias"]
        names += [f"{p}_ffn_{w}" for w in ("W1", "b1", "W2", "b2")]
        names += [f"{p}_ffn_ffn_ln_scale", f"{p}_ffn_ffn_ln_bias"]
    return names


def random_params(arch: Architecture, seed: int = 0, scale: float = 1.0) -> dict[str, np.ndarray]:
    """Every parameter the architecture reads, Marian's shapes ([1,N] biases and LN parameters)."""
    rng = np.random.default_rng(seed)
    e, f = arch.dim, arch.ffn
    out: dict[str, np.ndarray] = {}

    def matrix(rows: int, cols: int) -> np.ndarray:
        return (rng.standard_normal((rows, cols)) * scale / math.sqrt(rows)).astype(np.float32)

    def vector(n: int, around: float = 0.0, spread: float = 0.1) -> np.ndarray:
        return (around + spread * rng.standard_normal((1, n))).astype(np.float32)

    for name in parameter_names(arch):
        inner = arch.decoder_ffn_dim if name.startswith("decoder") else f
        if name in ("Wemb", "encoder_Wemb", "decoder_Wemb", "decoder_ff_logit_out_Wt"):
            vocab = arch.source_vocab if name == "encoder_Wemb" else arch.target_vocab
            out[name] = (rng.standard_normal((vocab, e)) / math.sqrt(e)).astype(np.float32)
        elif name == "decoder_ff_logit_out_b":
            out[name] = vector(arch.target_vocab, spread=0.5)
        elif name.endswith("_ln_scale"):
            out[name] = vector(e, 1.0)
        elif name.endswith("_ln_bias"):
            out[name] = vector(e)
        elif name.endswith("_W1"):
            out[name] = matrix(e, inner)
        elif name.endswith("_W2"):
            out[name] = matrix(inner, e)
        elif name.endswith("_b1"):
            out[name] = vector(inner)
        elif "_W" in name[-4:]:
            out[name] = matrix(e, e)
        else:  # biases
            out[name] = vector(e)
    return out


def positions(start: int, count: int, dim: int) -> np.ndarray:
    """pos(p)_i = sin(p·exp(−i·ln(10000)/(E/2−1))) for i < E/2, the cos in the second half (float64)."""
    half = dim // 2
    freq = np.exp(-np.arange(half) * math.log(10000.0) / (half - 1))
    v = np.arange(start, start + count)[:, None] * freq[None, :]
    return np.concatenate([np.sin(v), np.cos(v)], axis=1)


def layer_norm(x: np.ndarray, scale: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    centred = x - mean
    return scale.reshape(-1) * (centred / np.sqrt((centred * centred).mean(-1, keepdims=True) + 1e-6)) + bias.reshape(
        -1
    )


def softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(-1, keepdims=True)


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def quantize(w: np.ndarray) -> tuple[np.ndarray, float]:
    qm = np.float32(127.0) / np.float32(np.abs(w).max())
    return np.clip(np.rint(w * qm), -128, 127).astype(np.int8), float(qm)


def int8_product(xq: np.ndarray, q: np.ndarray, saturate: bool) -> np.ndarray:
    """xq · q in int64 for quantised activations (±127) and int8 weights; with `saturate`, as vpmaddubsw computes
    it: (xq + 127) · q with every adjacent pair (k, k+1) summed into an int16 that saturates, minus 127·Σq."""
    if not saturate:
        return xq.astype(np.int64) @ q.astype(np.int64)
    shifted = xq.astype(np.int64) + 127
    weights = q.astype(np.int64)
    if weights.shape[0] % 2:
        shifted = np.concatenate([shifted, np.full((shifted.shape[0], 1), 127)], axis=1)
        weights = np.concatenate([weights, np.zeros((1, weights.shape[1]), np.int64)])
    pairs = shifted[:, 0::2, None] * weights[None, 0::2, :] + shifted[:, 1::2, None] * weights[None, 1::2, :]
    return np.clip(pairs, -32768, 32767).sum(axis=1) - 127 * weights.sum(axis=0)


class Direct:
    """The model computed directly. With `alphas`, every weight product is Marian's int8 one (float32), saturating
    where ORT's kernel does on this CPU (`saturate` None: as converter.int8_kernel.saturates() finds)."""

    def __init__(
        self,
        arch: Architecture,
        params: dict[str, np.ndarray],
        alphas: dict[str, float] | None = None,
        quantized: dict[str, tuple[np.ndarray, float]] | None = None,
        saturate: bool | None = None,
    ) -> None:
        self.arch, self.alphas = arch, alphas
        if saturate is None and alphas is not None:
            from engine.families.bergamot.converter.int8_kernel import saturates

            saturate = saturates()
        self.saturate = bool(saturate)
        self.dtype = np.float32 if alphas is not None else np.float64
        self.p = {k: np.asarray(v, dtype=self.dtype) for k, v in params.items()}
        self.quantized = dict(quantized or {})
        self.recorded: dict[str, float] = {}  # weight name -> largest |input| seen (calibration)
        a = arch
        self.source_table = self.p[a.source_table]
        self.target_table = self.p[a.target_table]
        self.output = self.p[a.output_table]

    def dense(self, x: np.ndarray, w: str, b: str | None) -> np.ndarray:
        self.recorded[w] = max(self.recorded.get(w, 0.0), float(np.abs(x).max()))
        bias = self.p[b].reshape(-1) if b else 0.0
        if self.alphas is None:
            return x @ self.p[w] + bias
        alpha = np.float32(self.alphas[w])
        q, qm = self.quantized[w] if w in self.quantized else quantize(self.p[w])
        xq = np.clip(np.rint(x.astype(np.float32) * alpha), -127, 127)
        product = int8_product(xq, q, self.saturate).astype(np.float32)
        return product * (np.float32(1.0) / (alpha * np.float32(qm))) + np.asarray(bias, np.float32)

    def embed(self, table: np.ndarray, ids: np.ndarray) -> np.ndarray:
        return table[ids]

    def attention(self, prefix: str, x: np.ndarray, k: np.ndarray, v: np.ndarray, bias: np.ndarray) -> tuple:
        """q from x [T,E]; k, v [S,E]; bias [S] → (output [T,E], probabilities [H,T,S])."""
        a = self.arch
        q = self.dense(x, f"{prefix}_Wq", f"{prefix}_bq")
        heads = []
        probs = []
        for h in range(a.heads):
            s = slice(h * a.head_dim, (h + 1) * a.head_dim)
            z = q[:, s] @ k[:, s].T / math.sqrt(a.head_dim) + bias[None, :]
            p = softmax(z)
            probs.append(p)
            heads.append(p @ v[:, s])
        out = self.dense(np.concatenate(heads, axis=1), f"{prefix}_Wo", f"{prefix}_bo")
        return out, np.stack(probs)

    def ffn(self, x: np.ndarray, prefix: str) -> np.ndarray:
        h = np.maximum(self.dense(x, f"{prefix}_ffn_W1", f"{prefix}_ffn_b1"), 0.0)
        h = self.dense(h, f"{prefix}_ffn_W2", f"{prefix}_ffn_b2")
        return layer_norm(h + x, self.p[f"{prefix}_ffn_ffn_ln_scale"], self.p[f"{prefix}_ffn_ffn_ln_bias"])

    def encode(self, ids: list[int]) -> tuple[list[tuple[np.ndarray, np.ndarray]], np.ndarray]:
        """One sentence's ids (EOS included) → per decoder layer (K, V) [S,E], and the encoder output."""
        a = self.arch
        e = a.dim
        x = self.embed(self.source_table, np.array(ids)) * math.sqrt(e) + positions(0, len(ids), e)
        zero = np.zeros(len(ids))
        for i in range(1, a.encoder_layers + 1):
            p = f"encoder_l{i}_self"
            k = self.dense(x, f"{p}_Wk", f"{p}_bk")
            v = self.dense(x, f"{p}_Wv", f"{p}_bv")
            out, _ = self.attention(p, x, k, v, zero)
            x = layer_norm(out + x, self.p[f"{p}_Wo_ln_scale"], self.p[f"{p}_Wo_ln_bias"])
            x = self.ffn(x, f"encoder_l{i}")
        kv = []
        for i in range(1, a.decoder_layers + 1):
            p = f"decoder_l{i}_context"
            kv.append((self.dense(x, f"{p}_Wk", f"{p}_bk"), self.dense(x, f"{p}_Wv", f"{p}_bv")))
        return kv, x

    def step(
        self, previous: int | None, t: int, states: list[np.ndarray], kv: list, shortlist: np.ndarray | None = None
    ) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
        """One decoder step for one row: `previous` None at t = 0 (zero embedding) → logits over the shortlist
        (or the vocabulary), the new SSRU cells, head 0's alignment of the last layer."""
        a = self.arch
        e = a.dim
        emb = np.zeros(e) if previous is None else self.embed(self.target_table, np.array([previous]))[0]
        q = (emb * math.sqrt(e) + positions(t, 1, e)[0])[None, :]
        new_states = []
        probs = None
        for i in range(1, a.decoder_layers + 1):
            p = f"decoder_l{i}"
            x = self.dense(q, f"{p}_rnn_W", None)
            f = self.dense(q, f"{p}_rnn_Wf", f"{p}_rnn_bf")
            s = sigmoid(f)
            c = s * states[i - 1] + (1 - s) * x
            new_states.append(c)
            q = layer_norm(np.maximum(c, 0) + q, self.p[f"{p}_rnn_ffn_ln_scale"], self.p[f"{p}_rnn_ffn_ln_bias"])
            k, v = kv[i - 1]
            out, layer_probs = self.attention(f"{p}_context", q, k, v, np.zeros(len(k)))
            if i == a.alignment_from:
                probs = layer_probs
            q = layer_norm(out + q, self.p[f"{p}_context_Wo_ln_scale"], self.p[f"{p}_context_Wo_ln_bias"])
            q = self.ffn(q, p)
        ids = np.arange(a.target_vocab) if shortlist is None else shortlist
        bias = self.p["decoder_ff_logit_out_b"].reshape(-1)[ids]
        self.recorded["output"] = max(self.recorded.get("output", 0.0), float(np.abs(q).max()))
        if self.alphas is None:
            logits = q @ self.output[ids].T + bias
        else:
            alpha = np.float32(self.alphas["output"])
            qw, qm = quantize(self.output)
            xq = np.clip(np.rint(q.astype(np.float32) * alpha), -127, 127)
            product = int8_product(xq, qw[ids].T, self.saturate).astype(np.float32)
            logits = product * (np.float32(1.0) / (alpha * np.float32(qm))) + bias
        assert probs is not None
        return logits[0], new_states, probs[0, 0]

    def greedy(self, ids: list[int], shortlist: np.ndarray | None = None, max_len: int | None = None) -> list[int]:
        """Argmax decoding: UNK never chosen, stop at EOS or after 2·len(ids) tokens (EOS not included)."""
        kv, _ = self.encode(ids)
        states = [np.zeros((1, self.arch.dim), self.dtype) for _ in range(self.arch.decoder_layers)]
        out: list[int] = []
        previous = None
        limit = max_len or 2 * len(ids)
        cols = np.arange(self.arch.target_vocab) if shortlist is None else shortlist
        for t in range(limit):
            logits, states, _ = self.step(previous, t, states, kv, shortlist)
            logits = np.where(cols == UNK, -np.inf, logits)
            token = int(cols[int(np.argmax(logits))])
            if token == EOS:
                break
            out.append(token)
            previous = token
        return out


def calibrate(direct: Direct, sentences: list[list[int]]) -> dict[str, float]:
    """Alphas as Marian's are meant: 127 / the largest |input| each weight product saw on these sentences."""
    for ids in sentences:
        direct.greedy(ids, max_len=6)
    return {name: 127.0 / value for name, value in direct.recorded.items()}
