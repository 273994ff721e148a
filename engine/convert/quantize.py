"""Turn the FP32 graphs into the bundle's FP32 and INT8 model files.

* Layer weights: onnxruntime's dynamic quantization (`quantize_dynamic`): MatMul with constant weights,
  per-tensor symmetric int8 weights, uint8 dynamic activations (the u8s8 VNNI kernels of DynamicQuantizeMatMul).
  For these small matrices per-tensor was as accurate here and faster than the block-wise alternative.
* The output projection / embedding matrix (65001×512, 60 % of a step's work): `com.microsoft.MatMulNBits` with
  8-bit weights in blocks of 128 along the model dimension (one scale per block) and int8 compute
  (accuracy_level 4), with a smaller error than per-tensor DynamicQuantizeMatMul. Its weight layout is one
  contiguous row per token, so the engine's embedding lookups read 512 bytes per token from the same file;
  DynamicQuantizeMatMul would need a second, transposed copy. Speed depends on the host: isolated, 2 threads, one
  row, it took 0.32 vs 0.69 ms (DynamicQuantizeMatMul) on one machine and 0.46 vs 0.41 ms on another (an AMD EPYC,
  where it also scales worse with rows: 6.6 vs 4.1 ms at 32); in the decoder step's GEMM chain at one row it still
  measured faster there (1.73 vs 1.92 ms per step).
* In both precisions that matrix (and, for INT8, its scales) lives in `embedding.bin` as ONNX external data,
  which the engine also reads row by row for lookups (engine.embedding): the table is stored exactly once per
  precision.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.convert.graphs import LM_HEAD

EMBEDDING_FILE = "embedding.bin"


@dataclass(frozen=True)
class EmbeddingLayout:
    """Where the shared matrix sits inside embedding.bin (recorded in the manifest)."""

    file: str
    dtype: str  # "float32" | "uint8"
    shape: tuple[int, int]  # (vocab, d_model): a token's embedding is a row
    offset: int
    scales_offset: int | None = None  # 8-bit only: float32[vocab, d_model / block_size]
    block_size: int | None = None
    zero_point: int | None = None

    def as_dict(self) -> dict:
        return {
            "file": self.file,
            "dtype": self.dtype,
            "shape": list(self.shape),
            "offset": self.offset,
            "scales_offset": self.scales_offset,
            "block_size": self.block_size,
            "zero_point": self.zero_point,
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
        if node.op_type == "Gemm" and LM_HEAD in node.input:
            return node
    raise KeyError("the decoder graph has no Gemm on lm_head")


def write_fp32(encoder, decoder, out_dir: Path) -> EmbeddingLayout:
    """Save the FP32 graphs, moving the decoder's lm_head into embedding.bin."""
    from onnx import numpy_helper

    out_dir.mkdir(parents=True, exist_ok=True)
    save_graph(encoder, out_dir / "encoder.onnx")
    decoder = _copy(decoder)
    head = _find(decoder, LM_HEAD)
    weight = numpy_helper.to_array(head).astype(np.float32, copy=False)
    (out_dir / EMBEDDING_FILE).write_bytes(np.ascontiguousarray(weight).tobytes())
    _external(head, EMBEDDING_FILE, 0, weight.nbytes)
    save_graph(decoder, out_dir / "decoder.onnx")
    return EmbeddingLayout(EMBEDDING_FILE, "float32", tuple(weight.shape), 0)


def save_graph(model, path: Path) -> None:
    """Graph structure in `path`, weights in `path`.weights as ONNX external data. ORT memory-maps external
    weights and frees them once its kernels have packed their own copy; weights inside the protobuf are parsed
    into a second heap copy instead (measured: 15 MB more resident for the INT8 model). Tensors already external
    (the embedding in embedding.bin) stay where they are."""
    import onnx

    onnx.save(
        _copy(model),
        str(path),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location=path.stem + ".weights",
        size_threshold=1024,
    )  # a copy: saving rewrites tensors in place


def _copy(model):
    import onnx

    clone = onnx.ModelProto()
    clone.CopyFrom(model)
    return clone


BLOCK_SIZE = 128
ZERO_POINT = 128  # MatMulNBits' default for 8 bits: symmetric int8 stored as uint8


def quantize_blocks(weight: np.ndarray, block_size: int = BLOCK_SIZE) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric 8-bit per block of `block_size` along each row of a [V, D] matrix.

    Returns (uint8 [V, D], scales [V, D/bs])."""
    rows, dim = weight.shape
    blocks = weight.reshape(rows, dim // block_size, block_size)
    amax = np.abs(blocks).max(axis=-1)
    scales = np.where(amax > 0, amax / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(blocks / scales[..., None]), -127, 127).astype(np.int16) + ZERO_POINT
    return q.astype(np.uint8).reshape(rows, dim), scales


def write_int8(encoder, decoder, out_dir: Path) -> EmbeddingLayout:
    """Quantize both graphs; the decoder's lm_head becomes an 8-bit MatMulNBits over embedding.bin."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out_dir.mkdir(parents=True, exist_ok=True)
    # The head is swapped for a placeholder so quantize_dynamic cannot touch it (it rewrites Gemm into MatMul+Add
    # and would quantize that per tensor); the placeholder becomes MatMulNBits afterwards.
    decoder = _copy(decoder)
    gemm = _lm_head_node(decoder)
    head = _find(decoder, LM_HEAD)
    weight = numpy_helper.to_array(head).astype(np.float32)
    placeholder = helper.make_node(
        "LmHead", [gemm.input[0], gemm.input[2]], list(gemm.output), name="lm_head", domain="qiao.build"
    )
    index = list(decoder.graph.node).index(gemm)
    decoder.graph.node.remove(gemm)
    decoder.graph.node.insert(index, placeholder)
    decoder.graph.initializer.remove(head)
    decoder.opset_import.append(helper.make_opsetid("qiao.build", 1))
    # Shape inference cannot see through contrib ops (MultiHeadAttention…): their outputs are float32.
    options = {"MatMulConstBOnly": True, "DefaultTensorType": TensorProto.FLOAT}
    with tempfile.TemporaryDirectory() as tmp:
        for name, model in (("encoder", encoder), ("decoder", decoder)):
            fp32_path = Path(tmp) / f"{name}.fp32.onnx"
            onnx.save(model, str(fp32_path))
            quantize_dynamic(
                fp32_path,
                Path(tmp) / f"{name}.onnx",
                op_types_to_quantize=["MatMul"],
                per_channel=False,
                weight_type=QuantType.QInt8,
                extra_options=options,
            )
        save_graph(onnx.load(str(Path(tmp) / "encoder.onnx")), out_dir / "encoder.onnx")
        decoder = onnx.load(str(Path(tmp) / "decoder.onnx"))

    placeholder = next(n for n in decoder.graph.node if n.op_type == "LmHead")
    vocab, dim = weight.shape
    block = min(BLOCK_SIZE, dim)  # the tiny test model has d_model 64
    q, scales = quantize_blocks(weight, block)
    fused = helper.make_node(
        "MatMulNBits",
        [placeholder.input[0], "lm_head_q8", "lm_head_scales", "", "", placeholder.input[1]],
        list(placeholder.output),
        name="lm_head_q8",
        domain="com.microsoft",
        K=dim,
        N=vocab,
        bits=8,
        block_size=block,
        accuracy_level=4,  # int8 activations: the VNNI path
    )
    index = list(decoder.graph.node).index(placeholder)
    decoder.graph.node.remove(placeholder)
    decoder.graph.node.insert(index, fused)
    for opset in list(decoder.opset_import):
        if opset.domain == "qiao.build":
            decoder.opset_import.remove(opset)
    q_init = numpy_helper.from_array(q.reshape(vocab, dim // block, block), "lm_head_q8")
    s_init = numpy_helper.from_array(scales.reshape(-1), "lm_head_scales")
    payload = q.tobytes()
    scales_offset = (len(payload) + 4095) // 4096 * 4096  # page-aligned, so both parts can be memory-mapped
    with open(out_dir / EMBEDDING_FILE, "wb") as fh:
        fh.write(payload)
        fh.write(b"\0" * (scales_offset - len(payload)))
        fh.write(scales.tobytes())
    _external(q_init, EMBEDDING_FILE, 0, q.nbytes)
    _external(s_init, EMBEDDING_FILE, scales_offset, scales.nbytes)
    decoder.graph.initializer.extend([q_init, s_init])
    save_graph(decoder, out_dir / "decoder.onnx")
    return EmbeddingLayout(EMBEDDING_FILE, "uint8", (vocab, dim), 0, scales_offset, block, ZERO_POINT)
