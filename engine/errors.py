"""Errors the engine raises on purpose, each with a message a person can act on."""

from __future__ import annotations


class QiaoError(Exception):
    """Base class: anything Qiao reports to the user rather than crashing on."""


class ModelNotFoundError(QiaoError):
    """No model bundle where one was expected."""

    def __init__(self, message: str, searched: list[str] | None = None) -> None:
        super().__init__(message)
        self.searched = list(searched or [])


class BundleError(QiaoError):
    """A bundle exists but fails its manifest check (missing, truncated or modified files)."""

    def __init__(self, bundle_dir: str, problems: list[str]) -> None:
        self.bundle_dir = bundle_dir
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"model bundle {bundle_dir} failed verification:\n{lines}")


class InputError(QiaoError):
    """Input the engine refuses, with the reason (e.g. too large to translate in one request)."""


class CheckpointError(QiaoError):
    """A checkpoint given to the build pipeline is unusable (missing file, wrong architecture)."""


class BuildError(QiaoError):
    """The build pipeline refused to produce a bundle (e.g. ONNX disagrees with PyTorch)."""
