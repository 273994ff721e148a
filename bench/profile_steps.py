"""Where one workload's time goes in our engine, on the machine it runs on (issue #16 asks for this with every miss).

    python bench/profile_steps.py                                  # paragraph, INT8, 2 threads, real-scale bundle
    python bench/profile_steps.py --workload batch8beam4 --threads 1
    python bench/profile_steps.py --workload paragraph --ort-ops   # instead: the kernels by op type

Two views, one per run:

* parts (default): the engine's own calls are wrapped with timers (encoder, decoder step, its token embedding, the
  beam scorer, the cache reorder, finished rows leaving the batch), each counted without the wrapped calls inside it;
  the rest of each call is the Python search loop, streaming, segmentation and detokenization. Medians over `--calls`
  calls after an untimed one, in ms per call and shares.
* `--ort-ops`: ONNX Runtime's profiler on the encoder, decoder and scorer sessions, kernel time summed by op type, the
  mean of 4 calls (the first included). The profiler costs a few µs per kernel, so small kernels read high and the
  total runs above the parts' total: time a suspect in isolation before acting on it.

The bench workloads (20 → 30 tokens) run through `Translator.generate_ids` exactly as bench/systems.py calls them;
the paragraph through `Translator.translate`, the sentence cache emptied before each call.
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from machine import describe_cpu, read_cpu  # noqa: E402
from workloads import NEW_TOKENS, PARAGRAPH_BEAMS, WORKLOADS, paragraph_text, source_ids  # noqa: E402

import engine  # noqa: E402,F401 - telemetry off before onnxruntime loads

DEFAULT_CACHE = ROOT / ".cache" / "full-random-real"
PARTS = ("encoder", "embedding", "decoder", "scorer", "reorder", "select")


class Timers:
    """Wall time per part for the call in progress, exclusive: a wrapped call inside another (the token embedding
    inside a decoder step or the encoder) counts for its own part only."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = collections.defaultdict(float)
        self._open: list[str] = []

    def wrap(self, owner: type, method: str, part: str) -> None:
        original = getattr(owner, method)
        spent, open_parts = self.spent, self._open

        def timed(*args, **kwargs):
            open_parts.append(part)
            t0 = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - t0
                open_parts.pop()
                spent[part] += elapsed
                if open_parts:
                    spent[open_parts[-1]] -= elapsed

        setattr(owner, method, timed)


def install_timers() -> Timers:
    from engine.families.marian.model import DecoderRun, OnnxMarian
    from engine.runtime.scorer import TopKScorer

    timers = Timers()
    timers.wrap(OnnxMarian, "encode", "encoder")
    timers.wrap(OnnxMarian, "embed", "embedding")  # inside step and encode, counted on its own
    timers.wrap(DecoderRun, "step", "decoder")
    timers.wrap(DecoderRun, "reorder", "reorder")
    timers.wrap(DecoderRun, "select", "select")
    timers.wrap(TopKScorer, "top", "scorer")
    return timers


def workload_call(translator, name: str, sources: list[list[int]]):
    """A function running one call of the workload."""
    if name == "paragraph":
        text = paragraph_text()

        def call() -> None:
            translator.clear_cache()
            translator.translate(text, beams=PARAGRAPH_BEAMS, on_event=lambda e: None)

        return call
    w = WORKLOADS[name]
    batch = sources[: w.batch]

    def call() -> None:
        translator.generate_ids(
            batch, beams=w.beams, min_new_tokens=NEW_TOKENS, max_new_tokens=NEW_TOKENS, forced_eos=False
        )

    return call


def measure_parts(call, timers: Timers, calls: int) -> dict[str, float]:
    rows: list[dict[str, float]] = []
    for _ in range(calls):
        timers.spent.clear()
        t0 = time.perf_counter()
        call()
        total = time.perf_counter() - t0
        row = {part: timers.spent.get(part, 0.0) * 1000 for part in PARTS}
        row["python and the rest"] = total * 1000 - sum(row.values())
        row["total"] = total * 1000
        rows.append(row)
    return {key: statistics.median(r[key] for r in rows) for key in rows[0]}


def ort_ops(bundle: Path, precision: str, threads: int, name: str, sources: list[list[int]]) -> dict[str, float]:
    """Kernel time by op type (ms per call, the mean of 4 calls) from ONNX Runtime's profiler on the encoder, decoder
    and scorer sessions."""
    import engine.families.marian.model as onnx_model
    import engine.runtime.scorer as scorer_module
    import engine.runtime.sessions as sessions
    from engine.pipeline.translator import Translator

    out_dir = Path(tempfile.mkdtemp(prefix="qiao-profile-"))
    profiled: list = []

    def session(path, opts, providers=None):
        opts.enable_profiling = True
        opts.profile_file_prefix = str(out_dir / f"session{len(profiled)}")  # ORT's file names have 1 s resolution
        profiled.append(sessions.inference_session(path, opts, providers))
        return profiled[-1]

    onnx_model.create_session = lambda path, threads=None, spinning=False, providers=None: session(
        path, sessions.session_options(threads, spinning), providers
    )
    scorer_module.inference_session = session
    translator = Translator(bundle, precision=precision, threads=threads)
    call = workload_call(translator, name, sources)
    calls = 4  # the first included: the profiler cannot be switched on after it
    for _ in range(calls):
        call()
    files = [s.end_profiling() for s in profiled]
    by_op: dict[str, float] = collections.defaultdict(float)
    for file in files:
        events = json.loads(Path(file).read_text())
        for ev in events:
            if ev.get("cat") == "Node" and ev["name"].endswith("_kernel_time"):
                by_op[ev["args"]["op_name"]] += ev["dur"] / 1000
    return {op: ms / calls for op, ms in sorted(by_op.items(), key=lambda kv: -kv[1])}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE, help="the bench's cache (bundle/, checkpoint/)")
    p.add_argument("--workload", default="paragraph", choices=["paragraph", *WORKLOADS])
    p.add_argument("--precision", default="int8", choices=["int8", "fp32"])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--calls", type=int, default=7)
    p.add_argument("--ort-ops", action="store_true", help="ORT's kernel times by op type instead of the parts")
    args = p.parse_args(argv)

    bundle = args.cache_dir / "bundle"
    sources = source_ids(args.cache_dir / "checkpoint")
    print(f"host: {describe_cpu(read_cpu())}")
    counted = "the mean of 4 calls" if args.ort_ops else f"medians of {args.calls} calls after one untimed"
    print(f"{args.workload}, {args.precision}, {args.threads} thread(s), {counted}")
    if not args.ort_ops:
        from engine.pipeline.translator import Translator

        timers = install_timers()
        translator = Translator(bundle, precision=args.precision, threads=args.threads)
        call = workload_call(translator, args.workload, sources)
        call()
        parts = measure_parts(call, timers, args.calls)
        total = parts.pop("total")
        for part, ms in parts.items():
            print(f"  {part:<20} {ms:9.1f} ms  {100 * ms / total:5.1f} %")
        print(f"  {'total':<20} {total:9.1f} ms")
    else:
        ops = ort_ops(bundle, args.precision, args.threads, args.workload, sources)
        total = sum(ops.values())
        print("  ONNX Runtime kernel time by op type, encoder, decoder and scorer sessions (ms per call):")
        for op, ms in ops.items():
            if ms >= 0.005 * total:
                print(f"  {op:<28} {ms:9.1f} ms  {100 * ms / total:5.1f} %")
        print(f"  {'all kernels':<28} {total:9.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
