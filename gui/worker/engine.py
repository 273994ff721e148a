"""The real engine behind the worker's `EnginePort` (gui.worker.model_load): each hook imports the engine lazily, so
onnxruntime and the document formats load on the worker thread, never on the UI thread.

gui/app.py (the composition root) builds the window on `local_engine()`; tests build it on `local_engine(fakes…)`
or an `EngineHooks` of their own. The adapter stays beside the worker, which still falls back to it when built
without an engine (the worker's tests pass the hooks one by one)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine.documents.job import DocumentOptions
from engine.options import TranslationOptions
from gui.worker.model_load import DocumentJobLike, TranslatorLike

TranslatorFactory = Callable[[Path, str, "int | None"], TranslatorLike]
Locator = Callable[["str | None", "str | None"], Path]  # (explicit --model folder, pair key "en-zh") -> bundle
Verifier = Callable[[Path, str], object]  # raises BundleError when that precision of the bundle is not intact
PairLister = Callable[["str | None"], "tuple[str, ...]"]  # explicit folder -> pair keys of the usable bundles
# DocumentJob's constructor: (source, DocumentOptions, TranslationOptions, *, target_lang=, model_key=)
DocumentJobFactory = Callable[..., DocumentJobLike]


@dataclass(frozen=True)
class EngineHooks:
    """An `EnginePort` made of separate callables (the worker's constructor arguments)."""

    factory: TranslatorFactory
    locator: Locator
    expected: Callable[[str | None], Path]
    verifier: Verifier
    pair_lister: PairLister
    job_factory: DocumentJobFactory

    def open(self, bundle: Path, precision: str, threads: int | None) -> TranslatorLike:
        return self.factory(bundle, precision, threads)

    def locate(self, explicit: str | None, pair: str | None) -> Path:
        return self.locator(explicit, pair)

    def expected_dir(self, pair: str | None) -> Path:
        return self.expected(pair)

    def verify(self, bundle: Path, precision: str) -> object:
        return self.verifier(bundle, precision)

    def pairs(self, explicit: str | None) -> tuple[str, ...]:
        return tuple(self.pair_lister(explicit))

    def document_job(
        self,
        source: Path,
        options: DocumentOptions,
        translation: TranslationOptions,
        *,
        target_lang: str,
        model_key: str,
    ) -> DocumentJobLike:
        return self.job_factory(source, options, translation, target_lang=target_lang, model_key=model_key)


def default_job_factory(
    source: Path, options: DocumentOptions, translation: TranslationOptions, *, target_lang: str, model_key: str
) -> DocumentJobLike:
    """Import the document runner lazily (its formats load their libraries on the worker thread)."""
    from engine.documents.job import DocumentJob

    return DocumentJob(source, options, translation, target_lang=target_lang, model_key=model_key)


def default_factory(bundle_dir: Path, precision: str, threads: int | None) -> TranslatorLike:
    """Import the engine lazily: onnxruntime is loaded on the worker thread, never on the UI thread."""
    from engine.config import EngineConfig
    from engine.pipeline.translator import Translator

    return Translator(bundle_dir, EngineConfig(precision=precision, threads=threads))


def default_locator(explicit: str | None, pair: str | None) -> Path:
    from engine.store.installed import find_bundle

    return find_bundle(explicit, pair=pair)


def default_pair_lister(explicit: str | None) -> tuple[str, ...]:
    """The pairs of the installed bundles, read from their manifests only (cheap; no hashing)."""
    from engine.store.installed import installed_models

    return tuple(sorted({m.pair.key for m in installed_models(explicit) if m.pair is not None and not m.problem}))


def default_expected_dir(pair: str | None = None) -> Path:
    """Where a user should put a bundle for `pair` (None: the default direction's)."""
    from engine.store.installed import expected_bundle_dir

    return expected_bundle_dir(pair=pair)


def default_verifier(bundle_dir: Path, precision: str) -> object:
    from engine.bundle.manifest import verify_bundle

    return verify_bundle(bundle_dir, precision)


def local_engine(
    factory: TranslatorFactory | None = None,
    locator: Locator | None = None,
    expected_dir: Callable[[str | None], Path] | None = None,
    verifier: Verifier | None = None,
    pair_lister: PairLister | None = None,
    job_factory: DocumentJobFactory | None = None,
) -> EngineHooks:
    """The engine on this machine; a hook given replaces the engine's own (tests pass fakes)."""
    return EngineHooks(
        factory or default_factory,
        locator or default_locator,
        expected_dir or default_expected_dir,
        verifier or default_verifier,
        pair_lister or default_pair_lister,
        job_factory or default_job_factory,
    )
