"""Watch a Qiao process at the system-call level: did it open a network socket, and what did it leave in HOME?

Qiao promises never to open a network connection. A Python-level guard cannot see native libraries (onnxruntime's
telemetry resolved its vendor's host from C++ threads, ~10-25 s after start), and a run with no network cannot see
an attempt either. So the offline tests run the real program, with the network present, under

    strace -f -qq -e trace=socket,connect,sendto -o LOG …

with a fresh, empty HOME and no XDG_* variables (so every per-user folder lands in that HOME), and then fail on any
AF_INET/AF_INET6 socket, any connect/sendto to an inet address or to port 53 (DNS), and on any file created under
HOME outside Qiao's own folders. Used by tests/test_offline.py (from source) and packaging/smoke_test.py (frozen).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

STRACE_ARGS = ("-f", "-qq", "-e", "trace=socket,connect,sendto")
WATCH_S = 30.0  # onnxruntime's telemetry looked its host up ~10, ~15 and ~24 s after start

# Qiao's per-user folders on Linux with HOME set and no XDG_* variables (engine/paths.py: config_dir, state_dir,
# cache_dir, data_dir). Spelled out, not imported (importing engine changes this process' environment);
# tests/engine/test_paths.py checks both this and fresh_home_env's list against engine/paths.py.
MOVED_FOLDERS = ("QIAO_CONFIG_DIR", "QIAO_STATE_DIR", "QIAO_CACHE_DIR", "QIAO_DATA_DIR")
QIAO_HOME_DIRS = (".config/Qiao", ".local/state/Qiao", ".cache/Qiao", ".local/share/Qiao")

# Put into a watched program's environment: a user who opted *in*. Only the program's own switch (engine/privacy.py
# forces them to "1" before onnxruntime loads) can then turn telemetry off, so a run that passes proves that switch.
OPTED_IN = {"ORT_DISABLE_TELEMETRY": "0", "HF_HUB_DISABLE_TELEMETRY": "0", "DO_NOT_TRACK": "0"}

_INET_SOCKET = re.compile(r"\bsocket\((AF_INET6?|PF_INET6?)\b")
_INET_ADDRESS = re.compile(r"\b(connect|sendto|sendmsg)\(.*(sa_family=AF_INET6?\b|htons\(53\))")


def strace_problem() -> str | None:
    """Why system calls cannot be traced here (None when they can): not Linux, no strace, or ptrace forbidden."""
    if not sys.platform.startswith("linux"):
        return "system-call tracing is Linux-only"
    if not shutil.which("strace"):
        return "strace is not installed (Debian/Ubuntu: apt-get install strace)"
    probe = subprocess.run(["strace", *STRACE_ARGS, "-o", os.devnull, "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"strace cannot trace here (ptrace not permitted?): {probe.stderr.strip()[:200]}"
    return None


def traced(cmd: list[str], log: Path) -> list[str]:
    """`cmd` under strace, logging every socket, connect and sendto of it and its children to `log`."""
    return ["strace", *STRACE_ARGS, "-o", str(log), *cmd]


def fresh_home_env(base: dict[str, str], home: Path) -> dict[str, str]:
    """`base` with HOME set to `home` and every variable that would move a per-user folder elsewhere removed
    (XDG_*, Qiao's own folder overrides: engine.paths.FOLDER_OVERRIDES, which a test keeps equal to
    MOVED_FOLDERS), so all of them land under `home`."""
    moved = set(MOVED_FOLDERS)
    env = {k: v for k, v in base.items() if not k.startswith("XDG_") and k not in moved}
    env["HOME"] = str(home)
    return env


def network_calls(log_text: str) -> list[str]:
    """The trace lines that open an inet socket or address an inet peer or port 53 (Unix and netlink sockets are
    local and fine)."""
    return [ln for ln in log_text.splitlines() if _INET_SOCKET.search(ln) or _INET_ADDRESS.search(ln)]


def stray_files(home: Path, allowed: tuple[str, ...] = QIAO_HOME_DIRS) -> list[str]:
    """Everything under `home` (relative paths) that is neither inside one of the `allowed` folders nor a parent
    folder of one."""
    keep = [Path(a) for a in allowed]
    stray = []
    for path in sorted(home.rglob("*")):
        rel = path.relative_to(home)
        inside = any(rel == k or k in rel.parents for k in keep)
        parent_of_allowed = path.is_dir() and not path.is_symlink() and any(rel in k.parents for k in keep)
        if not (inside or parent_of_allowed):
            stray.append(rel.as_posix() + ("/" if path.is_dir() else ""))
    return stray


def audit(log: Path, home: Path) -> dict[str, object]:
    """What the traced run did: its inet system calls and stray files (both must be empty), and how much was seen."""
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
    calls = network_calls(text)
    return {
        "traced_calls": len(text.splitlines()),
        "inet_calls": calls[:20],
        "inet_call_count": len(calls),
        "stray_files": stray_files(home)[:50],
        "qiao_files": sorted(
            p.relative_to(home).as_posix() for d in QIAO_HOME_DIRS if (home / d).is_dir() for p in (home / d).rglob("*")
        )[:50],
    }
