"""Translating one document file: read, translate unit by unit in bounded steps, write the result atomically.

CONTRACT (the runner's implementation is being written; the names and types below are what the CLI and the window
use). The steps are small so the window's worker can interleave a document with the user's typing: each `steps()`
item is one bounded chunk of work (about STEP_UNITS units or STEP_SENTENCES sentences) and comes back before the
next is started; nothing holds the model between items.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from engine.options import TranslationOptions
from engine.results import Translation

STEP_UNITS = 64
STEP_SENTENCES = 256


class SegmentTranslator(Protocol):
    """What a job needs of the engine: engine.translator.Translator.translate_segments."""

    def translate_segments(
        self, segments: Iterable[str], options: TranslationOptions | None = None, *, cancel: threading.Event | None
    ) -> Iterator[Translation]: ...


@dataclass(frozen=True)
class DocumentOptions:
    """Where and how results are written; travels whole from the window's settings or the CLI."""

    out_dir: Path | None = None  # None: beside the input
    # The result's name; {stem} and {suffix} are the input's ("report", ".docx"), {lang} the target's code.
    name_template: str = "{stem}.{lang}{suffix}"
    format: str = "auto"  # a name from engine.documents.registry.names(), or "auto" (by extension)
    overwrite: bool = False  # replace an existing result (never the input itself)
    resume: bool = True  # continue from the progress file a cancelled or crashed run left beside the result


@dataclass(frozen=True)
class DocumentProgress:
    """Where a job is; sent after every step."""

    source: Path
    units_done: int
    units_total: int
    chars_done: int  # source characters of the finished units: the fair measure of work for an estimate
    chars_total: int
    elapsed_s: float
    eta_s: float | None  # None until there is enough to estimate from


@dataclass(frozen=True)
class DocumentResult:
    """How a job ended. `output` is None unless the result file was written (never a partial file)."""

    source: Path
    output: Path | None
    format: str
    units: int
    translated: int  # units translated in this run
    resumed: int  # units taken from a previous run's progress file
    seconds: float
    cancelled: bool = False
    error: str | None = None  # a DocumentError's message, for a person


class DocumentJob:
    """One input file → one translated file (see the module docstring)."""

    def __init__(
        self,
        source: Path,
        options: DocumentOptions,
        translation: TranslationOptions,
        *,
        target_lang: str,
        model_key: str = "",  # names the model and settings in the progress file: resume only with the same
    ) -> None:
        raise NotImplementedError("engine.documents.job is being written")

    @property
    def output(self) -> Path:
        """Where the result will be written (known before any work)."""
        raise NotImplementedError

    @property
    def result(self) -> DocumentResult | None:
        """Set once the last step has run (or the job failed or was cancelled)."""
        raise NotImplementedError

    def steps(self, translator: SegmentTranslator, cancel: threading.Event | None = None) -> Iterator[DocumentProgress]:
        """Do the work in bounded chunks, one DocumentProgress per chunk; `result` is set when it ends."""
        raise NotImplementedError

    def run(
        self,
        translator: SegmentTranslator,
        cancel: threading.Event | None = None,
        on_progress: Callable[[DocumentProgress], None] | None = None,
    ) -> DocumentResult:
        """All steps at once (the CLI)."""
        raise NotImplementedError
