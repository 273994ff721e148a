"""Give freed memory back to the OS between translations (glibc only; a no-op elsewhere).

A batch's decoder caches are tens of MB of numpy arrays. glibc raises its mmap threshold after such blocks are
freed, so later ones come from the heap and the process keeps its high-water mark for good. A fixed threshold keeps
large buffers in their own mappings (returned on free), and malloc_trim hands back what the heap no longer uses.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

_M_MMAP_THRESHOLD = -3
_THRESHOLD = 256 * 1024
_libc = None


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


def tune_allocator() -> None:
    """Call once per process, before large allocations."""
    lib = _glibc()
    if lib:
        lib.mallopt(_M_MMAP_THRESHOLD, _THRESHOLD)


def release_free_memory() -> None:
    """Return unused heap pages to the OS (cheap; called after each request)."""
    lib = _glibc()
    if lib:
        lib.malloc_trim(0)
