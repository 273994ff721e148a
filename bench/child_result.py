"""The result file every measuring child process (worker.py, floor.py, engine_checks.py) hands back to run.py."""

from __future__ import annotations

import json
import os
import traceback
from collections.abc import Callable
from pathlib import Path


def write_result(path: str | Path, measure: Callable[[], dict[str, object]]) -> int:
    """Run `measure` and write its result as JSON (a failure as status "failed" with the traceback); the exit code.

    `cpu_s` (this process's CPU time) lets run.py tell our CPU use from other processes' during the measurement.
    """
    try:
        result = measure()
        times = os.times()
        result["cpu_s"] = times.user + times.system
        code = 0
    except Exception as exc:
        result = {"status": "failed", "reason": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
        code = 1
    Path(path).write_text(json.dumps(result))
    return code
