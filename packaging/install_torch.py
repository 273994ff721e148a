#!/usr/bin/env python3
"""Install the CPU-only torch into the venv (the model build's oracle), wherever pip gets its packages from.

    .venv/bin/python packaging/install_torch.py torch==2.13.0

On Linux, PyPI's `torch==2.13.0` is the CUDA build: ~20 nvidia-*/cuda-* packages and gigabytes that Qiao never
uses. PyTorch's CPU-only wheels live on their own index. Rather than guess from the platform or the network, ask pip
what it would install (`pip install --dry-run --report`): if that is a CUDA build, install from the CPU index;
otherwise (a CPU wheel from the configured find-links or mirror, macOS and Windows wheels, or torch already there)
install exactly as resolved, so an offline machine with a local CPU wheel never needs the CPU index.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def resolved(report: dict) -> list[tuple[str, str]]:
    """(name, version) of every distribution a pip installation report would install."""
    return [(item["metadata"]["name"], item["metadata"]["version"]) for item in report.get("install", [])]


def needs_cpu_index(report: dict, platform: str = sys.platform) -> str | None:
    """Why the resolved set is a GPU build (so the CPU index is needed), or None when it may be installed as is.

    A GPU build shows as nvidia-*/cuda-* packages, or (on Linux, where PyPI's plain version is the CUDA build) as a
    torch without the `+cpu` local version. macOS and Windows wheels are CPU-only under the plain version.
    """
    names = resolved(report)
    gpu = [f"{n}=={v}" for n, v in names if n.lower().startswith(("nvidia-", "cuda-", "nvidia_", "cuda_"))]
    if gpu:
        return f"pip would install the CUDA build ({len(gpu)} GPU packages: {', '.join(gpu[:3])}, …)"
    torch = [v for n, v in names if n.lower() == "torch"]
    if torch and platform.startswith("linux") and "+cpu" not in torch[0]:
        return f"pip would install torch {torch[0]}, not a +cpu build"
    return None


def _pip(args: Sequence[str]) -> list[str]:
    return [sys.executable, "-m", "pip", *args]


def main(argv: Sequence[str] | None = None) -> int:
    specs = list(argv if argv is not None else sys.argv[1:]) or ["torch"]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "report.json"
        dry = subprocess.run(_pip(["install", "--dry-run", "--quiet", "--report", str(path), *specs]))
        if dry.returncode != 0:
            print(f"install_torch: pip cannot resolve {' '.join(specs)} (see above)", file=sys.stderr)
            return dry.returncode
        report = json.loads(path.read_text(encoding="utf-8"))
    reason = needs_cpu_index(report)
    extra: list[str] = []
    if reason:
        print(f"install_torch: {reason}; installing the CPU-only build from {CPU_INDEX}", file=sys.stderr)
        extra = ["--index-url", CPU_INDEX]
    return subprocess.run(_pip(["install", "--quiet", *extra, *specs])).returncode


if __name__ == "__main__":
    raise SystemExit(main())
