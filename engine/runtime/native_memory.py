"""Give freed memory back to the OS between translations (glibc only; a no-op elsewhere), as a model's HeapPolicy says.

A batch's decoder caches are tens of MB of numpy arrays. glibc raises its mmap threshold after such blocks are
freed, so later ones come from the heap and the process keeps its high-water mark for good. A fixed threshold keeps
large buffers in their own mappings (returned on free), and malloc_trim hands back what the heap no longer uses.

The default policy (Marian's) maps every block from 256 KB and trims after every request. A Bergamot model's
per-batch buffers are a few MB (a five-sentence paragraph's encoder activations, cross keys and values and
shortlisted output columns: 0.3-2.5 MB each), allocated afresh by every request: mapped anew each time they cost ~430
page faults a paragraph (~1-2.4 µs each on the VMs measured). Its policy (OnnxBergamot.heap_policy) takes blocks up
to 8 MB from the heap and trims only once more than 32 MB of it is free, so a request reuses the pages the last one
freed. Full-shape model, INT8, 1 thread, AMD EPYC Zen 4, in-process A/B over three runs: faults 430 -> 0 a
paragraph, the paragraph 0.96-1.00x, the sentences 0.95-0.96x. Marian keeps the default: the heap's fragmentation
during a request raised the soak texts' peaks by ~20 MB (bench/soak_peaks.py, 237.6 -> 256.6 MB).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from dataclasses import dataclass

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_TRIM_DEFAULT = 128 * 1024  # glibc's: free() hands back the heap's top once this much of it is free
_libc = None


@dataclass(frozen=True)
class HeapPolicy:
    """How the allocator serves a model: blocks from `mmap_threshold` bytes get their own mappings (returned to
    the OS on free), and after a request the heap is trimmed once more than `retain` bytes of it are free."""

    mmap_threshold: int = 256 * 1024
    retain: int = 0


class _MallInfo2(ctypes.Structure):
    """glibc's struct mallinfo2 (2.33+): every field a size_t."""

    _fields_ = [
        (name, ctypes.c_size_t)
        for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks")
    ] + [("keepcost", ctypes.c_size_t)]


def _glibc():
    global _libc
    if _libc is None:
        _libc = False
        if sys.platform.startswith("linux"):
            try:
                lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
                if hasattr(lib, "mallopt") and hasattr(lib, "malloc_trim"):
                    _libc = lib
            except OSError:
                pass
    return _libc


def tune_allocator(policy: HeapPolicy = HeapPolicy()) -> None:
    """Set the mmap threshold, and free()'s own trim of the heap's top to the policy's reserve (glibc's 128 KB
    without one): once per process before large allocations, and again when a model is loaded."""
    lib = _glibc()
    if lib:
        lib.mallopt(_M_MMAP_THRESHOLD, policy.mmap_threshold)
        lib.mallopt(_M_TRIM_THRESHOLD, max(policy.retain, _TRIM_DEFAULT))


def release_free_memory(retain: int = 0) -> None:
    """Return unused heap pages to the OS once more than `retain` bytes of the heap are free (cheap; called after
    each request with the model's HeapPolicy.retain; 0: always). Where glibc cannot say how much is free (before
    2.33), always."""
    lib = _glibc()
    if not lib:
        return
    free = free_heap_bytes() if retain > 0 else None
    if free is None or free > retain:
        lib.malloc_trim(0)


def free_heap_bytes() -> int | None:
    """The bytes free in malloc's heaps (mallinfo2's fordblks, every arena), or None where glibc has no mallinfo2."""
    lib = _glibc()
    info = getattr(lib, "mallinfo2", None) if lib else None
    if info is None:
        return None
    info.restype = _MallInfo2
    return int(info().fordblks)
