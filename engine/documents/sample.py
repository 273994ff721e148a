"""The start of a document's text, for telling which language it is in (engine.text.source_language).

`qiao translate-file` and the window's documents route each file to the installed direction that reads it; both
read the same sample, so a document goes the same way from either.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from engine.documents import registry
from engine.documents.job import MAX_BYTES
from engine.text.source_language import SAMPLE_CHARS


def text_sample(file: Path, format: str = "auto") -> str:
    """The first SAMPLE_CHARS or so of `file`'s translatable text; "" when it cannot be read (the job then says why,
    in its own words) or is over the documents' size limit."""
    try:
        fmt = registry.for_path(file, format)
        with open(file, "rb", opener=_no_wait) as stream:
            info = os.fstat(stream.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
                return ""  # a FIFO would block, /dev/zero never ends; the job refuses them with the reason
            data = stream.read(info.st_size)
        units = fmt.read(data).units
    except Exception:  # any failure here is reported by the job itself
        return ""
    parts: list[str] = []
    size = 0
    for unit in units:
        parts.append(unit.source)
        size += len(unit.source)
        if size >= SAMPLE_CHARS:
            break
    return "\n".join(parts)


def _no_wait(path: str, flags: int) -> int:
    """Open without blocking: opening a FIFO for reading waits for a writer unless O_NONBLOCK is given."""
    return os.open(path, flags | getattr(os, "O_NONBLOCK", 0))
