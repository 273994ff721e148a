"""The worker's configuration jobs (load a bundle, switch its precision, change its thread count) and the translators
they leave: first in the scheduler's list, so a translation never runs on a model about to be replaced.

The engine itself is reached through one `EnginePort` (open a bundle, locate one, where one belongs, verify one, the
installed pairs, a document job), chosen by the GUI's composition root (gui.app): the real one imports the engine
lazily, on the worker thread (gui.worker.engine); tests pass fakes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import SignalInstance

from engine.config import PRECISIONS
from engine.documents.job import DocumentOptions, DocumentProgress, DocumentResult
from engine.errors import BundleError, FileProblem, ModelNotFoundError
from engine.languages import LanguagePair
from engine.options import TranslationOptions
from engine.results import StreamEvent, Translation
from gui.worker.jobs import Job, Report


class TranslatorLike(Protocol):
    """The part of `engine.pipeline.translator.Translator` the GUI uses (tests pass a fake with the same API)."""

    manifest: Any

    @property
    def precision(self) -> str: ...  # read-only: set_precision changes it
    @property
    def available_precisions(self) -> tuple[str, ...]: ...
    def set_precision(self, precision: str) -> None: ...
    def set_threads(self, threads: int | None) -> None: ...
    def stream(
        self, text: str, options: TranslationOptions | None = None, *, cancel: threading.Event | None = None
    ) -> Iterator[StreamEvent | Translation]: ...


class DocumentJobLike(Protocol):
    """The part of `engine.documents.job.DocumentJob` the worker uses (tests pass a fake with the same API)."""

    @property
    def output(self) -> Path: ...
    @property
    def result(self) -> DocumentResult | None: ...
    def steps(self, translator: Any, cancel: threading.Event | None = None) -> Iterator[DocumentProgress]: ...


class EnginePort(Protocol):
    """Everything the worker asks of the engine, in one place (gui.app, the GUI's composition root, chooses it)."""

    def open(self, bundle: Path, precision: str, threads: int | None) -> TranslatorLike: ...
    def locate(self, explicit: str | None, pair: str | None) -> Path: ...
    def expected_dir(self, pair: str | None) -> Path: ...
    def verify(self, bundle: Path, precision: str) -> object: ...
    def pairs(self, explicit: str | None) -> tuple[str, ...]: ...
    def document_job(
        self,
        source: Path,
        options: DocumentOptions,
        translation: TranslationOptions,
        *,
        target_lang: str,
        model_key: str,
    ) -> DocumentJobLike: ...


@dataclass(frozen=True)
class ModelInfo:
    """What the window shows about a loaded model (status bar, About dialog)."""

    bundle_dir: str
    model_id: str
    license: str
    attribution: str
    precision: str
    available_precisions: tuple[str, ...]
    default_beams: int | None
    load_seconds: float
    switched: bool = False  # True after a precision switch rather than a first load
    pair: LanguagePair | None = None  # the bundle's languages (manifest `languages`)
    pairs: tuple[str, ...] = ()  # pair keys of every usable installed bundle ("en-zh", "zh-en"), for the swap

    @property
    def variants(self) -> tuple[str, ...]:
        """The pair's variant keys ("hans", "hant"); () when it has none (the setting is hidden)."""
        return self.pair.variant_keys if self.pair is not None else ()


@dataclass(frozen=True)
class ModelProblem:
    """Why no model is usable, with what the user needs to fix it."""

    kind: str  # "missing" | "invalid" | "error"
    message: str  # the engine's English wording (shown only under "Details")
    details: tuple[str, ...]  # places searched, or the manifest check's problems
    bundle_dir: str | None
    expected_dir: str
    issues: tuple[FileProblem, ...] = ()  # structured problems, worded by the window in the interface language
    precision: str = ""  # the precision that failed to load
    alternatives: tuple[str, ...] = ()  # other precisions of the same bundle that passed their check
    pair_key: str = ""  # the direction that was asked for
    pairs: tuple[str, ...] = ()  # pair keys of the bundles that are installed, so the window can offer another


def pair_of(manifest: Any) -> LanguagePair | None:
    """The bundle's languages, from a Manifest or a manifest dict."""
    if isinstance(manifest, dict):
        raw = manifest.get("languages")
        return LanguagePair.from_dict(raw) if isinstance(raw, dict) else None
    pair = getattr(manifest, "pair", None)
    return pair if isinstance(pair, LanguagePair) else None


def manifest_field(manifest: Any, name: str, default: Any = "") -> Any:
    if manifest is None:
        return default
    if isinstance(manifest, dict):
        return manifest.get(name, default)
    return getattr(manifest, name, default)


class LoadSignals(Protocol):
    model_loading: SignalInstance  # kind ("load" | "switch"), precision
    model_ready: SignalInstance  # ModelInfo
    model_failed: SignalInstance  # ModelProblem
    switch_failed: SignalInstance  # precision, ModelProblem
    error: SignalInstance  # str


_Load = tuple["str | None", str, "int | None", "str | None"]  # (--model folder, precision, threads, pair)


class ModelLoadSource:
    """The configuration jobs, most sweeping first: a (re)load replaces a waiting precision or thread change. Owns
    the loaded translator, and the other direction's when a request asks for it (loaded beside it, once)."""

    def __init__(self, engine: EnginePort, signals: LoadSignals) -> None:
        self._engine, self._signals = engine, signals
        self._load: _Load | None = None
        self._precision: str | None = None
        self._threads_wanted: tuple[int | None] | None = None
        self._translator: TranslatorLike | None = None
        self._bundle_dir: Path | None = None
        self._other: tuple[str, TranslatorLike] | None = None  # the reverse direction, loaded for the popup
        self._model_dir: str | None = None  # the last load's --model folder and threads, for `_other`
        self._threads: int | None = None
        self.pairs_known: tuple[str, ...] = ()  # as found by the last load (a precision switch keeps them)

    # ---- the queue (lock held) ---------------------------------------------------------------------------------

    def queue_load(self, model_dir: str | None, precision: str, threads: int | None, pair: str | None) -> None:
        self._load = (model_dir, precision, threads, pair)
        self._precision = None
        self._threads_wanted = None

    def queue_precision(self, precision: str) -> None:
        self._precision = precision

    def queue_threads(self, threads: int | None) -> None:
        self._threads_wanted = (threads,)

    def take(self) -> Job | None:
        if self._load is not None:
            load, self._load = self._load, None
            return Job(0, "model", lambda _job: self._run_load(*load))
        if self._precision is not None:
            precision, self._precision = self._precision, None
            return Job(0, "model", lambda _job: self._switch_precision(precision))
        if self._threads_wanted is not None:
            (threads,), self._threads_wanted = self._threads_wanted, None
            return Job(0, "model", lambda _job: self._set_threads(threads))
        return None

    def drop(self) -> list[Report]:
        self._load = self._precision = self._threads_wanted = None
        return []

    # ---- the translators, on the worker thread ---------------------------------------------------------------

    def current(self) -> TranslatorLike | None:
        """The loaded translator (None: none is)."""
        return self._translator

    def of(self, pair: str | None) -> TranslatorLike | None:
        """The loaded translator when it is `pair`'s (or `pair` is None), else `pair`'s bundle loaded beside it, once
        and kept until the next load, precision or threads change."""
        tr = self._translator
        loaded = pair_of(getattr(tr, "manifest", None)) if tr is not None else None
        if pair is None or tr is None or loaded is None or loaded.key == pair:
            return tr
        if self._other is None or self._other[0] != pair:
            self._other = None
            bundle = self._engine.locate(self._model_dir, pair)
            self._other = (pair, self._engine.open(bundle, tr.precision, self._threads))
        return self._other[1]

    # ---- the jobs, on the worker thread ------------------------------------------------------------------------

    def _run_load(self, model_dir: str | None, precision: str, threads: int | None, pair: str | None) -> None:
        """Locate and load; whatever goes wrong, the window hears model_failed (never "Loading…" forever)."""
        self._translator = None
        self._other = None
        self._model_dir, self._threads = model_dir, threads
        self._signals.model_loading.emit("load", precision)
        start = time.perf_counter()
        bundle: Path | None = None
        try:
            expected = str(self._engine.expected_dir(pair))
        except Exception:  # the expected location is only advice; never let it hide the real problem
            expected = ""
        pairs = self._pairs(model_dir)
        try:
            bundle = self._engine.locate(model_dir, pair)
            self._translator = self._engine.open(bundle, precision, threads)
            self._bundle_dir = bundle
            info = self._info(bundle, time.perf_counter() - start, switched=False)
        except Exception as exc:  # an unreadable bundle or manifest must not kill the worker thread
            self._translator = None
            problem = self._problem(exc, bundle, expected, precision)
            self._signals.model_failed.emit(replace(problem, pair_key=pair or "", pairs=pairs))
            return
        if info.pair is not None and info.pair.key not in pairs:
            pairs = tuple(sorted({*pairs, info.pair.key}))
        self.pairs_known = pairs
        self._signals.model_ready.emit(replace(info, pairs=pairs))

    def _pairs(self, model_dir: str | None) -> tuple[str, ...]:
        """What else is installed; a store that cannot be read only means no swap is offered."""
        try:
            return tuple(self._engine.pairs(model_dir))
        except Exception:
            return ()

    def _problem(self, exc: Exception, bundle: Path | None, expected: str, precision: str) -> ModelProblem:
        if isinstance(exc, ModelNotFoundError):
            return ModelProblem("missing", str(exc), tuple(exc.searched), None, expected, precision=precision)
        if isinstance(exc, BundleError):
            return ModelProblem(
                "invalid",
                str(exc),
                tuple(exc.problems),
                str(exc.bundle_dir),
                expected,
                issues=tuple(exc.issues),
                precision=precision,
                alternatives=self._intact_precisions(bundle, precision),
            )
        return ModelProblem(
            "error",
            f"{type(exc).__name__}: {exc}",
            (),
            str(bundle) if bundle else None,
            expected,
            precision=precision,  # no alternative offered: nothing says the other precision would load
        )

    def _intact_precisions(self, bundle: Path | None, failed: str) -> tuple[str, ...]:
        """The other precisions of this bundle that pass their check, to offer instead of the broken one."""
        if bundle is None:
            return ()
        intact = []
        for other in PRECISIONS:
            if other == failed:
                continue
            try:
                self._engine.verify(bundle, other)
            except Exception:  # any failure means "not offered"
                continue
            intact.append(other)
        return tuple(intact)

    def _info(self, bundle: Path | None, seconds: float, *, switched: bool) -> ModelInfo:
        tr = self._translator
        assert tr is not None
        manifest = getattr(tr, "manifest", None)
        generation = manifest_field(manifest, "generation", {}) or {}
        beams = generation.get("num_beams") if isinstance(generation, dict) else None
        return ModelInfo(
            bundle_dir=str(bundle or ""),
            model_id=str(manifest_field(manifest, "model_id", "")),
            license=str(manifest_field(manifest, "license", "")),
            attribution=str(manifest_field(manifest, "attribution", "")),
            precision=tr.precision,
            available_precisions=tuple(tr.available_precisions),
            default_beams=int(beams) if isinstance(beams, int) else None,
            load_seconds=seconds,
            switched=switched,
            pair=pair_of(manifest),
            pairs=self.pairs_known,
        )

    def _switch_precision(self, precision: str) -> None:
        tr = self._translator
        if tr is None or tr.precision == precision:
            return
        self._other = None  # loaded again in the new precision when next needed
        self._signals.model_loading.emit("switch", precision)
        start = time.perf_counter()
        try:
            tr.set_precision(precision)
            info = self._info(self._bundle_dir, time.perf_counter() - start, switched=True)
        except Exception as exc:  # the translator keeps the graphs it had; the window says so
            self._signals.switch_failed.emit(precision, self._problem(exc, self._bundle_dir, "", precision))
            return
        self._signals.model_ready.emit(info)

    def _set_threads(self, threads: int | None) -> None:
        self._threads = threads
        self._other = None
        if self._translator is None:
            return
        try:
            self._translator.set_threads(threads)
        except Exception as exc:
            self._signals.error.emit(str(exc))
