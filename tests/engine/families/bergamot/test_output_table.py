"""The shortlisted output layer gathered once per batch (engine.families.bergamot.output_table): the decoder step
reads its rows as inputs instead of gathering them from its own table at every step, and the engine reads that
table from the graph file (a path, memory-mapped, or the bytes) by the names the graph's metadata gives."""

from __future__ import annotations

import numpy as np
import pytest

from engine.bundle.onnx_external import OnnxFormatError
from engine.families.bergamot import output_table
from engine.families.bergamot.converter.graphs import Weights, _output_int8, build_decoder
from tests.engine.families.bergamot.direct import random_architecture, random_params
from tests.engine.families.bergamot.test_graphs import LAYOUTS, int8_model

pytest.importorskip("onnx")  # the build extra: the graphs are written with it


def metadata(model) -> dict[str, str]:
    return {p.key: p.value for p in model.metadata_props}


@pytest.mark.parametrize("precision", ["fp32", "int8"])
@pytest.mark.parametrize("layout", ["tied-all", "untied"])
def test_the_step_gathers_nothing_per_step_and_names_the_table_the_engine_reads(
    layout: str, precision: str, tmp_path
) -> None:
    arch = random_architecture(**LAYOUTS[layout])
    weights, _ = int8_model(arch, seed=5, stored=True)
    model, inputs, _ = build_decoder(arch, weights, precision)
    assert inputs[-2:] == ["output_w", "output_b"]
    # no node reads the output table or bias: the rows come in gathered (a Gather here is the lookup or head 0)
    meta = metadata(model)
    table_name, bias_name = meta[output_table.TABLE_KEY], meta[output_table.BIAS_KEY]
    gathers = [n for n in model.graph.node if n.op_type == "Gather"]
    assert not [n for n in gathers if n.input[1] != "tokens" and n.input[0] in (table_name, bias_name)]
    assert not [n for n in model.graph.node if n.op_type == "Transpose" and "output_w" in n.input]
    path = tmp_path / "decoder.onnx"
    path.write_bytes(model.SerializeToString())
    mapped, read = output_table.read(path, meta), output_table.read(path.read_bytes(), meta)
    params = weights.params
    if precision == "int8":
        expected, _ = _output_int8(weights, arch)  # the int8 rows the product takes (stored or quantised)
        assert mapped.layout == "columns" and mapped.table.dtype == np.int8
    else:
        expected = params[arch.output_table]
        assert mapped.layout == "rows"
    np.testing.assert_array_equal(mapped.table, expected)
    np.testing.assert_array_equal(read.table, expected)
    np.testing.assert_array_equal(mapped.bias, params["decoder_ff_logit_out_b"].reshape(-1))


@pytest.mark.parametrize("layout", ["rows", "columns"])
def test_select_gives_the_shortlisted_rows_in_the_graphs_layout(layout: str) -> None:
    rng = np.random.default_rng(0)
    table = rng.integers(-127, 128, (1000, 24), dtype=np.int8)
    bias = rng.standard_normal(1000).astype(np.float32)
    ids = np.sort(rng.choice(1000, 300, replace=False))  # more than one transposed block
    w, b = output_table.OutputTable(table, bias, layout).select(ids)
    np.testing.assert_array_equal(w, table[ids] if layout == "rows" else table[ids].T)
    assert w.flags.c_contiguous
    np.testing.assert_array_equal(b, bias[ids])


def test_a_graph_without_the_names_or_the_tables_is_refused() -> None:
    arch = random_architecture()
    model, _, _ = build_decoder(arch, Weights(random_params(arch)), "fp32")
    blob, meta = model.SerializeToString(), metadata(model)
    with pytest.raises(OnnxFormatError, match="does not name"):
        output_table.read(blob, {})
    with pytest.raises(OnnxFormatError, match="no inline initializer"):
        output_table.read(blob, meta | {output_table.TABLE_KEY: "nothing"})
    with pytest.raises(OnnxFormatError, match="do not match"):  # the bias named as the table: not [V,E]
        output_table.read(blob, meta | {output_table.TABLE_KEY: meta[output_table.BIAS_KEY]})


def test_the_column_gather_graph_is_valid_onnx_and_reads_a_mapped_table_in_place(tmp_path) -> None:
    import mmap

    import onnx

    from engine.families.bergamot.column_gather import ColumnGather, graph_bytes

    model = onnx.load_from_string(graph_bytes())
    onnx.checker.check_model(model, full_check=True)
    assert [n.op_type for n in model.graph.node] == ["Gather", "Transpose"]
    rng = np.random.default_rng(1)
    table = rng.integers(-128, 128, (500, 16), dtype=np.int8)
    path = tmp_path / "table.bin"
    path.write_bytes(table.tobytes())
    with open(path, "rb") as f:
        mapped = np.frombuffer(memoryview(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)), np.int8)
    gather = ColumnGather(mapped.reshape(500, 16))  # read-only, as output_table.read maps the graph file
    ids = np.array([0, 3, 499, 250], dtype=np.int64)
    np.testing.assert_array_equal(gather.columns(ids), table[ids].T)
    assert gather.columns(np.zeros(0, np.int64)).shape == (16, 0)
    with pytest.raises(ValueError, match="int8"):
        ColumnGather(table.astype(np.float32))


def test_the_column_gather_writes_into_its_kept_buffer_only_when_no_view_of_it_is_alive(monkeypatch) -> None:
    """A fresh buffer's pages fault in as they are written (~0.17 ms a sentence): the last one is written again,
    but never while a run (or any view) still reads it."""
    from engine.families.bergamot import column_gather

    rng = np.random.default_rng(2)
    table = rng.integers(-128, 128, (500, 16), dtype=np.int8)
    gather = column_gather.ColumnGather(table)
    first_ids, second_ids = np.arange(0, 500, 5), np.arange(1, 500, 7)
    first = gather.columns(first_ids)
    held = first[:, 3:]  # a view of a view: it still holds the buffer
    del first
    second = gather.columns(second_ids)
    assert not np.shares_memory(second, held)
    np.testing.assert_array_equal(held, table[first_ids].T[:, 3:])
    np.testing.assert_array_equal(second, table[second_ids].T)
    del held, second
    third = gather.columns(first_ids[:50])
    assert np.shares_memory(third, gather._spare)  # nothing held it: written again
    np.testing.assert_array_equal(third, table[first_ids[:50]].T)
    del third
    monkeypatch.setattr(column_gather, "SPARE_LIMIT", 100)  # a larger batch's columns are not kept
    big = gather.columns(np.arange(500))
    assert not np.shares_memory(big, gather._spare)
    np.testing.assert_array_equal(big, table.T)
