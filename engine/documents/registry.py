"""Which formats exist, and which one a file is. Format modules are imported only when used (a missing optional
library then fails one format with a DocumentError, not the app's start)."""

from __future__ import annotations

import importlib
from pathlib import Path

from engine.documents.model import DocumentError, DocumentFormat

# name -> module under engine.documents.formats that defines FORMAT: DocumentFormat. Order: how formats are listed.
_MODULES: dict[str, str] = {
    "txt": "txt",
    "markdown": "markdown",
    "html": "html",
    "srt": "srt",
    "vtt": "vtt",
    "docx": "docx",
    "odt": "odt",
    "pptx": "pptx",
    "epub": "epub",
}


def names() -> tuple[str, ...]:
    """Every format name, for `--format` choices (cheap: imports nothing)."""
    return tuple(_MODULES)


def get(name: str) -> DocumentFormat:
    """The format called `name`; DocumentError when there is none or its module cannot load."""
    module = _MODULES.get(name)
    if module is None:
        raise DocumentError(f"unknown document format {name!r}; Qiao reads {', '.join(_MODULES)}")
    try:
        return importlib.import_module(f"engine.documents.formats.{module}").FORMAT
    except ImportError as exc:
        raise DocumentError(f"the {name} format is not available in this installation ({exc})") from exc


def available() -> list[DocumentFormat]:
    """The formats this installation can read (those whose module and libraries load)."""
    found = []
    for name in _MODULES:
        try:
            found.append(get(name))
        except DocumentError:
            continue
    return found


def extensions() -> tuple[str, ...]:
    """Every extension a supported format claims (for file dialogs, drag and drop and folder scans)."""
    return tuple(ext for fmt in available() for ext in fmt.extensions)


def for_path(path: Path, name: str = "auto") -> DocumentFormat:
    """The format of `path`: `name` when given, else by extension (case-insensitive). DocumentError says which
    formats exist when the extension is not one of them (PDF gets its own answer)."""
    if name != "auto":
        return get(name)
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        raise DocumentError(
            f"{path.name}: PDF is not supported — its layout cannot be rebuilt in another language. Save or export "
            "it as a Word document (.docx) or text first, then translate that"
        )
    for fmt in available():
        if suffix in fmt.extensions:
            return fmt
    raise DocumentError(
        f"{path.name}: Qiao does not translate {f'{suffix} files' if suffix else 'files without an extension'}; "
        "it reads "
        f"{', '.join(extensions())}"
    )
