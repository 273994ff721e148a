"""Issue #6's and #16's performance targets, checked against one benchmark run: a table with measured values and
PASS/MISS.

The issue's closing note must show every target met from one run, so the bench prints the table itself instead of
leaving the comparison to whoever reads the numbers. A target whose measurement is not in the run (a system left
out with --only, a thread count not measured) reads "n/a", never PASS.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass

from workloads import NEW_TOKENS, WORKLOADS

TARGET_THREADS = 2  # the machine class: 2 cores; its targets are at 2 threads unless a row says otherwise
FLAT_GROWTH_MB = 10.0  # "flat": VmRSS may grow at most this much from the first soak checkpoint to the last

Results = dict[str, object]
# (what the measured cell says, whether the target is met or None if the run cannot tell); None: not measured
Measured = tuple[str, bool | None] | None


def warm_ms(results: Results, system: str, threads: int, workload: str) -> float | None:
    """A system's median for one workload and thread count in this run, or None."""
    warm: dict[str, dict[str, dict[str, dict[str, float]]]] = results.get("warm", {})  # type: ignore[assignment]
    return warm.get(system, {}).get(str(threads), {}).get(workload, {}).get("median_ms")


def _at_most(value: float | None, limit: float, unit: str, digits: int = 1) -> Measured:
    return None if value is None else (f"{value:.{digits}f} {unit}", value <= limit)


def _ours(workload: str, limit: float, system: str = "ours-int8", threads: int = TARGET_THREADS) -> Callable:
    return lambda r: _at_most(warm_ms(r, system, threads, workload), limit, "ms")


def _vs_ct2(r: Results) -> Measured:
    ours = warm_ms(r, "ours-int8", TARGET_THREADS, "greedy")
    threads: list[int] = r.get("settings", {}).get("threads", [])  # type: ignore[union-attr]
    ct2 = [(ms, t) for t in threads if (ms := warm_ms(r, "ct2-int8", t, "greedy")) is not None]
    if ours is None or not ct2:
        return None
    best, at = min(ct2)
    ratio = best / ours
    return f"{ratio:.2f}× (CTranslate2 int8 best: {best:.1f} ms at {at} thread{'s' if at > 1 else ''})", ratio >= 3.0


def _batch_tokens_per_s(r: Results) -> Measured:
    ms = warm_ms(r, "ours-int8", TARGET_THREADS, "batch8")
    if ms is None:
        return None
    rate = WORKLOADS["batch8"].batch * NEW_TOKENS / (ms / 1000)
    return f"{rate:,.0f} tokens/s ({ms:.1f} ms)", rate >= 2400


def _checks(r: Results) -> dict[str, object]:
    checks = r.get("engine_checks")
    return checks if isinstance(checks, dict) and checks.get("status") == "ok" else {}


def _thread_note(checks: dict[str, object]) -> str:
    threads = checks.get("threads")
    return "" if threads == TARGET_THREADS else f" (at {threads} threads)"


def _first_token(r: Results) -> Measured:
    checks = _checks(r)
    samples: list[float] = checks.get("first_token_ms") or []  # type: ignore[assignment]
    if not samples:
        return None
    ms = statistics.median(samples)
    return f"{ms:.1f} ms{_thread_note(checks)}", ms <= 10.0


def _load(r: Results) -> Measured:
    checks = _checks(r)
    loads: dict[str, list[float]] = checks.get("load_s") or {}  # type: ignore[assignment]
    if not loads.get("warm_cache"):
        return None
    warm = statistics.median(loads["warm_cache"])
    cold = statistics.median(loads["cold_cache"])
    text = f"{warm:.3f} s with a warm verification cache (judged); {cold:.3f} s cold{_thread_note(checks)}"
    return text, warm <= 0.3


def _soak(r: Results) -> Measured:
    soak: dict[str, object] = _checks(r).get("soak") or {}  # type: ignore[assignment]
    if soak.get("status") != "ok":
        return None
    points: list[dict[str, float]] = soak["checkpoints"]  # type: ignore[assignment]
    peak = max(p["VmHWM"] for p in points)
    growth = points[-1]["VmRSS"] - points[0]["VmRSS"]
    flat = growth <= FLAT_GROWTH_MB
    text = (
        f"{peak:.0f} MB peak (VmHWM) after {points[-1]['translations']:.0f}; VmRSS {points[0]['VmRSS']:.0f} → "
        f"{points[-1]['VmRSS']:.0f} MB from {points[0]['translations']:.0f} on: {'flat' if flat else 'GROWING'}"
    )
    if int(soak["translations"]) < 500:  # type: ignore[call-overload]
        return text + " (fewer translations than the target asks)", None
    return text, peak <= 180.0 and flat


def _paragraph(r: Results) -> Measured:
    """Issue #16: ours end to end through translate() ≤ 0.8 × CTranslate2 int8's one batch, same sentences."""
    par: dict[str, dict[str, dict[str, object]]] = r.get("paragraph", {})  # type: ignore[assignment]
    ours = par.get("ours-int8", {}).get(str(TARGET_THREADS), {})
    ct2 = par.get("ct2-int8", {}).get(str(TARGET_THREADS), {})
    if ours.get("status") != "ok" or ct2.get("status") != "ok":
        return None
    ratio = float(ours["median_ms"]) / float(ct2["median_ms"])  # type: ignore[arg-type]
    text = (
        f"{ratio:.2f}× ({float(ours['median_ms']):.0f} ms vs {float(ct2['median_ms']):.0f} ms; "  # type: ignore[arg-type]
        f"{ours['target_tokens']} vs {ct2['target_tokens']} target tokens)"
    )
    return text, ratio <= 0.8


def _vs_floor(r: Results) -> Measured:
    """Issue #16: every workload of ours-int8 at 2 threads ≤ 1.3 × the GEMM-only floor measured in the same run; a
    floor above ours is a measurement error, so the row cannot be judged."""
    floor = r.get("floor", {}).get("int8", {}).get(str(TARGET_THREADS), {})  # type: ignore[union-attr]
    if floor.get("status") != "ok":
        return None
    ratios = {}
    for name in WORKLOADS:
        ms = warm_ms(r, "ours-int8", TARGET_THREADS, name)
        if ms is not None and name in floor["workloads"]:
            ratios[name] = ms / float(floor["workloads"][name])
    if not ratios:
        return None
    worst = max(ratios, key=ratios.__getitem__)
    text = ", ".join(f"{n} {v:.2f}×" for n, v in ratios.items())
    if min(ratios.values()) < 1.0:
        return f"{text}: floor above ours — measurement error", None
    return f"{text} (worst: {worst})", ratios[worst] <= 1.3


def _soak_vs_ct2(r: Results) -> Measured:
    """Issue #16: ours' peak RSS after 500 varied translations with the real-scale tokenizer ≤ CTranslate2 int8's on
    the same texts in the same run, and ≤ 160 MB."""
    checks = _checks(r)
    soak: dict[str, object] = checks.get("soak") or {}  # type: ignore[assignment]
    peer: dict[str, object] = (checks.get("peer_soak") or {}).get("ct2-int8") or {}  # type: ignore[union-attr]
    if soak.get("status") != "ok" or peer.get("status") != "ok":
        return None
    ours = max(p["VmHWM"] for p in soak["checkpoints"])  # type: ignore[union-attr,index]
    ct2 = max(p["VmHWM"] for p in peer["checkpoints"])  # type: ignore[union-attr,index]
    tokenizer = r.get("settings", {}).get("tokenizer", "fixture")  # type: ignore[union-attr]
    text = f"ours {ours:.0f} MB vs CTranslate2 int8 {ct2:.0f} MB after {soak['translations']} ({tokenizer} tokenizer)"
    if int(soak["translations"]) < 500 or tokenizer != "real":  # type: ignore[call-overload]
        return text + " (the target asks 500 with --tokenizer real)", None
    return text, ours <= ct2 and ours <= 160.0


@dataclass(frozen=True)
class Target:
    """One row of the issue's table."""

    workload: str
    target: str
    measure: Callable[[Results], Measured]


TARGETS: tuple[Target, ...] = (
    Target("greedy INT8, 20 tokens in → 30 out, 2 threads", "≤ 50 ms", _ours("greedy", 50.0)),
    Target(
        "greedy INT8, 20 tokens in → 30 out, 2 threads",
        "≥ 3× faster than CTranslate2 int8 at its best thread count in the same run",
        _vs_ct2,
    ),
    Target("same, 1 thread", "≤ 80 ms", _ours("greedy", 80.0, threads=1)),
    Target("beam 4 INT8, 20 → 30", "≤ 90 ms", _ours("beam4", 90.0)),
    Target("8 sentences batched, greedy INT8", "≥ 2,400 target tokens/s", _batch_tokens_per_s),
    Target("greedy FP32, 20 → 30", "≤ 240 ms", _ours("greedy", 240.0, system="ours-fp32")),
    Target("first token (encoder + first step) INT8", "≤ 10 ms", _first_token),
    Target("engine load, INT8 bundle, process already running", "≤ 0.3 s", _load),
    Target("peak RSS of a process with the INT8 engine after 500 varied translations", "≤ 180 MB, flat", _soak),
    # issue #16
    Target(
        "pasted paragraph, 5 sentences, beam 4, Translator.translate end to end, INT8",
        "≤ 0.8 × CTranslate2 int8 translating the same sentences as one batch",
        _paragraph,
    ),
    Target("every workload, INT8, 2 threads", "≤ 1.3 × the GEMM-only floor measured in the same run", _vs_floor),
    Target(
        "peak RSS, INT8 engine, 500 varied translations, real-scale tokenizer",
        "≤ CTranslate2 int8's in the same run, and ≤ 160 MB",
        _soak_vs_ct2,
    ),
)


def targets_table(results: Results) -> tuple[list[dict[str, str]], str]:
    """Rows for the JSON and the table as Markdown (pasteable into the issue's closing note)."""
    rows = []
    for t in TARGETS:
        got = t.measure(results)
        if got is None:
            measured, verdict = "not measured in this run", "n/a"
        else:
            measured, verdict = got[0], {True: "PASS", False: "MISS", None: "n/a"}[got[1]]
        rows.append({"workload": t.workload, "target": t.target, "measured": measured, "result": verdict})
    head = {"workload": "workload", "target": "target", "measured": "measured", "result": "PASS/MISS"}
    keys = list(head)
    widths = {k: max(len(r[k]) for r in [head, *rows]) for k in keys}
    lines = ["| " + " | ".join(head[k].ljust(widths[k]) for k in keys) + " |"]
    lines.append("|" + "|".join("-" * (widths[k] + 2) for k in keys) + "|")
    lines += ["| " + " | ".join(r[k].ljust(widths[k]) for k in keys) + " |" for r in rows]
    passed = sum(r["result"] == "PASS" for r in rows)
    missed = sum(r["result"] == "MISS" for r in rows)
    lines.append(f"{passed} PASS, {missed} MISS, {len(rows) - passed - missed} not measured")
    return rows, "\n".join(lines)
