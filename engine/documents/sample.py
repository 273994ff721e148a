"""The start of a document's text, for telling which language it is in (engine.source_language).

`qiao translate-file` and the window's documents route each file to the installed direction that reads it; both
read the same sample, so a document goes the same way from either.
"""

from __future__ import annotations

from pathlib import Path

from engine.documents import registry
from engine.documents.job import MAX_BYTES
from engine.source_language import SAMPLE_CHARS


def text_sample(file: Path, format: str = "auto") -> str:
    """The first SAMPLE_CHARS or so of `file`'s translatable text; "" when it cannot be read (the job then says why,
    in its own words) or is over the documents' size limit."""
    try:
        fmt = registry.for_path(file, format)
        if file.stat().st_size > MAX_BYTES:
            return ""
        units = fmt.read(file.read_bytes()).units
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
