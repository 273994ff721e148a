"""ONNX Runtime sessions: the one place the engine creates them, with options set explicitly (never left to defaults
that differ between versions and machines), and never with onnxruntime's telemetry on (engine/privacy.py)."""

from __future__ import annotations

import os
from pathlib import Path

import onnxruntime as ort

from engine.privacy import require_applied

# Windows: ONNX Runtime's ETW telemetry events, whose documented switch this is (elsewhere it is not enough: see
# engine/privacy.py, which has switched the native telemetry off before onnxruntime could load).
ort.disable_telemetry_events()


# Run options that make the CPU arena hand back what it no longer holds once the run ends: for the first run of a batch
# (encoder, decoder's first step, the beam scorer when the row count changes), so the largest batch ever seen does not
# stay reserved for good.
SHRINK_ARENA = ort.RunOptions()
SHRINK_ARENA.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")


def physical_cores() -> int:
    """Cores this process may use, counting each physical core once where the OS tells us."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 1
    siblings = _threads_per_core()
    return max(1, usable // siblings) if siblings > 1 and usable >= 2 * siblings else max(1, usable)


def _threads_per_core() -> int:
    try:
        text = Path("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list").read_text()
    except OSError:
        return 1
    count = 0
    for part in text.strip().split(","):
        lo, _, hi = part.partition("-")
        count += int(hi) - int(lo) + 1 if hi else 1
    return max(1, count)


def default_threads() -> int:
    """Intra-op threads when the user chose "auto": one per physical core, at most 4. Batch-1 decoding streams
    ~55 MB of weights per token, so memory bandwidth saturates after a few cores while every extra thread adds
    synchronisation to the ~80 small kernels of a step (2 threads: 75 ms vs 1 thread: 110 ms for 30 tokens here)."""
    return min(physical_cores(), 4)


def session_options(threads: int | None = None, spinning: bool = False) -> ort.SessionOptions:
    """`spinning`: let the pool's threads spin between kernels instead of sleeping. Worth it only for the session
    that runs back to back (the decoder step: 85 → 75 ms greedy, 166 → 141 ms beam 4 at 2 threads); a session
    that runs once per batch (encoder) must sleep, or its idle spinning thread steals the decoder's core.

    The spinning stops as each run returns (`session.force_spinning_stop`): between two decoder steps the calling
    thread scores the candidates and reorders the cache, and a pool thread still spinning there took the second
    core from it (8 sentences × 4 beams, 2 threads, Intel Xeon: scorer 297 → 176 ms a call, 1075 → 991 ms in all)."""
    opts = ort.SessionOptions()
    n = threads or default_threads()
    opts.intra_op_num_threads = n
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Input lengths vary per request: a memory pattern planned for one shape is wasted on the next.
    opts.enable_mem_pattern = False
    opts.enable_cpu_mem_arena = True
    opts.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning and n > 1 else "0")
    opts.add_session_config_entry("session.force_spinning_stop", "1")
    opts.add_session_config_entry("session.inter_op.allow_spinning", "0")
    opts.log_severity_level = 3
    return opts


def inference_session(
    path: Path | bytes, options: ort.SessionOptions, providers: list[str] | None = None
) -> ort.InferenceSession:
    """A session for `path` (or a serialised model's bytes) on `providers` (ONNX Runtime names,
    `EngineConfig.ort_providers`; default: the CPU); raises RuntimeError if onnxruntime was loaded with its telemetry
    on (the process would contact the vendor's telemetry host, which Qiao promises never to do)."""
    require_applied()
    chosen = list(providers) if providers else ["CPUExecutionProvider"]
    model = path if isinstance(path, bytes) else str(path)
    return ort.InferenceSession(model, sess_options=options, providers=chosen)


def create_session(
    path: Path, threads: int | None = None, spinning: bool = False, providers: list[str] | None = None
) -> ort.InferenceSession:
    """An engine session with Qiao's options (see `session_options`)."""
    return inference_session(path, session_options(threads, spinning), providers)
