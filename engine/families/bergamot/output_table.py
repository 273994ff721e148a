"""The output layer's matrix and bias over a batch's shortlist, gathered once per batch instead of at every step.

A shortlisted decoder step (engine.families.bergamot.converter.graphs) takes the shortlisted output rows as inputs
(`output_w`, `output_b`) rather than gathering them from its own table at every step: the gather, and for INT8 the
transpose to the [E,K] layout MatMulIntegerToFloat reads, were ~40 % of a 5-row INT8 step at the full-shape
model's paragraph shortlist of 3,456 ids (1.24 → 0.73 ms, same process, 1 thread, AMD EPYC Zen 4). Marian does the
same: its output layer selects the shortlisted columns once per batch.

The full table and bias stay in the decoder graph file as initializers (the table is also the embedding lookup's
when the output is tied), named by the graph's metadata; they are read here from the file's protobuf without the
`onnx` package (engine.bundle.onnx_external), the file memory-mapped, so a table the graph also holds costs only
the pages a batch's rows touch.
"""

from __future__ import annotations

import mmap
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.bundle.onnx_external import InlineTensor, OnnxFormatError, inline_initializers
from engine.families.bergamot.column_gather import ColumnGather

INPUTS = ("output_w", "output_b")  # the shortlisted step's inputs `OutputTable.select` gives
# the decoder graph's metadata (converter/graphs.py writes it)
TABLE_KEY = "qiao.output_table"  # the initializer holding the output matrix as rows [V,E]
BIAS_KEY = "qiao.output_bias"  # the initializer holding the bias [V]
LAYOUT_KEY = "qiao.output_layout"  # how `output_w` is fed: "columns" [E,K] (INT8) or "rows" [K,E] (FP32)
SCALE_KEY = "qiao.output_scale"  # INT8: the product's rescale (engine.families.bergamot.prepacked_output reads it)
LAYOUTS = ("columns", "rows")

_DTYPES: dict[int, np.dtype] = {1: np.dtype("<f4"), 3: np.dtype("i1")}  # ONNX FLOAT, INT8


@dataclass(frozen=True)
class OutputTable:
    """The output matrix's rows [V,E], its bias [V] and the layout the graph's `output_w` takes."""

    table: np.ndarray
    bias: np.ndarray
    layout: str
    scale: np.ndarray | None = None  # INT8 graphs that hand over the product's inputs: its one rescale
    # the "columns" layout's gather and transpose (engine.families.bergamot.column_gather: ORT's, ~8x numpy's)
    _columns: ColumnGather | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.layout == "columns":
            object.__setattr__(self, "_columns", ColumnGather(self.table))

    def select(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(`output_w`, `output_b`) for the sorted target ids `ids` [K]: the rows [K,E] or their transpose [E,K]
        (contiguous), and the bias [K]."""
        bias = np.take(self.bias, ids)  # take: 2x faster than indexing
        if self._columns is not None:
            return self._columns.columns(ids), bias
        return np.take(self.table, ids, axis=0), bias


def read(graph: Path | bytes, metadata: dict[str, str]) -> OutputTable:
    """The table and bias the metadata names, from the graph file (or its bytes); OnnxFormatError if either is
    missing or misshapen."""
    table_name, bias_name = metadata.get(TABLE_KEY), metadata.get(BIAS_KEY)
    layout = metadata.get(LAYOUT_KEY, "")
    if not table_name or not bias_name or layout not in LAYOUTS:
        raise OnnxFormatError(
            f"the decoder graph does not name its output table ({TABLE_KEY}, {BIAS_KEY}, {LAYOUT_KEY})"
        )
    scale_name = metadata.get(SCALE_KEY)
    buf = memoryview(graph) if isinstance(graph, bytes) else _mapped(graph)
    found = inline_initializers(buf, {table_name, bias_name} | ({scale_name} if scale_name else set()))
    table, bias = (_array(found.get(name), name) for name in (table_name, bias_name))
    if table.ndim != 2 or bias.shape != (table.shape[0],):
        raise OnnxFormatError(f"output table {list(table.shape)} and bias {list(bias.shape)} do not match")
    scale = _array(found.get(scale_name), scale_name) if scale_name else None
    if scale is not None and (scale.dtype != np.float32 or scale.size != 1):
        raise OnnxFormatError(f"the output product's rescale {scale_name!r} is not one float32")
    return OutputTable(table, bias, layout, scale)


def _mapped(path: Path) -> memoryview:
    """The file read-only in memory (pages load as they are read; the mapping lives as long as a view of it)."""
    with open(path, "rb") as f:
        return memoryview(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ))


def _array(tensor: InlineTensor | None, name: str) -> np.ndarray:
    if tensor is None:
        raise OnnxFormatError(f"the decoder graph has no inline initializer {name!r}")
    dtype = _DTYPES.get(tensor.data_type)
    count = int(np.prod(tensor.dims, dtype=np.int64))
    if dtype is None or len(tensor.raw) != count * dtype.itemsize:
        raise OnnxFormatError(f"initializer {name!r} is not float32 or int8 of its declared shape")
    return np.frombuffer(tensor.raw, dtype=dtype).reshape(tensor.dims)
