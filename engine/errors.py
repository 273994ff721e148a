"""Errors the engine raises on purpose, each with a message a person can act on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


class QiaoError(Exception):
    """Base class: anything Qiao reports to the user rather than crashing on."""


class ModelNotFoundError(QiaoError):
    """No model bundle where one was expected."""

    def __init__(self, message: str, searched: list[str] | None = None, pair: str | None = None) -> None:
        super().__init__(message)
        self.searched = list(searched or [])
        self.pair = pair  # the direction asked for ("zh-en"), when one was


@dataclass(frozen=True)
class FileProblem:
    """One thing wrong with a bundle, structured so the window can word it in the interface language.

    kind: "missing" | "size" | "hash" | "unreadable" | "outside" (path escapes the bundle) | "not-file" |
    "unlisted" (loaded but not in `files`) | "manifest" (schema or integrity of manifest.json) | "format"
    (format version) | "precision" (the bundle lacks it) | "damaged" (passes its hashes yet fails to load).
    file: the bundle-relative path concerned ("" for the bundle as a whole); detail: the English wording.
    """

    kind: str
    file: str
    detail: str

    def __str__(self) -> str:
        return self.detail


class BundleError(QiaoError):
    """A bundle exists but fails its manifest check (missing, truncated or modified files).

    `problems` are the English lines (CLI); `issues` the same as FileProblems (plain strings become kind
    "manifest" with no file), so the GUI can word each for a person.
    """

    def __init__(self, bundle_dir: str, problems: Sequence[str | FileProblem]) -> None:
        self.bundle_dir = bundle_dir
        self.issues = [p if isinstance(p, FileProblem) else FileProblem("manifest", "", str(p)) for p in problems]
        self.problems = [p.detail for p in self.issues]
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"model bundle {bundle_dir} failed verification:\n{lines}")


class InputError(QiaoError):
    """Input the engine refuses, with the reason (e.g. too large to translate in one request)."""


class NotSupported(QiaoError):
    """A feature the loaded model cannot give (word alignment from a model whose graphs expose no attention, ...):
    `feature` names it and the message says why, for the interface to show instead of failing."""

    def __init__(self, feature: str, reason: str) -> None:
        super().__init__(reason)
        self.feature = feature


class CheckpointError(QiaoError):
    """A checkpoint given to the build pipeline is unusable (missing file, wrong architecture)."""


class BuildError(QiaoError):
    """The build pipeline refused to produce a bundle (e.g. ONNX disagrees with PyTorch)."""
