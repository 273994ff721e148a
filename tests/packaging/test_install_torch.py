"""The venv gets the CPU-only torch: the decision is read from what pip would install (recorded reports of
`pip install --dry-run --report … torch==2.13.0`), so it works online (PyPI → CUDA build → use the CPU index) and
offline with a local +cpu wheel (installed as resolved, no CPU index needed)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from install_torch import needs_cpu_index, resolved

DATA = Path(__file__).parent / "data"


def _report(name: str) -> dict:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def test_pypi_resolves_the_cuda_build_so_the_cpu_index_is_used():
    """Recorded from PyPI on Linux x86_64 (pip 26.3, Python 3.11): torch 2.13.0 plus ~20 nvidia/cuda packages."""
    report = _report("pip_report_cuda_pypi.json")
    names = [n for n, _ in resolved(report)]
    assert "torch" in names and sum(n.startswith("nvidia-") for n in names) >= 10
    reason = needs_cpu_index(report, platform="linux")
    assert reason is not None and "CUDA" in reason and "nvidia-" in reason


def test_a_local_cpu_wheel_is_installed_as_resolved():
    """Recorded here: pip's find-links hold torch-2.13.0+cpu and the CPU index is unreachable."""
    report = _report("pip_report_cpu_find_links.json")
    assert ("torch", "2.13.0+cpu") in resolved(report)
    assert needs_cpu_index(report, platform="linux") is None


def test_plain_torch_on_linux_without_gpu_packages_is_still_not_trusted():
    report = copy.deepcopy(_report("pip_report_cpu_find_links.json"))
    report["install"][0]["metadata"]["version"] = "2.13.0"
    assert "not a +cpu build" in (needs_cpu_index(report, platform="linux") or "")
    assert needs_cpu_index(report, platform="darwin") is None  # macOS and Windows wheels are CPU-only as published
    assert needs_cpu_index(report, platform="win32") is None


@pytest.mark.parametrize("platform", ["linux", "darwin"])
def test_gpu_packages_mean_the_cpu_index_anywhere(platform):
    report = _report("pip_report_cpu_find_links.json")
    report["install"].append({"metadata": {"name": "nvidia-cublas", "version": "13.1.1.3"}})
    assert needs_cpu_index(report, platform=platform) is not None


def test_torch_already_installed_means_nothing_to_do():
    assert needs_cpu_index({"version": "1", "install": []}, platform="linux") is None


@pytest.mark.parametrize(
    ("recorded", "index"), [("pip_report_cuda_pypi.json", True), ("pip_report_cpu_find_links.json", False)]
)
def test_main_installs_from_the_index_the_report_calls_for(monkeypatch, recorded, index):
    import subprocess

    import install_torch

    calls: list[list[str]] = []

    def fake_run(cmd, *args, **kwargs):
        calls.append(cmd)
        if "--dry-run" in cmd:
            Path(cmd[cmd.index("--report") + 1]).write_text((DATA / recorded).read_text(encoding="utf-8"))
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(install_torch.subprocess, "run", fake_run)
    assert install_torch.main(["torch==2.13.0"]) == 0
    dry, real = calls
    assert "--dry-run" in dry and "--dry-run" not in real and real[-1] == "torch==2.13.0"
    assert ("--index-url" in real) is index
    if index:
        assert real[real.index("--index-url") + 1] == "https://download.pytorch.org/whl/cpu"


def test_main_stops_when_pip_cannot_resolve(monkeypatch, capsys):
    import subprocess

    import install_torch

    calls: list[list[str]] = []
    monkeypatch.setattr(
        install_torch.subprocess, "run", lambda cmd, *a, **k: calls.append(cmd) or subprocess.CompletedProcess(cmd, 1)
    )
    assert install_torch.main(["torch==2.13.0"]) == 1
    assert len(calls) == 1 and "cannot resolve torch==2.13.0" in capsys.readouterr().err
