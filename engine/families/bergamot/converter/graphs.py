"""The Bergamot family's two ONNX graphs, written node by node from a checkpoint's parameters (Marian names).

The computation is marian-dev's for `type: transformer` with `transformer-decoder-autoreg: rnn` and `dec-cell:
ssru` (src/models/transformer.h, src/rnn/cells.h), as ../shared/research/bergamot-format.md §2e gives it:

* `encoder.onnx`, packed: the batch's real tokens only, T of them over its B rows of up to S. `ids` [T] int64 (row
  after row, padding left out), `positions` [T,E] (each token's sinusoidal signal, computed by the engine in
  Marian's float32 arithmetic), `pad_index` [B,H,S] int64 (the packed head row t·H+h each padded slot's head
  reads; a padding slot reads a real token's: see below), `pack_index` [T,H] int64 (the padded head row
  (b·H+h)·S+s of each token's head) and `mask_bias` [B,S] float (0 on tokens, −99999999 on padding: Marian's
  additive log mask), all made by engine.families.bergamot.model.packed → the cross-attention keys `cross_k.{i}`
  [B,H,Dh,S] (already transposed for the step's QKᵀ) and values `cross_v.{i}` [B,H,S,Dh] of every decoder layer:
  computed once per batch. Embeddings × √E + positions (no embedding LayerNorm), then per layer
  x = LN(MHA(x)+x), x = LN(W2·relu(W1·x+b1)+b2 + x); no final LayerNorm.
  Every product, LayerNorm and the FFN run on the packed [T,E] rows (Marian pads every row to S; its padding rows'
  results are never read, so skipping them changes no real token's value: the products and LayerNorms are per
  row). Attention runs per sentence in the padded layout [B,H,S,Dh], reached by one Gather of the packed head rows
  [T·H,Dh] by `pad_index` (it lays them out as the padded graph's Reshape and Transpose did, at the same cost), and
  its output goes back to packed rows by `pack_index`; the decoder's cross K/V are computed on the packed rows and
  gathered into the padded layout the step reads. A padding slot's key and value
  are then a real token's instead of the padding embedding's: the mask gives it probability exactly 0 (exp of
  −99999999 underflows), so no result reads them, as none read Marian's. One difference: a model without alphas
  (`dynamic`, int8shiftAll) scales each product's activations by their maximum over the real tokens, where Marian's
  maximum also covers its padding rows (so there a sentence's result depends on its batch mates; here it does not).
* `decoder.onnx`: one step for every position. `tokens` [N] (the previous output ids), `embed_scale` [1] (√E, or 0
  at the first step: Marian's first input is a zero embedding, and 0·row = 0), `position` [1,E], `mask_bias`
  [Bs,S], the cross K/V, `state.{i}` [N,E] (each SSRU layer's cell c, carried before the relu) and the output
  layer over the target ids this batch may emit (its shortlist of K ids), gathered by the engine once per batch:
  `output_w` (INT8: int8 [E,K]; FP32: float [K,E]) and `output_b` [K] (engine.families.bergamot.output_table;
  the full table and bias stay in the graph as initializers its metadata names) → `logits` [N,K] over the
  shortlist, `next_state.{i}` and `alignment` [N,S] (head 0 of the cross-attention of the alignment layer, the
  last by default: Marian's soft alignment).
  Rows are sentences × rows per sentence (beams): the cross K/V have one row per sentence and a sentence's rows
  query them together.
* Heads are contiguous slices of the width; attention is softmax(QKᵀ·(1/√Dh) + mask)·V (the decoder step's Q
  carries the 1/√Dh, folded into its product: build_decoder); LayerNorm is
  (x−μ)/sqrt(mean((x−μ)²) + 1e−6)·scale + bias, as ORT's LayerNormalization in both graphs (`add_norm`).

Precision:

* FP32: every matrix as float32 (an int8 model's dequantised by the reader, `q/qm`; Wemb `q·(1/qm)`).
* INT8: Marian's `int8shiftAlphaAll`: each weight's own int8 values and its `qm` (or, for a float model, Marian's
  own quantisation `round(W·127/max|W|)`); each activation quantised with the model's stored alpha for that weight,
  `clip(round(A·alpha), −127, 127)` (a fixed scale, never a dynamic one), then an integer product rescaled by
  `1/(alpha·qm)` and the bias added: one com.microsoft `MatMulIntegerToFloat`, B prepacked by ORT. Products that
  read the same activation with the same alpha share one quantisation and one packed matrix. The embedding tables
  stay int8 with their scale (a lookup is `q·(1/qm)` in float32, exactly Marian's dequantisation); the output
  layer is the table re-quantised as Marian does at run time (`127/max|W|` over the float table), which for a
  tied int8 `Wemb` is its own int8 values, so the decoder keeps one int8 table for lookups and output.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from engine.bundle.graph_writer import GraphWriter
from engine.families.bergamot import output_table, prepacked_output
from engine.families.bergamot.architecture import Architecture, embed_scale

LN_EPSILON = 1e-6
MASK_FACTOR = np.float32(-99999999.0)  # max(lowest/2, −99999999) for float32 (transformer.h transposedLogMask)
PRECISIONS = ("fp32", "int8")

ENCODER_INPUTS = ["ids", "positions", "pad_index", "pack_index", "mask_bias"]


def cross_names(layers: int) -> list[str]:
    return [f"cross_{kind}.{i}" for i in range(layers) for kind in ("k", "v")]


def state_names(layers: int, prefix: str = "state") -> list[str]:
    return [f"{prefix}.{i}" for i in range(layers)]


def decoder_inputs(layers: int, shortlisted: bool = True) -> list[str]:
    names = ["tokens", "embed_scale", "position", "mask_bias", *cross_names(layers), *state_names(layers)]
    return [*names, *output_table.INPUTS] if shortlisted else names


def decoder_outputs(layers: int) -> list[str]:
    """The step's outputs as the manifest names them; an INT8 shortlisted step has two more after them, the output
    product's inputs (engine.families.bergamot.prepacked_output.OUTPUTS), which the engine finds in the graph."""
    return ["logits", *state_names(layers, "next_state"), "alignment"]


class WeightError(ValueError):
    """A parameter the computation needs is missing, misshapen, or (INT8) has no activation alpha."""


@dataclass
class Weights:
    """A checkpoint's parameters by Marian name.

    `params`: every parameter as float32 (an int8 model's dequantised). `quantized`: for an int8 model, the stored
    int8 values of each int8 parameter in its recorded orientation (`[in, out]` for a weight, `[V, E]` for a
    table) with its `qm` (values = q / qm). `alphas`: the activation multipliers, by weight name (with or without
    the `_QuantMultA` suffix); without them (`dynamic`) INT8 scales each product's activations by 127/max|A|, as
    Marian's `int8shiftAll` does."""

    params: Mapping[str, np.ndarray]
    quantized: Mapping[str, tuple[np.ndarray, float]] = field(default_factory=dict)
    alphas: Mapping[str, float] = field(default_factory=dict)
    dynamic: bool = False  # int8shiftAll: no alphas, each product's activations scaled by 127/max|A| at run time

    def float(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        if name not in self.params:
            raise WeightError(f"the model has no parameter {name!r}")
        array = np.asarray(self.params[name], dtype=np.float32)
        if array.size != math.prod(shape):
            raise WeightError(f"{name} has shape {list(array.shape)}, expected {list(shape)}")
        return np.ascontiguousarray(array.reshape(shape))

    def int8(self, name: str, shape: tuple[int, int]) -> tuple[np.ndarray, np.float32]:
        """The int8 values and qm Marian computes with: the stored ones, or its quantisation of the float."""
        stored = self.quantized.get(name)
        if stored is not None:
            q, qm = stored
            q = np.asarray(q, dtype=np.int8)
            if q.shape != shape:
                raise WeightError(f"{name}'s int8 values have shape {list(q.shape)}, expected {list(shape)}")
            return np.ascontiguousarray(q), np.float32(qm)
        return quantize(self.float(name, shape))

    def alpha(self, *names: str) -> np.float32 | None:
        """The first of `names` with a stored alpha (bergamot aborts without one, and so does this build); None
        for a `dynamic` model."""
        if self.dynamic:
            return None
        for name in names:
            for key in (f"{name}_QuantMultA", name):
                if key in self.alphas:
                    return np.float32(self.alphas[key])
        raise WeightError(f"no activation alpha for {names[0]} (the model's {names[0]}_QuantMultA)")


def from_checkpoint(checkpoint) -> tuple[Architecture, Weights]:
    """The architecture and weights of a checkpoint read by engine.families.bergamot.converter.reader (its
    Architecture's fields renamed; its int8 matrices as (q, qm) pairs; its alphas as they are)."""
    ra = checkpoint.arch
    arch = Architecture(
        dim=ra.dim_emb,
        ffn=ra.dim_ffn,
        decoder_ffn=ra.dec_dim_ffn,
        heads=ra.heads,
        encoder_layers=ra.enc_depth,
        decoder_layers=ra.dec_depth,
        source_vocab=ra.src_vocab_size,
        target_vocab=ra.trg_vocab_size,
        tied_all=ra.tied_embeddings_all,
        tied_src=ra.tied_embeddings_src,
        tied=ra.tied_embeddings,
        alignment_layer=ra.alignment_layer,
    )
    quantized = {name: (m.q, m.qm) for name, m in checkpoint.int8.items()}
    dynamic = not checkpoint.alphas  # intgemm8 without alphas (int8shiftAll), or a float model run at INT8
    return arch, Weights(checkpoint.params, quantized, dict(checkpoint.alphas), dynamic)


def quantize(weight: np.ndarray) -> tuple[np.ndarray, np.float32]:
    """Marian's int8 quantisation of a float matrix: qm = 127/max|W| (float32), q = round-half-even(W·qm)."""
    qm = np.float32(127.0) / np.float32(np.max(np.abs(weight)))
    q = np.clip(np.rint((weight * qm).astype(np.float32)), -128, 127).astype(np.int8)
    return q, qm


def unquant_multiplier(alpha: np.float32, qm: np.float32) -> np.float32:
    """intgemm_interface.h: `1.0f/(aQuantMult*bQuantMult)` in float32."""
    return np.float32(np.float32(1.0) / np.float32(np.float32(alpha) * np.float32(qm)))


class _Builder:
    """Marian's layers over one graph writer (engine.bundle.graph_writer) at one precision."""

    def __init__(self, arch: Architecture, weights: Weights, precision: str) -> None:
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
        self.arch, self.w, self.precision = arch, weights, precision
        self.g = GraphWriter()
        self._widths: dict[str, int] = {}  # activations narrower or wider than the model (the FFN's inner one)
        # (activation, alpha or None) -> its quantised values and their scale (a constant or, dynamic, a tensor)
        self._quantized: dict[tuple[str, float | None], tuple[str, str]] = {}
        # (parts of a product, part) -> its padded head rows' index into the product's rows (`padded_parts`)
        self._part_indices: dict[tuple[int, int], str] = {}

    # -- products -----------------------------------------------------------------------------------------------
    def linear(
        self, x: str, parts: Sequence[tuple[str, str | None, int]], label: str, factor: np.float32 | None = None
    ) -> list[str]:
        """x·W + b for every (weight name, bias name or None, output width) of `parts`, which all read `x`;
        one product per group that can share it (all of them in FP32; those with the same alpha in INT8). A
        `factor` multiplies the result, folded into the constants (FP32: W·c and b·c; INT8: the rescale and b·c)."""
        d_in = self._width(x)
        groups = self._groups(parts)
        out: dict[str, str] = {}
        for n, group in enumerate(groups):
            name = f"{label}.{n}" if len(groups) > 1 else label
            y = self._product(x, d_in, group, name, factor)
            widths = [width for _, _, width in group]
            pieces = [y] if len(group) == 1 else self.g.op("Split", [y, self._split(widths)], len(group), axis=-1)
            for (weight, _, _), piece in zip(group, pieces if len(group) > 1 else [y]):
                out[weight] = piece
        return [out[weight] for weight, _, _ in parts]

    def _groups(self, parts: Sequence[tuple[str, str | None, int]]) -> list[list[tuple[str, str | None, int]]]:
        """`parts` by the product they can share: all of them in FP32, those with the same alpha in INT8."""
        if self.precision == "fp32":
            return [list(parts)]
        by_alpha: dict[float | None, list] = {}
        for part in parts:
            alpha = self.w.alpha(part[0])
            by_alpha.setdefault(None if alpha is None else float(alpha), []).append(part)
        return list(by_alpha.values())

    def padded_parts(
        self, x: str, parts: Sequence[tuple[str, str | None, int]], label: str, keys: set[int]
    ) -> list[str]:
        """The padded heads of each E-wide part of x·[W1|W2|…] + b (`padded_heads`; keys, the parts numbered in
        `keys`, laid out [B,H,Dh,S]). Where the parts share one product, each part's heads are gathered straight
        from the product's head rows [T·P·H,Dh] (row t·P·H + j·H + h for token t, part j, head h: `pad_index` moved
        by t·(P−1)·H + j·H), without the Split that copies the parts apart first: the same values, one copy of the
        product's output fewer per product (6 QKV and the cross K/V's 8 parts in the encoder)."""
        groups = self._groups(parts)
        if len(groups) > 1 or any(width != self.arch.dim for _, _, width in parts):
            pieces = self.linear(x, parts, label)
            return [self.padded_heads(piece, keys_last=j in keys) for j, piece in enumerate(pieces)]
        g, count = self.g, len(parts)
        y = self._product(x, self._width(x), groups[0], label, None)
        rows = g.op("Reshape", [y, g.const("head_rows", [-1, self.arch.head_dim], np.int64)])
        out = []
        for j in range(count):
            part = g.op("Gather", [rows, self._part_index(count, j)], axis=0)  # [B,H,S,Dh]
            out.append(g.op("Transpose", [part], perm=[0, 1, 3, 2]) if j in keys else part)
        return out

    def _part_index(self, count: int, j: int) -> str:
        """Part j's head rows among `count` parts: pad_index + t·(count−1)·H + j·H with t = pad_index // H (each
        made once: every layer's product of as many parts reads the same)."""
        if (count, j) not in self._part_indices:
            g, heads = self.g, self.arch.heads
            if j == 0:
                token = g.op("Div", ["pad_index", g.const("heads_i64", heads, np.int64)])
                stride = g.const(f"part_stride_{count}", (count - 1) * heads, np.int64)
                index = g.op("Add", ["pad_index", g.op("Mul", [token, stride])])
            else:
                offset = g.const(f"part_offset_{j * heads}", j * heads, np.int64)
                index = g.op("Add", [self._part_index(count, 0), offset])
            self._part_indices[count, j] = index
        return self._part_indices[count, j]

    def _product(
        self, x: str, d_in: int, group: list[tuple[str, str | None, int]], name: str, factor: np.float32 | None
    ) -> str:
        bias = np.concatenate(
            [self.w.float(b, (width,)) if b else np.zeros(width, np.float32) for _, b, width in group]
        )
        if factor is not None:
            bias = (bias * np.float32(factor)).astype(np.float32)
        with_bias = any(b for _, b, _ in group)
        g = self.g
        if self.precision == "fp32":
            weight = np.concatenate([self.w.float(w, (d_in, width)) for w, _, width in group], axis=1)
            if factor is not None:
                weight = (weight * np.float32(factor)).astype(np.float32)
            y = g.op("MatMul", [x, g.weight(f"{name}.W", weight)])
            return g.op("Add", [y, g.weight(f"{name}.b", bias)]) if with_bias else y
        alpha = self.w.alpha(group[0][0])
        qs, scales = [], []
        for w, _, width in group:
            q, qm = self.w.int8(w, (d_in, width))
            qs.append(q)
            multiplier = np.float32(1.0) / qm if alpha is None else unquant_multiplier(alpha, qm)
            scales.append(np.full(width, multiplier, dtype=np.float32))
        scale = np.concatenate(scales)
        if factor is not None:
            scale = (scale * np.float32(factor)).astype(np.float32)
        if np.all(scale == scale[0]):  # one multiplier: ORT's per-tensor kernel is the faster one
            scale = scale[:1].reshape(())
        bias_name = g.weight(f"{name}.b", bias) if with_bias else ""
        return self.integer_product(x, alpha, g.weight(f"{name}.Wq", np.concatenate(qs, axis=1)), scale, bias_name)

    def integer_product(self, x: str, alpha: np.float32 | None, matrix: str, scale: np.ndarray, bias: str) -> str:
        """(clip(round(x·alpha), ±127) · matrix) · scale + bias (`scale`: 1/(alpha·qm), or 1/qm with a dynamic
        alpha, whose 1/alpha is then the activation's scale). The activation goes in as intgemm's shifted unsigned
        form (value + 127, zero point 127): the same integer product, and ORT's u8·s8 kernel (its s8·s8 one
        measured 20-50× slower here)."""
        g = self.g
        quantized, a_scale = self.quantize_activation(x, alpha)
        inputs = [
            quantized,
            matrix,
            a_scale,
            g.weight(f"{matrix}.scale", scale.astype(np.float32)),
            g.const("q_zero", 127, np.uint8),
            "",
            bias,
        ]
        return g.op("MatMulIntegerToFloat", inputs, ms=True)

    def quantize_activation(self, x: str, alpha: np.float32 | None) -> tuple[str, str]:
        """clip(round(x·alpha), −127, 127) + 127 as uint8, and the scale the product's integers take besides the
        weight's: Marian's A quantisation (intgemm rounds to nearest even, clamps at −127, never −128, and shifts by
        127 itself). With a stored alpha, two ops: the clip at ±127/alpha, then QuantizeLinear with scale 1/alpha
        (x/(1/alpha) rather than x·alpha: at most a rare half-way case rounds the other way; intgemm's own kernels
        differ more between CPUs); the scale is then 1 (the weight's carries 1/(alpha·qm)). Without (`dynamic`,
        int8shiftAll): alpha = 127/max|x| over the whole tensor (every row of the step, as Marian's batch), scale
        max|x|/127."""
        key = (x, None if alpha is None else float(alpha))
        if key not in self._quantized:
            g = self.g
            zero = g.const("q_zero", 127, np.uint8)
            if alpha is None:
                peak = g.op("ReduceMax", [g.op("Abs", [x])], keepdims=0)
                peak = g.op("Max", [peak, g.const("tiny", np.finfo(np.float32).tiny, np.float32)])
                scale = g.op("Div", [peak, g.const("int8_max", 127.0, np.float32)])
                self._quantized[key] = g.op("QuantizeLinear", [x, scale, zero]), scale
            else:
                bound = np.float32(127.0) / np.float32(alpha)
                label = f"{float(alpha)!r}"
                low = g.const(f"clip_lo_{label}", -bound, np.float32)
                high = g.const(f"clip_hi_{label}", bound, np.float32)
                scale = g.const(f"a_scale_{label}", np.float32(1.0) / np.float32(alpha), np.float32)
                clipped = g.op("Clip", [x, low, high])
                self._quantized[key] = g.op("QuantizeLinear", [clipped, scale, zero]), g.const("one", 1.0, np.float32)
        return self._quantized[key]

    def _split(self, widths: list[int]) -> str:
        return self.g.const("split_" + "_".join(map(str, widths)), widths, np.int64)

    def _width(self, x: str) -> int:
        return self._widths.get(x, self.arch.dim)

    # -- layers -------------------------------------------------------------------------------------------------
    def add_norm(self, x: str, residual: str, prefix: str) -> str:
        """LN(x + residual) with `{prefix}_ln_scale/bias`: Marian's LayerNorm (tensor_operators.cpp
        LayerNormalizationImpl: the mean, the mean square of the centred values, sigma = sqrt(that + eps),
        scale·((x − mean)/sigma) + bias) as ORT's one LayerNormalization node rather than the nine standard ops
        that write it step by step: its values differ in the last bits (FP32 cross K/V of the full-shape model
        within 3.8e-6; INT8 ones where that flips an activation's int8 rounding downstream), and it is faster in
        both graphs (1 thread, AMD EPYC Zen 4): the decoder step 0.47 -> 0.41 ms (base-memory dims, 1 row); the
        packed encoder (full-shape model, INT8, in-process A/B in both orders, wall medians) 4 % less for the
        bench paragraph's 5 sentences (13.9 -> 13.4 ms) and 5-6 % less for a single sentence (3.1 -> 2.9 ms), at
        2 threads 5 % and 9 % less; FP32 2-3 % less."""
        g, e = self.g, self.arch.dim
        h = g.op("Add", [x, residual])
        scale = g.weight(f"{prefix}_ln_scale", self.w.float(f"{prefix}_ln_scale", (e,)))
        bias = g.weight(f"{prefix}_ln_bias", self.w.float(f"{prefix}_ln_bias", (e,)))
        return g.op("LayerNormalization", [h, scale, bias], axis=-1, epsilon=LN_EPSILON)

    def attention_scale(self) -> np.float32:
        """1/√Dh in float32."""
        return np.float32(1.0) / np.float32(math.sqrt(np.float32(self.arch.head_dim)))

    def attend(
        self, q: str, k_t: str, v: str, mask: str, heads_first: bool = False, scaled: bool = False
    ) -> tuple[str, str]:
        """softmax(q·kᵀ·(1/√Dh) + mask)·v for q [B,H,T,Dh], kᵀ [B,H,Dh,S], v [B,H,S,Dh], mask [B,1,1,S]
        → (output [B,T,H,Dh], or [B,H,T,Dh] with `heads_first`; the probabilities [B,H,T,S]). `scaled`: q carries
        the 1/√Dh already (its product's constants: see build_decoder), so the scores are a plain MatMul."""
        g = self.g
        z = g.op("MatMul", [q, k_t])
        if not scaled:
            z = g.op("Mul", [z, g.const("attention_scale", self.attention_scale(), np.float32)])
        weights = g.op("Softmax", [g.op("Add", [z, mask])], axis=-1)
        out = g.op("MatMul", [weights, v])
        return (out if heads_first else g.op("Transpose", [out], perm=[0, 2, 1, 3])), weights

    def padded_heads(self, x: str, keys_last: bool = False) -> str:
        """Packed rows [T,E] → the padded heads [B,H,S,Dh] (or [B,H,Dh,S] with `keys_last`; heads are contiguous
        slices of E): one Gather of head rows [T·H,Dh] by `pad_index` [B,H,S], which lays them out as a padded
        encoder's Reshape and Transpose would (keys: then transposed, which ORT folds into the scores' MatMul)."""
        g = self.g
        rows = g.op("Reshape", [x, g.const("head_rows", [-1, self.arch.head_dim], np.int64)])
        heads = g.op("Gather", [rows, "pad_index"], axis=0)
        return g.op("Transpose", [heads], perm=[0, 1, 3, 2]) if keys_last else heads

    def packed_rows(self, heads: str) -> str:
        """The padded heads [B,H,S,Dh] → the real tokens' rows [T,E]: a Gather of head rows by `pack_index` [T,H]."""
        g = self.g
        rows = g.op("Reshape", [heads, g.const("head_rows", [-1, self.arch.head_dim], np.int64)])
        packed = g.op("Gather", [rows, "pack_index"], axis=0)  # [T,H,Dh]
        return g.op("Reshape", [packed, g.const("flat_shape", [-1, self.arch.dim], np.int64)])

    def ffn(self, x: str, prefix: str, width: int) -> str:
        a = self.arch
        (h,) = self.linear(x, [(f"{prefix}_ffn_W1", f"{prefix}_ffn_b1", width)], f"{prefix}_ffn_1")
        h = self.g.op("Relu", [h])
        self._widths[h] = width
        (h,) = self.linear(h, [(f"{prefix}_ffn_W2", f"{prefix}_ffn_b2", a.dim)], f"{prefix}_ffn_2")
        return self.add_norm(h, x, f"{prefix}_ffn_ffn")

    def cross_kv_parts(self) -> list[tuple[str, str | None, int]]:
        """The products of every decoder layer's cross-attention keys and values (k.1, v.1, k.2, …)."""
        e, parts = self.arch.dim, list[tuple[str, str | None, int]]()
        for i in range(1, self.arch.decoder_layers + 1):
            p = f"decoder_l{i}_context"
            parts += [(f"{p}_Wk", f"{p}_bk", e), (f"{p}_Wv", f"{p}_bv", e)]
        return parts

    def cross_kv(self, x: str) -> list[str]:
        """Every decoder layer's cross-attention keys [B,H,Dh,S] and values [B,H,S,Dh] of the encoder's packed
        output rows `x`: computed once per batch by the encoder, in one product per shared alpha."""
        parts = self.cross_kv_parts()
        return self.padded_parts(x, parts, "cross_kv", keys=set(range(0, len(parts), 2)))

    # -- tables -------------------------------------------------------------------------------------------------
    def lookup(self, table: str, vocab: int, ids: str) -> str:
        """Rows of an embedding table as float32: the float table, or (INT8, an int8 table) q·(1/qm)."""
        g, e = self.g, self.arch.dim
        if self.precision == "int8" and table in self.w.quantized:
            q, qm = self.w.int8(table, (vocab, e))
            rows = g.op("Cast", [g.op("Gather", [g.weight(f"{table}.q", q), ids], axis=0)], to=1)
            inverse = np.float32(np.float32(1.0) / qm)
            return g.op("Mul", [rows, g.const(f"{table}.dequant", inverse, np.float32)])
        return g.op("Gather", [g.weight(table, self.w.float(table, (vocab, e))), ids], axis=0)


def _float_table(weights: Weights, arch: Architecture) -> np.ndarray:
    """The output layer's float matrix [Vt, E] (a legacy untied `decoder_ff_logit_out_W` [E, Vt] is transposed)."""
    name, shape = arch.output_table, (arch.target_vocab, arch.dim)
    if name == "decoder_ff_logit_out_Wt" and name not in weights.params and "decoder_ff_logit_out_W" in weights.params:
        return np.ascontiguousarray(weights.float("decoder_ff_logit_out_W", (arch.dim, arch.target_vocab)).T)
    return weights.float(name, shape)


def build_encoder(arch: Architecture, weights: Weights, precision: str = "fp32"):
    """The packed encoder graph (see the module docstring) → (onnx.ModelProto, input names, output names)."""
    from onnx import TensorProto, helper

    b = _Builder(arch, weights, precision)
    g, e, layers = b.g, arch.dim, arch.decoder_layers
    emb = b.lookup(arch.source_table, arch.source_vocab, "ids")  # [T,E]
    x = g.op("Add", [g.op("Mul", [emb, g.const("embed_scale", embed_scale(e), np.float32)]), "positions"])
    mask = g.op("Unsqueeze", ["mask_bias", g.const("mask_axes", [1, 2], np.int64)])  # [B,1,1,S]
    for i in range(1, arch.encoder_layers + 1):
        p = f"encoder_l{i}_self"
        q, k_t, v = b.padded_parts(x, [(f"{p}_W{n}", f"{p}_b{n}", e) for n in "qkv"], f"{p}_qkv", keys={1})
        out, _ = b.attend(q, k_t, v, mask, heads_first=True)  # [B,H,S,Dh]
        (out,) = b.linear(b.packed_rows(out), [(f"{p}_Wo", f"{p}_bo", e)], f"{p}_o")
        x = b.add_norm(out, x, f"{p}_Wo")
        x = b.ffn(x, f"encoder_l{i}", arch.ffn)
    names = cross_names(layers)
    for name, heads in zip(names, b.cross_kv(x)):  # keys [B,H,Dh,S], values [B,H,S,Dh]
        g.op("Identity", [heads], outputs=[name])
    dh = arch.head_dim
    inputs = [
        helper.make_tensor_value_info("ids", TensorProto.INT64, ["tokens"]),
        helper.make_tensor_value_info("positions", TensorProto.FLOAT, ["tokens", e]),
        helper.make_tensor_value_info("pad_index", TensorProto.INT64, ["batch", arch.heads, "src"]),
        helper.make_tensor_value_info("pack_index", TensorProto.INT64, ["tokens", arch.heads]),
        helper.make_tensor_value_info("mask_bias", TensorProto.FLOAT, ["batch", "src"]),
    ]
    outputs = []
    for i in range(layers):
        outputs.append(helper.make_tensor_value_info(names[2 * i], TensorProto.FLOAT, ["batch", arch.heads, dh, "src"]))
        outputs.append(
            helper.make_tensor_value_info(names[2 * i + 1], TensorProto.FLOAT, ["batch", arch.heads, "src", dh])
        )
    return g.model("bergamot_encoder", inputs, outputs), ENCODER_INPUTS, names


def build_decoder(arch: Architecture, weights: Weights, precision: str = "fp32", shortlisted: bool = True):
    """One decoder step (see the module docstring) → (onnx.ModelProto, input names, output names). Without
    `shortlisted` (a model without a lexical shortlist) there are no `output_w`/`output_b` inputs and the logits
    cover the whole target vocabulary, the output matrix a constant of the graph."""
    from onnx import TensorProto, helper

    b = _Builder(arch, weights, precision)
    g, e, a = b.g, arch.dim, arch
    emb = b.lookup(arch.target_table, arch.target_vocab, "tokens")  # [N,E]
    q = g.op("Add", [g.op("Mul", [emb, "embed_scale"]), "position"])
    # [Bs,1,1,S]; the rows of a sentence query its keys together: [N,E] → [Bs,H,rows per sentence,Dh]
    mask = g.op("Unsqueeze", ["mask_bias", g.const("mask_axes", [1, 2], np.int64)])
    sentences = g.op("Shape", ["cross_k.0"], start=0, end=1)
    fold = g.op("Concat", [sentences, g.const("fold_tail", [-1, a.heads, a.head_dim], np.int64)], axis=0)
    flat = g.const("flat_shape", [-1, e], np.int64)
    aligned = ""
    for i in range(1, a.decoder_layers + 1):
        p = f"decoder_l{i}"
        # SSRU (cells.h): x̃ = q·W, f = q·Wf + bf, c = σ(f)·c_prev + (1 − σ(f))·x̃, out = relu(c); post-norm
        x_t, f = b.linear(q, [(f"{p}_rnn_W", None, e), (f"{p}_rnn_Wf", f"{p}_rnn_bf", e)], f"{p}_rnn")
        gate = g.op("Sigmoid", [f])
        kept = g.op("Mul", [gate, f"state.{i - 1}"])
        fresh = g.op("Mul", [g.op("Sub", [g.const("one", 1.0, np.float32), gate]), x_t])
        cell = g.op("Add", [kept, fresh], outputs=[f"next_state.{i - 1}"])
        q = b.add_norm(g.op("Relu", [cell]), q, f"{p}_rnn_ffn")
        # cross-attention over the cached keys and values
        c = f"{p}_context"
        # the query carries the 1/√Dh (folded into its product's constants), so the scores' MatMul has no scale
        # for ORT to fuse into FusedMatMul(alpha): MLAS then takes its one-row kernel for each head's product,
        # which needs alpha = 1 (5 sentences × 1 row, full-shape INT8, 1 thread, AMD EPYC Zen 4: the step 571 ->
        # 540 µs; 1 row and 2 sentences × 4 beams unchanged). Not bit-identical (last-ulp roundings)
        (cq,) = b.linear(q, [(f"{c}_Wq", f"{c}_bq", e)], f"{c}_q", factor=b.attention_scale())
        cq = g.op("Transpose", [g.op("Reshape", [cq, fold])], perm=[0, 2, 1, 3])
        out, probabilities = b.attend(cq, f"cross_k.{i - 1}", f"cross_v.{i - 1}", mask, scaled=True)
        if i == a.alignment_from:
            aligned = probabilities
        (out,) = b.linear(g.op("Reshape", [out, flat]), [(f"{c}_Wo", f"{c}_bo", e)], f"{c}_o")
        q = b.add_norm(out, q, f"{c}_Wo")
        q = b.ffn(q, p, a.decoder_ffn_dim)
    # soft alignment: head 0 of the alignment layer's (the last by default) attention, one row per decoder row
    head0 = g.op("Gather", [aligned, g.const("head0", 0, np.int64)], axis=1)  # [Bs,rows,S]
    src = g.op("Shape", ["mask_bias"], start=1, end=2)
    g.op("Reshape", [head0, g.op("Concat", [g.const("minus_one", [-1], np.int64), src], axis=0)], ["alignment"])
    table = _output_layer(b, q, shortlisted)
    layers, dh = a.decoder_layers, a.head_dim
    cross = cross_names(layers)
    inputs = [
        helper.make_tensor_value_info("tokens", TensorProto.INT64, ["rows"]),
        helper.make_tensor_value_info("embed_scale", TensorProto.FLOAT, [1]),
        helper.make_tensor_value_info("position", TensorProto.FLOAT, [1, e]),
        helper.make_tensor_value_info("mask_bias", TensorProto.FLOAT, ["sentences", "src"]),
    ]
    for i in range(layers):
        inputs.append(helper.make_tensor_value_info(cross[2 * i], TensorProto.FLOAT, ["sentences", a.heads, dh, "src"]))
        inputs.append(
            helper.make_tensor_value_info(cross[2 * i + 1], TensorProto.FLOAT, ["sentences", a.heads, "src", dh])
        )
    inputs += [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["rows", e]) for n in state_names(layers)]
    if shortlisted:
        int8 = precision == "int8"
        w_type, w_shape = (TensorProto.INT8, [e, "shortlist"]) if int8 else (TensorProto.FLOAT, ["shortlist", e])
        inputs.append(helper.make_tensor_value_info("output_w", w_type, w_shape))
        inputs.append(helper.make_tensor_value_info("output_b", TensorProto.FLOAT, ["shortlist"]))
    width = "shortlist" if shortlisted else a.target_vocab
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["rows", width])]
    outputs += [
        helper.make_tensor_value_info(n, TensorProto.FLOAT, ["rows", e]) for n in state_names(layers, "next_state")
    ]
    outputs.append(helper.make_tensor_value_info("alignment", TensorProto.FLOAT, ["rows", "src"]))
    prepackable = shortlisted and precision == "int8"
    if prepackable:
        outputs.append(helper.make_tensor_value_info(prepacked_output.OUTPUTS[0], TensorProto.UINT8, ["rows", e]))
        outputs.append(helper.make_tensor_value_info(prepacked_output.OUTPUTS[1], TensorProto.FLOAT, []))
    io = decoder_inputs(layers, shortlisted), decoder_outputs(layers)
    model = g.model("bergamot_decoder_step", inputs, outputs)
    if table is not None:
        layout = "columns" if precision == "int8" else "rows"
        props = {output_table.TABLE_KEY: table, output_table.BIAS_KEY: "output.b", output_table.LAYOUT_KEY: layout}
        if prepackable:
            props[output_table.SCALE_KEY] = "output_w.scale"  # integer_product's name for the product's rescale
        helper.set_model_props(model, props)
    return model, *io


def _output_layer(b: _Builder, q: str, shortlisted: bool) -> str | None:
    """logits = q·W[shortlist]ᵀ + bias[shortlist] (generic.cpp: the shortlisted rows of the output matrix). Shortlisted,
    the rows and bias come in as `output_w`/`output_b` (the engine gathers them once per batch, as Marian caches its
    shortlisted matrix for the batch) and the full table [V,E] and bias stay initializers for the engine to read:
    → the table's initializer name (None: not shortlisted, the matrix is a constant of the product)."""
    g, a = b.g, b.arch
    bias = g.weight("output.b", b.w.float("decoder_ff_logit_out_b", (a.target_vocab,)))
    if b.precision == "fp32":
        table = a.output_table
        name = g.weight(table if table == a.target_table else "output.W", _float_table(b.w, a))
        if shortlisted:
            g.op("Gemm", [q, "output_w", "output_b"], ["logits"], transB=1)
            return name
        g.op("Gemm", [q, name, bias], ["logits"], transB=1)
        return None
    q_out, qm = _output_int8(b.w, a)
    alpha = b.w.alpha(a.output_table, "none")
    scale = np.array(np.float32(1.0) / qm if alpha is None else unquant_multiplier(alpha, qm), dtype=np.float32)
    if not shortlisted:
        matrix = g.weight("output.Wq", np.ascontiguousarray(q_out.T))  # [E,V], a constant ORT prepacks
        g.op("Identity", [b.integer_product(q, alpha, matrix, scale, bias)], ["logits"])
        return None
    name = "output.Wq"
    target = a.target_table
    if target == a.output_table and target in b.w.quantized:
        q_table, _ = b.w.int8(target, (a.target_vocab, a.dim))
        if np.array_equal(q_table, q_out):
            name = f"{target}.q"  # the lookup table's own int8 values: one table in the graph
    g.weight(name, q_out)  # [V,E] rows
    g.op("Identity", [b.integer_product(q, alpha, "output_w", scale, "output_b")], ["logits"])
    # the product's quantised input and its scale, for a batch whose columns are packed once instead (the engine
    # then feeds `output_w` a few dummy columns): engine.families.bergamot.prepacked_output
    quantized, a_scale = b.quantize_activation(q, alpha)
    for source, output in zip((quantized, a_scale), prepacked_output.OUTPUTS):
        g.op("Identity", [source], [output])
    return name


def _output_int8(weights: Weights, arch: Architecture) -> tuple[np.ndarray, np.float32]:
    """The output layer's int8 rows [Vt, E] and qm: an untied int8 `decoder_ff_logit_out_Wt` as stored; a float
    matrix (a tied table is always float at run time: Marian dequantises every Wemb at load) quantised as Marian
    does at run time."""
    name = arch.output_table
    if name == "decoder_ff_logit_out_Wt" and name in weights.quantized:
        return weights.int8(name, (arch.target_vocab, arch.dim))
    return quantize(_float_table(weights, arch))
