"""Benchmark Qiao's engine against its peers on the full-size opus-mt-en-zh shape, in one command.

    python bench/run.py [--repeats 15] [--threads 1,2] [--only ct2-int8,ours-int8] [--skip-cold]

From a fresh clone this builds the random full-size checkpoint and every peer's converted model into
.cache/full-random/ (minutes, once), then measures each system in fresh worker processes: warm medians per workload
and thread count, then cold start (process start → model ready) and peak RSS. It prints one table per workload,
writes bench/results/<timestamp>.json and a bar chart beside it.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from importlib import metadata
from pathlib import Path

from full_model import DEFAULT_TOKENIZER_FROM
from systems import CACHE_DIR, ORT_ALLOW_SPINNING_DEFAULT, REPO_ROOT, SYSTEMS, disk_mb, model_dir
from worker import READY
from workloads import NEW_TOKENS, WORKLOADS, describe, source_ids

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
ARTIFACT_FOR = {
    "optimum-int8": "optimum-int8",
    "optimum-fp32": "optimum-fp32",
    "ct2-int8": "ct2-int8",
    "ct2-fp32": "ct2-float32",
}
VERSIONED = ("torch", "transformers", "onnx", "onnxruntime", "optimum", "optimum-onnx", "ctranslate2", "numpy")
WORKER_TIMEOUT_S = 3600
NOISY_CORES = 0.2  # average cores used by other processes during a measurement before we call it noisy


def _log(msg: str) -> None:
    print(f"[bench] {msg}", flush=True)


def _env(args: argparse.Namespace) -> dict[str, str]:
    """Environment for every child: repo root importable, no network look-ups, quiet libraries."""
    path = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {
        **os.environ,
        "PYTHONPATH": path,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_VERBOSITY": "error",
        "TOKENIZERS_PARALLELISM": "false",
        "PYTHONWARNINGS": "ignore",
        "QIAO_BENCH_ORT_SPINNING": args.ort_spinning,
        "QIAO_BENCH_BUNDLE_ARGS": args.bundle_args,
    }


def _missing_module(spec_names: tuple[str, ...]) -> str | None:
    for mod in spec_names:
        try:
            if importlib.util.find_spec(mod) is None:
                return mod
        except ModuleNotFoundError:
            return mod
    return None


# --- preparation ----------------------------------------------------------------------------------------------------


def prepare(args: argparse.Namespace, systems: list[str], status: dict[str, dict[str, object]]) -> None:
    """Build the checkpoint and converted models (in a child process: conversions import torch and friends)."""
    for name in systems:
        missing = _missing_module(SYSTEMS[name].needs)
        if missing:
            reason = f"module {missing!r} not installed (pip install -e '.[bench]')"
            status[name] = {"status": "unavailable", "reason": reason}
    artifacts = [ARTIFACT_FOR[n] for n in systems if n in ARTIFACT_FOR and n not in status]
    cmd = [sys.executable, str(BENCH_DIR / "prepare.py"), "--cache-dir", str(args.cache_dir)]
    cmd += ["--tokenizer-from", str(args.tokenizer_from), "--only", ",".join(artifacts)]
    if subprocess.run(cmd, env=_env(args), cwd=REPO_ROOT).returncode != 0:
        raise SystemExit("[bench] preparing the models failed (see above)")

    ours = [n for n in systems if SYSTEMS[n].is_ours]
    if not ours:
        return
    from prepare import engine_problem

    problem = engine_problem()
    if problem is None:
        bundle = subprocess.run([*cmd[:-1], "bundle"], env=_env(args), cwd=REPO_ROOT)
        if bundle.returncode != 0:
            problem = f"`qiao model build` failed (exit {bundle.returncode})"
        else:
            return
    for name in ours:
        status[name] = {"status": "unavailable", "reason": f"engine not usable: {problem}"}


# --- measuring ------------------------------------------------------------------------------------------------------


def _worker_cmd(
    args: argparse.Namespace, system: str, threads: int, mode: str, sources: Path, result: Path
) -> list[str]:
    return [
        sys.executable,
        str(BENCH_DIR / "worker.py"),
        f"--system={system}",
        f"--threads={threads}",
        f"--mode={mode}",
        f"--sources={sources}",
        f"--result={result}",
        f"--workloads={','.join(args.workloads)}",
        f"--repeats={args.repeats}",
        f"--warmup={args.warmup}",
        f"--cache-dir={args.cache_dir}",
    ]


def _read_result(result: Path, stderr: str, returncode: int) -> dict[str, object]:
    if result.exists():
        return json.loads(result.read_text())
    tail = "\n".join(stderr.strip().splitlines()[-5:])
    return {"status": "failed", "reason": f"worker exited {returncode} without a result: {tail}"}


def _busy_cpu_s() -> float | None:
    """CPU-seconds all processes on the machine have spent busy so far (None without psutil)."""
    try:
        import psutil
    except ImportError:
        return None
    t = psutil.cpu_times()
    return sum(t) - t.idle - getattr(t, "iowait", 0.0)


def wait_for_idle(limit_s: float) -> float | None:
    """Wait up to `limit_s` for other processes to leave the CPUs alone; returns the cores busy when we started.

    On a shared machine one busy neighbour turns a 2-thread OpenMP or ORT run into a convoy of spinning threads
    (10-50x slower), so it is better to wait a little than to record nonsense.
    """
    try:
        import psutil
    except ImportError:
        return None
    deadline = time.monotonic() + limit_s
    while True:
        busy = psutil.cpu_percent(interval=1.0) / 100 * (psutil.cpu_count() or 1)
        if busy <= NOISY_CORES or time.monotonic() >= deadline:
            return busy
        time.sleep(2.0)


def run_warm(args: argparse.Namespace, system: str, threads: int, sources: Path, tmp: Path) -> dict[str, object]:
    """One fresh process: load once, time every workload; also how busy the rest of the machine was meanwhile."""
    result = tmp / f"warm-{system}-{threads}.json"
    busy0, wall0 = _busy_cpu_s(), time.perf_counter()
    proc = subprocess.run(
        _worker_cmd(args, system, threads, "warm", sources, result),
        env=_env(args),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=WORKER_TIMEOUT_S,
    )
    busy1, wall = _busy_cpu_s(), time.perf_counter() - wall0
    out = _read_result(result, proc.stderr, proc.returncode)
    if out.get("status") != "ok":
        return out
    if busy0 is not None and busy1 is not None:
        # Cores' worth of CPU that other processes used while this system was measured: > 0.2 means noisy numbers.
        out["foreign_cpu_cores"] = max(busy1 - busy0 - float(out["cpu_s"]), 0.0) / wall  # type: ignore[arg-type]
    for name, t in out["timings"].items():  # type: ignore[union-attr]
        samples = t["samples_ms"]
        median = statistics.median(samples)
        t.update(
            median_ms=median,
            min_ms=min(samples),
            max_ms=max(samples),
            tokens_per_s=WORKLOADS[name].target_tokens / (median / 1000),
        )
    return out


def run_cold(args: argparse.Namespace, system: str, threads: int, sources: Path, tmp: Path) -> dict[str, object]:
    """Fresh processes timed from spawn to READY (imports + model load), then one call per workload for peak RSS."""
    ready: list[float] = []
    peaks: list[float] = []
    after_load: list[float] = []
    for i in range(args.cold_repeats):
        result = tmp / f"cold-{system}-{i}.json"
        with tempfile.TemporaryFile("w+") as err:
            t0 = time.perf_counter()
            proc = subprocess.Popen(
                _worker_cmd(args, system, threads, "cold", sources, result),
                env=_env(args),
                cwd=REPO_ROOT,
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
            )
            assert proc.stdout is not None
            for line in proc.stdout:
                if line.strip() == READY:
                    ready.append(time.perf_counter() - t0)
                    break
            proc.stdout.read()
            proc.wait(timeout=WORKER_TIMEOUT_S)
            err.seek(0)
            out = _read_result(result, err.read(), proc.returncode)
        if out.get("status") != "ok":
            return out
        peaks.append(float(out["peak_rss_mb"]))  # type: ignore[arg-type]
        after_load.append(float(out["rss_after_load_mb"]))  # type: ignore[arg-type]
    return {
        "status": "ok",
        "threads": threads,
        "ready_s": statistics.median(ready),
        "ready_s_samples": ready,
        "peak_rss_mb": statistics.median(peaks),
        "peak_rss_mb_samples": peaks,
        "rss_after_load_mb": statistics.median(after_load),
    }


# --- reporting ------------------------------------------------------------------------------------------------------


def _ratio(x: float, y: float) -> str:
    return f"{x / y:.2f}×"


def _precision(name: str) -> str:
    return "int8" if name.endswith("int8") else "fp32"


def _ours_vs_fastest(ours: str, value: float, peers: dict[str, float], unit: str) -> str:
    fastest = min(peers, key=peers.__getitem__)
    best = peers[fastest]
    rel = value / best
    better, worse = ("less", "more") if unit == "MB" else ("faster", "slower")
    verdict = f"{1 / rel:.2f}× {better}" if rel < 1 else f"{rel:.2f}× {worse}"
    return f"  {ours} vs best peer ({fastest}, {best:.{2 if unit == 's' else 0}f} {unit}): {rel:.2f}× → {verdict}"


def report(results: dict[str, object]) -> str:
    """The human-readable tables: per workload and thread count, then cold start and memory."""
    systems: dict[str, dict[str, object]] = results["systems"]  # type: ignore[assignment]
    warm: dict[str, dict[str, dict[str, dict[str, float]]]] = results["warm"]  # type: ignore[assignment]
    ok = [n for n in systems if systems[n]["status"] == "ok"]
    ours = [n for n in ok if SYSTEMS[n].is_ours]
    lines: list[str] = []
    for name, info in systems.items():
        if info["status"] != "ok":
            lines.append(f"{name}: SKIPPED — {info['reason']}")
        elif info.get("errors"):
            for threads, err in info["errors"].items():  # type: ignore[union-attr]
                lines.append(f"{name} @ {threads} threads: FAILED — {str(err).strip().splitlines()[-1]}")
    width = max([len(n) for n in systems] + [10])
    if ours:
        lines.append("'÷ ours' = this system's median ÷ ours (> 1: ours is faster)")
    for wl_name in results["settings"]["workloads"]:  # type: ignore[index]
        wl = WORKLOADS[wl_name]
        for threads in results["settings"]["threads"]:  # type: ignore[index]
            key = str(threads)
            rows = {n: warm[n][key][wl_name]["median_ms"] for n in ok if key in warm.get(n, {})}
            if not rows:
                continue
            lines.append("")
            lines.append(f"== {wl.title}, {threads} thread{'s' if threads > 1 else ''} ==")
            head = f"{'system':<{width}}  {'median ms':>10}  {'tokens/s':>9}"
            head += "".join(f"  {'÷ ' + o:>{len(o) + 4}}" for o in ours if o in rows)
            lines.append(head)
            for n, ms in sorted(rows.items(), key=lambda kv: kv[1]):
                row = f"{n:<{width}}  {ms:>10.1f}  {wl.target_tokens / ms * 1000:>9.0f}"
                row += "".join(f"  {_ratio(ms, rows[o]):>{len(o) + 4}}" for o in ours if o in rows)
                lines.append(row)
            peers = {n: v for n, v in rows.items() if not SYSTEMS[n].is_ours}
            for o in ours:
                if o in rows and peers:
                    lines.append(_ours_vs_fastest(o, rows[o], peers, "ms"))
                    same = {n: v for n, v in peers.items() if _precision(n) == _precision(o)}
                    if same and min(same, key=same.__getitem__) != min(peers, key=peers.__getitem__):
                        lines.append(
                            _ours_vs_fastest(o, rows[o], same, "ms").replace("best peer", "best same-precision")
                        )
    cold: dict[str, dict[str, float]] = results.get("cold", {})  # type: ignore[assignment]
    cold_ok = {n: c for n, c in cold.items() if c.get("status") == "ok"}
    if cold_ok:
        threads = next(iter(cold_ok.values()))["threads"]
        lines += ["", f"== cold start (process start → model ready) and memory, {threads} threads =="]
        lines.append(f"{'system':<{width}}  {'ready s':>8}  {'peak RSS MB':>12}  {'disk MB':>8}")
        for n, c in sorted(cold_ok.items(), key=lambda kv: kv[1]["ready_s"]):
            lines.append(
                f"{n:<{width}}  {c['ready_s']:>8.2f}  {c['peak_rss_mb']:>12.0f}  {systems[n]['disk_mb']:>8.0f}"
            )
        peers_ready = {n: c["ready_s"] for n, c in cold_ok.items() if not SYSTEMS[n].is_ours}
        peers_rss = {n: c["peak_rss_mb"] for n, c in cold_ok.items() if not SYSTEMS[n].is_ours}
        for o in [o for o in ours if o in cold_ok]:
            if peers_ready:
                lines.append(_ours_vs_fastest(o, cold_ok[o]["ready_s"], peers_ready, "s"))
                lines.append(_ours_vs_fastest(o, cold_ok[o]["peak_rss_mb"], peers_rss, "MB"))
    foreign: dict[str, float | None] = results.get("foreign_cpu_cores", {})  # type: ignore[assignment]
    noisy = {k: v for k, v in foreign.items() if v is not None and v > NOISY_CORES}
    if noisy:
        lines += ["", f"WARNING: other processes used > {NOISY_CORES} cores while these were measured (noisy):"]
        lines += [f"  {k}: {v:.2f} cores" for k, v in noisy.items()]
    agreement = results.get("greedy_agreement")
    if agreement:
        lines += ["", "greedy tokens identical to transformers-fp32 (leading tokens of sentence 1; INT8 may diverge):"]
        lines += [f"  {n}: {k}/{NEW_TOKENS}" for n, k in agreement.items()]  # type: ignore[union-attr]
    return "\n".join(lines)


def greedy_agreement(warm: dict[str, dict[str, dict[str, dict[str, object]]]]) -> dict[str, int]:
    """How many leading greedy tokens each system shares with transformers (FP32 systems should share all 30)."""
    ref_runs = warm.get("transformers-fp32", {})
    ref = next((r["greedy"]["first_output"] for r in ref_runs.values() if "greedy" in r), None)
    if ref is None:
        return {}
    out: dict[str, int] = {}
    for name, runs in warm.items():
        first = next((r["greedy"]["first_output"] for r in runs.values() if "greedy" in r), None)
        if first is not None and name != "transformers-fp32":
            same = len(ref) if len(first) >= len(ref) else len(first)
            out[name] = next((i for i, (a, b) in enumerate(zip(ref, first, strict=False)) if a != b), same)
    return out


def chart(results: dict[str, object], path: Path) -> None:
    """Bar chart: top row one panel per workload (a bar per thread count); bottom row cold start, RSS, disk."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    warm: dict[str, dict[str, dict[str, dict[str, float]]]] = results["warm"]  # type: ignore[assignment]
    cold: dict[str, dict[str, float]] = results.get("cold", {})  # type: ignore[assignment]
    systems: dict[str, dict[str, float]] = results["systems"]  # type: ignore[assignment]
    settings: dict[str, list] = results["settings"]  # type: ignore[assignment]
    names = [n for n in systems if n in warm]
    cold_ok = [n for n in names if cold.get(n, {}).get("status") == "ok"]
    cols = max(len(settings["workloads"]), 3)
    rows = 2 if cold_ok else 1
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 4.6 * rows), squeeze=False)
    colors = ["#4c72b0", "#dd8452", "#55a868", "#c44e52"]
    width = 0.8 / max(len(settings["threads"]), 1)
    for ax, wl in zip(axes[0], settings["workloads"], strict=False):
        shown: list[float] = []
        for k, threads in enumerate(settings["threads"]):
            vals = [warm[n].get(str(threads), {}).get(wl, {}).get("median_ms", math.nan) for n in names]
            xs = [i + k * width for i in range(len(names))]
            bars = ax.bar(xs, vals, width, label=f"{threads} thr", color=colors[k % len(colors)])
            ax.bar_label(bars, labels=["" if math.isnan(v) else f"{v:.0f}" for v in vals], fontsize=7)
            shown += [v for v in vals if not math.isnan(v)]
        if shown and max(shown) > 20 * min(shown):
            ax.set_yscale("log")  # one pathological bar would otherwise flatten all the others
        ax.set_title(WORKLOADS[wl].title, fontsize=9)
        ax.set_ylabel("median ms (lower is better)")
        ax.set_xticks([i + width * (len(settings["threads"]) - 1) / 2 for i in range(len(names))])
        ax.set_xticklabels(names, rotation=30, ha="right", fontsize=8)
        ax.legend(fontsize=8)
    if cold_ok:
        panels = (
            ([cold[n]["ready_s"] for n in cold_ok], "cold start s (process start → ready)", "%.2f"),
            ([cold[n]["peak_rss_mb"] for n in cold_ok], "peak RSS MB", "%.0f"),
            ([systems[n]["disk_mb"] for n in cold_ok], "model on disk MB", "%.0f"),
        )
        for ax, (vals, title, fmt) in zip(axes[1], panels, strict=False):
            ax.bar_label(ax.bar(range(len(cold_ok)), vals, color="#8172b3"), fmt=fmt, fontsize=7)
            ax.set_title(title, fontsize=9)
            ax.set_xticks(range(len(cold_ok)))
            ax.set_xticklabels(cold_ok, rotation=30, ha="right", fontsize=8)
    for ax in axes.flat:
        if not ax.has_data():
            ax.set_visible(False)
        for tick in ax.get_xticklabels():
            if tick.get_text().startswith("ours"):
                tick.set_fontweight("bold")
    machine: dict[str, object] = results["machine"]  # type: ignore[assignment]
    fig.suptitle(
        f"Qiao bench, opus-mt-en-zh shape (random weights) — {machine['cpu']}, {machine['usable_cpus']} CPUs, "
        f"{results['created']}",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def machine_info() -> dict[str, object]:
    """Enough about the machine and library versions to compare runs later."""
    cpu = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    versions = {}
    for pkg in VERSIONED:
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = None
    return {
        "platform": platform.platform(),
        "cpu": cpu,
        "cpu_count": os.cpu_count(),
        "usable_cpus": usable,
        "python": platform.python_version(),
        "versions": versions,
        "thread_env": {k: os.environ[k] for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS") if k in os.environ},
    }


# --- main -----------------------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command line; lists are comma-separated."""
    default_systems = [n for n, s in SYSTEMS.items() if s.default]
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=15, help="timed calls per workload (median reported)")
    p.add_argument(
        "--warmup", type=int, default=2, help="untimed calls per workload first (at least 1: it checks output lengths)"
    )
    p.add_argument("--threads", default="1,2", help="intra-op thread counts to measure")
    p.add_argument("--only", default=",".join(default_systems), help=f"systems to run; available: {', '.join(SYSTEMS)}")
    p.add_argument("--workloads", default=",".join(WORKLOADS), help=f"available: {', '.join(WORKLOADS)}")
    p.add_argument(
        "--wait-idle",
        type=float,
        default=0.0,
        metavar="S",
        help="before each measurement wait up to S seconds for other processes to go quiet (shared machines)",
    )
    p.add_argument("--skip-cold", action="store_true", help="skip cold start / peak RSS processes")
    p.add_argument("--cold-repeats", type=int, default=3, help="fresh processes per system for cold start")
    p.add_argument(
        "--ort-spinning",
        choices=("0", "1"),
        default=ORT_ALLOW_SPINNING_DEFAULT,
        help="session.intra_op.allow_spinning for the ORT peers (default 0: off; spinning hurts on 2 cores)",
    )
    p.add_argument("--bundle-args", default="", help='extra arguments for `qiao model build` (e.g. "--eval-limit 20")')
    p.add_argument("--cache-dir", type=Path, default=CACHE_DIR)
    p.add_argument("--tokenizer-from", type=Path, default=DEFAULT_TOKENIZER_FROM)
    p.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    args = p.parse_args(argv)
    args.threads = [int(t) for t in args.threads.split(",") if t]
    args.only = [s for s in args.only.split(",") if s]
    args.workloads = [w for w in args.workloads.split(",") if w]
    for s in args.only:
        if s not in SYSTEMS:
            p.error(f"unknown system {s!r}; available: {', '.join(SYSTEMS)}")
    for w in args.workloads:
        if w not in WORKLOADS:
            p.error(f"unknown workload {w!r}; available: {', '.join(WORKLOADS)}")
    if args.repeats < 1 or not args.threads or min(args.threads) < 1:
        p.error("--repeats and --threads must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    """Prepare models, measure every system, print tables, write JSON and chart."""
    args = parse_args(argv)
    started = datetime.now()
    status: dict[str, dict[str, object]] = {}
    prepare(args, args.only, status)
    sources = source_ids(args.cache_dir / "checkpoint")

    results: dict[str, object] = {
        "created": started.isoformat(timespec="seconds"),
        "command": [Path(sys.argv[0]).name, *(sys.argv[1:] if argv is None else argv)],
        "machine": machine_info(),
        "settings": {
            "repeats": args.repeats,
            "warmup": args.warmup,
            "threads": args.threads,
            "workloads": args.workloads,
            "cold_repeats": 0 if args.skip_cold else args.cold_repeats,
            "ort_allow_spinning": args.ort_spinning,
            "wait_idle_s": args.wait_idle,
            "forced_eos": "disabled for generate() peers: min = max = 30 new tokens everywhere",
            "page_cache": "warm (models were just built or used)",
        },
        "inputs": describe(sources),
    }
    systems: dict[str, dict[str, object]] = {}
    for name in args.only:
        path = model_dir(name, args.cache_dir)
        systems[name] = {"label": SYSTEMS[name].label, "model_dir": str(path), "disk_mb": disk_mb(name, args.cache_dir)}
        systems[name].update(status.get(name, {"status": "ok"}))

    warm: dict[str, dict[str, object]] = {}
    cold: dict[str, dict[str, object]] = {}
    foreign: dict[str, float | None] = {}
    with tempfile.TemporaryDirectory(prefix="qiao-bench-") as tmpdir:
        tmp = Path(tmpdir)
        src_file = tmp / "sources.json"
        src_file.write_text(json.dumps(sources))
        for threads in args.threads:
            for name in args.only:
                if systems[name]["status"] == "unavailable":
                    continue
                if args.wait_idle > 0:
                    wait_for_idle(args.wait_idle)
                _log(f"{name} @ {threads} thread(s): {args.warmup} warm-up + {args.repeats} timed calls per workload")
                out = run_warm(args, name, threads, src_file, tmp)
                if out.get("status") != "ok":
                    # Keep what other thread counts measured; an unavailable runtime stops this system for good.
                    errors = systems[name].setdefault("errors", {})
                    errors[str(threads)] = out.get("traceback") or out.get("reason")  # type: ignore[index]
                    if out["status"] == "unavailable" or name not in warm:
                        systems[name].update(status=out["status"], reason=out.get("reason"))
                    _log(f"{name} @ {threads}: {out['status']} — {out.get('reason')}")
                    continue
                systems[name].update(status="ok", reason=None)
                warm.setdefault(name, {})[str(threads)] = out["timings"]
                foreign[f"{name}@{threads}"] = out.get("foreign_cpu_cores")
                summary = ", ".join(f"{w} {t['median_ms']:.0f} ms" for w, t in out["timings"].items())
                busy = out.get("foreign_cpu_cores")
                _log(f"{name} @ {threads}: {summary}" + (f" (other processes: {busy:.2f} cores)" if busy else ""))
        if not args.skip_cold:
            threads = max(args.threads)
            for name in args.only:
                if systems[name]["status"] != "ok":
                    continue
                if args.wait_idle > 0:
                    wait_for_idle(args.wait_idle)
                _log(f"{name}: cold start × {args.cold_repeats}")
                cold[name] = run_cold(args, name, threads, src_file, tmp)
                c = cold[name]
                if c.get("status") == "ok":
                    _log(f"{name}: ready {c['ready_s']:.2f} s, peak RSS {c['peak_rss_mb']:.0f} MB")
                else:
                    _log(f"{name}: cold run {c['status']} — {c.get('reason')}")

    results.update(
        systems=systems,
        warm=warm,
        cold=cold,
        greedy_agreement=greedy_agreement(warm),
        foreign_cpu_cores=foreign,
    )
    text = report(results)
    print("\n" + text)
    args.results_dir.mkdir(parents=True, exist_ok=True)
    stem = args.results_dir / started.strftime("%Y%m%d-%H%M%S")
    stem.with_suffix(".json").write_text(json.dumps(results, indent=1))
    try:
        chart(results, stem.with_suffix(".png"))
        _log(f"wrote {stem.with_suffix('.json')} and {stem.with_suffix('.png')}")
    except ImportError as exc:
        _log(f"wrote {stem.with_suffix('.json')} (no chart: {exc})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
