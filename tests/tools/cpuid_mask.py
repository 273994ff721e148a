"""Run a command as if on another CPU kind: builds tests/tools/cpuid_mask.c (an LD_PRELOAD shim that hides CPUID
feature bits) and runs the command under it, so ONNX Runtime's MLAS and bergamot's intgemm (and MKL) pick the
kernels they pick on that kind. Used to measure the int8 agreement with bergamot on CPUs this host is not
(tests/oracles/bergamot.py says what was measured):

    .venv/bin/python -m tests.tools.cpuid_mask avx2 -- .venv/bin/python -m pytest -p no:randomly tests/...

Kinds: `avx2` (Zen 3: AVX2, no AVX-512, no VNNI), `avx512bw` (Skylake-X: AVX-512 F/CD/BW/DQ/VL, no VNNI).
Needs Linux on x86-64, gcc, and a CPU (or VM) with the `cpuid_fault` flag; child processes inherit the shim
through the environment. Stdlib only, so any Python can run it."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

SOURCE = Path(__file__).with_name("cpuid_mask.c")
ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "cpuid-mask"
KINDS = ("avx2", "avx512bw")
VARIABLE = "QIAO_CPUID_MASK"
BAD_KIND_EXIT = 97  # the shim's exit code for an unknown kind, or where CPUID cannot be made to fault


def unavailable_reason() -> str | None:
    """Why the shim cannot work here, or None."""
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        return f"CPUID masking needs Linux on x86-64 (this is {sys.platform} on {platform.machine()})"
    if shutil.which("gcc") is None:
        return "no gcc to build the CPUID-masking shim (apt-get install build-essential)"
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "cannot read /proc/cpuinfo to see whether CPUID can fault"
    if " cpuid_fault" not in cpuinfo:
        return "this CPU (or its hypervisor) has no cpuid_fault flag: CPUID cannot be trapped to mask it"
    return None


def build(directory: Path = CACHE) -> Path:
    """The shim's shared library, compiled into `directory` when missing or older than its source."""
    directory.mkdir(parents=True, exist_ok=True)
    library = directory / "cpuid_mask.so"
    if library.exists() and library.stat().st_mtime >= SOURCE.stat().st_mtime:
        return library
    partial = directory / f"cpuid_mask.{os.getpid()}.so"
    command = ["gcc", "-O2", "-Wall", "-Wextra", "-shared", "-fPIC", "-o", str(partial), str(SOURCE), "-ldl"]
    subprocess.run(command, check=True, capture_output=True, text=True)
    partial.replace(library)
    return library


def environment(kind: str, library: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    """`base` (default: this process's environment) with the shim preloaded and `kind` chosen."""
    env = dict(os.environ if base is None else base)
    preload = env.get("LD_PRELOAD", "")
    env["LD_PRELOAD"] = f"{library}:{preload}" if preload else str(library)
    env[VARIABLE] = kind
    return env


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[0] not in KINDS or argv[1] != "--":
        print(f"usage: python -m tests.tools.cpuid_mask {{{','.join(KINDS)}}} -- command [args...]", file=sys.stderr)
        return 2
    reason = unavailable_reason()
    if reason:
        print(f"cpuid_mask: {reason}", file=sys.stderr)
        return 2
    return subprocess.run(argv[2:], env=environment(argv[0], build())).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
