"""Build the bundle's two ONNX graphs directly from a MarianMTModel's weights.

Why by hand rather than `torch.onnx.export`: a traced Marian decoder step is ~40 small nodes per layer (shape
arithmetic, transposes, concatenations); here each layer is built on onnxruntime's fused contrib kernels where they
are fast (`MultiHeadAttention` with the KV cache, `QuickGelu` = swish), which measured several times faster per step
with identical tokens. Layer norms are standard vectorised ops rather than the fused `SkipLayerNormalization`, whose
scalar per-row loop cost more than the 11 ops it replaces once a step has more than a few rows (`_Graph.add_norm`).
The layout:

* `encoder.onnx`: `inputs_embeds` [B,S,D] + `attention_mask` [B,S] → the cross-attention keys and values of every
  decoder layer, `cross_k.{i}` / `cross_v.{i}` [B,H,S,Dh]: computed once per sentence, not at every step.
* `decoder.onnx`: one step for every position. `inputs_embeds` [B,1,D], `encoder_attention_mask` [B,S], the
  cross K/V, and the self-attention cache `past_k.{i}` / `past_v.{i}` [B,H,max_len,Dh] of which the first
  `past_length` positions are filled (0 at the first step) → `logits` [B,V] and `present_k.{i}` / `present_v.{i}`,
  which are the same buffers with one more position written (MultiHeadAttention's buffer sharing: the engine binds
  one preallocated array as both, so the cache is never copied or reallocated). No `If` node, no first-step graph.
* The encoder mask and cross K/V have one row per sentence; the `batch` rows are each sentence's beams in a row
  (batch = sentences × beams; manifest `graphs.decoder.beams_share_cross`). Cross-attention reads each sentence's
  K/V once for all its beams, as one 4-token query: 5 sentences × 4 beams, 6 layers, 1 thread, 4.4 → 1.0 ms a
  step; 8 × 4, 2 threads, 3.8 → 1.1 ms (Intel Xeon). Repeated per beam, the K/V were read four times over (and
  held four times: 18 MB for 3 long sentences). Greedy decoding (one row per sentence) computes what it did.
* Q, K and V of self-attention are one [D,3D] matrix, so INT8 quantizes the activation once instead of three times.
* The 65001×512 embedding is the decoder's `lm_head` [V,D] (a Gemm with transB, so each token's row is contiguous);
  the engine gathers token embeddings from the same bytes, so the table is stored once (see quantize.py). With
  separate vocabularies or an untied output layer the head is the target vocabulary's own [V_target, D] matrix and
  the lookup tables are written beside it (quantize.Tables).
* The feed-forward activation is Marian's swish, or relu (opus-mt-tc-big) or gelu, each one kernel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.bundle.graph_writer import GraphWriter

LM_HEAD = "lm_head"


@dataclass(frozen=True)
class GraphIO:
    inputs: list[str]
    outputs: list[str]


def kv_names(prefix: str, layers: int) -> list[str]:
    return [f"{prefix}_{kind}.{i}" for i in range(layers) for kind in ("k", "v")]


def embed_scale(config) -> float:
    return math.sqrt(config.d_model) if config.scale_embedding else 1.0


def _np(tensor) -> np.ndarray:
    return np.ascontiguousarray(tensor.detach().cpu().numpy().astype(np.float32))


class _Graph(GraphWriter):
    """The shared graph writer (engine.bundle.graph_writer) with Marian's layers, built from torch modules."""

    def linear(self, x: str, layer, name: str) -> str:
        """x·Wᵀ + b (INT8: one DynamicQuantizeMatMul with its bias, as ORT fuses them)."""
        y = self.op("MatMul", [x, self.weight(f"{name}.weight", _np(layer.weight).T)])
        return self.op("Add", [y, self.weight(f"{name}.bias", _np(layer.bias))])

    def add_norm(self, x: str, residual: str, norm, name: str) -> str:
        """LayerNorm(residual + x), Marian's post-norm residual (x carries its linear's bias, added first as in torch),
        from standard ops: the mean, the mean square of the centred values, then centred × 1/sqrt(var + eps) × gamma
        + beta, torch's own rstd. ORT does not fuse this form back into its LayerNormalization kernels
        (tests/engine/convert/test_graphs.py checks).

        Why: onnxruntime's SkipLayerNormalization (and LayerNormalization, into which it fuses Add + LayerNorm) runs a
        scalar loop per row. One norm over 512, 1 thread, AMD EPYC Zen 4: 32 rows 82 → 24 µs, 160 rows (an encoder
        batch) 405 → 102 µs, 4 rows 11 → 7 µs, one row 3.2 → 4.6 µs; at 2 threads 44 → 30, 206 → 127, 9.5 → 7.3 and
        3.1 → 4.8 µs. Against torch's layer_norm on 4,096 random rows the outputs are bitwise equal for 51 % of the
        elements (SkipLayerNormalization: 18 %, with its E[x²] − mean² variance), with a third of its largest error."""
        axis = self.constant("norm.last_axis", np.array([-1], dtype=np.int64))
        epsilon = self.constant(f"norm.epsilon_{norm.eps:g}", np.array(norm.eps, dtype=np.float32))
        h = self.op("Add", [residual, x])
        centred = self.op("Sub", [h, self.op("ReduceMean", [h, axis], keepdims=1)])
        variance = self.op("ReduceMean", [self.op("Mul", [centred, centred]), axis], keepdims=1)
        rstd = self.op("Reciprocal", [self.op("Sqrt", [self.op("Add", [variance, epsilon])])])
        scaled = self.op("Mul", [self.op("Mul", [centred, rstd]), self.weight(f"{name}.gamma", _np(norm.weight))])
        return self.op("Add", [scaled, self.weight(f"{name}.beta", _np(norm.bias))])

    def qkv(self, x: str, attn, name: str) -> tuple[str, str, str, str]:
        """Self-attention Q, K, V from one matrix; their bias goes to MultiHeadAttention's fused bias input."""
        weight = np.concatenate([_np(attn.q_proj.weight).T, _np(attn.k_proj.weight).T, _np(attn.v_proj.weight).T], 1)
        bias = np.concatenate([_np(attn.q_proj.bias), _np(attn.k_proj.bias), _np(attn.v_proj.bias)])
        packed = self.op("MatMul", [x, self.weight(f"{name}.qkv.weight", weight)])
        q, k, v = self.op("Split", [packed], outputs=3, axis=2, num_outputs=3)
        return q, k, v, self.weight(f"{name}.qkv.bias", bias)

    def feed_forward(self, x: str, layer, name: str, activation: str) -> str:
        h = self.linear(x, layer.fc1, f"{name}.fc1")
        h = self.activation(h, activation)
        h = self.linear(h, layer.fc2, f"{name}.fc2")
        return self.add_norm(h, x, layer.final_layer_norm, f"{name}.ffn_norm")

    def activation(self, x: str, name: str) -> str:
        """transformers' ACT2FN[name] as one kernel: swish/silu x·sigmoid(x) (QuickGelu, alpha 1; opus-mt),
        relu (opus-mt-tc-big), gelu the exact erf form (com.microsoft.Gelu; transformers' "gelu" is not the tanh
        approximation)."""
        if name in ("swish", "silu"):
            return self.op("QuickGelu", [x], ms=True, alpha=1.0)
        if name == "relu":
            return self.op("Relu", [x])
        if name == "gelu":
            return self.op("Gelu", [x], ms=True)
        raise ValueError(f"activation {name!r} is not supported (Qiao builds {', '.join(ACTIVATIONS)})")


ACTIVATIONS = ("swish", "silu", "relu", "gelu")


def _activation(config) -> str:
    """The feed-forward activation, checked before any node is written."""
    if config.activation_function not in ACTIVATIONS:
        raise ValueError(
            f"activation {config.activation_function!r} is not supported (Qiao builds {', '.join(ACTIVATIONS)})"
        )
    return config.activation_function


def target_vocab_size(config) -> int:
    """Rows of the output layer: the target vocabulary (`decoder_vocab_size` when Marian keeps separate source and
    target vocabularies, else the one shared `vocab_size`)."""
    if getattr(config, "share_encoder_decoder_embeddings", True):
        return int(config.vocab_size)
    return int(config.decoder_vocab_size or config.vocab_size)


def build_encoder(model):
    """Encoder layers + the decoder's cross-attention K/V projections (computed once per sentence)."""
    from onnx import TensorProto, helper

    cfg = model.config
    activation = _activation(cfg)
    d, heads, layers = cfg.d_model, cfg.encoder_attention_heads, cfg.decoder_layers
    dec_heads = cfg.decoder_attention_heads
    g = _Graph()
    mask = g.op("Cast", ["attention_mask"], to=TensorProto.INT32)
    h = "inputs_embeds"
    for i, layer in enumerate(model.model.encoder.layers):
        name = f"encoder.{i}"
        q, k, v, bias = g.qkv(h, layer.self_attn, name)
        attn = g.op("MultiHeadAttention", [q, k, v, bias, mask], ms=True, num_heads=heads)
        out = g.linear(attn, layer.self_attn.out_proj, f"{name}.out")
        h = g.add_norm(out, h, layer.self_attn_layer_norm, f"{name}.attn_norm")
        h = g.feed_forward(h, layer, name, activation)
    cross = [layer.encoder_attn for layer in model.model.decoder.layers]
    weight = np.concatenate([np.concatenate([_np(a.k_proj.weight).T, _np(a.v_proj.weight).T], 1) for a in cross], 1)
    bias = np.concatenate([np.concatenate([_np(a.k_proj.bias), _np(a.v_proj.bias)]) for a in cross])
    kv = g.op("Add", [g.op("MatMul", [h, g.weight("cross.weight", weight)]), g.weight("cross.bias", bias)])
    kv = g.op("Reshape", [kv, g.weight("cross.shape", np.array([0, 0, 2 * layers, dec_heads, d // dec_heads]))])
    kv = g.op("Transpose", [kv], perm=[2, 0, 3, 1, 4])  # [2L, B, H, S, Dh]
    names = kv_names("cross", layers)
    parts = g.op("Split", [kv], outputs=2 * layers, axis=0, num_outputs=2 * layers)
    axis0 = g.weight("axis0", np.array([0], dtype=np.int64))
    for part, out_name in zip(parts, names):
        g.op("Squeeze", [part, axis0], outputs=[out_name])
    inputs = [
        helper.make_tensor_value_info("inputs_embeds", TensorProto.FLOAT, ["batch", "src", d]),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "src"]),
    ]
    outputs = [
        helper.make_tensor_value_info(n, TensorProto.FLOAT, ["batch", dec_heads, "src", d // dec_heads]) for n in names
    ]
    return g.model("marian_encoder", inputs, outputs), GraphIO([i.name for i in inputs], names)


def build_decoder(model):
    """One decoder step with the self-attention KV cache, ending in the output projection."""
    from onnx import TensorProto, helper

    cfg = model.config
    activation = _activation(cfg)
    d, heads, layers, vocab = cfg.d_model, cfg.decoder_attention_heads, cfg.decoder_layers, target_vocab_size(cfg)
    dh = d // heads
    g = _Graph()
    mask = g.op("Cast", ["encoder_attention_mask"], to=TensorProto.INT32)
    # rows → [sentences, rows per sentence, d]: a sentence's beams query its cross K/V as one sequence (see above)
    sentences = g.op("Shape", ["cross_k.0"], start=0, end=1)
    fold = g.op("Concat", [sentences, g.weight("fold_tail", np.array([-1, d], dtype=np.int64))], axis=0)
    unfold = g.weight("unfold_shape", np.array([-1, 1, d], dtype=np.int64))
    h = "inputs_embeds"
    for i, layer in enumerate(model.model.decoder.layers):
        name = f"decoder.{i}"
        q, k, v, bias = g.qkv(h, layer.self_attn, name)
        attn = g.op(
            "MultiHeadAttention",
            [q, k, v, bias, "", "", f"past_k.{i}", f"past_v.{i}", "past_length"],
            outputs=[f"{name}.self_attn", f"present_k.{i}", f"present_v.{i}"],
            ms=True,
            num_heads=heads,
        )[0]
        out = g.linear(attn, layer.self_attn.out_proj, f"{name}.out")
        h = g.add_norm(out, h, layer.self_attn_layer_norm, f"{name}.attn_norm")
        ca = layer.encoder_attn
        q = g.linear(h, ca.q_proj, f"{name}.cross_q")
        q = g.op("Reshape", [q, fold])
        attn = g.op("MultiHeadAttention", [q, f"cross_k.{i}", f"cross_v.{i}", "", mask], ms=True, num_heads=heads)
        attn = g.op("Reshape", [attn, unfold])
        out = g.linear(attn, ca.out_proj, f"{name}.cross_out")
        h = g.add_norm(out, h, layer.encoder_attn_layer_norm, f"{name}.cross_norm")
        h = g.feed_forward(h, layer, name, activation)
    flat = g.op("Reshape", [h, g.weight("flat_shape", np.array([-1, d], dtype=np.int64))])
    # [V, D]: one row per token, the embedding table's own layout (the decoder's table itself when tied)
    head = _np(model.get_output_embeddings().weight)
    bias = g.weight("final_logits_bias", _np(model.final_logits_bias).reshape(-1))
    g.op("Gemm", [flat, g.weight(LM_HEAD, head), bias], outputs=["logits"], transB=1)
    past, cross, present = kv_names("past", layers), kv_names("cross", layers), kv_names("present", layers)
    inputs = [
        helper.make_tensor_value_info("inputs_embeds", TensorProto.FLOAT, ["batch", 1, d]),
        helper.make_tensor_value_info("encoder_attention_mask", TensorProto.INT64, ["sentences", "src"]),
    ]
    inputs += [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["batch", heads, "max_len", dh]) for n in past]
    inputs += [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["sentences", heads, "src", dh]) for n in cross]
    inputs.append(helper.make_tensor_value_info("past_length", TensorProto.INT32, [1]))
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", vocab])]
    outputs += [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["batch", heads, "max_len", dh]) for n in present]
    return g.model("marian_decoder_step", inputs, outputs), GraphIO([i.name for i in inputs], ["logits", *present])


SCORER_BLOCK = 64  # the block size aimed at (a divisor of the vocabulary near it, else rows padded to a multiple)


def scorer_block(vocab: int) -> int:
    """The block size the scorer's two-stage top-k cuts each row into: a divisor of `vocab` in [32, 128] nearest
    `SCORER_BLOCK` (65001 = 3·47·461: 47), so the reshape needs no padding; 0 when none exists (then rows are
    padded with -inf to a multiple of `SCORER_BLOCK`)."""
    divisors = [d for d in range(32, 129) if vocab % d == 0]
    return min(divisors, key=lambda d: (abs(d - SCORER_BLOCK), d)) if divisors else 0


def build_scorer(vocab: int, renormalize: bool):
    """Beam-search scoring: the k best allowed tokens per hypothesis with their log-probabilities.

    transformers takes log_softmax(logits), then sets banned tokens (`mask` = -inf) aside; with
    `renormalize_logits` it normalises again over the allowed tokens, i.e. log_softmax(logits + mask).
    LogSoftmax (vectorised) measured 4× faster than ReduceLogSumExp here and matches torch more closely.

    The top k is taken in two stages, exactly: each row is cut into blocks, the k blocks with the largest maxima
    are kept (in token order), and the top k of their elements is the row's top k, ties included (an element of the
    top k lies in one of those blocks: otherwise k kept blocks each hold an element ranked above it). ONNX TopK over
    a whole [32, 65001] row set cost 6.3 ms of the scorer's 10.9 a step at 8 sentences × 4 beams, 1 thread, Intel
    Xeon; the block maxima are one vectorised ReduceMax (0.6 ms): 10.9 → 6.0 ms (2 threads 5.8 → 2.9), identical
    ids and values.
    """
    from onnx import TensorProto, helper

    g = _Graph()
    if renormalize:
        logprobs = g.op("LogSoftmax", [g.op("Add", ["logits", "mask"])], axis=-1)
    else:
        logprobs = g.op("Add", [g.op("LogSoftmax", ["logits"], axis=-1), "mask"])
    block = scorer_block(vocab)
    if not block:
        block = SCORER_BLOCK
        padding = g.weight("scorer.pads", np.array([0, 0, 0, -vocab % block], dtype=np.int64))
        logprobs = g.op("Pad", [logprobs, padding, g.weight("scorer.neg_inf", np.array(-np.inf, np.float32))])
    blocks_n = -(-vocab // block)
    blocks = g.op("Reshape", [logprobs, g.weight("scorer.blocks_shape", np.array([0, blocks_n, block], np.int64))])
    last = g.weight("scorer.last_axis", np.array([-1], dtype=np.int64))
    maxima = g.op("ReduceMax", [blocks, last], keepdims=0)
    kept = g.op("Min", ["k", g.weight("scorer.blocks_n", np.array([blocks_n], dtype=np.int64))])
    _, best = g.op("TopK", [maxima, kept], outputs=2, axis=-1, largest=1, sorted=1)
    in_order, _ = g.op("TopK", [best, kept], outputs=2, axis=-1, largest=0, sorted=1)  # lower ids first on ties
    chosen = g.op("Unsqueeze", [in_order, g.weight("scorer.block_axis", np.array([2], dtype=np.int64))])
    flat = g.weight("scorer.flat_shape", np.array([0, -1], dtype=np.int64))
    candidates = g.op("Reshape", [g.op("GatherND", [blocks, chosen], batch_dims=1), flat])
    first_ids = g.op("Mul", [chosen, g.weight("scorer.block", np.array(block, dtype=np.int64))])
    offsets = g.weight("scorer.offsets", np.arange(block, dtype=np.int64))
    ids = g.op("Reshape", [g.op("Add", [first_ids, offsets]), flat])
    _, where = g.op("TopK", [candidates, "k"], outputs=["logprobs", "TopK_where"], axis=-1, largest=1, sorted=1)
    g.op("GatherElements", [ids, where], outputs=["ids"], axis=-1)
    inputs = [
        helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["n", vocab]),
        helper.make_tensor_value_info("mask", TensorProto.FLOAT, [vocab]),
        helper.make_tensor_value_info("k", TensorProto.INT64, [1]),
    ]
    outputs = [
        helper.make_tensor_value_info("logprobs", TensorProto.FLOAT, ["n", "k"]),
        helper.make_tensor_value_info("ids", TensorProto.INT64, ["n", "k"]),
    ]
    return g.model("beam_scorer", inputs, outputs), GraphIO([i.name for i in inputs], ["logprobs", "ids"])
