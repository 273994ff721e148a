"""The engine's model problems worded for a person, in the interface language.

The engine reports each problem as a `FileProblem(kind, file, detail)` with English detail for the CLI; the window
shows one sentence per kind, naming the file and what to do, and keeps the English detail for a "Details" view.
"""

from __future__ import annotations

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from engine.errors import FileProblem

_CONTEXT = "ModelProblem"

# One sentence per FileProblem kind (engine/errors.py); {file} is the bundle-relative path.
_KIND: dict[str, str] = {
    "missing": QT_TRANSLATE_NOOP("ModelProblem", "The file {file} is missing."),
    "size": QT_TRANSLATE_NOOP("ModelProblem", "The file {file} has the wrong size: it is incomplete or was replaced."),
    "hash": QT_TRANSLATE_NOOP("ModelProblem", "The file {file} is damaged: its contents are not what the model lists."),
    "unreadable": QT_TRANSLATE_NOOP("ModelProblem", "The file {file} cannot be read."),
    "outside": QT_TRANSLATE_NOOP(
        "ModelProblem", "The file {file} points outside the model folder, which Qiao does not allow."
    ),
    "not-file": QT_TRANSLATE_NOOP("ModelProblem", "{file} is not an ordinary file."),
    "unlisted": QT_TRANSLATE_NOOP(
        "ModelProblem", "The file {file} is used by the model but not listed (and checked) in its manifest."
    ),
    "manifest": QT_TRANSLATE_NOOP("ModelProblem", "The model's description (manifest.json) is invalid."),
    "format": QT_TRANSLATE_NOOP("ModelProblem", "The model was made for a different version of Qiao."),
    "precision": QT_TRANSLATE_NOOP("ModelProblem", "This model does not include the precision you chose."),
    "damaged": QT_TRANSLATE_NOOP(
        "ModelProblem", "The file {file} is damaged: it passes its check but cannot be loaded."
    ),
}
_NO_FILE: dict[str, str] = {  # the same kinds when the problem concerns the bundle as a whole
    "missing": QT_TRANSLATE_NOOP("ModelProblem", "A file of the model is missing."),
    "damaged": QT_TRANSLATE_NOOP("ModelProblem", "The model is damaged: it cannot be loaded."),
    "unreadable": QT_TRANSLATE_NOOP("ModelProblem", "The model cannot be read."),
}
_UNKNOWN = QT_TRANSLATE_NOOP("ModelProblem", "The model failed its check.")
_FIX = QT_TRANSLATE_NOOP("ModelProblem", "Build or download the model again, then press Try again.")
_FIX_FORMAT = QT_TRANSLATE_NOOP(
    "ModelProblem", "Build or download the model again, or update Qiao, then press Try again."
)
_INTERNAL = QT_TRANSLATE_NOOP(
    "ModelProblem",
    "Qiao found a model but could not start it because of an unexpected error. "
    "Build or download the model again; if that does not help, please report the details below.",
)


def _tr(text: str) -> str:
    return QCoreApplication.translate(_CONTEXT, text)


def describe(issue: FileProblem) -> str:
    """One sentence for a person: what is wrong, naming the file."""
    if not issue.file and issue.kind in _NO_FILE:
        return _tr(_NO_FILE[issue.kind])
    template = _KIND.get(issue.kind, _UNKNOWN)
    return _tr(template).format(file=issue.file or "manifest.json")


def describe_all(issues: tuple[FileProblem, ...] | list[FileProblem], limit: int = 8) -> list[str]:
    """Distinct sentences, in order, at most `limit` (the rest is counted by the caller)."""
    seen: list[str] = []
    for issue in issues:
        line = describe(issue)
        if line not in seen:
            seen.append(line)
    return seen[:limit]


def fix(issues: tuple[FileProblem, ...] | list[FileProblem]) -> str:
    """What to do about it."""
    if any(i.kind == "format" for i in issues):
        return _tr(_FIX_FORMAT)
    return _tr(_FIX)


def internal_error() -> str:
    """For an exception the engine did not expect (a bug or a malformed manifest): never the raw "KeyError"."""
    return _tr(_INTERNAL)
