"""Measure one system in a process of its own (started by run.py, not meant to be run by hand).

A fresh process per system keeps thread pools, allocators and imported runtimes from leaking between systems, and
is the only honest way to measure cold start and peak RSS.

    warm: load, then per workload `--warmup` untimed calls and `--repeats` timed calls.
    cold: load, print READY (run.py times process start → READY), run each workload once, report peak RSS.
    paragraph: load, then workloads.PARAGRAPH (issue #16) `--warmup` untimed and `--repeats` timed calls; peers
               get ours' source ids and the decoding length from `--paragraph-spec`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo root, for `engine`
from child_result import write_result
from systems import CACHE_DIR, load_paragraph, load_system
from workloads import NEW_TOKENS, WORKLOADS, batch_for

import engine  # noqa: F401 - for its side effect: telemetry off (engine/privacy.py), before any onnxruntime import

READY = "QIAO_BENCH_READY"


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MB (10^6 bytes)."""
    if sys.platform == "win32":
        import psutil

        return psutil.Process().memory_info().peak_wset / 1e6
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1e6 if sys.platform == "darwin" else peak * 1024 / 1e6  # bytes on macOS, KiB on Linux


def _check(outputs: list[list[int]], batch: int) -> list[int]:
    """Lengths of the generated sequences, which must show NEW_TOKENS decoder steps or timings are not comparable.

    A system that forces eos at the length cap and does not return it (as transformers' generate() would with the
    real config) shows NEW_TOKENS - 1 tokens for the same NEW_TOKENS decoder steps; that is accepted.
    """
    lengths = [len(o) for o in outputs]
    if len(outputs) != batch or any(n not in (NEW_TOKENS, NEW_TOKENS - 1) for n in lengths):
        raise RuntimeError(f"expected {batch} outputs of {NEW_TOKENS} tokens, got lengths {lengths}")
    return lengths


def run_paragraph(args: argparse.Namespace) -> dict[str, object]:
    """The paragraph workload: what the first call produced, and the timed calls."""
    spec = json.loads(Path(args.paragraph_spec).read_text()) if args.paragraph_spec else None
    try:
        reset, call = load_paragraph(args.system, args.threads, Path(args.cache_dir), spec)
    except ImportError as exc:
        return {"status": "unavailable", "reason": f"{type(exc).__name__}: {exc}"}
    reset()
    first = call()
    for _ in range(max(args.warmup - 1, 0)):
        reset()
        call()
    samples = []
    for _ in range(args.repeats):
        reset()
        t0 = time.perf_counter()
        call()
        samples.append((time.perf_counter() - t0) * 1000)
    return {"status": "ok", "samples_ms": samples, "output": first, "peak_rss_mb": peak_rss_mb()}


def run(args: argparse.Namespace) -> dict[str, object]:
    """Load the system and measure it as the mode asks."""
    if args.mode == "paragraph":
        return run_paragraph(args)
    sources: list[list[int]] = json.loads(Path(args.sources).read_text())
    names = args.workloads.split(",")
    try:
        generate = load_system(args.system, args.threads, Path(args.cache_dir))
    except ImportError as exc:
        return {"status": "unavailable", "reason": f"{type(exc).__name__}: {exc}"}
    result: dict[str, object] = {"status": "ok", "rss_after_load_mb": peak_rss_mb()}
    if args.mode == "cold":
        print(READY, flush=True)
        for name in names:
            wl = WORKLOADS[name]
            generate(batch_for(wl, sources), wl.beams, NEW_TOKENS)
        result["peak_rss_mb"] = peak_rss_mb()
        return result

    timings: dict[str, object] = {}
    for name in names:
        wl = WORKLOADS[name]
        batch = batch_for(wl, sources)
        outputs = generate(batch, wl.beams, NEW_TOKENS)
        lengths = _check(outputs, wl.batch)
        for _ in range(max(args.warmup - 1, 0)):
            generate(batch, wl.beams, NEW_TOKENS)
        samples = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            generate(batch, wl.beams, NEW_TOKENS)
            samples.append((time.perf_counter() - t0) * 1000)
        timings[name] = {"samples_ms": samples, "lengths": lengths, "first_output": outputs[0]}
    result["timings"] = timings
    result["peak_rss_mb"] = peak_rss_mb()
    return result


def main(argv: list[str] | None = None) -> int:
    """CLI entry point: writes the result JSON to --result."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--system", required=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--mode", choices=("warm", "cold", "paragraph"), required=True)
    parser.add_argument("--sources", required=True, help="JSON file with the source id lists")
    parser.add_argument("--paragraph-spec", help="paragraph mode, peers: JSON with ours' source_ids, decoding_length")
    parser.add_argument("--result", required=True, help="where to write the result JSON")
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--cache-dir", default=str(CACHE_DIR))
    args = parser.parse_args(argv)
    return write_result(args.result, lambda: run(args))


if __name__ == "__main__":
    sys.exit(main())
