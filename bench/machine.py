"""Which CPU a bench result came from (issue #16: every result records the CPU model and vendor).

Kernel speed, and so every ratio the bench prints, depends on the CPU: one run on an Intel host measured a GEMM-only
floor above our own time, which the AMD hosts never did. The model name alone is not always enough ("AMD EPYC" in
many VMs), so the vendor, the family/model/stepping and the SIMD features the kernels choose between are kept too.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from pathlib import Path

VENDORS = {
    "GenuineIntel": "Intel",
    "AuthenticAMD": "AMD",
    "HygonGenuine": "Hygon",
    "CentaurHauls": "Centaur",
    "  Shanghai  ": "Zhaoxin",
}
# SIMD features that decide which ORT / CTranslate2 / oneDNN kernels run
SIMD_FLAGS = ("avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni", "amx_int8", "amx_bf16", "neon", "asimd")


def parse_cpu_fields(text: str) -> dict[str, str]:
    """`key: value` lines (/proc/cpuinfo's first processor, or `lscpu`'s output) as a dict, keys lower-cased."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if fields:
                break  # /proc/cpuinfo: the first processor's block is enough
            continue
        if ":" in line:
            key, value = line.split(":", 1)
            fields.setdefault(key.strip().lower(), value.strip())
    return fields


def cpu_identity(cpuinfo: str = "", lscpu: str = "") -> dict[str, object]:
    """Model, vendor (short name and raw id), family/model/stepping, hypervisor and SIMD flags, from /proc/cpuinfo
    and/or `lscpu` text; fields neither has are None."""
    info = parse_cpu_fields(cpuinfo)
    ls = parse_cpu_fields(lscpu)
    raw_vendor = info.get("vendor_id") or ls.get("vendor id")
    model = info.get("model name") or ls.get("model name") or info.get("hardware") or info.get("processor")
    flags = set((info.get("flags") or info.get("features") or ls.get("flags") or "").split())
    return {
        "model": model,
        "vendor": VENDORS.get(raw_vendor or "", raw_vendor),
        "vendor_id": raw_vendor,
        "family_model_stepping": (
            "/".join(
                info.get(k) or ls.get(k2) or "?"
                for k, k2 in (("cpu family", "cpu family"), ("model", "model"), ("stepping", "stepping"))
            )
            if raw_vendor
            else None
        ),
        "hypervisor": ls.get("hypervisor vendor"),
        "simd": [f for f in SIMD_FLAGS if f in flags],
    }


def describe_cpu(cpu: dict[str, object]) -> str:
    """One line for a report header: 'AMD EPYC (AMD, AuthenticAMD 25/1/1, KVM; avx2 avx512f …)'."""
    model = cpu.get("model") or "unknown CPU"
    extra = [str(cpu["vendor"])] if cpu.get("vendor") else []
    if cpu.get("vendor_id") and cpu.get("family_model_stepping"):
        extra.append(f"{cpu['vendor_id']} {cpu['family_model_stepping']}")
    if cpu.get("hypervisor"):
        extra.append(str(cpu["hypervisor"]))
    simd = " ".join(cpu.get("simd") or [])  # type: ignore[arg-type]
    inner = ", ".join(extra) + (f"; {simd}" if simd else "")
    return f"{model} ({inner})" if inner else str(model)


def read_cpu() -> dict[str, object]:
    """cpu_identity() of this machine (Linux: /proc/cpuinfo and lscpu; elsewhere what platform knows)."""
    cpuinfo = ""
    path = Path("/proc/cpuinfo")
    if path.exists():
        try:
            cpuinfo = path.read_text(errors="replace")
        except OSError:
            cpuinfo = ""
    lscpu = ""
    if shutil.which("lscpu"):
        try:
            env = {**os.environ, "LC_ALL": "C"}
            lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10, env=env).stdout
        except (OSError, subprocess.SubprocessError):
            lscpu = ""
    cpu = cpu_identity(cpuinfo, lscpu)
    if not cpu["model"]:
        cpu["model"] = platform.processor() or platform.machine()
    return cpu


def load_average() -> list[float] | None:
    """1, 5 and 15-minute load averages, or None where the OS has none."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None
