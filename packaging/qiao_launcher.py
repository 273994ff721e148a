"""Entry point of the frozen app: the same `qiao.cli.main` as the `qiao` console script.

So `qiao` with no arguments opens the window, and `qiao --self-test` / `qiao translate …` work in the frozen app
exactly as from source. Only one thing differs when frozen: a windowed Windows executable starts without standard
streams (`sys.stdout is None`). If it was started from a console, we attach to that console so `--self-test` and
the subcommands still print; otherwise the streams go to devnull so a stray print can never crash the GUI.
(`qiao-cli.exe`, the console twin built next to `qiao.exe`, needs none of this.)

Before anything else it imports `engine`, which switches onnxruntime's telemetry off (engine/privacy.py) before
onnxruntime can load; the runtime hook pyi_rth_qiao_privacy.py does the same even earlier, so a change here cannot
lose it.
"""

from __future__ import annotations

import os
import sys

import engine  # noqa: F401 - before anything can load onnxruntime, for its side effect: ORT_DISABLE_TELEMETRY=1


def _ensure_streams() -> None:
    """Give a windowed (no-console) executable usable stdout/stderr; a no-op everywhere else."""
    if sys.stdout is not None and sys.stderr is not None and sys.stdin is not None:
        return
    if sys.platform == "win32" and len(sys.argv) > 1:
        import ctypes

        if ctypes.windll.kernel32.AttachConsole(-1):  # ATTACH_PARENT_PROCESS: the cmd/PowerShell that started us
            # CONIN$/CONOUT$ open as Python's Unicode console streams (PEP 528): Chinese prints correctly.
            sys.stdout = sys.stdout or open("CONOUT$", "w", encoding="utf-8", errors="replace")  # noqa: SIM115
            sys.stderr = sys.stderr or open("CONOUT$", "w", encoding="utf-8", errors="replace")  # noqa: SIM115
            sys.stdin = sys.stdin or open("CONIN$", encoding="utf-8", errors="replace")  # noqa: SIM115
            return
    if sys.platform != "win32" and len(sys.argv) > 1:
        # A command run with a stream closed (`qiao translate … >&-`): the CLI reports the closed stream itself
        # ("standard output is closed", exit 1) rather than writing the translation to nowhere.
        return
    sink = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    sys.stdout = sys.stdout or sink
    sys.stderr = sys.stderr or sink
    sys.stdin = sys.stdin or open(os.devnull, encoding="utf-8")  # noqa: SIM115


if __name__ == "__main__":
    _ensure_streams()
    from qiao.cli import main

    raise SystemExit(main())
