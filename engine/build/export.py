"""Export a MarianMTModel to the bundle's two ONNX graphs (FP32).

Graph layout, chosen for decoding speed and size rather than taken from a generic exporter:

* `encoder.onnx`: `inputs_embeds` [B,S,D] + `attention_mask` [B,S] → the cross-attention keys and values of every
  decoder layer, `cross_k.{i}` / `cross_v.{i}` [B,H,S,Dh]. They are computed once per sentence here instead of at
  every decoder step.
* `decoder.onnx`: one step. `inputs_embeds` [B,1,D], `encoder_attention_mask` [B,S], `past_k.{i}` / `past_v.{i}`
  [B,H,P,Dh] (P may be 0 at the first step) and the cross K/V → `logits` [B,V] and `present_k.{i}` /
  `present_v.{i}` [B,H,P+1,Dh]. One graph serves every step: no `If` node, no second "first step" graph.
* The 65001×512 embedding is stored once: it lives in the decoder as the output projection `lm_head` [D,V] in an
  external data file, and the engine gathers token embeddings (and adds the sinusoidal positions) from that same
  file with numpy. Neither graph has an embedding table of its own.

The forward code mirrors transformers' Marian layers op for op (scaling after QK^T, post-layer-norm residuals), so
the FP32 graphs reproduce `generate()` token for token.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

OPSET = 17


@dataclass(frozen=True)
class GraphIO:
    inputs: list[str]
    outputs: list[str]


def _split_heads(x: torch.Tensor, heads: int) -> torch.Tensor:
    b, t, d = x.shape
    return x.view(b, t, heads, d // heads).transpose(1, 2)


def _merge_heads(x: torch.Tensor) -> torch.Tensor:
    b, h, t, dh = x.shape
    return x.transpose(1, 2).reshape(b, t, h * dh)


def _attend(attn, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """transformers' eager attention: softmax(QK^T * scaling + mask) V, then the output projection."""
    scores = torch.matmul(q, k.transpose(2, 3)) * attn.scaling
    if mask is not None:
        scores = scores + mask
    probs = torch.softmax(scores, dim=-1)
    return attn.out_proj(_merge_heads(torch.matmul(probs, v)))


def _additive_mask(attention_mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """[B,S] 1/0 → [B,1,1,S] 0/-inf-ish, as transformers builds it for eager attention."""
    inverted = 1.0 - attention_mask[:, None, None, :].to(dtype)
    return inverted * torch.finfo(dtype).min


class EncoderGraph(nn.Module):
    def __init__(self, model) -> None:
        super().__init__()
        self.layers = model.model.encoder.layers
        self.cross = nn.ModuleList(layer.encoder_attn for layer in model.model.decoder.layers)
        self.heads = model.config.encoder_attention_heads
        self.dec_heads = model.config.decoder_attention_heads
        self.act = model.model.encoder.layers[0].activation_fn

    def forward(self, inputs_embeds: torch.Tensor, attention_mask: torch.Tensor):
        h = inputs_embeds
        mask = _additive_mask(attention_mask, h.dtype)
        for layer in self.layers:
            sa = layer.self_attn
            q = _split_heads(sa.q_proj(h), self.heads)
            k = _split_heads(sa.k_proj(h), self.heads)
            v = _split_heads(sa.v_proj(h), self.heads)
            h = layer.self_attn_layer_norm(h + _attend(sa, q, k, v, mask))
            h = layer.final_layer_norm(h + layer.fc2(self.act(layer.fc1(h))))
        out = []
        for attn in self.cross:
            out.append(_split_heads(attn.k_proj(h), self.dec_heads))
            out.append(_split_heads(attn.v_proj(h), self.dec_heads))
        return tuple(out)


class DecoderStepGraph(nn.Module):
    def __init__(self, model) -> None:
        super().__init__()
        self.layers = model.model.decoder.layers
        self.heads = model.config.decoder_attention_heads
        self.act = self.layers[0].activation_fn
        weight = model.get_output_embeddings().weight.detach()
        self.lm_head = nn.Parameter(weight.t().contiguous(), requires_grad=False)  # [D, V]: MatMul's B layout
        self.register_buffer("final_logits_bias", model.final_logits_bias.detach().reshape(-1).clone())

    def forward(self, inputs_embeds, encoder_attention_mask, *kv):
        n = len(self.layers)
        past, cross = kv[: 2 * n], kv[2 * n :]
        h = inputs_embeds
        mask = _additive_mask(encoder_attention_mask, h.dtype)
        presents = []
        for i, layer in enumerate(self.layers):
            sa = layer.self_attn
            q = _split_heads(sa.q_proj(h), self.heads)
            k = torch.cat([past[2 * i], _split_heads(sa.k_proj(h), self.heads)], dim=2)
            v = torch.cat([past[2 * i + 1], _split_heads(sa.v_proj(h), self.heads)], dim=2)
            presents += [k, v]
            h = layer.self_attn_layer_norm(h + _attend(sa, q, k, v, None))
            ca = layer.encoder_attn
            q = _split_heads(ca.q_proj(h), self.heads)
            h = layer.encoder_attn_layer_norm(h + _attend(ca, q, cross[2 * i], cross[2 * i + 1], mask))
            h = layer.final_layer_norm(h + layer.fc2(self.act(layer.fc1(h))))
        logits = torch.matmul(h[:, -1, :], self.lm_head) + self.final_logits_bias
        return (logits, *presents)


def sinusoidal_positions(n_pos: int, dim: int) -> np.ndarray:
    """Marian's static position table, computed exactly as transformers does (float64, then float32)."""
    position_enc = np.array([[pos / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)] for pos in range(n_pos)])
    out = np.empty((n_pos, dim), dtype=np.float32)
    sentinel = dim // 2 if dim % 2 == 0 else dim // 2 + 1
    out[:, :sentinel] = np.sin(position_enc[:, 0::2])
    out[:, sentinel:] = np.cos(position_enc[:, 1::2])
    return out


def kv_names(prefix: str, layers: int) -> list[str]:
    return [f"{prefix}_{kind}.{i}" for i in range(layers) for kind in ("k", "v")]


def export_graphs(model, out_dir: Path) -> dict[str, GraphIO]:
    """Write encoder.onnx and decoder.onnx (weights inline except the decoder's lm_head, see quantize/bundle)."""
    import warnings

    cfg = model.config
    model = model.eval().float()
    d, n = cfg.d_model, cfg.decoder_layers
    heads = cfg.decoder_attention_heads
    dh = d // heads
    out_dir.mkdir(parents=True, exist_ok=True)
    enc = EncoderGraph(model).eval()
    dec = DecoderStepGraph(model).eval()
    b, s, p = 2, 7, 3
    enc_in = (torch.randn(b, s, d), torch.ones(b, s, dtype=torch.int64))
    cross_out = kv_names("cross", n)
    past_in = kv_names("past", n)
    present_out = kv_names("present", n)
    graphs = {
        "encoder": GraphIO(["inputs_embeds", "attention_mask"], cross_out),
        "decoder": GraphIO(["inputs_embeds", "encoder_attention_mask", *past_in, *cross_out], ["logits", *present_out]),
    }
    enc_axes = {"inputs_embeds": {0: "batch", 1: "src"}, "attention_mask": {0: "batch", 1: "src"}}
    enc_axes.update({name: {0: "batch", 2: "src"} for name in cross_out})
    dec_in = (
        torch.randn(b, 1, d),
        torch.ones(b, s, dtype=torch.int64),
        *[torch.randn(b, heads, p, dh) for _ in past_in],
        *[torch.randn(b, heads, s, dh) for _ in cross_out],
    )
    dec_axes = {"inputs_embeds": {0: "batch"}, "encoder_attention_mask": {0: "batch", 1: "src"}, "logits": {0: "batch"}}
    dec_axes.update({name: {0: "batch", 2: "past"} for name in past_in})
    dec_axes.update({name: {0: "batch", 2: "past_plus_1"} for name in present_out})
    dec_axes.update({name: {0: "batch", 2: "src"} for name in cross_out})
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for module, args, name, axes in ((enc, enc_in, "encoder", enc_axes), (dec, dec_in, "decoder", dec_axes)):
            torch.onnx.export(
                module,
                args,
                str(out_dir / f"{name}.onnx"),
                input_names=graphs[name].inputs,
                output_names=graphs[name].outputs,
                dynamic_axes=axes,
                opset_version=OPSET,
                do_constant_folding=True,
                dynamo=False,
            )
    return graphs


def embed_scale(config) -> float:
    return math.sqrt(config.d_model) if config.scale_embedding else 1.0
