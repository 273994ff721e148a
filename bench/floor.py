"""Measure the GEMM-only floor on this machine: the weight matrix multiplications of the model and nothing else.

Issue #6 asks how far our decoder is from the hardware, not only from its peers. The floor is an ONNX graph that holds
only the weight GEMMs of one decoder step (or of the encoder), with the bundle's shapes, kernels and dtypes, run with
the engine's session options and thread count; a workload's floor is then encoder + 30 × step. Anything above it is
attention, layer norms, activations, the Python loop and synchronisation between kernels.

    INT8  layers: DynamicQuantizeMatMul (int8 weights, one per-tensor scale; activations quantized per call, as
          ORT fuses the bundle's DynamicQuantizeLinear + MatMulInteger), output projection as the bundle has it
          (manifest `head`): DynamicQuantizeMatMul over [d_model, vocab] int8 with per-token scales, or
          com.microsoft.MatMulNBits (8 bits, blocks of 128, accuracy_level 4, bias) over [vocab, d_model]
    FP32  layers: MatMul, output projection: Gemm(transB=1, bias)

Per decoder layer: fused QKV [d, 3d], self-attention out [d, d], cross-attention q [d, d] and out [d, d], fc1 [d, ffn],
fc2 [ffn, d]; per encoder layer: QKV, out, fc1, fc2, then every decoder layer's cross-attention K/V in one
[d, 2·layers·d] GEMM. Shapes come from the bundle's manifest. The weights are random with the bundle's exact shapes
and dtypes (the kernels' speed does not depend on the values; they are scaled so activations stay near unit size and
no denormals or infinities appear). The layer GEMMs are chained (each one's output feeds the next) so no work can be
skipped; the QKV outputs are graph outputs for the same reason.

Run by run.py in a fresh process per precision and thread count:

    python bench/floor.py --bundle .cache/full-random/bundle --precision int8 --threads 2 --result floor.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo root, for `engine`
from child_result import write_result
from workloads import SOURCE_TOKENS, WORKLOADS

import engine  # noqa: F401 - for its side effect: telemetry off (engine/privacy.py), before any onnxruntime import

# Rows each graph is timed at: every workload's encoder input (sentences × source tokens) and decoder step
# (sentences × beams): 20 and 160; 1, 4, 8 and 32.
ENCODER_ROWS = tuple(sorted({w.batch * SOURCE_TOKENS for w in WORKLOADS.values()}))
STEP_ROWS = tuple(sorted({w.batch * w.beams for w in WORKLOADS.values()} | {1}))
NBITS_BLOCK = 128
MS = 1000.0


class Shapes:
    """The model dimensions the floor needs: from the bundle's manifest, or the checkpoint's config.json."""

    def __init__(self, cfg: dict[str, object]) -> None:
        self.d = int(cfg["d_model"])  # type: ignore[call-overload]
        self.ffn = int(cfg.get("ffn_dim") or cfg["decoder_ffn_dim"])  # type: ignore[call-overload]
        self.enc_layers = int(cfg["encoder_layers"])  # type: ignore[call-overload]
        self.dec_layers = int(cfg["decoder_layers"])  # type: ignore[call-overload]
        self.vocab = int(cfg["vocab_size"])  # type: ignore[call-overload]

    def step(self) -> list[tuple[int, int]]:
        """(K, N) of every layer GEMM of one decoder step, in execution order (output projection excluded)."""
        d, f = self.d, self.ffn
        return [(d, 3 * d), (d, d), (d, d), (d, d), (d, f), (f, d)] * self.dec_layers

    def encoder(self) -> list[tuple[int, int]]:
        """(K, N) of every encoder GEMM, the cross-attention K/V projection for all decoder layers last."""
        d, f = self.d, self.ffn
        return [(d, 3 * d), (d, d), (d, f), (f, d)] * self.enc_layers + [(d, 2 * self.dec_layers * d)]


class _Builder:
    """Collects nodes and random initializers for one GEMM-only graph."""

    def __init__(self, precision: str, seed: int) -> None:
        self.precision = precision
        self.rng = np.random.default_rng(seed)
        self.nodes: list[object] = []
        self.inits: list[object] = []
        self.outputs: list[tuple[str, int]] = []  # graph outputs with their widths
        self.n = 0

    def _init(self, name: str, array: np.ndarray) -> str:
        from onnx import numpy_helper

        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def gemm(self, x: str, k: int, n: int) -> str:
        """y = x @ W with W [k, n]: DynamicQuantizeMatMul (INT8) or MatMul (FP32)."""
        from onnx import helper

        self.n += 1
        y = f"y{self.n}"
        if self.precision == "int8":
            w = self.rng.integers(-127, 128, size=(k, n), dtype=np.int8)
            scale = np.array(1.0 / (73.3 * np.sqrt(k)), dtype=np.float32)  # uniform int8 std ≈ 73.3 → std 1/sqrt(k)
            ins = [x, self._init(f"w{self.n}", w), self._init(f"s{self.n}", scale)]
            ins.append(self._init(f"z{self.n}", np.array(0, dtype=np.int8)))
            self.nodes.append(helper.make_node("DynamicQuantizeMatMul", ins, [y], domain="com.microsoft"))
        else:
            w = (self.rng.standard_normal((k, n), dtype=np.float32) / np.float32(np.sqrt(k))).astype(np.float32)
            self.nodes.append(helper.make_node("MatMul", [x, self._init(f"w{self.n}", w)], [y]))
        return y

    def head(self, x: str, k: int, vocab: int, columns: bool = False) -> str:
        """logits = x @ E.T + bias over the [vocab, k] table: INT8 as the bundle has it, DynamicQuantizeMatMul over
        a [k, vocab] int8 copy with per-token scales (`columns`) or MatMulNBits 8-bit; FP32 Gemm(transB)."""
        from onnx import helper

        bias = self._init("bias", np.zeros(vocab, dtype=np.float32))
        if self.precision == "int8" and columns:
            w = self.rng.integers(-127, 128, size=(k, vocab), dtype=np.int8)
            scales = np.full(vocab, 1.0 / (73.3 * np.sqrt(k)), dtype=np.float32)
            ins = [x, self._init("head_cols", w), self._init("head_col_scales", scales), "", bias]
            self.nodes.append(helper.make_node("DynamicQuantizeMatMul", ins, ["logits"], domain="com.microsoft"))
        elif self.precision == "int8":
            blocks = k // NBITS_BLOCK
            q = self.rng.integers(0, 256, size=(vocab, blocks, NBITS_BLOCK), dtype=np.uint8)
            scales = np.full(vocab * blocks, 1.0 / (73.9 * np.sqrt(k)), dtype=np.float32)
            ins = [x, self._init("head_q8", q), self._init("head_scales", scales), "", "", bias]
            attrs = {"K": k, "N": vocab, "bits": 8, "block_size": NBITS_BLOCK, "accuracy_level": 4}
            self.nodes.append(helper.make_node("MatMulNBits", ins, ["logits"], domain="com.microsoft", **attrs))
        else:
            table = self.rng.standard_normal((vocab, k), dtype=np.float32) / np.float32(np.sqrt(k))
            ins = [x, self._init("head", table.astype(np.float32)), bias]
            self.nodes.append(helper.make_node("Gemm", ins, ["logits"], transB=1))
        return "logits"

    def model(self, d: int) -> object:
        from onnx import TensorProto, helper

        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["rows", d])
        outs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, ["rows", w]) for o, w in self.outputs]
        graph = helper.make_graph(self.nodes, "gemm_floor", [x], outs, self.inits)  # type: ignore[arg-type]
        opsets = [helper.make_opsetid("", 18), helper.make_opsetid("com.microsoft", 1)]
        return helper.make_model(graph, opset_imports=opsets, ir_version=9)


def _layers(shapes: Shapes, precision: str, seed: int, layers: int, chained: list[tuple[int, int]]) -> tuple:
    """Per layer: QKV (a graph output, so it cannot be skipped), then the `chained` GEMMs, each feeding the next."""
    b = _Builder(precision, seed)
    h = "x"
    for _ in range(layers):
        b.outputs.append((b.gemm(h, shapes.d, 3 * shapes.d), 3 * shapes.d))
        for k, n in chained:
            h = b.gemm(h, k, n)
    return b, h


def step_graph(shapes: Shapes, precision: str, seed: int = 0, columns: bool = False) -> object:
    """One decoder step's weight GEMMs: per layer QKV, out → cross q → cross out → fc1 → fc2; the output projection
    (`columns`: the bundle's INT8 head is DynamicQuantizeMatMul over its own copy, manifest `head`)."""
    b, h = _layers(shapes, precision, seed, shapes.dec_layers, shapes.step()[1:6])
    b.outputs.append((b.head(h, shapes.d, shapes.vocab, columns), shapes.vocab))
    return b.model(shapes.d)


def encoder_graph(shapes: Shapes, precision: str, seed: int = 1) -> object:
    """The encoder's weight GEMMs: per layer QKV, out → fc1 → fc2; then every decoder layer's cross K/V."""
    b, h = _layers(shapes, precision, seed, shapes.enc_layers, shapes.encoder()[1:4])
    k, n = shapes.encoder()[-1]
    b.outputs.append((b.gemm(h, k, n), n))
    return b.model(shapes.d)


def gemm_shapes(model: object) -> list[tuple[str, int, int]]:
    """(op, K, N) of every weight GEMM in a graph, whatever form it takes (plain, quantized, fused, 4/8-bit)."""
    graph = model.graph  # type: ignore[attr-defined]
    dims = {t.name: list(t.dims) for t in graph.initializer}
    out: list[tuple[str, int, int]] = []
    for node in graph.node:
        attrs = {a.name: a for a in node.attribute}
        if node.op_type == "MatMulNBits":
            out.append((node.op_type, attrs["K"].i, attrs["N"].i))
        elif node.op_type in ("MatMul", "MatMulInteger", "DynamicQuantizeMatMul", "Gemm") and len(node.input) > 1:
            w = dims.get(node.input[1])
            if w is None or len(w) != 2:
                continue  # activation × activation (attention), not a weight GEMM
            trans = node.op_type == "Gemm" and "transB" in attrs and attrs["transB"].i == 1
            out.append((node.op_type, *(reversed(w) if trans else w)))
    return out


def compare_with_bundle(bundle: Path, manifest: dict[str, object], precision: str, floors: dict[str, object]) -> str:
    """Check that the floor graphs do the same weight GEMMs as the bundle's graphs (shapes as a multiset)."""
    import onnx

    spec: dict[str, str] = manifest["precisions"][precision]  # type: ignore[index]
    notes = []
    for part in ("encoder", "decoder"):
        ours = onnx.load(str(bundle / spec[part]), load_external_data=False)
        mine = floors["step" if part == "decoder" else "encoder"]
        have = Counter((k, n) for _, k, n in gemm_shapes(ours))
        want = Counter((k, n) for _, k, n in gemm_shapes(mine))
        ops = Counter(op for op, _, _ in gemm_shapes(ours))
        if have == want:
            notes.append(f"{part}: same {sum(want.values())} weight GEMM shapes as the bundle ({dict(ops)})")
        else:
            missing, extra = dict(want - have), dict(have - want)
            notes.append(f"{part}: DIFFERS from the bundle: floor only {missing}, bundle only {extra}")
    return "; ".join(notes)


def session_options(threads: int, spinning: bool) -> tuple[object, str]:
    """The engine's own session options when importable (they change as the engine is tuned), else a copy of them."""
    try:
        from engine.runtime.sessions import session_options as engine_options

        return engine_options(threads, spinning=spinning), "engine.runtime.sessions.session_options"
    except (ImportError, TypeError) as exc:  # engine absent or its API moved: keep measuring with the last known set
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.enable_mem_pattern = False
        opts.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning and threads > 1 else "0")
        opts.add_session_config_entry("session.inter_op.allow_spinning", "0")
        return opts, f"bench copy of the engine's options ({type(exc).__name__}: {exc})"


def time_graph(session: object, d: int, rows: int, min_samples: int, max_samples: int, budget_s: float) -> list[float]:
    """Milliseconds per run for `rows` input rows: warm-up, then runs until max_samples or the time budget.

    Inputs and outputs are bound once (IOBinding, preallocated outputs), as the engine's decoder does, so each run is
    the kernels plus ORT's per-run overhead.
    """
    import onnxruntime as ort

    x = np.random.default_rng(rows).standard_normal((rows, d), dtype=np.float32)
    io = session.io_binding()  # type: ignore[attr-defined]
    io.bind_ortvalue_input("x", ort.OrtValue.ortvalue_from_numpy(x))
    keep = [x]
    for out in session.get_outputs():  # type: ignore[attr-defined]
        buf = np.empty((rows, out.shape[-1]), dtype=np.float32)
        keep.append(buf)
        io.bind_ortvalue_output(out.name, ort.OrtValue.ortvalue_from_numpy(buf))
    for _ in range(5):
        session.run_with_iobinding(io)  # type: ignore[attr-defined]
    samples: list[float] = []
    deadline = time.perf_counter() + budget_s
    while len(samples) < max_samples and (len(samples) < min_samples or time.perf_counter() < deadline):
        t0 = time.perf_counter()
        session.run_with_iobinding(io)  # type: ignore[attr-defined]
        samples.append((time.perf_counter() - t0) * MS)
    del keep
    return samples


def robust_median(passes: list[list[float]]) -> dict[str, object]:
    """One graph × row count from several timing passes: the least of the passes' medians (a neighbour's burst or a
    frequency dip only adds time, so the quietest pass is the best estimate of what the kernels cost), the overall
    minimum, and every pass's median for the record."""
    medians = [statistics.median(p) for p in passes if p]
    if not medians:
        raise ValueError("no samples")
    return {
        "median_ms": min(medians),
        "pass_medians_ms": medians,
        "min_ms": min(min(p) for p in passes if p),
        "samples": sum(len(p) for p in passes),
    }


def combine_rounds(rounds: list[dict[str, object]]) -> dict[str, object]:
    """Several floor processes of one precision and thread count (run.py runs them before and after the systems it
    measures, alternating with ours) as one: per graph × row count the least of the rounds' medians, each round's
    kept as `round_medians_ms`. Failed rounds are left out; with none ok, the first round's failure is the result."""
    ok = [r for r in rounds if r.get("status") == "ok"]
    if not ok:
        return rounds[0] if rounds else {"status": "failed", "reason": "no floor round ran"}
    merged = {k: v for k, v in ok[0].items() if k not in ("encoder_ms", "step_ms", "foreign_cpu_cores")}
    for part in ("encoder_ms", "step_ms"):
        rows_seen = [str(k) for k in ok[0][part]]  # type: ignore[union-attr]
        merged[part] = {}
        for rows in rows_seen:
            cells = [r[part][rows] for r in ok if rows in r[part]]  # type: ignore[index,operator]
            best = min(cells, key=lambda c: c["median_ms"])
            merged[part][rows] = {**best, "round_medians_ms": [c["median_ms"] for c in cells]}  # type: ignore[index]
    foreign = [r.get("foreign_cpu_cores") for r in ok if r.get("foreign_cpu_cores") is not None]
    merged["foreign_cpu_cores"] = max(foreign) if foreign else None  # type: ignore[type-var]
    merged["rounds"] = len(ok)
    return merged


def measure(args: argparse.Namespace) -> dict[str, object]:
    """Build both floor graphs for one precision, check them against the bundle, time them."""
    import onnxruntime as ort

    bundle = Path(args.bundle)
    if (bundle / "manifest.json").exists():
        manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
        shapes = Shapes(manifest["config"])
    else:  # no bundle (engine unavailable): the floor still tells how far the peers are from the hardware
        manifest = None
        shapes = Shapes(json.loads((Path(args.checkpoint) / "config.json").read_text(encoding="utf-8")))
    columns = bool(manifest and manifest["precisions"].get(args.precision, {}).get("head"))
    graphs = {"encoder": encoder_graph(shapes, args.precision), "step": step_graph(shapes, args.precision, 0, columns)}
    result: dict[str, object] = {
        "status": "ok",
        "precision": args.precision,
        "threads": args.threads,
        "weights": "random, with the bundle's exact shapes and dtypes (kernel speed does not depend on values)",
        "gemms": {part: dict(Counter(f"{op} {k}×{n}" for op, k, n in gemm_shapes(g))) for part, g in graphs.items()},
        "bundle_check": (
            compare_with_bundle(bundle, manifest, args.precision, graphs) if manifest else "no bundle to compare with"
        ),
    }
    # Encoder first: it does not spin; the step session spins between runs like the engine's decoder does.
    rows_for = {"encoder": ENCODER_ROWS, "step": STEP_ROWS}
    for name, spinning in (("encoder", False), ("step", True)):
        opts, source = session_options(args.threads, spinning)
        opts.log_severity_level = 3  # type: ignore[attr-defined]
        session = ort.InferenceSession(
            graphs[name].SerializeToString(),  # type: ignore[attr-defined]
            sess_options=opts,
            providers=["CPUExecutionProvider"],
        )
        result["session_options"] = source
        try:
            from engine.runtime.sessions import default_threads

            result["engine_default_threads"] = default_threads()  # what `threads=None` (the app's "auto") picks here
        except ImportError:
            result["engine_default_threads"] = None
        # Row counts are timed in `chunks` interleaved passes (20, 160, 20, 160, …), so a noisy stretch of the
        # machine hits one pass of every row count rather than all of one; each row count keeps its least
        # disturbed pass (min of the passes' medians: noise only ever adds time).
        chunks = max(1, args.chunks)
        per_pass: dict[int, list[list[float]]] = {rows: [] for rows in rows_for[name]}
        for _ in range(chunks):
            for rows in rows_for[name]:
                per_pass[rows].append(
                    time_graph(
                        session,
                        shapes.d,
                        rows,
                        max(1, args.min_samples // chunks),
                        max(1, args.max_samples // chunks),
                        args.budget_s / chunks,
                    )
                )
        result[f"{name}_ms"] = {str(rows): robust_median(passes) for rows, passes in per_pass.items()}
        del session
    return result


def main(argv: list[str] | None = None) -> int:
    """CLI entry point: writes the result JSON to --result."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bundle", required=True, help="bundle dir (its manifest gives the shapes and graphs to check)")
    p.add_argument("--checkpoint", help="checkpoint dir whose config.json gives the shapes when there is no bundle")
    p.add_argument("--precision", choices=("int8", "fp32"), required=True)
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--result", required=True)
    p.add_argument("--min-samples", type=int, default=20)
    p.add_argument("--max-samples", type=int, default=300)
    p.add_argument("--budget-s", type=float, default=2.0, help="time per (graph, rows) once min-samples are taken")
    p.add_argument("--chunks", type=int, default=3, help="interleaved timing passes over the row counts")
    args = p.parse_args(argv)
    return write_result(args.result, lambda: measure(args))


if __name__ == "__main__":
    sys.exit(main())
