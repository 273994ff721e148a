"""Turn the FP32 graphs into the bundle's FP32 and INT8 model files.

* Layer weights: onnxruntime's dynamic quantization (`quantize_dynamic`): MatMul with constant weights,
  per-tensor symmetric int8 weights, uint8 dynamic activations (the u8s8 VNNI kernels of DynamicQuantizeMatMul).
  For these small matrices per-tensor was as accurate here and faster than the block-wise alternative.
* The output projection / embedding matrix (65001×512, 60 % of a step's work at one row) in INT8, two kernels
  (`write_int8(head=...)`, `qiao model build --int8-head`):
  - "columns" (default): `DynamicQuantizeMatMul` over its own [D, V] copy in head.bin, one scale per token and 7-bit
    weights (±63). A tied head's copy is derived from embedding.bin's 8-bit blocks (engine.runtime.derived) and not
    shipped: the manifest's `derived` records how, with its size and sha256, and the engine computes it once into
    the per-user cache (engine.families.marian.head_cache); the download is 33 MB smaller at opus-mt size. Derived
    from the blocks rather than the FP32 matrix, 9 % of its weights move by one level, and on the tiny fixtures
    (120 sentences each way, greedy and beam 4) every INT8 output stayed the same.
    Why 7 bits: the u8s8 kernels without VNNI (AVX2) add pairs of u8×s8 products in 16 bits, which saturates with full
    8-bit weights (255·127·2 > 32767): with ±127 the tiny fixture lost 1 of 120 greedy sentences
    against FP32; with ±63 none, greedy and beam 4, alone and in batches of 8 (u8 weights with a zero point were
    as exact and 28 % slower). Beam search and batches decode 4–32 rows a step, where MatMulNBits scales badly on
    some hosts: head alone, AMD EPYC (Zen 3, AVX2, no VNNI), 1 thread, 1/4/8/32 rows: 2.2/3.3/4.9/13.8 ms here
    against MatMulNBits' 2.4/5.3/10.0/37.0 ms.
  - "blocks": `com.microsoft.MatMulNBits` with 8-bit weights in blocks of 128 along the model dimension (one scale
    per block) and int8 compute (accuracy_level 4), reading embedding.bin itself, so the table is stored once (the
    bundle is 33 MB smaller). On an Intel Xeon (AVX-512 VNNI) one row took 0.32 vs 0.69 ms for DynamicQuantizeMatMul
    (2 threads, isolated).
  Either way embedding.bin holds the 8-bit block table the engine's lookups read (engine.runtime.embedding).
* FP32 (and INT8 "blocks"): that matrix lives in `embedding.bin` as ONNX external data, which the engine also
  reads row by row for lookups (engine.runtime.embedding): the table is stored once.
* Separate vocabularies or an untied output layer (`Tables`): the head is a matrix of its own (kept in the decoder's
  weights in FP32, in head.bin in INT8), embedding.bin holds the decoder's lookup table, and source_embedding.bin
  the encoder's when the source vocabulary is not the target's. A shared, tied checkpoint (every opus-mt model
  Qiao shipped so far) is written exactly as before.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.families.marian.converter.graphs import LM_HEAD
from engine.runtime.derived import aligned, columns_file, columns_head_file, quantize_columns

EMBEDDING_FILE = "embedding.bin"
SOURCE_EMBEDDING_FILE = "source_embedding.bin"
HEAD_FILE = "head.bin"
HEAD_COLUMNS = "columns"
HEAD_BLOCKS = "blocks"
INT8_HEADS = (HEAD_COLUMNS, HEAD_BLOCKS)


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


@dataclass(frozen=True)
class Tables:
    """Lookup tables that are not the output layer's own matrix (None: the head's matrix serves)."""

    target: np.ndarray | None = None  # the decoder's embedding, when the output layer is not tied to it
    source: np.ndarray | None = None  # the encoder's embedding, when the vocabularies are separate


@dataclass(frozen=True)
class Written:
    """What one precision's files hold (recorded in the manifest)."""

    embedding: EmbeddingLayout  # the decoder's lookup table (and the encoder's when `source` is None)
    source: EmbeddingLayout | None = None  # the encoder's table, separate vocabularies only
    head: str | None = None  # the output layer's own file, when it is not embedding.bin
    head_from: str | None = None  # `head` is derived from this file (not shipped): engine.families.marian.head_cache


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


def write_fp32(encoder, decoder, out_dir: Path, tables: Tables | None = None) -> Written:
    """Save the FP32 graphs. Tied: the decoder's lm_head moves into embedding.bin, which lookups read too.
    Untied: embedding.bin is `tables.target` and the head stays in the decoder's weights file."""
    from onnx import numpy_helper

    tables = tables or Tables()
    out_dir.mkdir(parents=True, exist_ok=True)
    save_graph(encoder, out_dir / "encoder.onnx")
    decoder = _copy(decoder)
    if tables.target is None:
        head = _find(decoder, LM_HEAD)
        weight = numpy_helper.to_array(head).astype(np.float32, copy=False)
        (out_dir / EMBEDDING_FILE).write_bytes(np.ascontiguousarray(weight).tobytes())
        _external(head, EMBEDDING_FILE, 0, weight.nbytes)
    else:
        weight = np.ascontiguousarray(tables.target, dtype=np.float32)
        (out_dir / EMBEDDING_FILE).write_bytes(weight.tobytes())
    save_graph(decoder, out_dir / "decoder.onnx")
    source = None
    if tables.source is not None:
        table = np.ascontiguousarray(tables.source, dtype=np.float32)
        (out_dir / SOURCE_EMBEDDING_FILE).write_bytes(table.tobytes())
        source = EmbeddingLayout(SOURCE_EMBEDDING_FILE, "float32", tuple(table.shape), 0)
    head = None if tables.target is None else "decoder.weights"  # save_graph's external data: the head's home
    return Written(EmbeddingLayout(EMBEDDING_FILE, "float32", tuple(weight.shape), 0), source, head)


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


def write_int8(encoder, decoder, out_dir: Path, head: str = "columns", tables: Tables | None = None) -> Written:
    """Quantize both graphs. embedding.bin gets the 8-bit block table the engine looks tokens up in; the decoder's
    lm_head becomes `head`: "columns" (DynamicQuantizeMatMul over head.bin) or "blocks" (MatMulNBits over
    embedding.bin itself when the head is that table, else over head.bin)."""
    if head not in INT8_HEADS:
        raise ValueError(f"unknown INT8 head {head!r} (choose one of {', '.join(INT8_HEADS)})")
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from onnxruntime.quantization import QuantType, quantize_dynamic

    tables = tables or Tables()
    out_dir.mkdir(parents=True, exist_ok=True)
    # The head is swapped for a placeholder so quantize_dynamic cannot touch it (it rewrites Gemm into MatMul+Add
    # and would quantize that per tensor); the placeholder becomes MatMulNBits afterwards.
    decoder = _copy(decoder)
    gemm = _lm_head_node(decoder)
    head_init = _find(decoder, LM_HEAD)
    weight = numpy_helper.to_array(head_init).astype(np.float32)
    placeholder = helper.make_node(
        "LmHead", [gemm.input[0], gemm.input[2]], list(gemm.output), name="lm_head", domain="qiao.build"
    )
    index = list(decoder.graph.node).index(gemm)
    decoder.graph.node.remove(gemm)
    decoder.graph.node.insert(index, placeholder)
    decoder.graph.initializer.remove(head_init)
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
    block = min(BLOCK_SIZE, weight.shape[1])  # the tiny test model has d_model 64
    lookup = weight if tables.target is None else np.asarray(tables.target, dtype=np.float32)
    layout = _write_blocks(lookup, block, out_dir / EMBEDDING_FILE)
    head_file: str | None = HEAD_FILE
    head_from: str | None = None
    if head == HEAD_BLOCKS and tables.target is None:
        q, scales = quantize_blocks(weight, block)
        fused, inits = _blocks_head(placeholder, q, scales, block, layout.scales_offset or 0, EMBEDDING_FILE)
        head_file = None
    elif head == HEAD_BLOCKS:  # an untied head: its own blocks in head.bin
        own = _write_blocks(weight, block, out_dir / HEAD_FILE)
        q, scales = quantize_blocks(weight, block)
        fused, inits = _blocks_head(placeholder, q, scales, block, own.scales_offset or 0, HEAD_FILE)
    elif tables.target is None:  # tied: derived from embedding.bin's blocks, by the engine's own function
        data = columns_head_file(out_dir / EMBEDDING_FILE, layout.as_dict())
        fused, inits = _columns_head(placeholder, data, weight.shape, out_dir / HEAD_FILE)
        head_from = EMBEDDING_FILE
    else:  # an untied head is a matrix of its own: nothing in the bundle to derive it from
        q, scales = quantize_columns(weight)
        fused, inits = _columns_head(placeholder, columns_file(q, scales), weight.shape, out_dir / HEAD_FILE)
    index = list(decoder.graph.node).index(placeholder)
    decoder.graph.node.remove(placeholder)
    decoder.graph.node.insert(index, fused)
    for opset in list(decoder.opset_import):
        if opset.domain == "qiao.build":
            decoder.opset_import.remove(opset)
    decoder.graph.initializer.extend(inits)
    save_graph(decoder, out_dir / "decoder.onnx")
    source = None
    if tables.source is not None:
        table = np.asarray(tables.source, dtype=np.float32)
        source = _write_blocks(table, min(BLOCK_SIZE, table.shape[1]), out_dir / SOURCE_EMBEDDING_FILE)
    return Written(layout, source, head_file, head_from)


def _write_blocks(table: np.ndarray, block: int, path: Path) -> EmbeddingLayout:
    """`table` [V, D] as 8-bit blocks then their float32 scales (page-aligned, so both parts can be mapped)."""
    q, scales = quantize_blocks(table, block)
    payload = q.tobytes()
    scales_offset = aligned(len(payload))
    with open(path, "wb") as fh:
        fh.write(payload)
        fh.write(b"\0" * (scales_offset - len(payload)))
        fh.write(scales.tobytes())
    return EmbeddingLayout(path.name, "uint8", tuple(table.shape), 0, scales_offset, block, ZERO_POINT)


def _blocks_head(placeholder, q: np.ndarray, scales: np.ndarray, block: int, scales_offset: int, location: str):
    """MatMulNBits 8-bit over `location`'s blocks: embedding.bin itself when the lookup table is the projection
    (stored once), else the head's own file."""
    from onnx import helper, numpy_helper

    vocab, dim = q.shape
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
    q_init = numpy_helper.from_array(q.reshape(vocab, dim // block, block), "lm_head_q8")
    s_init = numpy_helper.from_array(scales.reshape(-1), "lm_head_scales")
    _external(q_init, location, 0, q.nbytes)
    _external(s_init, location, scales_offset, scales.nbytes)
    return fused, [q_init, s_init]


def _columns_head(placeholder, data: bytes, shape: tuple[int, int], path: Path):
    """DynamicQuantizeMatMul over head.bin's [D, V] int8 copy (per-token scales, u8 activations; `data` is the file
    engine.runtime.derived lays out): rows cost little more than one (see the module's docstring)."""
    from onnx import helper, numpy_helper

    vocab, dim = shape
    path.write_bytes(data)
    q = np.frombuffer(data, dtype=np.int8, count=dim * vocab).reshape(dim, vocab)
    scales_offset = aligned(q.nbytes)
    scales = np.frombuffer(data, dtype=np.float32, count=vocab, offset=scales_offset)
    fused = helper.make_node(
        "DynamicQuantizeMatMul",
        [placeholder.input[0], "lm_head_cols", "lm_head_col_scales", "", placeholder.input[1]],
        list(placeholder.output),
        name="lm_head_cols",
        domain="com.microsoft",
    )
    q_init = numpy_helper.from_array(q, "lm_head_cols")
    s_init = numpy_helper.from_array(scales, "lm_head_col_scales")
    _external(q_init, path.name, 0, q.nbytes)
    _external(s_init, path.name, scales_offset, scales.nbytes)
    return fused, [q_init, s_init]
