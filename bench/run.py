"""Benchmark Qiao's engine against its peers on the full-size opus-mt-en-zh shape, in one command.

    python bench/run.py [--repeats 15] [--threads 1,2] [--only ct2-int8,ours-int8] [--skip-cold]

From a fresh clone this builds the random full-size checkpoint and every peer's converted model into
.cache/full-random/ (minutes, once), then measures each system in fresh worker processes: warm medians per workload
and thread count, the GEMM-only floor of this machine (floor.py), cold start (process start → model ready) and peak
RSS, then our engine's own targets: engine load, first token and memory over 500 varied translations
(engine_checks.py). It prints one table per workload, the floor, the engine checks and issue #6's targets table with
PASS/MISS, and writes bench/results/<timestamp>.json and a chart beside it.
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo root, for `engine`
from full_model import DEFAULT_TOKENIZER_FROM
from systems import CACHE_DIR, ORT_ALLOW_SPINNING_DEFAULT, REPO_ROOT, SYSTEMS, disk_mb, model_dir
from targets import FLAT_GROWTH_MB, TARGET_THREADS, targets_table
from worker import READY
from workloads import NEW_TOKENS, SOURCE_TOKENS, WORKLOADS, describe, source_ids

from engine.privacy import TELEMETRY_OFF  # importing engine turns telemetry off, before any onnxruntime import

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
    """Environment for every child: repo root importable, no network look-ups, no telemetry (onnxruntime's native
    switch must be in the environment before a child loads it: optimum's sessions are created outside `engine`),
    quiet libraries."""
    path = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {
        **os.environ,
        **TELEMETRY_OFF,
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
    base = [sys.executable, str(BENCH_DIR / "prepare.py"), "--cache-dir", str(args.cache_dir)]
    base += ["--tokenizer-from", str(args.tokenizer_from)] + (["--keep-stale"] if args.reuse_models else [])
    if subprocess.run([*base, "--only", ",".join(artifacts)], env=_env(args), cwd=REPO_ROOT).returncode != 0:
        raise SystemExit("[bench] preparing the models failed (see above)")

    ours = [n for n in systems if SYSTEMS[n].is_ours]
    if not ours:
        return
    from prepare import engine_problem

    problem = engine_problem()
    if problem is None:
        bundle = subprocess.run([*base, "--only", "bundle"], env=_env(args), cwd=REPO_ROOT)
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


def run_child(
    args: argparse.Namespace, cmd: list[str], result: Path, env: dict[str, str] | None = None
) -> dict[str, object]:
    """Run one measuring process to completion; its result, plus how busy the rest of the machine was meanwhile."""
    busy0, wall0 = _busy_cpu_s(), time.perf_counter()
    proc = subprocess.run(
        cmd,
        env={**_env(args), **(env or {})},
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=WORKER_TIMEOUT_S,
    )
    busy1, wall = _busy_cpu_s(), time.perf_counter() - wall0
    out = _read_result(result, proc.stderr, proc.returncode)
    if out.get("status") == "ok" and busy0 is not None and busy1 is not None and "cpu_s" in out:
        # Cores' worth of CPU that other processes used while this ran: > 0.2 means noisy numbers.
        out["foreign_cpu_cores"] = max(busy1 - busy0 - float(out["cpu_s"]), 0.0) / wall  # type: ignore[arg-type]
    return out


def run_warm(args: argparse.Namespace, system: str, threads: int, sources: Path, tmp: Path) -> dict[str, object]:
    """One fresh process: load once, time every workload; also how busy the rest of the machine was meanwhile."""
    result = tmp / f"warm-{system}-{threads}.json"
    out = run_child(args, _worker_cmd(args, system, threads, "warm", sources, result), result)
    if out.get("status") != "ok":
        return out
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


def run_floor(args: argparse.Namespace, precision: str, threads: int, tmp: Path) -> dict[str, object]:
    """The GEMM-only floor for one precision and thread count (floor.py, a fresh process), per workload."""
    result = tmp / f"floor-{precision}-{threads}.json"
    cmd = [
        sys.executable,
        str(BENCH_DIR / "floor.py"),
        f"--bundle={model_dir('ours-int8', args.cache_dir)}",
        f"--checkpoint={args.cache_dir / 'checkpoint'}",
        f"--precision={precision}",
        f"--threads={threads}",
        f"--result={result}",
    ]
    out = run_child(args, cmd, result)
    if out.get("status") == "ok":
        enc: dict[str, dict[str, float]] = out["encoder_ms"]  # type: ignore[assignment]
        step: dict[str, dict[str, float]] = out["step_ms"]  # type: ignore[assignment]
        out["workloads"] = {
            name: enc[str(wl.batch * SOURCE_TOKENS)]["median_ms"]
            + NEW_TOKENS * step[str(wl.batch * wl.beams)]["median_ms"]
            for name, wl in WORKLOADS.items()
        }
        out["first_token_ms"] = enc[str(SOURCE_TOKENS)]["median_ms"] + step["1"]["median_ms"]
    return out


def run_engine_checks(args: argparse.Namespace, threads: int, sources: Path, tmp: Path) -> dict[str, object]:
    """Engine load (empty and filled verification cache) and first token in fresh processes, then the soak run."""
    bundle = model_dir("ours-int8", args.cache_dir)
    base = [sys.executable, str(BENCH_DIR / "engine_checks.py"), f"--bundle={bundle}", f"--threads={threads}"]
    out: dict[str, object] = {"status": "ok", "threads": threads}
    loads: dict[str, list[float]] = {"cold_cache": [], "warm_cache": []}
    first: list[float] = []
    shown: list[float] = []
    foreign: dict[str, float | None] = {}
    for i in range(args.cold_repeats):
        # A fresh, empty verification cache per pair: the first process hashes every file and fills it, the
        # second finds it warm (what every later app start sees).
        env = {"QIAO_CACHE_DIR": str(tmp / f"verify-cache-{i}")}
        for state in ("cold_cache", "warm_cache"):
            if args.wait_idle > 0:
                wait_for_idle(args.wait_idle)
            result = tmp / f"latency-{i}-{state}.json"
            cmd = [*base, "--mode=latency", f"--sources={sources}", f"--result={result}"]
            got = run_child(args, [*cmd, f"--repeats={args.first_token_repeats}"], result, env)
            if got.get("status") != "ok":
                return got
            loads[state].append(float(got["load_s"]))  # type: ignore[arg-type]
            first.extend(got["first_token_ms"])  # type: ignore[arg-type]
            shown.extend(got["translate_first_token_ms"])  # type: ignore[arg-type]
            foreign[f"latency-{i}-{state}"] = got.get("foreign_cpu_cores")  # type: ignore[assignment]
    out.update(load_s=loads, first_token_ms=first, translate_first_token_ms=shown)
    _log(
        f"engine load {statistics.median(loads['warm_cache']):.2f} s (warm verification cache), "
        f"{statistics.median(loads['cold_cache']):.2f} s (cold); first token {statistics.median(first):.1f} ms"
    )
    if args.soak_translations > 0:
        if args.wait_idle > 0:
            wait_for_idle(args.wait_idle)
        _log(f"ours-int8: {args.soak_translations} varied translations in one process (memory soak; minutes)")
        result = tmp / "soak.json"
        cmd = [*base, "--mode=soak", f"--result={result}", f"--translations={args.soak_translations}"]
        soak = run_child(args, cmd, result, {"QIAO_CACHE_DIR": str(tmp / "verify-cache-0")})
        out["soak"] = soak
        foreign["soak"] = soak.get("foreign_cpu_cores")  # type: ignore[assignment]
        if soak.get("status") == "ok":
            last = soak["checkpoints"][-1]  # type: ignore[index]
            _log(f"soak: VmHWM {last['VmHWM']:.0f} MB, VmRSS {last['VmRSS']:.0f} MB after {last['translations']}")
        else:
            _log(f"soak {soak.get('status')} — {soak.get('reason')}")
    out["foreign_cpu_cores"] = foreign
    return out


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


def _floor(results: dict[str, object], precision: str, threads: int) -> dict[str, object] | None:
    """This run's GEMM-only floor measurement for one precision and thread count, if it succeeded."""
    floor: dict[str, dict[str, dict[str, object]]] = results.get("floor", {})  # type: ignore[assignment]
    got = floor.get(precision, {}).get(str(threads))
    return got if got and got.get("status") == "ok" else None


def _floor_formula(f: dict[str, object], wl_name: str) -> str:
    """'encoder 1.7 ms + 30 × 1.34 ms step = 41.9 ms' for one workload."""
    wl = WORKLOADS[wl_name]
    enc = f["encoder_ms"][str(wl.batch * SOURCE_TOKENS)]["median_ms"]  # type: ignore[index]
    step = f["step_ms"][str(wl.batch * wl.beams)]["median_ms"]  # type: ignore[index]
    total = f["workloads"][wl_name]  # type: ignore[index]
    return f"encoder {enc:.1f} ms + {NEW_TOKENS} × {step:.2f} ms step = {total:.1f} ms"


def report(results: dict[str, object]) -> str:
    """The human-readable tables: per workload and thread count, the floor, cold start and memory, engine checks,
    and issue #6's targets."""
    systems: dict[str, dict[str, object]] = results["systems"]  # type: ignore[assignment]
    warm: dict[str, dict[str, dict[str, dict[str, float]]]] = results["warm"]  # type: ignore[assignment]
    ok = [n for n in systems if systems[n]["status"] == "ok"]
    ours = [n for n in ok if SYSTEMS[n].is_ours]
    lines: list[str] = []
    sources: dict[str, str] = results.get("engine_sources", {})  # type: ignore[assignment]
    if sources and sources["at_start"] != sources["at_end"]:
        lines.append("WARNING: engine/ sources changed during this run: our rows mix engine versions; run again")
    if results["settings"].get("reused_stale_models"):  # type: ignore[union-attr]
        lines.append("NOTE: --reuse-models: some models may predate the current checkpoint or engine (not for results)")
    for name, info in systems.items():
        if info["status"] != "ok":
            lines.append(f"{name}: SKIPPED — {info['reason']}")
        elif info.get("errors"):
            for threads, err in info["errors"].items():  # type: ignore[union-attr]
                lines.append(f"{name} @ {threads} threads: FAILED — {str(err).strip().splitlines()[-1]}")
    floor_runs: dict[str, dict[str, dict[str, object]]] = results.get("floor", {})  # type: ignore[assignment]
    for precision, runs in floor_runs.items():
        for threads, f in runs.items():
            if f.get("status") != "ok":
                lines.append(f"floor {precision} @ {threads} threads: FAILED — {f.get('reason')}")
    floor_label = {p: f"floor-{p} (GEMM only)" for p in ("int8", "fp32")}
    width = max([len(n) for n in systems] + [len(v) for v in floor_label.values()])
    if ours:
        lines.append("'÷ ours' = this system's median ÷ ours (> 1: ours is faster)")
    if floor_runs:
        lines.append(
            "'÷ floor' = median ÷ the GEMM-only floor of the same precision measured in this run (1.00× = nothing "
            "but the weight GEMMs)"
        )
    for wl_name in results["settings"]["workloads"]:  # type: ignore[index]
        wl = WORKLOADS[wl_name]
        for threads in results["settings"]["threads"]:  # type: ignore[index]
            key = str(threads)
            rows = {n: warm[n][key][wl_name]["median_ms"] for n in ok if key in warm.get(n, {})}
            if not rows:
                continue
            floors = {p: f for p in ("int8", "fp32") if (f := _floor(results, p, threads))}
            floor_ms = {p: float(f["workloads"][wl_name]) for p, f in floors.items()}  # type: ignore[index]
            lines.append("")
            lines.append(f"== {wl.title}, {threads} thread{'s' if threads > 1 else ''} ==")
            head = f"{'system':<{width}}  {'median ms':>10}  {'tokens/s':>9}"
            head += "".join(f"  {'÷ ' + o:>{len(o) + 4}}" for o in ours if o in rows)
            head += f"  {'÷ floor':>8}" if floors else ""
            lines.append(head)
            table = [*rows.items(), *((floor_label[p], ms) for p, ms in floor_ms.items())]
            for n, ms in sorted(table, key=lambda kv: kv[1]):
                row = f"{n:<{width}}  {ms:>10.1f}  {wl.target_tokens / ms * 1000:>9.0f}"
                row += "".join(f"  {_ratio(ms, rows[o]):>{len(o) + 4}}" for o in ours if o in rows)
                if floors:
                    same = floor_ms.get(_precision(n)) if n in rows else None
                    row += f"  {_ratio(ms, same) if same else '':>8}"
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
                if o in rows and _precision(o) in floors:
                    f = floors[_precision(o)]
                    lines.append(
                        f"  {o} ÷ GEMM-only floor: {_ratio(rows[o], floor_ms[_precision(o)])} "
                        f"(floor: {_floor_formula(f, wl_name)})"
                    )
    lines += floor_report(results)
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
    lines += engine_report(results)
    foreign: dict[str, float | None] = results.get("foreign_cpu_cores", {})  # type: ignore[assignment]
    noisy = {k: v for k, v in foreign.items() if v is not None and v > NOISY_CORES}
    if noisy:
        lines += ["", f"WARNING: other processes used > {NOISY_CORES} cores while these were measured (noisy):"]
        lines += [f"  {k}: {v:.2f} cores" for k, v in noisy.items()]
    agreement = results.get("greedy_agreement")
    if agreement:
        lines += ["", "greedy tokens identical to transformers-fp32 (leading tokens of sentence 1; INT8 may diverge):"]
        lines += [f"  {n}: {k}/{NEW_TOKENS}" for n, k in agreement.items()]  # type: ignore[union-attr]
    _, table = targets_table(results)
    lines += [
        "",
        f"== issue #6 targets (this run; rows without a thread count are at {TARGET_THREADS} threads) ==",
        table,
    ]
    return "\n".join(lines)


def floor_report(results: dict[str, object]) -> list[str]:
    """The floor's parts: encoder and decoder-step GEMM chains per precision and thread count, and what they are."""
    floor: dict[str, dict[str, dict[str, object]]] = results.get("floor", {})  # type: ignore[assignment]
    runs = [(p, t, f) for p, by_t in floor.items() for t, f in by_t.items() if f.get("status") == "ok"]
    if not runs:
        return []
    first = runs[0][2]
    enc_rows = list(first["encoder_ms"])  # type: ignore[arg-type]
    step_rows = list(first["step_ms"])  # type: ignore[arg-type]
    lines = ["", "== GEMM-only floor, measured here: the weight matmuls only, with the engine's kernels and options =="]
    head = f"{'precision':<9} {'threads':>7}"
    head += "".join(f"  {'encoder ' + r + ' rows':>16}" for r in enc_rows)
    head += "".join(f"  {'step ' + r + ' row' + ('s' if r != '1' else ''):>11}" for r in step_rows)
    head += "".join(f"  {name:>8}" for name in WORKLOADS) + f"  {'1st token':>9}"
    lines += [head + "   (ms, medians)"]
    for p, t, f in runs:
        row = f"{p:<9} {t:>7}"
        row += "".join(f"  {f['encoder_ms'][r]['median_ms']:>16.2f}" for r in enc_rows)  # type: ignore[index]
        row += "".join(f"  {f['step_ms'][r]['median_ms']:>11.2f}" for r in step_rows)  # type: ignore[index]
        row += "".join(f"  {f['workloads'][name]:>8.1f}" for name in WORKLOADS)  # type: ignore[index]
        lines.append(row + f"  {f['first_token_ms']:>9.2f}")
    lines.append(
        f"  workload floor = encoder (sentences × {SOURCE_TOKENS} rows) + {NEW_TOKENS} × step (sentences × beams rows);"
        " first token = encoder + 1 step"
    )
    lines.append(f"  weights: {first['weights']}")
    lines.append(
        f"  session options: {first['session_options']} (the step graph spins like the engine's decoder, the encoder"
        f" graph does not); the engine's default thread count here: {first.get('engine_default_threads')}"
    )
    for p in floor:
        f = next((f for q, _, f in runs if q == p), None)
        if f:
            gemms = f["gemms"]  # type: ignore[index]
            lines.append(f"  {p} step: {', '.join(f'{n}× {g}' for g, n in gemms['step'].items())}")  # type: ignore[index]
            lines.append(f"  {p} encoder: {', '.join(f'{n}× {g}' for g, n in gemms['encoder'].items())}")  # type: ignore[index]
            lines.append(f"  {p} vs bundle: {f['bundle_check']}")
    return lines


def engine_report(results: dict[str, object]) -> list[str]:
    """Engine load, first token and the memory soak of our INT8 engine."""
    checks: dict[str, object] = results.get("engine_checks") or {}  # type: ignore[assignment]
    if not checks:
        return []
    if checks.get("status") != "ok":
        return ["", f"engine checks: {checks.get('status')} — {checks.get('reason')}"]
    threads = int(checks["threads"])  # type: ignore[call-overload]
    loads: dict[str, list[float]] = checks["load_s"]  # type: ignore[assignment]
    n = len(loads["warm_cache"])
    lines = ["", f"== ours-int8: engine load and first token, {threads} threads, {n} fresh processes each =="]
    labels = {
        "warm_cache": "engine load, warm verification cache (files trusted by size, mtime, inode)",
        "cold_cache": "engine load, cold verification cache (every bundle file sha256-hashed)",
    }
    for state, label in labels.items():
        v = loads[state]
        lines.append(f"  {label + ':':<78} {statistics.median(v):.3f} s  ({min(v):.3f}–{max(v):.3f})")
    lines.append(
        "  (Translator(bundle, EngineConfig('int8')) timed inside a running process after its imports: "
        "what an app start pays)"
    )
    first: list[float] = checks["first_token_ms"]  # type: ignore[assignment]
    median_first = statistics.median(first)
    line = f"  {'first token, encoder + first decoder step (20-token source, 1 new token):':<78} {median_first:.2f} ms"
    f = _floor(results, "int8", threads)
    if f:
        line += f"  = {_ratio(median_first, float(f['first_token_ms']))} floor ({f['first_token_ms']:.2f} ms)"  # type: ignore[arg-type]
    lines.append(line)
    shown: list[float] = checks.get("translate_first_token_ms") or []  # type: ignore[assignment]
    if shown:
        label = "first token as translate() reports it (+ segmentation, tokenization):"
        lines.append(f"  {label:<78} {statistics.median(shown):.2f} ms")
    soak: dict[str, object] = checks.get("soak") or {}  # type: ignore[assignment]
    if soak and soak.get("status") != "ok":
        lines += ["", f"memory soak: {soak.get('status')} — {soak.get('reason')}"]
    elif soak:
        points: list[dict[str, float]] = soak["checkpoints"]  # type: ignore[assignment]
        after: dict[str, float] = soak["after_load"]  # type: ignore[assignment]
        lines += [
            "",
            f"== ours-int8: memory over {soak['translations']} varied translations in one process, "
            f"{threads} threads ==",
        ]
        lines.append(f"{'after':>13}  {'VmHWM MB':>9}  {'VmRSS MB':>9}  {'elapsed s':>9}")
        lines.append(f"{'load':>13}  {after['VmHWM']:>9.1f}  {after['VmRSS']:>9.1f}  {0.0:>9.1f}")
        for p in points:
            lines.append(
                f"{int(p['translations']):>4} transl.  {p['VmHWM']:>9.1f}  {p['VmRSS']:>9.1f}  {p['elapsed_s']:>9.1f}"
            )
        totals: dict[str, int] = soak["totals"]  # type: ignore[assignment]
        growth = points[-1]["VmRSS"] - points[0]["VmRSS"]
        lines.append(
            f"  VmHWM = peak resident set, VmRSS = resident now; VmRSS {growth:+.1f} MB from "
            f"{points[0]['translations']:.0f} to {points[-1]['translations']:.0f} translations "
            f"('flat' = at most +{FLAT_GROWTH_MB:.0f} MB)"
        )
        lines.append(
            f"  texts: {soak['texts']} (seed {soak['seed']}); {totals['sentences']} sentences, "
            f"{totals['source_tokens']:,} source → {totals['target_tokens']:,} target tokens"
        )
        lines.append(
            f"  random model: outputs used {soak['length_cap_used']:.0%} of the engine's length limit (3 × source + 10"
            " tokens per sentence), so each request decodes about as long as the engine ever lets it — real output"
            " would stop at eos much earlier"
        )
    return lines


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
    """Bar chart: top row one panel per workload (a bar per thread count, the GEMM-only floors as lines); then cold
    start, RSS, disk; then our engine's load, first token and memory over the soak."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    warm: dict[str, dict[str, dict[str, dict[str, float]]]] = results["warm"]  # type: ignore[assignment]
    cold: dict[str, dict[str, float]] = results.get("cold", {})  # type: ignore[assignment]
    systems: dict[str, dict[str, float]] = results["systems"]  # type: ignore[assignment]
    settings: dict[str, list] = results["settings"]  # type: ignore[assignment]
    names = [n for n in systems if n in warm]
    cold_ok = [n for n in names if cold.get(n, {}).get("status") == "ok"]
    checks: dict[str, object] = results.get("engine_checks") or {}  # type: ignore[assignment]
    checks_ok = checks.get("status") == "ok"
    cols = max(len(settings["workloads"]), 3)
    rows = 1 + bool(cold_ok) + checks_ok
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 4.6 * rows), squeeze=False)
    colors = ["#4c72b0", "#dd8452", "#55a868", "#c44e52"]
    line_colors = ["#1f3a68", "#8a4210", "#24602f", "#7a1f22"]
    width = 0.8 / max(len(settings["threads"]), 1)
    for ax, wl in zip(axes[0], settings["workloads"], strict=False):
        shown: list[float] = []
        for k, threads in enumerate(settings["threads"]):
            vals = [warm[n].get(str(threads), {}).get(wl, {}).get("median_ms", math.nan) for n in names]
            xs = [i + k * width for i in range(len(names))]
            bars = ax.bar(xs, vals, width, label=f"{threads} thr", color=colors[k % len(colors)])
            ax.bar_label(bars, labels=["" if math.isnan(v) else f"{v:.0f}" for v in vals], fontsize=7)
            shown += [v for v in vals if not math.isnan(v)]
            for precision, style in (("int8", "--"), ("fp32", ":")):
                f = _floor(results, precision, threads)
                if f:
                    ms = float(f["workloads"][wl])  # type: ignore[index]
                    label = f"{precision} GEMM floor, {threads} thr"
                    dark = line_colors[k % len(line_colors)]  # a darker shade of the bars' color: visible on them
                    ax.axhline(ms, color=dark, linestyle=style, linewidth=1.2, label=label, zorder=3)
                    shown.append(ms)
        if shown and max(shown) > 20 * min(shown):
            ax.set_yscale("log")  # one pathological bar would otherwise flatten all the others
        ax.set_title(WORKLOADS[wl].title, fontsize=9)
        ax.set_ylabel("median ms (lower is better)")
        ax.set_xticks([i + width * (len(settings["threads"]) - 1) / 2 for i in range(len(names))])
        ax.set_xticklabels(names, rotation=30, ha="right", fontsize=8)
        ax.legend(fontsize=7)
    if checks_ok:
        _chart_engine(results, checks, axes[-1])
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


def _chart_engine(results: dict[str, object], checks: dict[str, object], axes: object) -> None:
    """Bottom row: engine load (both verification cache states), first token vs its floor, memory over the soak."""
    bar = "#8172b3"
    ax_load, ax_first, ax_mem = axes[0], axes[1], axes[2]  # type: ignore[index]
    loads: dict[str, list[float]] = checks["load_s"]  # type: ignore[assignment]
    labels = ["warm verification cache", "cold verification cache"]
    vals = [statistics.median(loads["warm_cache"]), statistics.median(loads["cold_cache"])]
    ax_load.bar_label(ax_load.bar(labels, vals, color=bar), fmt="%.3f", fontsize=7)
    ax_load.axhline(0.3, color="#c44e52", linestyle="--", linewidth=1, label="target 0.3 s")
    ax_load.set_title(f"ours-int8 engine load s, process running ({checks['threads']} thr)", fontsize=9)
    ax_load.legend(fontsize=7)
    first = [statistics.median(checks["first_token_ms"])]  # type: ignore[arg-type]
    names = ["first token"]
    f = _floor(results, "int8", int(checks["threads"]))  # type: ignore[call-overload]
    if f:
        first.append(float(f["first_token_ms"]))  # type: ignore[arg-type]
        names.append("GEMM-only floor")
    ax_first.bar_label(ax_first.bar(names, first, color=bar), fmt="%.2f", fontsize=7)
    ax_first.axhline(10.0, color="#c44e52", linestyle="--", linewidth=1, label="target 10 ms")
    ax_first.set_title("ours-int8 first token ms (encoder + first step)", fontsize=9)
    ax_first.legend(fontsize=7)
    soak: dict[str, object] = checks.get("soak") or {}  # type: ignore[assignment]
    if soak.get("status") == "ok":
        points: list[dict[str, float]] = soak["checkpoints"]  # type: ignore[assignment]
        after: dict[str, float] = soak["after_load"]  # type: ignore[assignment]
        xs = [0.0] + [p["translations"] for p in points]
        for key, color in (("VmHWM", "#c44e52"), ("VmRSS", "#4c72b0")):
            ax_mem.plot(xs, [after[key]] + [p[key] for p in points], marker="o", color=color, label=key)
        ax_mem.axhline(180.0, color="#55a868", linestyle="--", linewidth=1, label="target 180 MB")
        ax_mem.set_xlabel("translations done (0 = after load)")
        ax_mem.set_ylabel("MB")
        ax_mem.set_ylim(bottom=0)
        ax_mem.set_title("ours-int8 memory over varied translations", fontsize=9)
        ax_mem.legend(fontsize=7)


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
    p.add_argument(
        "--cold-repeats", type=int, default=3, help="fresh processes per system for cold start (and per engine load)"
    )
    p.add_argument("--skip-floor", action="store_true", help="skip the GEMM-only floor (floor.py)")
    p.add_argument(
        "--skip-engine-checks", action="store_true", help="skip ours-int8's engine load, first token and memory soak"
    )
    p.add_argument(
        "--soak-translations",
        type=int,
        default=500,
        metavar="N",
        help="varied translations in the memory soak (issue #6: 500; 0 skips it); memory is read after 20/50/100 %%",
    )
    p.add_argument("--first-token-repeats", type=int, default=30, help="timed first-token calls per process")
    p.add_argument(
        "--reuse-models",
        action="store_true",
        help="measure the models already in the cache even if the checkpoint or engine changed since they were "
        "built (development only; recorded in the JSON)",
    )
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
    from prepare import engine_fingerprint

    engine_at_start = engine_fingerprint()  # the bundle is built from the engine as it is now
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
            "floor": not args.skip_floor,
            "engine_checks": not args.skip_engine_checks,
            "soak_translations": args.soak_translations,
            "first_token_repeats": args.first_token_repeats,
            "reused_stale_models": args.reuse_models,
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
        floor: dict[str, dict[str, object]] = {}
        if not args.skip_floor:
            for precision in sorted({_precision(n) for n in args.only}, key=("int8", "fp32").index):
                for threads in args.threads:
                    if args.wait_idle > 0:
                        wait_for_idle(args.wait_idle)
                    _log(f"GEMM-only floor, {precision} @ {threads} thread(s)")
                    f = run_floor(args, precision, threads, tmp)
                    floor.setdefault(precision, {})[str(threads)] = f
                    foreign[f"floor-{precision}@{threads}"] = f.get("foreign_cpu_cores")  # type: ignore[assignment]
                    if f.get("status") == "ok":
                        parts = ", ".join(f"{w} {ms:.1f} ms" for w, ms in f["workloads"].items())  # type: ignore[union-attr]
                        _log(f"floor {precision} @ {threads}: {parts}")
                    else:
                        _log(f"floor {precision} @ {threads}: {f.get('status')} — {f.get('reason')}")
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

        checks: dict[str, object] = {}
        if not args.skip_engine_checks and systems.get("ours-int8", {}).get("status") == "ok":
            threads = TARGET_THREADS if TARGET_THREADS in args.threads else max(args.threads)
            _log(f"ours-int8: engine load and first token, {args.cold_repeats} × 2 fresh processes, {threads} threads")
            checks = run_engine_checks(args, threads, src_file, tmp)
            foreign.update({f"engine-{k}": v for k, v in checks.pop("foreign_cpu_cores", {}).items()})  # type: ignore[union-attr]
            if checks.get("status") != "ok":
                _log(f"engine checks {checks.get('status')} — {checks.get('reason')}")

    # An engine edited while the bench runs measures a mix of versions (and may no longer load the bundle built at
    # the start): say so instead of publishing it as one run.
    results["engine_sources"] = {"at_start": engine_at_start, "at_end": engine_fingerprint()}
    results.update(
        systems=systems,
        warm=warm,
        floor=floor,
        engine_checks=checks,
        cold=cold,
        greedy_agreement=greedy_agreement(warm),
        foreign_cpu_cores=foreign,
    )
    results["targets"], _ = targets_table(results)
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
