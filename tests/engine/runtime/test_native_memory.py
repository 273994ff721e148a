"""engine.runtime.native_memory: a model's HeapPolicy decides when freed heap goes back to the OS, and the Translator
applies the loaded model's policy (a Bergamot model's keeps a bounded reserve; Marian's trims after every request).

The allocator's settings are process-wide, so the RSS checks run in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from engine.families.bergamot.model import OnnxBergamot
from engine.pipeline.translator import Translator
from engine.runtime.native_memory import HeapPolicy, free_heap_bytes

ROOT = Path(__file__).resolve().parents[3]

# 24 MB in 1 MB blocks, written, freed; then a trim with `retain` bytes allowed free; VmRSS dropped (MB) printed
_SCRIPT = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {root!r})
    from engine.runtime.native_memory import HeapPolicy, release_free_memory, tune_allocator

    def rss_mb():
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024

    tune_allocator(HeapPolicy(mmap_threshold=8 << 20, retain={retain}))
    blocks = [bytearray(b"x" * (1 << 20)) for _ in range(24)]
    before = rss_mb()
    del blocks
    release_free_memory({retain})
    print(before - rss_mb())
    """
)


def _dropped_mb(retain: int) -> float:
    script = _SCRIPT.format(root=str(ROOT), retain=retain)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60)
    return float(out.stdout.strip())


@pytest.mark.skipif(free_heap_bytes() is None, reason="needs glibc 2.33+ (mallinfo2) to see the free heap")
def test_a_reserve_keeps_freed_heap_and_a_trim_returns_it() -> None:
    """Freed 1 MB blocks stay in the heap (under the 8 MB threshold): a 64 MB reserve keeps their pages for the next
    request, no reserve hands them back (as after every request before, and after loading)."""
    assert _dropped_mb(64 << 20) < 4
    assert _dropped_mb(0) > 16


def test_the_translator_applies_the_loaded_models_policy(bundle_dir: Path, bergamot_bundle_dir: Path) -> None:
    bergamot = Translator(bergamot_bundle_dir, precision="int8", threads=1)
    assert bergamot._heap == OnnxBergamot.heap_policy
    assert bergamot._heap.mmap_threshold > 1 << 20 and bergamot._heap.retain > 0
    marian = Translator(bundle_dir, precision="int8", threads=1)
    assert marian._heap == HeapPolicy()  # the default: every block from 256 KB mapped, a trim after every request
    assert marian.translate("Hello world.").text
    assert len(bergamot.translate("Hello world. Good night.").sentences) == 2
