"""The graph builder's pieces: the beam scorer's two-stage top-k (engine.families.marian.converter.graphs.build_scorer)
against a plain
LogSoftmax → TopK, and the layer norm (`_Graph.add_norm`) against torch and the fused kernel it replaced."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

from engine.families.marian.converter.graphs import SCORER_BLOCK, build_scorer, scorer_block

onnx = pytest.importorskip("onnx")


def _session(model, threads: int = 1) -> ort.InferenceSession:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def _plain_scorer(vocab: int, renormalize: bool):
    """The scorer as it was: one TopK over every row's whole log-probabilities."""
    from onnx import TensorProto, helper

    if renormalize:
        nodes = [helper.make_node("Add", ["logits", "mask"], ["a"]), helper.make_node("LogSoftmax", ["a"], ["lp"])]
    else:
        nodes = [helper.make_node("LogSoftmax", ["logits"], ["s"]), helper.make_node("Add", ["s", "mask"], ["lp"])]
    nodes.append(helper.make_node("TopK", ["lp", "k"], ["logprobs", "ids"], axis=-1, largest=1, sorted=1))
    inputs = [
        helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["n", vocab]),
        helper.make_tensor_value_info("mask", TensorProto.FLOAT, [vocab]),
        helper.make_tensor_value_info("k", TensorProto.INT64, [1]),
    ]
    outputs = [
        helper.make_tensor_value_info("logprobs", TensorProto.FLOAT, None),
        helper.make_tensor_value_info("ids", TensorProto.INT64, None),
    ]
    model = helper.make_model(helper.make_graph(nodes, "plain", inputs, outputs))
    model.opset_import[0].version = 18
    model.ir_version = 9
    return model


def test_block_sizes_divide_the_vocabulary_when_they_can():
    assert scorer_block(65001) == 47  # opus-mt-en-zh: 3 · 47 · 461
    assert 65001 % scorer_block(65001) == 0
    assert scorer_block(64 * 100) == 64
    assert scorer_block(1882) == 0 and scorer_block(1009) == 0  # 2 · 941, a prime: rows are padded
    assert SCORER_BLOCK == 64


@pytest.mark.parametrize("vocab", [65001, 1882, 1009, 96])
@pytest.mark.parametrize("renormalize", [False, True])
def test_two_stage_top_k_equals_one_top_k_ids_values_and_ties(vocab, renormalize):
    """Bit for bit: ties (a run of equal logits across block edges) keep the lower id first, banned tokens never
    appear even when they are the largest logits, and k larger than the number of blocks still works."""
    model, io = build_scorer(vocab, renormalize)
    assert io.inputs == ["logits", "mask", "k"] and io.outputs == ["logprobs", "ids"]
    onnx.checker.check_model(model)
    new, plain = _session(model), _session(_plain_scorer(vocab, renormalize))
    block = scorer_block(vocab) or SCORER_BLOCK
    rng = np.random.default_rng(vocab)
    mask = np.zeros(vocab, dtype=np.float32)
    banned = [3, vocab - 1]
    mask[banned] = -np.inf
    for rows in (1, 3, 32):
        logits = rng.standard_normal((rows, vocab)).astype(np.float32) * 3
        logits[0, 40:90] = 20.0  # 50 equal values across block boundaries, above every random one
        logits[-1, banned] = 50.0
        logits[rows // 2, :] = 0.0  # a flat row: everything ties
        if rows > 2:  # a tie between a block kept first (larger maximum) and a later-kept block with lower ids
            logits[1, [block + 1, block + 2, 1]] = (40.0, 35.0, 35.0)
        for k in (1, 2, 8, 60):
            feeds = {"logits": logits, "mask": mask, "k": np.array([k], dtype=np.int64)}
            got_values, got_ids = new.run(None, feeds)
            want_values, want_ids = plain.run(None, feeds)
            assert got_ids.shape == (rows, k)
            np.testing.assert_array_equal(got_ids, want_ids)
            np.testing.assert_array_equal(got_values, want_values)
            assert not np.isin(got_ids, banned).any()
    assert (got_ids[0, :8] == np.arange(40, 48)).all(), "ties: the lowest ids first"
    assert got_ids[1, :3].tolist() == [block + 1, 1, block + 2]


def test_two_stage_top_k_at_two_threads_matches_one():
    model, _ = build_scorer(65001, False)
    one, two = _session(model, 1), _session(model, 2)
    logits = np.random.default_rng(1).standard_normal((32, 65001)).astype(np.float32)
    feeds = {"logits": logits, "mask": np.zeros(65001, np.float32), "k": np.array([8], dtype=np.int64)}
    for a, b in zip(one.run(None, feeds), two.run(None, feeds), strict=True):
        np.testing.assert_array_equal(a, b)


def _norm_graph(rows: int, dim: int, seed: int = 0):
    """One `_Graph.add_norm` (residual + x, then Marian's LayerNorm) with random gamma/beta, and its torch module."""
    torch = pytest.importorskip("torch")
    from onnx import TensorProto, helper

    from engine.families.marian.converter.graphs import _Graph

    torch.manual_seed(seed)
    norm = torch.nn.LayerNorm(dim)
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.uniform_(-0.2, 0.2)
    g = _Graph()
    out = g.add_norm("x", "residual", norm, "test.norm")
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [rows, 1, dim]) for n in ("x", "residual")]
    model = g.model("norm", inputs, [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)])
    return model, norm


def test_add_norm_is_torch_layer_norm_and_closer_to_it_than_the_fused_kernel():
    torch = pytest.importorskip("torch")
    from onnx import TensorProto, helper

    from engine.families.marian.converter.graphs import _Graph, _np

    rows, dim = 1024, 512
    model, norm = _norm_graph(rows, dim)
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((rows, 1, dim)) * rng.uniform(0.5, 20, (rows, 1, 1))).astype(np.float32)
    residual = (rng.standard_normal((rows, 1, dim)) * 3).astype(np.float32)
    ours = _session(model).run(None, {"x": x, "residual": residual})[0]
    with torch.no_grad():
        want = torch.nn.functional.layer_norm(
            torch.from_numpy(residual) + torch.from_numpy(x), (dim,), norm.weight, norm.bias, norm.eps
        ).numpy()
    np.testing.assert_allclose(ours, want, rtol=0, atol=2e-6)
    # the kernel it replaced, on the same values, for comparison
    fused = _Graph()
    gamma, beta = fused.weight("g", _np(norm.weight)), fused.weight("b", _np(norm.bias))
    fused.op("SkipLayerNormalization", ["x", "residual", gamma, beta], ["y"], ms=True, epsilon=norm.eps)
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [rows, 1, dim]) for n in ("x", "residual")]
    fused_model = fused.model("fused", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    theirs = _session(fused_model).run(None, {"x": x, "residual": residual})[0]
    assert np.abs(ours - want).mean() < np.abs(theirs - want).mean()


def test_onnxruntime_does_not_fuse_the_norm_back_into_its_scalar_kernel(tmp_path):
    model, _ = _norm_graph(32, 512)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    opts.log_severity_level = 3
    ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    ops = {node.op_type for node in onnx.load(str(tmp_path / "optimized.onnx")).graph.node}
    assert "ReduceMean" in ops
    assert not ops & {"LayerNormalization", "SkipLayerNormalization", "SimplifiedLayerNormalization"}
