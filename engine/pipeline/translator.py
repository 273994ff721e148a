"""The engine's facade: one object per process holds a bundle's ORT sessions and translates text.

Study notes that shaped it: faster-whisper (one facade, dataclass results, streaming as a lazy generator, sessions
created once with explicit options) and CTranslate2 (cancellation checked between decoder steps).

The facade owns the model (loaded per `EngineConfig` by the bundle's family: engine.families), the lock, and the
sentence cache; the text work lives in small modules it drives: engine.text.segment (sentences and layout),
engine.pipeline.planning (token rows, long sentences split), engine.pipeline.batching, engine.pipeline.decode_loop
(batches through the search, engine.search.batch, cancellable), engine.pipeline.assembly (stream deltas) and
engine.pipeline.requests (requests: one streamed text, or many texts decoded together).
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from engine import families
from engine.bundle.load_guard import diagnose
from engine.bundle.manifest import Manifest, verify_bundle, verify_files
from engine.bundle.verified_cache import VerifiedFiles
from engine.config import MAX_BEAMS, PRECISIONS, EngineConfig
from engine.errors import BundleError, FileProblem, InputError
from engine.families.base import TARGET_BY_FORCED_TOKEN, GenerationSpec, Model, Tokenizer
from engine.options import TranslationOptions
from engine.pipeline.length_limits import LengthRule
from engine.pipeline.planning import split_long
from engine.pipeline.requests import Decoding, Pipeline, checked_text
from engine.pipeline.sentence_cache import SentenceCache
from engine.results import Alternative, SentenceResult, StreamEvent, Translation
from engine.runtime.native_memory import HeapPolicy, release_free_memory, tune_allocator
from engine.search.batch import search_batch
from engine.search.decoding import GenerationParams, Steps
from engine.search.types import RowExtras

if TYPE_CHECKING:
    from engine.pipeline.alternatives import SentenceRun, SharedStarts


class Translator:
    """Translate with one bundle, in its language pair's direction; safe to call from one worker thread at a time.

    `config` says how the engine runs (precision, threads, provider); `precision=` / `threads=` are shorthands for
    its fields (giving both a config and a different value is an InputError). `verify=False` skips the sha256 of
    every file (sizes are still checked), for a caller that verified the bundle once already.
    """

    def __init__(
        self,
        bundle_dir: str | Path,
        config: EngineConfig | None = None,
        *,
        precision: str | None = None,
        threads: int | None = None,
        verify: bool = True,
    ) -> None:
        config = _config_from(config, precision, threads)
        tune_allocator()
        self.bundle_dir = Path(bundle_dir)
        self._verify = verify
        self._verified = VerifiedFiles() if verify else None
        # Every path, size and (unless verify=False) sha256 is checked before any model file is opened.
        self.manifest: Manifest = verify_bundle(self.bundle_dir, config.precision, hashes=verify, cache=self._verified)
        self._config = config
        self._model: Model | None = None
        self._lock = threading.Lock()
        self.family = families.of(self.manifest)
        self.generation: GenerationSpec = self.family.generation_spec(self.manifest)
        if self.generation.target_language == TARGET_BY_FORCED_TOKEN:
            problem = FileProblem(
                "format",
                "",
                f"a {self.family.name} bundle forces its first target token, which "
                "this Qiao's pipeline does not do yet: update Qiao",
            )
            raise BundleError(str(self.bundle_dir), [problem])
        self.defaults = GenerationParams.from_spec(self.generation, self.manifest.generation)
        self.pair = self.manifest.pair
        try:
            self.tokenizer: Tokenizer = self.family.load_tokenizer(self.manifest)
            self.tokenizer.load_vocabulary()  # a damaged pieces.json fails here, not at the first translation
        except Exception as exc:  # a raw tokenizers/json error: find out which file is damaged, and how
            raise diagnose(self.manifest, config.precision, exc, self._verified) from exc
        family_rule = self.generation.length_rule
        self.pipeline = Pipeline(self.tokenizer, self.pair, LengthRule(*family_rule) if family_rule else None)
        # cache entries belong to this bundle and direction (each Translator has its own cache anyway)
        self._scope = f"{self.pair.key}:{self.manifest.model_id}"
        self._load(config, check=False)

    # -- model management ---------------------------------------------------------------------------------------
    @property
    def config(self) -> EngineConfig:
        """How the engine runs now (the precision is the loaded model's)."""
        return self._config

    @property
    def precision(self) -> str:
        return self._model.precision  # type: ignore[union-attr]

    @property
    def available_precisions(self) -> tuple[str, ...]:
        return tuple(p for p in PRECISIONS if p in self.manifest.precisions)

    @property
    def threads(self) -> int | None:
        return self._config.threads

    def _load(self, config: EngineConfig, check: bool = True) -> None:
        precision = config.precision
        if precision not in self.manifest.precisions:
            problem = FileProblem("precision", "", f"this bundle has no {precision} model")
            raise BundleError(str(self.bundle_dir), [problem])
        if check:
            problems = verify_files(self.manifest, precision, hashes=self._verify, cache=self._verified)
            if problems:
                raise BundleError(str(self.bundle_dir), problems)
        # Parsing the tokenizer and the graphs leaves freed heap behind; hand it back before and after the
        # sessions are built, so the process's high-water mark is the engine, not its loading garbage.
        release_free_memory()
        try:
            model = self.family.load_model(self.manifest, config)
            model.scorer(self.defaults)  # opened now, so a damaged scorer.onnx fails while loading
        except Exception as exc:  # e.g. InvalidProtobuf from damage the verified-files cache could not see
            raise diagnose(self.manifest, precision, exc, self._verified) from exc
        self._model = model  # the previous sessions are released with the old object
        self._config = config
        # the model's allocator policy (a family may set one: OnnxBergamot); process-wide, so the last loaded wins
        self._heap: HeapPolicy = getattr(model, "heap_policy", HeapPolicy())
        tune_allocator(self._heap)
        release_free_memory()

    def set_config(self, config: EngineConfig) -> None:
        """Run with `config`, reloading only when something changed: another precision loads (and checks) the
        other graphs, other threads or provider rebuild the sessions; the old ones are freed. On failure the
        translator keeps what it had.

        Waits for a translation running on another thread; raises RuntimeError when called from inside a stream()
        or translate_segments() loop on this thread (which holds the model until the loop ends).
        """
        if not isinstance(config, EngineConfig):
            raise InputError(f"config must be an EngineConfig, not {type(config).__name__}")
        config.validate()
        with self._exclusive("set_config()"):
            if config == self._config and self._model is not None:
                return
            self._load(config, check=config.precision != self._config.precision)

    def set_precision(self, precision: str) -> None:
        """Switch INT8 ↔ FP32 without restarting (see `set_config`)."""
        self.set_config(self._config.replace(precision=precision))

    def set_threads(self, threads: int | None) -> None:
        """Use `threads` intra-op threads (None: automatic), rebuilding the sessions (see `set_config`)."""
        self.set_config(self._config.replace(threads=threads))

    # -- low level ------------------------------------------------------------------------------------------------
    def params(self, beams: int | None = None, **overrides) -> GenerationParams:
        beams = self.defaults.num_beams if beams is None else int(beams)
        if not 1 <= beams <= MAX_BEAMS:
            raise InputError(f"beams must be between 1 and {MAX_BEAMS}, not {beams}")
        return self.defaults.replace(num_beams=beams, **overrides)

    def _search(
        self,
        batch: Sequence[Sequence[int]],
        params: GenerationParams,
        max_lengths: np.ndarray,
        extras: Sequence[RowExtras | None] | None = None,
    ) -> Steps:
        """engine.search.batch.search_batch on the loaded model (a method, so a test's spy sees every batch)."""
        model = self._model
        assert model is not None
        return search_batch(model, batch, params, max_lengths, extras)

    def generate_ids(
        self,
        batch: Sequence[Sequence[int]],
        beams: int | None = None,
        max_length: int | None = None,
        min_new_tokens: int = 0,
        max_new_tokens: int | None = None,
        forced_eos: bool = True,
    ) -> list[list[int]]:
        """Decode source id rows (each ending with eos) exactly as `generate()` would; eos is not returned.

        `max_length` counts the decoder start token, like transformers; `max_new_tokens` overrides it.
        `forced_eos=False` is generate()'s `forced_eos_token_id=None`: the last allowed token is not forced to eos
        (benchmarks that need exactly N real tokens).
        """
        if not batch:
            return []
        limit = max_length or self.defaults.max_length
        if max_new_tokens is not None:
            limit = max_new_tokens + 1
        params = self.params(beams, max_length=limit, min_new_tokens=min_new_tokens)
        if not forced_eos:
            params = params.replace(forced_eos_id=None)
        with self._exclusive("generate_ids()"):
            *_, last = self._search(batch, params, np.full(len(batch), limit, dtype=np.int64))
        return last.tokens

    # -- exclusive use, the sentence cache --------------------------------------------------------------------------
    _owner: int | None = None  # the thread holding `_lock` (stream and translate_segments keep it between yields)
    _cache: SentenceCache | None = None  # made on first use
    _cache_model: weakref.ref | None = None  # the model the cached results came from

    @contextmanager
    def _exclusive(self, what: str) -> Iterator[None]:
        """Hold the model lock. A call from the thread that already holds it (set_precision() inside a
        `for event in tr.stream(...)` loop, whose generator keeps the lock between events) would wait for itself
        forever: it gets a clear RuntimeError instead."""
        me = threading.get_ident()
        if self._owner == me:
            raise RuntimeError(
                f"Translator.{what} was called from inside a running stream() or translate_segments() loop on the "
                "same thread, which holds the model until the loop ends; finish the loop (or close() the "
                "generator) first"
            )
        with self._lock:
            self._owner = me
            try:
                yield
            finally:
                self._owner = None

    @property
    def sentence_cache(self) -> SentenceCache:
        """Finished sentence results reused by later requests (translate-as-you-type re-decodes only edits)."""
        if self._cache is None:
            self._cache = SentenceCache()
        return self._cache

    def clear_cache(self) -> None:
        """Forget every reused sentence (waits for a translation on another thread)."""
        with self._exclusive("clear_cache()"):
            self.sentence_cache.clear()

    def _cache_for(self, model: Model) -> SentenceCache:
        """The cache, emptied first when the model changed since it was filled (precision or threads)."""
        cache = self.sentence_cache
        if self._cache_model is None or self._cache_model() is not model:
            cache.clear()
            self._cache_model = weakref.ref(model)
        return cache

    # -- text ------------------------------------------------------------------------------------------------------
    def options(
        self, options: TranslationOptions | None = None, *, beams: int | None = None, variant: str | None = None
    ) -> TranslationOptions:
        """The request's options with the overrides applied, validated once for this model (InputError)."""
        if options is not None and not isinstance(options, TranslationOptions):
            raise InputError(f"options must be TranslationOptions, not {type(options).__name__}")
        return _with_overrides(options, beams, variant).validate(self.pair.variant_keys, MAX_BEAMS)

    def language_token(self, variant: str | None) -> str | None:
        """The token that selects `variant` (None: the pair's default); None when the pair needs no token."""
        if not self.pair.variants:
            return None
        chosen = self.pair.variant(variant)
        if chosen is None:
            keys = ", ".join(self.pair.variant_keys)
            raise InputError(f"unknown variant {variant!r}; this model offers {keys}")
        return chosen.token

    def _language_id(self, options: TranslationOptions) -> int | None:
        """The id put before each source row for the options' variant (the family's generation spec says whether
        the target language is chosen that way), or None."""
        lang = self.language_token(options.variant)
        return self.generation.source_id(self.tokenizer.token_to_id(lang)) if lang else None

    def _split_long(self, text: str, budget: int) -> list[str]:
        """An over-long sentence in pieces of at most `budget` tokens (engine.pipeline.planning.split_long, this
        source)."""

        def fits(s: str) -> bool:
            return len(self.tokenizer.encode(s, add_eos=False)) <= budget

        return split_long(text, fits, spaced=self.pipeline.segmentation.spaced)

    def _decoding(self) -> Decoding:
        """The loaded model as one run sees it; call while holding the lock."""
        model = self._model
        assert model is not None
        # `self._search` is looked up now, so a test's spy on the instance sees every batch
        return Decoding(self._search, model.max_positions, model.precision, self._cache_for(model), self._scope)

    def stream(
        self,
        text: str,
        options: TranslationOptions | None = None,
        *,
        beams: int | None = None,
        variant: str | None = None,
        cancel: threading.Event | None = None,
    ) -> Iterator[StreamEvent | Translation]:
        """Lazily translate `text`: yields StreamEvents as tokens are decoded, then the final Translation.

        `options` is the request; `beams`/`variant`, when given, override its fields (callers that set one thing).
        Sentences already translated by an earlier request with the same settings come from the cache at once, in
        reading order; only the others are decoded. Nothing runs until the first item is asked for; closing the
        generator early (or `cancel`) stops decoding and releases the model.
        """
        options = self.options(options, beams=beams, variant=variant)
        text = checked_text(text)
        params = self.params(options.beams)
        job = self.pipeline.job(text, options, self._language_id(options), time.perf_counter())
        with self._exclusive("stream()"):
            try:
                yield from self.pipeline.stream(job, params, self._decoding(), cancel)
            finally:
                release_free_memory(self._heap.retain)

    def translate(
        self,
        text: str,
        options: TranslationOptions | None = None,
        *,
        beams: int | None = None,
        variant: str | None = None,
        cancel: threading.Event | None = None,
        on_event: Callable[[StreamEvent], None] | None = None,
    ) -> Translation:
        """Translate `text`; `on_event` receives the streamed deltas, `cancel` stops within one decoder step."""
        result: Translation | None = None
        for item in self.stream(text, options, beams=beams, variant=variant, cancel=cancel):
            if isinstance(item, Translation):
                result = item
            elif on_event is not None:
                on_event(item)
        assert result is not None
        return result

    def translate_segments(
        self,
        segments: Iterable[str],
        options: TranslationOptions | None = None,
        *,
        cancel: threading.Event | None = None,
    ) -> Iterator[Translation]:
        """Translate independent segments (paragraphs, table cells, API `q` items, CLI lines: `qiao translate
        --json`) batched together: one Translation per segment, in order, each as soon as it is complete.

        Sentences are batched across segments, so many short ones run at batch speed. `segments` may be a list or
        any iterable, read lazily, a window of about WINDOW_SENTENCES sentences at a time (a generator of stdin
        lines works; memory stays bounded). Each result is what `translate(segment, options)` gives for that
        segment alone: token for token in FP32; in INT8 a sentence can rarely differ, as it does in `translate()`
        itself, because INT8 quantises activations per batch and the batch neighbours differ. Stats: `total_ms`
        runs from when the segment was read, `first_token_ms` to its first finished sentence, `tokens_per_s` is
        its window's decoding rate.

        A segment refused on its own (over MAX_CHARS, not a string) gives a Translation with `error` set (the
        reason), empty `text` and no stats, and the rest goes on. Invalid `options` raise InputError at once. When
        `cancel` is set, the segments already read come back with `cancelled=True` (the finished sentences' text)
        and the rest of `segments` is not read.
        """
        if isinstance(segments, str):
            raise InputError("translate_segments() takes an iterable of texts, not one string (use translate())")
        options = self.options(options)
        params = self.params(options.beams)
        lang_id = self._language_id(options)
        it = iter(segments)
        while True:
            window = self.pipeline.read_window(it, options, lang_id)
            if not window:
                return
            with self._exclusive("translate_segments()"):
                try:
                    cancelled = yield from self.pipeline.run_window(window, params, self._decoding(), cancel)
                finally:
                    release_free_memory(self._heap.retain)
            if cancelled:
                return

    # -- one sentence: the review window -----------------------------------------------------------------------
    _review_starts: SharedStarts | None = None  # made on first use

    @property
    def review_starts(self) -> SharedStarts:
        """The review window's kept shared start (engine.pipeline.alternatives): the last sentence asked about."""
        if self._review_starts is None:
            from engine.pipeline.alternatives import SharedStarts

            self._review_starts = SharedStarts()
        return self._review_starts

    def _sentence_run(self, options: TranslationOptions) -> SentenceRun:
        """A sentence request's parts: the loaded model, the tokenizer and this bundle's settings (call while holding
        the lock)."""
        from engine.pipeline.alternatives import SentenceRun, SentenceSettings

        model = self._model
        assert model is not None
        settings = SentenceSettings(
            defaults=self.defaults,
            length_rule=self.pipeline.length_rule,
            target_script=self.pair.target.script,
            language_id=self._language_id(options),
        )
        return SentenceRun(model, self.tokenizer, settings, options)

    def translate_sentence(
        self,
        source: str,
        options: TranslationOptions | None = None,
        *,
        prefix: str | Sequence[int] = (),
        cancel: threading.Event | None = None,
    ) -> SentenceResult:
        """Translate one sentence (not segmented) whose translation starts with `prefix`: target text (tokenised
        as the target would be; may end inside a word) or token ids; then the normal search. Spans are relative to
        `source` and the result's own text. `cancel` raises engine.pipeline.alternatives.SearchCancelled."""
        from engine.pipeline import alternatives

        options = self.options(options)
        source = checked_text(source)
        with self._exclusive("translate_sentence()"):
            try:
                return alternatives.translate_sentence(self._sentence_run(options), source, prefix, cancel)
            finally:
                release_free_memory(self._heap.retain)

    def alternatives(
        self,
        source: str,
        tokens: Sequence[int],
        position: int,
        options: TranslationOptions | None = None,
        *,
        k: int = 5,
        cancel: threading.Event | None = None,
    ) -> list[Alternative]:
        """Up to `k` other words at token `position` of the sentence whose current tokens are `tokens` (distinct
        after detokenisation, the current one excluded), each with the rest of the sentence re-decoded after it,
        most probable first; `Alternative.text` is the whole sentence. See engine.pipeline.alternatives."""
        from engine.pipeline import alternatives

        options = self.options(options)
        source = checked_text(source)
        with self._exclusive("alternatives()"):
            try:
                run = self._sentence_run(options)
                return alternatives.alternatives(run, self.review_starts, source, tokens, position, k, cancel)
            finally:
                release_free_memory(self._heap.retain)

    def iter_alternatives(
        self,
        source: str,
        tokens: Sequence[int],
        position: int,
        options: TranslationOptions | None = None,
        *,
        k: int = 5,
        cancel: threading.Event | None = None,
    ) -> Iterator[list[Alternative]]:
        """`alternatives` as it is found, for a popup that shows words before their rests: first the candidate
        words (`Alternative.complete` False, no rest yet), then the list again as the rests are decoded (all in one
        batch, one update per step that changed one), last the list `alternatives` returns. Lazy like `stream`:
        it holds the model between items; closing it early (or `cancel`, SearchCancelled) stops within a step."""
        from engine.pipeline import alternatives

        options = self.options(options)
        source = checked_text(source)
        with self._exclusive("iter_alternatives()"):
            try:
                run = self._sentence_run(options)
                yield from alternatives.iter_alternatives(run, self.review_starts, source, tokens, position, k, cancel)
            finally:
                release_free_memory(self._heap.retain)

    def alignment(
        self, source: str, tokens: Sequence[int], options: TranslationOptions | None = None
    ) -> tuple[tuple[int, int], ...]:
        """For each token of `tokens` (a translation of `source`, as SentenceResult.tokens), the characters of `source`
        the model attended to most writing it: word-level highlighting from the model's soft alignment, in the shape
        of SentenceResult.token_spans. Raises engine.errors.NotSupported for a model that gives none (Marian
        bundles); see engine.pipeline.alignment."""
        from engine.pipeline import alignment

        options = self.options(options)
        source = checked_text(source)
        with self._exclusive("alignment()"):
            try:
                return alignment.align(self._sentence_run(options), source, tokens)
            finally:
                release_free_memory(self._heap.retain)

    def prepare_alternatives(
        self,
        source: str,
        tokens: Sequence[int],
        options: TranslationOptions | None = None,
        *,
        cancel: threading.Event | None = None,
    ) -> None:
        """Decode the start of the sentence `source` → `tokens` now, so a later `alternatives`/`iter_alternatives`
        click anywhere in it gives its candidate words without decoding (the window calls this while the pointer
        rests on a sentence). Only the last sentence prepared or clicked is kept. `cancel` raises SearchCancelled
        between steps, keeping what was decoded."""
        from engine.pipeline import alternatives

        options = self.options(options)
        source = checked_text(source)
        with self._exclusive("prepare_alternatives()"):
            alternatives.prepare(self._sentence_run(options), self.review_starts, source, tokens, cancel)


def _config_from(config: EngineConfig | None, precision: str | None, threads: int | None) -> EngineConfig:
    """The constructor's config: `config`, or the defaults, with `precision`/`threads` filled in (validated)."""
    if config is not None and not isinstance(config, EngineConfig):
        raise InputError(
            f"config must be an EngineConfig, not {type(config).__name__} (give a precision as precision=...)"
        )
    if config is None:
        config = EngineConfig()
        if precision is not None:
            config = config.replace(precision=precision)
        if threads is not None:
            config = config.replace(threads=threads)
    else:
        for name, value in (("precision", precision), ("threads", threads)):
            if value is not None and value != getattr(config, name):
                raise InputError(f"{name}={value!r} contradicts the config's {name}={getattr(config, name)!r}")
    return config.validate()


def _with_overrides(options: TranslationOptions | None, beams: int | None, variant: str | None) -> TranslationOptions:
    options = options or TranslationOptions()
    if beams is not None:
        options = options.replace(beams=beams)
    if variant is not None:
        options = options.replace(variant=variant)
    return options
