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
from floor import combine_rounds
from full_model import DEFAULT_TOKENIZER_FROM, TOKENIZERS
from machine import describe_cpu, load_average, read_cpu
from real_tokenizer import describe_tokenizer
from systems import (
    CACHE_DIR,
    ORT_ALLOW_SPINNING_DEFAULT,
    REAL_TOKENIZER_CACHE_DIR,
    REPO_ROOT,
    SYSTEMS,
    disk_mb,
    model_dir,
)
from targets import FLAT_GROWTH_MB, TARGET_THREADS, targets_table
from worker import READY
from workloads import (
    NEW_TOKENS,
    PARAGRAPH,
    PARAGRAPH_SYSTEMS,
    PARAGRAPH_TITLE,
    SOURCE_TOKENS,
    WORKLOADS,
    describe,
    peer_decoding_length,
    source_ids,
)

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


def run_floor(
    args: argparse.Namespace, precision: str, threads: int, tmp: Path, round_no: int = 0
) -> dict[str, object]:
    """One round of the GEMM-only floor for one precision and thread count (floor.py, a fresh process)."""
    result = tmp / f"floor-{precision}-{threads}-{round_no}.json"
    cmd = [
        sys.executable,
        str(BENCH_DIR / "floor.py"),
        f"--bundle={model_dir('ours-int8', args.cache_dir)}",
        f"--checkpoint={args.cache_dir / 'checkpoint'}",
        f"--precision={precision}",
        f"--threads={threads}",
        f"--result={result}",
    ]
    return run_child(args, cmd, result)


def floor_workloads(out: dict[str, object]) -> dict[str, object]:
    """A (combined) floor measurement with each workload's floor: encoder + NEW_TOKENS × step, and first token."""
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


def floor_above_ours(results: dict[str, object]) -> list[dict[str, object]]:
    """Every (system, threads, workload) where the GEMM-only floor measured above our own median: impossible for a
    real floor (our engine runs those very GEMMs and more), so a measurement error to report, never a ratio."""
    warm: dict[str, dict[str, dict[str, dict[str, float]]]] = results.get("warm", {})  # type: ignore[assignment]
    bad = []
    for system in ("ours-int8", "ours-fp32"):
        for threads, per_wl in warm.get(system, {}).items():
            f = _floor(results, _precision(system), int(threads))
            if not f:
                continue
            for wl_name, t in per_wl.items():
                floor_ms = f["workloads"].get(wl_name)  # type: ignore[union-attr]
                if floor_ms is not None and floor_ms > t["median_ms"]:
                    bad.append(
                        {
                            "system": system,
                            "threads": int(threads),
                            "workload": wl_name,
                            "floor_ms": floor_ms,
                            "ours_ms": t["median_ms"],
                        }
                    )
    return bad


def run_paragraph(
    args: argparse.Namespace, system: str, threads: int, sources: Path, tmp: Path, spec: dict[str, object] | None
) -> dict[str, object]:
    """Issue #16's paragraph workload for one system in a fresh process (peers: with ours' ids and length)."""
    result = tmp / f"paragraph-{system}-{threads}.json"
    cmd = _worker_cmd(args, system, threads, "paragraph", sources, result)
    if spec is not None:
        spec_file = tmp / f"paragraph-spec-{system}-{threads}.json"
        spec_file.write_text(json.dumps(spec))
        cmd.append(f"--paragraph-spec={spec_file}")
    out = run_child(args, cmd, result)
    if out.get("status") == "ok":
        samples: list[float] = out["samples_ms"]  # type: ignore[assignment]
        out["median_ms"] = statistics.median(samples)
        out["min_ms"] = min(samples)
        out["spec"] = spec
        lengths: list[int] = out["output"]["target_lengths"]  # type: ignore[index]
        out["target_tokens"] = sum(lengths)
        out["tokens_per_s"] = sum(lengths) / (out["median_ms"] / 1000)  # type: ignore[operator]
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
        if "ct2-int8" in args.only and model_dir("ct2-int8", args.cache_dir).exists():
            # issue #16: our peak RSS against CTranslate2 int8's on the same texts, same checkpoints, same tokenizer
            if args.wait_idle > 0:
                wait_for_idle(args.wait_idle)
            _log(f"ct2-int8: the same {args.soak_translations} varied translations (memory soak)")
            result = tmp / "soak-ct2-int8.json"
            cmd = [
                sys.executable,
                str(BENCH_DIR / "peer_soak.py"),
                f"--model={model_dir('ct2-int8', args.cache_dir)}",
                f"--checkpoint={args.cache_dir / 'checkpoint'}",
                f"--threads={threads}",
                f"--translations={args.soak_translations}",
                f"--result={result}",
            ]
            peer = run_child(args, cmd, result)
            out["peer_soak"] = {"ct2-int8": peer}
            foreign["soak-ct2-int8"] = peer.get("foreign_cpu_cores")  # type: ignore[assignment]
            if peer.get("status") == "ok":
                last = peer["checkpoints"][-1]  # type: ignore[index]
                _log(
                    f"ct2 soak: VmHWM {last['VmHWM']:.0f} MB, VmRSS {last['VmRSS']:.0f} MB after {last['translations']}"
                )
            else:
                _log(f"ct2 soak {peer.get('status')} — {peer.get('reason')}")
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
    lines: list[str] = header(results)
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
                    cell = "" if not same else "ERROR" if same > ms else _ratio(ms, same)
                    row += f"  {cell:>8}"
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
                if o in rows and _precision(o) in floors and floor_ms[_precision(o)] > rows[o]:
                    lines.append(
                        f"  MEASUREMENT ERROR: the GEMM-only floor ({floor_ms[_precision(o)]:.1f} ms) is above {o} "
                        f"({rows[o]:.1f} ms), which runs those GEMMs and more: the floor is wrong here, no ratio given"
                    )
                elif o in rows and _precision(o) in floors:
                    f = floors[_precision(o)]
                    lines.append(
                        f"  {o} ÷ GEMM-only floor: {_ratio(rows[o], floor_ms[_precision(o)])} "
                        f"(floor: {_floor_formula(f, wl_name)})"
                    )
    lines += paragraph_report(results)
    lines += floor_report(results)
    bad = results.get("floor_above_ours") or []
    if bad:
        lines += ["", "MEASUREMENT ERROR: the GEMM-only floor measured above our own time (impossible for a floor):"]
        lines += [
            f"  {b['system']} @ {b['threads']} threads, {b['workload']}: floor {b['floor_ms']:.1f} ms > ours "
            f"{b['ours_ms']:.1f} ms"
            for b in bad  # type: ignore[union-attr]
        ]
        lines.append("  (these rows' ÷ floor ratios and floor targets are not judged; see bench/README.md)")
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
        f"== issue #6 and #16 targets (this run; rows without a thread count are at {TARGET_THREADS} threads) ==",
        table,
    ]
    return "\n".join(lines)


def paragraph_report(results: dict[str, object]) -> list[str]:
    """Issue #16's paragraph workload: ours end to end through Translator.translate vs the peers' one batch."""
    paragraph: dict[str, dict[str, dict[str, object]]] = results.get("paragraph", {})  # type: ignore[assignment]
    lines: list[str] = []
    for threads in results["settings"]["threads"]:  # type: ignore[index]
        rows = {
            n: by_t[str(threads)] for n, by_t in paragraph.items() if by_t.get(str(threads), {}).get("status") == "ok"
        }
        failed = {n: by_t[str(threads)] for n, by_t in paragraph.items() if str(threads) in by_t and n not in rows}
        if not rows and not failed:
            continue
        lines += ["", f"== {PARAGRAPH_TITLE}, {threads} thread{'s' if threads > 1 else ''} =="]
        lines.append(f"{'system':<10}  {'median ms':>10}  {'target tokens':>13}  {'tokens/s':>9}  per sentence")
        for n, r in sorted(rows.items(), key=lambda kv: kv[1]["median_ms"]):  # type: ignore[arg-type,return-value]
            out: dict[str, object] = r["output"]  # type: ignore[assignment]
            src = [len(ids) for ids in out["source_ids"]]  # type: ignore[union-attr]
            per = ", ".join(f"{a}→{b}" for a, b in zip(src, out["target_lengths"]))  # type: ignore[call-overload]
            lines.append(
                f"{n:<10}  {r['median_ms']:>10.1f}  {r['target_tokens']:>13}  {r['tokens_per_s']:>9.0f}  {per}"
            )
        for n, r in failed.items():
            lines.append(f"{n:<10}  {r.get('status')} — {r.get('reason')}")
        for o in ("ours-int8", "ours-fp32"):
            if o in rows:
                for peer in ("ct2-int8", "ct2-fp32"):
                    if peer in rows:
                        ratio = float(rows[o]["median_ms"]) / float(rows[peer]["median_ms"])  # type: ignore[arg-type]
                        lines.append(f"  {o} ÷ {peer}: {ratio:.2f}× (< 1: ours is faster)")
        lines.append(
            f"  ours: Translator.translate of the {len(PARAGRAPH)} sentences as one pasted text (segmentation, "
            "tokenization, beam 4, streamed deltas, detokenization; sentence cache emptied before each call); peers: "
            "translate_batch of ours' source ids, every row decoding ours' mean target length (min = max)"
        )
    return lines


def header(results: dict[str, object]) -> list[str]:
    """Which machine, load and tokenizer the numbers below come from (the CPU first: ratios depend on it)."""
    machine: dict[str, object] = results.get("machine", {})  # type: ignore[assignment]
    cpu = machine.get("cpu_line") or machine.get("cpu") or "unknown CPU"
    load = machine.get("load_average_at_start")
    load_text = f", load average at start {' '.join(f'{x:.2f}' for x in load)}" if load else ""  # type: ignore[union-attr]
    lines = [f"host: {cpu}, {machine.get('usable_cpus')} usable CPUs{load_text}"]
    tok: dict[str, object] = results.get("inputs", {}).get("tokenizer", {})  # type: ignore[union-attr]
    if tok:
        lines.append(f"tokenizer: {tok.get('kind')} ({tok.get('summary')})")
    return lines


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
            f"  random model: outputs used {soak['length_cap_used']:.0%} of the engine's length limit (en→zh: 3 ×"
            " source + 12 tokens per sentence), so each request decodes about as long as the engine ever lets it —"
            " real output would stop at eos much earlier"
        )
    peer: dict[str, object] = (checks.get("peer_soak") or {}).get("ct2-int8") or {}  # type: ignore[union-attr]
    if peer and peer.get("status") != "ok":
        lines += ["", f"ct2-int8 memory soak: {peer.get('status')} — {peer.get('reason')}"]
    elif peer:
        pts: list[dict[str, float]] = peer["checkpoints"]  # type: ignore[assignment]
        loaded: dict[str, float] = peer["after_load"]  # type: ignore[assignment]
        ours_pts: list[dict[str, float]] = soak.get("checkpoints") or []  # type: ignore[assignment]
        lines += ["", f"== ct2-int8 beside ours-int8: the same {peer['translations']} varied translations =="]
        lines.append(f"{'after':>13}  {'ct2 VmHWM':>9}  {'ct2 VmRSS':>9}  {'ours VmHWM':>10}  {'ours VmRSS':>10}")
        lines.append(f"{'load':>13}  {loaded['VmHWM']:>9.1f}  {loaded['VmRSS']:>9.1f}")
        for i, p in enumerate(pts):
            row = f"{int(p['translations']):>4} transl.  {p['VmHWM']:>9.1f}  {p['VmRSS']:>9.1f}"
            if i < len(ours_pts):
                row += f"  {ours_pts[i]['VmHWM']:>10.1f}  {ours_pts[i]['VmRSS']:>10.1f}"
            lines.append(row)
        lines.append(
            "  ct2: sentences split on . ! ?, source.spm pieces, one translate_batch per text (odd beam 4, even "
            "greedy), each row limited to the room ours gives it, target.spm decoding; no `engine` import"
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
    """Enough about the machine and library versions to compare runs later: the CPU's model and vendor (issue #16:
    kernel speed and even which one is the floor depend on them), its SIMD features, the load average at the start."""
    cpu = read_cpu()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    versions = {}
    for pkg in VERSIONED:
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = None
    return {
        "platform": platform.platform(),
        "cpu": cpu["model"],
        "cpu_vendor": cpu["vendor"],
        "cpu_identity": cpu,
        "cpu_line": describe_cpu(cpu),
        "load_average_at_start": load_average(),
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
        "--floor-rounds",
        type=int,
        default=2,
        help="floor processes per precision and thread count: one before the systems, the rest after; "
        "the least of their medians is kept",
    )
    p.add_argument("--skip-paragraph", action="store_true", help="skip the paragraph workload (issue #16)")
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
    p.add_argument(
        "--tokenizer",
        choices=TOKENIZERS,
        default="fixture",
        help="real: the checkpoint gets bench/real_tokenizer.py's 2 × 32k-piece tokenizer (issue #16; built once, "
        f"minutes) and lives in {REAL_TOKENIZER_CACHE_DIR.relative_to(REPO_ROOT)}/ unless --cache-dir says otherwise",
    )
    p.add_argument("--cache-dir", type=Path, help=f"default: {CACHE_DIR.relative_to(REPO_ROOT)}/")
    p.add_argument("--tokenizer-from", type=Path, help="tokenizer files for the checkpoint (default: --tokenizer's)")
    p.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    args = p.parse_args(argv)
    real = args.tokenizer == "real"
    if args.cache_dir is None:
        args.cache_dir = REAL_TOKENIZER_CACHE_DIR if real else CACHE_DIR
    if args.tokenizer_from is None:
        if real:
            from real_tokenizer import build_real_tokenizer

            args.tokenizer_from = build_real_tokenizer()
        else:
            args.tokenizer_from = DEFAULT_TOKENIZER_FROM
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
            "tokenizer": args.tokenizer,
            "cache_dir": str(args.cache_dir),
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
        "inputs": {
            **describe(sources),
            "tokenizer": describe_tokenizer(args.cache_dir / "checkpoint", args.tokenizer, args.tokenizer_from),
        },
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
        floor_rounds: dict[str, dict[str, list[dict[str, object]]]] = {}
        floor_precisions = sorted({_precision(n) for n in args.only}, key=("int8", "fp32").index)

        def floor_round(threads: int) -> None:
            # alternating with the systems (ours first among them): once before a thread count's runs, once after
            for precision in floor_precisions:
                rounds = floor_rounds.setdefault(precision, {}).setdefault(str(threads), [])
                if args.wait_idle > 0:
                    wait_for_idle(args.wait_idle)
                _log(f"GEMM-only floor, {precision} @ {threads} thread(s), round {len(rounds) + 1}")
                f = run_floor(args, precision, threads, tmp, len(rounds))
                rounds.append(f)
                foreign[f"floor-{precision}@{threads}#{len(rounds)}"] = f.get("foreign_cpu_cores")  # type: ignore[assignment]
                if f.get("status") != "ok":
                    _log(f"floor {precision} @ {threads}: {f.get('status')} — {f.get('reason')}")

        for threads in args.threads:
            if not args.skip_floor:
                floor_round(threads)
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
            if not args.skip_floor:
                for _ in range(max(args.floor_rounds - 1, 0)):
                    floor_round(threads)
        floor: dict[str, dict[str, object]] = {}
        for precision, by_threads in floor_rounds.items():
            for key, rounds in by_threads.items():
                f = floor_workloads(combine_rounds(rounds))
                floor.setdefault(precision, {})[key] = f
                if f.get("status") == "ok":
                    parts = ", ".join(f"{w} {ms:.1f} ms" for w, ms in f["workloads"].items())  # type: ignore[union-attr]
                    _log(f"floor {precision} @ {key} (least of {f['rounds']} rounds' medians): {parts}")
        paragraph: dict[str, dict[str, object]] = {}
        if not args.skip_paragraph:
            for threads in args.threads:
                ran: dict[str, dict[str, object]] = {}
                for name in sorted(
                    (n for n in args.only if n in PARAGRAPH_SYSTEMS and systems[n]["status"] == "ok"),
                    key=lambda n: not SYSTEMS[n].is_ours,  # ours first: the peers decode ours' ids and lengths
                ):
                    spec = None
                    if not SYSTEMS[name].is_ours:
                        ref = ran.get(f"ours-{_precision(name)}") or next(iter(ran.values()), None)
                        if ref is None:
                            continue
                        output: dict[str, object] = ref["output"]  # type: ignore[assignment]
                        spec = {
                            "source_ids": output["source_ids"],
                            "decoding_length": peer_decoding_length(output["target_lengths"]),  # type: ignore[arg-type]
                            "from": ref["system"],
                        }
                    if args.wait_idle > 0:
                        wait_for_idle(args.wait_idle)
                    _log(f"{name} @ {threads}: the paragraph workload, {args.repeats} timed calls")
                    out = run_paragraph(args, name, threads, src_file, tmp, spec)
                    out["system"] = name
                    paragraph.setdefault(name, {})[str(threads)] = out
                    foreign[f"paragraph-{name}@{threads}"] = out.get("foreign_cpu_cores")  # type: ignore[assignment]
                    if out.get("status") == "ok":
                        ran[name] = out
                        _log(f"{name} @ {threads}: paragraph {out['median_ms']:.0f} ms, {out['target_tokens']} tokens")
                    else:
                        _log(f"{name} @ {threads}: paragraph {out.get('status')} — {out.get('reason')}")
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
        paragraph=paragraph,
        floor=floor,
        engine_checks=checks,
        cold=cold,
        greedy_agreement=greedy_agreement(warm),
        foreign_cpu_cores=foreign,
    )
    results["floor_above_ours"] = floor_above_ours(results)
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
