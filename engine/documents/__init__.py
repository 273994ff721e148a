"""Documents: translate a whole file (text, Markdown, HTML, subtitles, Word, …) and give back the same document.

The facade: formats by name or path (registry), the unit model every format speaks (model), sharing a translation
back among a paragraph's inline runs (inline), and the job that runs one file through the engine (job).
"""

from engine.documents.job import DocumentJob, DocumentOptions, DocumentProgress, DocumentResult, SegmentTranslator
from engine.documents.model import DocumentError, DocumentFormat, Extracted, Run, Unit
from engine.documents.registry import available, extensions, for_path, names

__all__ = [
    "DocumentError",
    "DocumentFormat",
    "DocumentJob",
    "DocumentOptions",
    "DocumentProgress",
    "DocumentResult",
    "Extracted",
    "Run",
    "SegmentTranslator",
    "Unit",
    "available",
    "extensions",
    "for_path",
    "names",
]
