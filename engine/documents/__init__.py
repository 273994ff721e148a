"""Documents: translate a whole file (text, Markdown, HTML, subtitles, Word, …) and give back the same document.

The facade: formats by name or path (registry), the unit model every format speaks (model), sharing a translation
back among a paragraph's inline runs (inline), and the job that runs one file through the engine (job).

The names below are imported on first use (PEP 562): `qiao`'s parser imports `engine.documents.registry` for the
--format choices at every start, and importing this package must not pull in the job (difflib, hashing, tempfile:
~50 ms measured) for that.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "DocumentJob": "job",
    "DocumentOptions": "job",
    "DocumentProgress": "job",
    "DocumentResult": "job",
    "SegmentTranslator": "job",
    "DocumentError": "model",
    "DocumentFormat": "model",
    "Extracted": "model",
    "Run": "model",
    "Unit": "model",
    "available": "registry",
    "extensions": "registry",
    "for_path": "registry",
    "names": "registry",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
