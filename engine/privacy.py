"""Keep the libraries Qiao loads from phoning home: the one place that turns their telemetry off.

ONNX Runtime's native library (1.2x, every OS) writes a device id and queued events (CPU, OS, memory, program path,
model and graph names) to ~/.cache/Microsoft/DeveloperTools/.onnxruntime/ as soon as it is imported, and resolves its
vendor's telemetry host ~10, ~15 and ~24 s later. `onnxruntime.disable_telemetry_events()` does not stop that; the
environment variable ORT_DISABLE_TELEMETRY=1 does, but only if it is set before the library is loaded (setting it
after `import onnxruntime` changes nothing). So:

* `engine/__init__.py` calls `apply()`: importing anything in `engine` sets the variables first, and child
  processes inherit them. The frozen launcher, the bench scripts and tests/conftest.py import `engine` first too.
* `engine.runtime.sessions` calls `require_applied()` before creating any session, which refuses to run when
  onnxruntime was
  loaded before `apply()` (that process's telemetry is already on, and no later setting can turn it off): a code path
  that imports onnxruntime first fails in every test instead of quietly phoning home.

HF_HUB_DISABLE_TELEMETRY and DO_NOT_TRACK cover the build pipeline's and the benchmark's libraries (huggingface_hub,
transformers, optimum).
"""

from __future__ import annotations

import os
import sys

ORT_SWITCH = "ORT_DISABLE_TELEMETRY"
TELEMETRY_OFF: dict[str, str] = {
    ORT_SWITCH: "1",  # onnxruntime's native telemetry (read when the library loads)
    "HF_HUB_DISABLE_TELEMETRY": "1",  # huggingface_hub / transformers / optimum (build pipeline, bench)
    "DO_NOT_TRACK": "1",  # the cross-tool convention, honoured by huggingface_hub and others
}

_loaded_too_early: bool | None = None  # set once, by the first apply(): was onnxruntime already loaded without it?


def onnxruntime_loaded() -> bool:
    """Whether onnxruntime (or any of its submodules) is already imported in this process."""
    return any(name == "onnxruntime" or name.startswith("onnxruntime.") for name in sys.modules)


def apply() -> None:
    """Force the telemetry switches on in this process's environment (and so in every child's). Idempotent."""
    global _loaded_too_early
    if _loaded_too_early is None:
        _loaded_too_early = onnxruntime_loaded() and os.environ.get(ORT_SWITCH) != "1"
    os.environ.update(TELEMETRY_OFF)


def onnxruntime_telemetry_off() -> bool:
    """True when onnxruntime is (or, once imported, will be) loaded with its telemetry switched off."""
    if _loaded_too_early is None:  # apply() never ran: only true if the environment had it from the start
        return not onnxruntime_loaded() or os.environ.get(ORT_SWITCH) == "1"
    return not _loaded_too_early and os.environ.get(ORT_SWITCH) == "1"


def require_applied() -> None:
    """Refuse to go on when onnxruntime was loaded with its telemetry on: Qiao promises no network, ever."""
    if not onnxruntime_telemetry_off():
        raise RuntimeError(
            "onnxruntime was imported before Qiao could switch its telemetry off, so this process would send "
            f"telemetry. Import `engine` (which sets {ORT_SWITCH}=1) before onnxruntime, or start the process with "
            f"{ORT_SWITCH}=1 in its environment."
        )
