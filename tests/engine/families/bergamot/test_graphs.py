"""The Bergamot graphs against a direct numpy computation written from the facts (direct.py): FP32 to ~1e-5 for
every tying layout, INT8 equal to Marian's int8 arithmetic, and the build's refusals."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

from engine.families.bergamot import output_table
from engine.families.bergamot.architecture import Architecture, embed_scale, positions
from engine.families.bergamot.converter.graphs import (
    MASK_FACTOR,
    WeightError,
    Weights,
    build_decoder,
    build_encoder,
    decoder_inputs,
    decoder_outputs,
)
from engine.families.bergamot.model import packed
from tests.engine.families.bergamot.direct import Direct, calibrate, quantize, random_architecture, random_params
from tests.engine.families.bergamot.direct import positions as direct_positions

pytest.importorskip("onnx")  # the build extra: the graphs are written with it

LAYOUTS = {
    "tied-all": dict(tied_all=True),
    "tied separate vocabularies": dict(tied=True, source_vocab=50, target_vocab=70),
    "untied": dict(source_vocab=50, target_vocab=70),
    "tied-src + own decoder ffn + alignment layer 1": dict(tied_src=True, decoder_ffn=48, alignment_layer=1),
}


def session(model, threads: int = 1) -> ort.InferenceSession:
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.intra_op_num_threads = threads
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


class Graphs:
    """Both graphs of one model run by hand: a padded batch, one decoder row per sentence."""

    def __init__(self, arch: Architecture, weights: Weights, precision: str, shortlisted: bool = True) -> None:
        self.arch = arch
        encoder, self.enc_in, self.enc_out = build_encoder(arch, weights, precision)
        decoder, self.dec_in, self.dec_out = build_decoder(arch, weights, precision, shortlisted)
        self.encoder, self.decoder = session(encoder), session(decoder)
        self.shortlisted = shortlisted
        # the engine's per-batch gather of the output rows (the graph takes them as inputs)
        meta = self.decoder.get_modelmeta().custom_metadata_map
        self.output = output_table.read(decoder.SerializeToString(), meta) if shortlisted else None

    def encode(self, rows: list[list[int]]) -> tuple[list[np.ndarray], np.ndarray]:
        width = max(map(len, rows))
        ids = np.zeros((len(rows), width), np.int64)
        bias = np.full((len(rows), width), -99999999.0, np.float32)
        for r, row in enumerate(rows):
            ids[r, : len(row)] = row
            bias[r, : len(row)] = 0.0
        return self.encoder.run(None, packed_feeds(ids, bias == 0.0, self.arch)), bias

    def step(self, cross, bias, tokens, t, states, shortlist=None):
        e = self.arch.dim
        feeds = {
            "tokens": np.asarray(tokens, np.int64),
            "embed_scale": np.array([0.0 if t == 0 else embed_scale(e)], np.float32),
            "position": positions(t, 1, e),
            "mask_bias": bias,
        }
        feeds |= {f"cross_{kind}.{i // 2}": c for i, (kind, c) in enumerate(zip("kv" * len(cross), cross))}
        feeds |= {f"state.{i}": s for i, s in enumerate(states)}
        if self.output is not None:
            feeds["output_w"], feeds["output_b"] = self.output.select(shortlist)
        names = [o.name for o in self.decoder.get_outputs()]
        out = dict(zip(names, self.decoder.run(None, feeds)))
        return out["logits"], [out[f"next_state.{i}"] for i in range(len(states))], out["alignment"]


def packed_feeds(ids: np.ndarray, real: np.ndarray, arch: Architecture) -> dict[str, np.ndarray]:
    """The packed encoder's inputs for padded rows `ids` [B,S] whose tokens are where `real` is true."""
    tokens, pad_index, pack_index, at = packed(ids, real.astype(np.int64), arch.heads)
    bias = np.where(real, np.float32(0.0), MASK_FACTOR).astype(np.float32)
    return {
        "ids": tokens,
        "positions": positions(0, ids.shape[1], arch.dim)[at],
        "pad_index": pad_index,
        "pack_index": pack_index,
        "mask_bias": bias,
    }


def compare(graphs: Graphs, direct: Direct, rows: list[list[int]], steps: int, shortlist, tol: float) -> float:
    """Run both for `steps` greedy steps on every row (tokens chosen by the graphs); the largest difference in
    logits, states and alignments, each row's computation checked against its own direct one."""
    arch = graphs.arch
    cross, bias = graphs.encode(rows)
    states = [np.zeros((len(rows), arch.dim), np.float32) for _ in range(arch.decoder_layers)]
    direct_states = [[np.zeros((1, arch.dim)) for _ in range(arch.decoder_layers)] for _ in rows]
    kvs = [direct.encode(row)[0] for row in rows]
    tokens = np.zeros(len(rows), np.int64)
    cols = shortlist if shortlist is not None else np.arange(arch.target_vocab)
    worst = 0.0
    for t in range(steps):
        logits, states, alignment = graphs.step(cross, bias, tokens, t, states, shortlist)
        for r, row in enumerate(rows):
            previous = None if t == 0 else int(tokens[r])
            d_logits, direct_states[r], d_align = direct.step(previous, t, direct_states[r], kvs[r], shortlist)
            worst = max(worst, float(np.abs(logits[r] - d_logits).max()))
            for mine, theirs in zip(states, direct_states[r]):
                worst = max(worst, float(np.abs(mine[r] - theirs[0]).max()))
            worst = max(worst, float(np.abs(alignment[r, : len(row)] - d_align).max()))
            assert np.all(alignment[r, len(row) :] == 0.0)  # padding gets no attention
        np.testing.assert_allclose(alignment.sum(axis=1), 1.0, rtol=1e-5)
        tokens = cols[np.argmax(logits, axis=1)]
    assert worst < tol, worst
    return worst


ROWS = [[5, 9, 22, 3, 0], [7, 0], [11, 12, 13, 14, 15, 16, 17, 0]]


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_fp32_graphs_compute_what_the_facts_say(layout: str) -> None:
    arch = random_architecture(**LAYOUTS[layout])
    params = random_params(arch, seed=1, scale=1.5)
    graphs = Graphs(arch, Weights(params), "fp32")
    shortlist = np.array([0, 1, 2, 5, 7, 9, 11, 30, 31, 40, 41, 42, 43, 44, 45, 49], np.int64)
    compare(graphs, Direct(arch, params), ROWS, steps=12, shortlist=shortlist, tol=2e-5)


def test_fp32_without_a_shortlist_scores_the_whole_vocabulary() -> None:
    arch = random_architecture(tied=True, source_vocab=50, target_vocab=70)
    params = random_params(arch, seed=4)
    graphs = Graphs(arch, Weights(params), "fp32", shortlisted=False)
    assert "output_w" not in graphs.dec_in and not graphs.decoder.get_modelmeta().custom_metadata_map
    assert graphs.decoder.get_outputs()[0].shape == ["rows", 70]
    compare(graphs, Direct(arch, params), ROWS[:2], steps=6, shortlist=None, tol=2e-5)


def test_io_names_are_the_declared_ones() -> None:
    arch = random_architecture()
    graphs = Graphs(arch, Weights(random_params(arch)), "fp32")
    assert [i.name for i in graphs.decoder.get_inputs()] == decoder_inputs(2) == graphs.dec_in
    assert [o.name for o in graphs.decoder.get_outputs()] == decoder_outputs(2) == graphs.dec_out
    assert [o.name for o in graphs.encoder.get_outputs()] == ["cross_k.0", "cross_v.0", "cross_k.1", "cross_v.1"]


@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_the_step_scores_its_cross_attention_without_a_fused_scale(precision: str, tmp_path) -> None:
    """The query carries 1/√Dh (its product's constants), so no scale follows the scores' MatMul: ORT would fuse
    one into FusedMatMul(alpha), whose MLAS kernel is slower on the step's one-row-per-head products (issue 29).
    Checked on the graph ORT runs (its optimised model); the encoder's attention keeps its scale."""
    arch = random_architecture()
    weights = int8_model(arch, seed=3)[0] if precision == "int8" else Weights(random_params(arch))
    decoder = build_decoder(arch, weights, precision)[0]
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.optimized_model_filepath = str(tmp_path / "optimised.onnx")
    ort.InferenceSession(decoder.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    import onnx

    nodes = onnx.load(str(tmp_path / "optimised.onnx")).graph.node
    scores = [n for n in nodes if n.input[1:2] and n.input[1].startswith("cross_k.")]
    assert [n.op_type for n in scores] == ["MatMul"] * arch.decoder_layers
    assert not [n for n in nodes if n.op_type == "FusedMatMul"]
    encoder = build_encoder(arch, weights, precision)[0].graph.node
    scaled = [n for n in encoder if n.op_type == "Mul" and "attention_scale" in n.input]
    assert len(scaled) == arch.encoder_layers  # the encoder's scores (many rows a head) keep the scale after them


@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_the_encoder_gathers_each_part_of_a_joint_product_without_splitting_it(precision: str) -> None:
    """The self-attention's Q, K and V (one product) and the decoder layers' cross K/V (one product) reach their
    padded heads by one Gather each from the product's rows: no Split copies the parts apart first (bitwise the same
    values: test_packed_encoder)."""
    arch = random_architecture()
    weights = int8_model(arch, seed=3)[0] if precision == "int8" else Weights(random_params(arch))
    nodes = build_encoder(arch, weights, precision)[0].graph.node
    assert not [n for n in nodes if n.op_type == "Split"]
    gathers = [n for n in nodes if n.op_type == "Gather" and n.input[1] != "ids"]
    # per layer: Q, K, V gathered and the output packed back (4); the cross K and V of every decoder layer
    assert len(gathers) == 4 * arch.encoder_layers + 2 * arch.decoder_layers
    assert len([n for n in nodes if n.op_type == "Div"]) == 2  # one index arithmetic per count of parts (3 and 2L)


def test_every_layer_norm_is_one_layer_normalization_node() -> None:
    """Both graphs write Marian's LayerNorm as ORT's LayerNormalization (faster than the standard ops that spell it
    out: add_norm), two per encoder layer and three per decoder layer, with Marian's epsilon."""
    arch = random_architecture()
    weights = Weights(random_params(arch))
    for build, count in ((build_encoder, 2 * arch.encoder_layers), (build_decoder, 3 * arch.decoder_layers)):
        nodes = build(arch, weights, "fp32")[0].graph.node
        norms = [n for n in nodes if n.op_type == "LayerNormalization"]
        assert len(norms) == count
        assert all(a.f == np.float32(1e-6) for n in norms for a in n.attribute if a.name == "epsilon")
        assert not [n for n in nodes if n.op_type in ("ReduceMean", "Sqrt")]
        assert all("pad_index" in n.input for n in nodes if n.op_type == "Div")  # only the head rows' index arithmetic


def test_the_state_carried_is_the_cell_before_the_relu_over_many_steps() -> None:
    """40 steps: every layer's carried state equals the direct SSRU cell c_t (negative entries included: a
    relu'd state would have none), so a wrong carry would drift from the direct one."""
    arch = random_architecture(decoder_layers=3)
    params = random_params(arch, seed=2, scale=1.5)
    graphs = Graphs(arch, Weights(params), "fp32", shortlisted=False)
    direct = Direct(arch, params)
    cross, bias = graphs.encode([ROWS[0]])
    kv, _ = direct.encode(ROWS[0])
    states = [np.zeros((1, arch.dim), np.float32) for _ in range(3)]
    d_states = [np.zeros((1, arch.dim)) for _ in range(3)]
    rng = np.random.default_rng(0)
    tokens = rng.integers(2, arch.target_vocab, 40)
    for t in range(40):
        _, states, _ = graphs.step(cross, bias, tokens[t - 1 : t] if t else [0], t, states)
        _, d_states, _ = direct.step(int(tokens[t - 1]) if t else None, t, d_states, kv)
        for mine, theirs in zip(states, d_states):
            np.testing.assert_allclose(mine, theirs, atol=2e-5)
    assert all((s < 0).any() for s in states)


def test_the_first_step_ignores_its_token_and_later_steps_do_not() -> None:
    arch = random_architecture()
    graphs = Graphs(arch, Weights(random_params(arch, seed=3)), "fp32", shortlisted=False)
    cross, bias = graphs.encode([ROWS[0]])
    zeros = [np.zeros((1, arch.dim), np.float32)] * 2
    a, _, _ = graphs.step(cross, bias, [5], 0, zeros)
    b, _, _ = graphs.step(cross, bias, [9], 0, zeros)
    np.testing.assert_array_equal(a, b)
    c, _, _ = graphs.step(cross, bias, [5], 1, zeros)
    d, _, _ = graphs.step(cross, bias, [9], 1, zeros)
    assert np.abs(c - d).max() > 1e-3


def test_positions_are_marians_sin_cos_halves() -> None:
    table = positions(0, 300, 384)
    np.testing.assert_allclose(table, direct_positions(0, 300, 384), atol=2e-5)  # float32 arithmetic vs float64
    np.testing.assert_array_equal(table[0, :192], 0.0)
    np.testing.assert_array_equal(table[0, 192:], 1.0)
    np.testing.assert_array_equal(positions(7, 3, 384), table[7:10])
    assert embed_scale(384) == np.float32(np.sqrt(384.0))


def int8_model(arch: Architecture, seed: int, stored: bool = False):
    """Random parameters, alphas calibrated a little tight (so some activations clip), and optionally stored int8
    values that differ from what quantising the floats gives (so the graph must take the stored ones)."""
    params = random_params(arch, seed=seed, scale=1.5)
    rng = np.random.default_rng(seed)
    sentences = [[int(x) for x in rng.integers(2, arch.source_vocab, 7)] + [0] for _ in range(5)]
    alphas = {k: v * 1.3 for k, v in calibrate(Direct(arch, params), sentences).items()}
    alphas["none"] = alphas.pop("output")
    quantized = {}
    if stored:
        for name, value in params.items():
            if value.ndim == 2 and value.shape[0] > 1 and "Wemb" not in name and not name.endswith("_Wt"):
                q, qm = quantize(value)
                q = np.clip(q.astype(np.int16) + rng.integers(-3, 4, q.shape), -127, 127).astype(np.int8)
                quantized[name] = (q, qm)
    direct = Direct(arch, params, alphas=alphas | {"output": alphas["none"]}, quantized=quantized)
    return Weights(params, quantized, alphas), direct


@pytest.mark.parametrize("layout", ["tied-all", "untied"])
@pytest.mark.parametrize("stored", [False, True], ids=["quantised here", "stored int8"])
def test_int8_graphs_are_marians_int8_arithmetic(layout: str, stored: bool) -> None:
    """Activations clip(round(A·alpha), ±127) with the stored alpha, the weights' own int8 values, rescaled by
    1/(alpha·qm): equal to the direct int8 computation up to float rounding of the float parts."""
    arch = random_architecture(**LAYOUTS[layout])
    weights, direct = int8_model(arch, seed=5, stored=stored)
    graphs = Graphs(arch, weights, "int8")
    shortlist = np.array([0, 1, 2, 5, 7, 9, 11, 30, 31, 40, 41, 42, 43, 44, 45, 49], np.int64)
    compare(graphs, direct, ROWS, steps=10, shortlist=shortlist, tol=1e-4)
    ops = {node.op_type for node in build_decoder(arch, weights, "int8")[0].graph.node}
    assert "MatMulIntegerToFloat" in ops and "DynamicQuantizeLinear" not in ops


def test_int8_is_close_to_fp32_but_not_equal() -> None:
    arch = random_architecture()
    weights, _ = int8_model(arch, seed=6)
    fp32, int8 = Graphs(arch, weights, "fp32", False), Graphs(arch, weights, "int8", False)
    cross32, bias = fp32.encode([ROWS[0]])
    cross8, _ = int8.encode([ROWS[0]])
    zeros = [np.zeros((1, arch.dim), np.float32)] * 2
    a, _, _ = fp32.step(cross32, bias, [0], 0, zeros)
    b, _, _ = int8.step(cross8, bias, [0], 0, zeros)
    assert 0 < np.abs(a - b).max() < 0.2 * np.abs(a).max()


def test_missing_parameter_and_missing_alpha_are_refused() -> None:
    arch = random_architecture()
    params = random_params(arch)
    del params["decoder_l2_rnn_Wf"]
    with pytest.raises(WeightError, match="decoder_l2_rnn_Wf"):
        build_decoder(arch, Weights(params))
    params = random_params(arch)
    with pytest.raises(WeightError, match="_QuantMultA"):
        build_encoder(arch, Weights(params, alphas={}), "int8")
    params["encoder_l1_ffn_W1"] = params["encoder_l1_ffn_W1"][:, :10]
    with pytest.raises(WeightError, match="encoder_l1_ffn_W1"):
        build_encoder(arch, Weights(params))
