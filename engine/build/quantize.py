"""Turn the exported FP32 graphs into the bundle's FP32 and INT8 model files.

* Layer weights: onnxruntime's dynamic quantization (`quantize_dynamic`), MatMul with constant weights only,
  per-tensor symmetric int8 weights, uint8 dynamic activations (the u8s8 VNNI path).
* The output projection / embedding matrix: quantized here per vocabulary entry (one scale per token, symmetric
  int8) and run as one `com.microsoft.DynamicQuantizeMatMul`. One scale per token keeps every embedding row as exact
  as a per-tensor scale keeps the largest one, and the same int8 bytes serve the engine's embedding lookups.
* In both precisions that matrix (and, for INT8, its scales) is written to `embedding.bin` as ONNX external data,
  which the engine also memory-maps for lookups: the 65001×512 table is stored exactly once per precision.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.build.graphs import LM_HEAD

EMBEDDING_FILE = "embedding.bin"


@dataclass(frozen=True)
class EmbeddingLayout:
    """Where the shared matrix sits inside embedding.bin (recorded in the manifest)."""

    file: str
    dtype: str  # "float32" | "int8"
    shape: tuple[int, int]  # (d_model, vocab): MatMul's B layout; a token's embedding is a column
    offset: int
    scales_offset: int | None = None  # int8 only: float32[vocab] per-token scales

    def as_dict(self) -> dict:
        return {
            "file": self.file,
            "dtype": self.dtype,
            "shape": list(self.shape),
            "offset": self.offset,
            "scales_offset": self.scales_offset,
        }


def _external(tensor, location: str, offset: int, length: int) -> None:
    """Point an initializer at bytes we wrote ourselves into `location` (ONNX external data)."""
    from onnx import TensorProto

    for name in ("raw_data", "float_data", "int32_data", "int64_data", "double_data"):
        tensor.ClearField(name)
    del tensor.external_data[:]
    for key, value in (("location", location), ("offset", str(offset)), ("length", str(length))):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    tensor.data_location = TensorProto.EXTERNAL


def _find(model, name: str):
    for init in model.graph.initializer:
        if init.name == name:
            return init
    raise KeyError(name)


def _lm_head_node(model):
    for node in model.graph.node:
        if node.op_type == "MatMul" and LM_HEAD in node.input:
            return node
    raise KeyError("the decoder graph has no MatMul on lm_head")


def _bias_add(model, matmul):
    """The Add(final_logits_bias) that follows the lm_head MatMul, if any."""
    consumers = [n for n in model.graph.node if matmul.output[0] in n.input]
    if len(consumers) == 1 and consumers[0].op_type == "Add":
        return consumers[0]
    return None


def write_fp32(encoder, decoder, out_dir: Path) -> EmbeddingLayout:
    """Save the FP32 graphs, moving the decoder's lm_head into embedding.bin."""
    import onnx
    from onnx import numpy_helper

    out_dir.mkdir(parents=True, exist_ok=True)
    onnx.save(encoder, str(out_dir / "encoder.onnx"))
    decoder = _copy(decoder)
    head = _find(decoder, LM_HEAD)
    weight = numpy_helper.to_array(head).astype(np.float32, copy=False)
    (out_dir / EMBEDDING_FILE).write_bytes(np.ascontiguousarray(weight).tobytes())
    _external(head, EMBEDDING_FILE, 0, weight.nbytes)
    onnx.save(decoder, str(out_dir / "decoder.onnx"))
    return EmbeddingLayout(EMBEDDING_FILE, "float32", tuple(weight.shape), 0)


def _copy(model):
    import onnx

    clone = onnx.ModelProto()
    clone.CopyFrom(model)
    return clone


def quantize_per_token(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 per column of a [D, V] matrix (one scale per vocabulary entry)."""
    amax = np.abs(weight).max(axis=0)
    scales = np.where(amax > 0, amax / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(weight / scales), -127, 127).astype(np.int8)
    return q, scales


def write_int8(encoder, decoder, out_dir: Path) -> EmbeddingLayout:
    """Quantize both graphs; the decoder's lm_head becomes DynamicQuantizeMatMul over embedding.bin."""
    import onnx
    from onnx import helper, numpy_helper
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out_dir.mkdir(parents=True, exist_ok=True)
    from onnx import TensorProto

    # Shape inference cannot see through contrib ops (MultiHeadAttention…): their outputs are float32.
    options = {"MatMulConstBOnly": True, "DefaultTensorType": TensorProto.FLOAT}
    head_node = _lm_head_node(decoder)
    with tempfile.TemporaryDirectory() as tmp:
        for name, model, exclude in (("encoder", encoder, []), ("decoder", decoder, [head_node.name])):
            fp32_path = Path(tmp) / f"{name}.fp32.onnx"
            onnx.save(model, str(fp32_path))
            quantize_dynamic(
                fp32_path,
                Path(tmp) / f"{name}.onnx",
                op_types_to_quantize=["MatMul"],
                per_channel=False,
                weight_type=QuantType.QInt8,
                nodes_to_exclude=exclude,
                extra_options=options,
            )
        shutil.copy(Path(tmp) / "encoder.onnx", out_dir / "encoder.onnx")
        decoder = onnx.load(str(Path(tmp) / "decoder.onnx"))

    matmul = _lm_head_node(decoder)
    head = _find(decoder, LM_HEAD)
    weight = numpy_helper.to_array(head).astype(np.float32)
    q, scales = quantize_per_token(weight)
    bias_add = _bias_add(decoder, matmul)
    inputs = [matmul.input[0], "lm_head_quantized", "lm_head_scale", ""]
    output = matmul.output[0]
    if bias_add is not None:
        bias_name = next(i for i in bias_add.input if i != matmul.output[0])
        inputs.append(bias_name)
        output = bias_add.output[0]
        decoder.graph.node.remove(bias_add)
    else:
        inputs = inputs[:3]
    fused = helper.make_node("DynamicQuantizeMatMul", inputs, [output], name="lm_head_int8", domain="com.microsoft")
    index = list(decoder.graph.node).index(matmul)
    decoder.graph.node.remove(matmul)
    decoder.graph.node.insert(index, fused)
    decoder.graph.initializer.remove(head)
    q_init = numpy_helper.from_array(q, "lm_head_quantized")
    s_init = numpy_helper.from_array(scales, "lm_head_scale")
    payload = q.tobytes()
    scales_offset = (len(payload) + 63) // 64 * 64  # keep the float32 scales aligned
    with open(out_dir / EMBEDDING_FILE, "wb") as fh:
        fh.write(payload)
        fh.write(b"\0" * (scales_offset - len(payload)))
        fh.write(scales.tobytes())
    _external(q_init, EMBEDDING_FILE, 0, q.nbytes)
    _external(s_init, EMBEDDING_FILE, scales_offset, scales.nbytes)
    decoder.graph.initializer.extend([q_init, s_init])
    if not any(op.domain == "com.microsoft" for op in decoder.opset_import):
        decoder.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.save(decoder, str(out_dir / "decoder.onnx"))
    return EmbeddingLayout(EMBEDDING_FILE, "int8", tuple(q.shape), 0, scales_offset)

