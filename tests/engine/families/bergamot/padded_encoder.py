"""The Bergamot encoder as Qiao wrote it before it computed on the real tokens only: every product on the padded
[B,S,E] rows, as Marian computes. Kept as the reference the packed graph (engine.families.bergamot.converter.graphs
.build_encoder) must equal on every real token: INT8 bit for bit, FP32 to float rounding."""

from __future__ import annotations

import numpy as np

from engine.families.bergamot.architecture import Architecture, embed_scale
from engine.families.bergamot.converter.graphs import Weights, _Builder, cross_names

INPUTS = ["ids", "mask_bias", "positions"]  # ids [B,S], mask_bias [B,S], positions [S,E]


def _heads(b: _Builder, x: str, keys_last: bool = False) -> str:
    """[B,S,E] → [B,H,S,Dh], or [B,H,Dh,S] with `keys_last`."""
    g, a = b.g, b.arch
    split = g.op("Reshape", [x, g.const("heads_shape", [0, 0, a.heads, a.head_dim], np.int64)])
    return g.op("Transpose", [split], perm=[0, 2, 3, 1] if keys_last else [0, 2, 1, 3])


def build_padded_encoder(arch: Architecture, weights: Weights, precision: str = "fp32"):
    """The padded encoder graph (the graph of bundles converted before the packed one) → onnx.ModelProto."""
    from onnx import TensorProto, helper

    b = _Builder(arch, weights, precision)
    g, e, layers = b.g, arch.dim, arch.decoder_layers
    emb = b.lookup(arch.source_table, arch.source_vocab, "ids")
    x = g.op("Add", [g.op("Mul", [emb, g.const("embed_scale", embed_scale(e), np.float32)]), "positions"])
    mask = g.op("Unsqueeze", ["mask_bias", g.const("mask_axes", [1, 2], np.int64)])
    for i in range(1, arch.encoder_layers + 1):
        p = f"encoder_l{i}_self"
        q, k, v = b.linear(x, [(f"{p}_W{n}", f"{p}_b{n}", e) for n in "qkv"], f"{p}_qkv")
        out, _ = b.attend(_heads(b, q), _heads(b, k, keys_last=True), _heads(b, v), mask)
        out = g.op("Reshape", [out, g.const("join_shape", [0, 0, e], np.int64)])
        (out,) = b.linear(out, [(f"{p}_Wo", f"{p}_bo", e)], f"{p}_o")
        x = b.add_norm(out, x, f"{p}_Wo")
        x = b.ffn(x, f"encoder_l{i}", arch.ffn)
    kv = b.linear(x, b.cross_kv_parts(), "cross_kv")
    names = cross_names(layers)
    for i in range(layers):
        g.op("Identity", [_heads(b, kv[2 * i], keys_last=True)], outputs=[names[2 * i]])
        g.op("Identity", [_heads(b, kv[2 * i + 1])], outputs=[names[2 * i + 1]])
    dh = arch.head_dim
    inputs = [
        helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "src"]),
        helper.make_tensor_value_info("mask_bias", TensorProto.FLOAT, ["batch", "src"]),
        helper.make_tensor_value_info("positions", TensorProto.FLOAT, ["src", e]),
    ]
    outputs = []
    for i in range(layers):
        outputs.append(helper.make_tensor_value_info(names[2 * i], TensorProto.FLOAT, ["batch", arch.heads, dh, "src"]))
        outputs.append(
            helper.make_tensor_value_info(names[2 * i + 1], TensorProto.FLOAT, ["batch", arch.heads, "src", dh])
        )
    return g.model("bergamot_encoder", inputs, outputs)
