"""The engine's facade: one object per process holds a bundle's ORT sessions and translates text.

Study notes that shaped it: faster-whisper (one facade, dataclass results, streaming as a lazy generator, sessions
created once with explicit options) and CTranslate2 (cancellation checked between decoder steps).
"""

from __future__ import annotations

import re
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine import punctuation
from engine.config import MAX_BEAMS, PRECISIONS
from engine.decoding import GenerationParams, beam_search, greedy_search
from engine.errors import BundleError, FileProblem, InputError
from engine.load_guard import diagnose
from engine.manifest import Manifest, verify_bundle, verify_files
from engine.native_memory import release_free_memory, tune_allocator
from engine.onnx_model import OnnxMarian
from engine.options import TranslationOptions
from engine.repetition import repeating_tail
from engine.results import StreamEvent, Translation, TranslationStats
from engine.segment import Segment, segment_text
from engine.sentence_cache import SentenceCache
from engine.tokenizer import MarianTokenizer
from engine.verified_cache import VerifiedFiles

MAX_CHARS = 1_000_000  # one request; larger pastes get a clear error instead of an hours-long job
CHUNK_TOKENS = 200  # a longer sentence is split into pieces of at most this many source tokens
BATCH_SENTENCES = 8
# translate_batch reads its texts in windows of about this many sentences (or texts): memory stays bounded whatever
# the input's length, and results stream out as the window's sentences finish.
WINDOW_SENTENCES = 256
WINDOW_TEXTS = 1024
# Decoder rows (sentences × beams) × (source + target length limit) per batch. Each position costs
# 2·layers·d_model floats of cache (24.6 kB for opus-mt-en-zh), so this bounds a batch's caches to ~50 MB even when
# every hypothesis runs to its length limit, whatever the input.
BATCH_POSITIONS = 2048


def length_limit(source_len: int, model_max: int) -> int:
    """Decoder length limit (start token included) derived from the source: room for 3 target tokens per source
    token plus slack, never beyond the model's positions. Stops runaway output on odd input."""
    return int(min(model_max, 3 * source_len + 10))


@dataclass
class _Sentence:
    index: int  # position in the segment list
    ids: list[int]


@dataclass
class _Job:
    """One text of a request: its plan, its sentences, and their results as they arrive."""

    sentences: list[_Sentence]
    out: _Assembler
    start: float
    tokens: list[list[int]] = field(default_factory=list)
    pending: int = 0  # sentences not finished yet
    reused: int = 0  # sentences taken from the cache
    first_token_ms: float | None = None


@dataclass
class _Clock:
    """Decoding time and tokens of one run of `_decode`, and whether it stopped early."""

    decode_s: float = 0.0  # batches done
    since: float | None = None  # when the batch being decoded started
    tokens: int = 0
    cancelled: bool = False

    def seconds(self) -> float:
        return self.decode_s + (time.perf_counter() - self.since if self.since is not None else 0.0)


class Translator:
    """Translate English to Chinese with one bundle; safe to call from one worker thread at a time."""

    def __init__(
        self, bundle_dir: str | Path, precision: str = "int8", threads: int | None = None, verify: bool = True
    ) -> None:
        tune_allocator()
        self.bundle_dir = Path(bundle_dir)
        self._verify = verify
        self._verified = VerifiedFiles() if verify else None
        # Every path, size and (unless verify=False) sha256 is checked before any model file is opened.
        self.manifest: Manifest = verify_bundle(self.bundle_dir, precision, hashes=verify, cache=self._verified)
        self._threads = threads
        self._model: OnnxMarian | None = None
        self._lock = threading.Lock()
        self.defaults = GenerationParams.from_generation_config(self.manifest.generation)
        self.pair = self.manifest.pair
        self._joiner = self.pair.joiner
        try:
            self.tokenizer = MarianTokenizer.from_manifest(self.manifest)
            self.tokenizer.load_vocabulary()  # a damaged pieces.json fails here, not at the first translation
        except Exception as exc:  # a raw tokenizers/json error: find out which file is damaged, and how
            raise diagnose(self.manifest, precision, exc, self._verified) from exc
        self._load(precision, check=False)

    # -- model management ---------------------------------------------------------------------------------------
    @property
    def precision(self) -> str:
        return self._model.precision  # type: ignore[union-attr]

    @property
    def available_precisions(self) -> tuple[str, ...]:
        return tuple(p for p in PRECISIONS if p in self.manifest.precisions)

    @property
    def threads(self) -> int | None:
        return self._threads

    def _load(self, precision: str, check: bool = True) -> None:
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
            model = OnnxMarian(self.manifest, precision, self._threads)
            model.scorer(self.defaults)  # opened now, so a damaged scorer.onnx fails while loading
        except Exception as exc:  # e.g. InvalidProtobuf from damage the verified-files cache could not see
            raise diagnose(self.manifest, precision, exc, self._verified) from exc
        self._model = model  # the previous sessions are released with the old object
        release_free_memory()

    def set_precision(self, precision: str) -> None:
        """Switch INT8 ↔ FP32 without restarting (loads the other graphs; the old ones are freed).

        Waits for a translation running on another thread; raises RuntimeError when called from inside a stream()
        or translate_batch() loop on this thread (which holds the model until the loop ends).
        """
        with self._exclusive("set_precision()"):
            if self._model is None or self._model.precision != precision:
                self._load(precision)

    def set_threads(self, threads: int | None) -> None:
        with self._exclusive("set_threads()"):
            if threads != self._threads:
                self._threads = threads
                self._load(self.precision, check=False)

    # -- low level ------------------------------------------------------------------------------------------------
    def params(self, beams: int | None = None, **overrides) -> GenerationParams:
        beams = self.defaults.num_beams if beams is None else int(beams)
        if not 1 <= beams <= MAX_BEAMS:
            raise InputError(f"beams must be between 1 and {MAX_BEAMS}, not {beams}")
        return self.defaults.replace(num_beams=beams, **overrides)

    def _search(self, batch: Sequence[Sequence[int]], params: GenerationParams, max_lengths: np.ndarray):
        model = self._model
        assert model is not None
        width = max(len(ids) for ids in batch)
        ids = np.full((len(batch), width), params.pad_id, dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for r, row in enumerate(batch):
            ids[r, : len(row)] = row
            mask[r, : len(row)] = 1
        enc = model.encode(ids, mask)
        search = greedy_search if params.num_beams == 1 else beam_search
        return search(model, enc, params, max_lengths)

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
    _owner: int | None = None  # the thread holding `_lock` (stream and translate_batch keep it between yields)
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
                f"Translator.{what} was called from inside a running stream() or translate_batch() loop on the "
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

    def _cache_for(self, model: OnnxMarian) -> SentenceCache:
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

    def _sentences(self, segments: list[Segment], lang_id: int | None) -> list[_Sentence]:
        """Token ids of every sentence; sentences over CHUNK_TOKENS are split at word boundaries, never cut."""
        eos = self.tokenizer.eos_id
        prefix = [lang_id] if lang_id is not None else []
        texts = [(i, s.sentence) for i, s in enumerate(segments) if s.translate]
        encoded = self.tokenizer.encode_batch([t for _, t in texts], add_eos=False)
        out: list[_Sentence] = []
        for (index, text), ids in zip(texts, encoded):
            if len(ids) + len(prefix) + 1 <= CHUNK_TOKENS:
                out.append(_Sentence(index, [*prefix, *ids, eos]))
                continue
            for chunk in self._split_long(text, CHUNK_TOKENS - len(prefix) - 1):
                chunk_ids = self.tokenizer.encode(chunk, add_eos=False)
                out.append(_Sentence(index, [*prefix, *chunk_ids, eos]))
        return out

    def _split_long(self, text: str, budget: int) -> list[str]:
        """Split an over-long sentence at clause punctuation, else at spaces, else anywhere, within `budget` tokens."""

        def fits(s: str) -> bool:
            return len(self.tokenizer.encode(s, add_eos=False)) <= budget

        for pattern in (r"(?<=[;:,])\s+", r"\s+"):
            parts = [p for p in re.split(pattern, text) if p]
            if len(parts) > 1:
                break
        else:
            parts = [text[i : i + budget] for i in range(0, len(text), budget)]
        chunks: list[str] = []
        current = ""
        for part in parts:
            candidate = f"{current} {part}" if current else part
            if fits(candidate):
                current = candidate
                continue
            if current:
                chunks.append(current)
            if fits(part):
                current = part
            else:  # a single clause still too long: split it further
                sub = self._split_long(part, budget) if len(part) > 1 else [part]
                chunks.extend(sub[:-1])
                current = sub[-1]
        if current:
            chunks.append(current)
        return chunks

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
        reading order; only the others are decoded.
        """
        options = self.options(options, beams=beams, variant=variant)
        text = _checked_text(text)
        params = self.params(options.beams)
        start = time.perf_counter()
        job = self._job(text, options, start)
        with self._exclusive("stream()"):
            try:
                yield from self._stream(job, params, cancel)
            finally:
                release_free_memory()

    def _job(self, text: str, options: TranslationOptions, start: float) -> _Job:
        """Segment and tokenise one text (no model needed, so done before taking the lock)."""
        segments = segment_text(text, options.join_wrapped_lines) if text.strip() else []  # whitespace: empty
        lang = self.language_token(options.variant)
        lang_id = self.tokenizer.token_to_id(lang) if lang else None
        sentences = self._sentences(segments, lang_id) if segments else []
        normalize = punctuation.normalize if options.normalize_punctuation else None
        out = _Assembler(self.tokenizer, segments, sentences, self._joiner, normalize)
        return _Job(sentences, out, start, tokens=[[] for _ in sentences], pending=len(sentences))

    def _reuse(self, jobs: list[_Job], cache: SentenceCache, beams: int) -> tuple[list[_Sentence], list, list]:
        """Fill every sentence the cache knows; returns all sentences (flat), their keys, and their owners."""
        precision = self.precision
        flat: list[_Sentence] = []
        keys: list[tuple] = []
        owners: list[tuple[_Job, int]] = []
        for job in jobs:
            for local, sentence in enumerate(job.sentences):
                key = cache.key(sentence.ids, beams, precision)
                hit = cache.get(key)
                if hit is not None:
                    job.tokens[local], text = hit
                    job.out.finish(local, text)
                    job.pending -= 1
                    job.reused += 1
                    continue
                flat.append(sentence)
                keys.append(key)
                owners.append((job, local))
        return flat, keys, owners

    def _decode(
        self, sentences: list[_Sentence], params: GenerationParams, cancel: threading.Event | None, clock: _Clock
    ) -> Iterator[tuple[int, list[int], bool]]:
        """Decode `sentences` in batches, in order: yields (index, committed tokens, finished) after every step.

        Stops early (`clock.cancelled`) when `cancel` is set, within one decoder step."""
        model = self._model
        assert model is not None
        for batch_idx in _batches(sentences, params.num_beams, model.max_positions):
            if cancel is not None and cancel.is_set():
                clock.cancelled = True
                return
            batch = [sentences[i] for i in batch_idx]
            limits = np.array([length_limit(len(s.ids), model.max_positions) for s in batch], dtype=np.int64)
            clock.since = time.perf_counter()
            search = self._search([s.ids for s in batch], params.replace(max_length=int(limits.max())), limits)
            finished = [False] * len(batch)
            try:
                for update in search:
                    for j, i in enumerate(batch_idx):
                        if finished[j]:
                            continue
                        toks = update.committed[j]
                        finished[j] = update.done[j] or (params.num_beams == 1 and repeating_tail(toks))
                        if finished[j]:
                            clock.tokens += len(toks)
                        yield i, list(toks), finished[j]
                    if all(finished) or (cancel is not None and cancel.is_set()):
                        break
            finally:
                search.close()
                clock.decode_s, clock.since = clock.seconds(), None
            if not all(finished):
                clock.cancelled = True
                return

    def _finish(self, job: _Job, local: int, tokens: list[int], cache: SentenceCache, key: tuple) -> None:
        text = self.tokenizer.decode(tokens)
        job.tokens[local] = tokens
        job.out.finish(local, text)
        job.pending -= 1
        cache.put(key, tokens, text)  # only finished sentences: a cancelled one never gets here

    def _stats(self, job: _Job, clock: _Clock, params: GenerationParams) -> TranslationStats:
        target_tokens = sum(len(t) for t in job.tokens)
        seconds = clock.seconds()
        return TranslationStats(
            total_ms=(time.perf_counter() - job.start) * 1000,
            first_token_ms=job.first_token_ms,
            source_tokens=sum(len(s.ids) for s in job.sentences),
            target_tokens=target_tokens,
            tokens_per_s=clock.tokens / seconds if seconds > 0 else 0.0,  # the tokens decoded, not the reused
            precision=self.precision,
            beams=params.num_beams,
            sentences=len(job.sentences),
            sentences_reused=job.reused,
        )

    def _stream(
        self, job: _Job, params: GenerationParams, cancel: threading.Event | None
    ) -> Iterator[StreamEvent | Translation]:
        model = self._model
        assert model is not None
        cache = self._cache_for(model)
        out, total = job.out, len(job.sentences)
        pieces: list[str] = []
        todo, keys, owners = self._reuse([job], cache, params.num_beams)
        delta = out.drain()
        if delta or out.sentences_done:  # cached sentences at the start appear at once
            job.first_token_ms = (time.perf_counter() - job.start) * 1000
            pieces.append(delta)
            yield StreamEvent(delta, out.sentences_done, total)
        clock = _Clock()
        for f, toks, done in self._decode(todo, params, cancel, clock):
            if job.first_token_ms is None and toks:
                job.first_token_ms = (time.perf_counter() - job.start) * 1000
            local = owners[f][1]
            before = out.sentences_done
            if done:
                self._finish(job, local, toks, cache, keys[f])
            else:
                out.progress(local, toks)
            delta = out.drain()
            if delta or out.sentences_done != before:  # progress counts even when no new text
                pieces.append(delta)
                yield StreamEvent(delta, out.sentences_done, total)
        if not clock.cancelled:
            tail = out.drain()
            if tail:
                pieces.append(tail)
                yield StreamEvent(tail, out.sentences_done, total)
        stats = self._stats(job, clock, params)
        yield Translation(text="".join(pieces), tokens=job.tokens, stats=stats, cancelled=clock.cancelled)

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

    def translate_batch(
        self,
        texts: Iterable[str],
        options: TranslationOptions | None = None,
        *,
        cancel: threading.Event | None = None,
    ) -> Iterator[Translation]:
        """One Translation per text, in order, each as soon as it is complete (bulk jobs: `qiao translate --json`).

        Sentences are batched across texts, so many short lines run at batch speed. `texts` is read lazily, a
        window of about WINDOW_SENTENCES sentences at a time (a generator of stdin lines works; memory stays
        bounded). Each result is what `translate(text, options)` gives for that text alone: token for token in
        FP32; in INT8 a sentence can rarely differ, as it does in `translate()` itself, because INT8 quantises
        activations per batch and the batch neighbours differ. Stats: `total_ms` runs from when the text was read,
        `first_token_ms` to its first finished sentence, `tokens_per_s` is its window's decoding rate.

        A text refused on its own (over MAX_CHARS, not a string) gives a Translation with `error` set (the reason),
        empty `text` and no stats, and the batch goes on. Invalid `options` raise InputError at once. When `cancel`
        is set, the texts already read come back with `cancelled=True` (the finished sentences' text) and the rest
        of `texts` is not read.
        """
        if isinstance(texts, str):
            raise InputError("translate_batch takes an iterable of texts, not one string (use translate())")
        options = self.options(options)
        params = self.params(options.beams)
        it = iter(texts)
        while True:
            window = self._read_window(it, options)
            if not window:
                return
            with self._exclusive("translate_batch()"):
                try:
                    cancelled = yield from self._run_window(window, params, cancel)
                finally:
                    release_free_memory()
            if cancelled:
                return

    def _read_window(self, texts: Iterator[str], options: TranslationOptions) -> list[_Job | Translation]:
        window: list[_Job | Translation] = []
        sentences = 0
        for text in texts:
            try:
                job = self._job(_checked_text(text), options, time.perf_counter())
            except InputError as exc:
                window.append(Translation(text="", error=str(exc)))
            else:
                window.append(job)
                sentences += len(job.sentences)
            if sentences >= WINDOW_SENTENCES or len(window) >= WINDOW_TEXTS:
                break
        return window

    def _run_window(
        self, window: list[_Job | Translation], params: GenerationParams, cancel: threading.Event | None
    ) -> Iterator[Translation]:
        """Decode one window's sentences together; yields each text's result in order; returns True if cancelled."""
        model = self._model
        assert model is not None
        cache = self._cache_for(model)
        jobs = [job for job in window if isinstance(job, _Job)]
        todo, keys, owners = self._reuse(jobs, cache, params.num_beams)
        clock = _Clock()
        ready = 0

        def result(item: _Job | Translation, cancelled: bool = False) -> Translation:
            if isinstance(item, Translation):
                return item
            stats = self._stats(item, clock, params)
            return Translation(text=item.out.drain(), tokens=item.tokens, stats=stats, cancelled=cancelled)

        def complete(item: _Job | Translation) -> bool:
            return isinstance(item, Translation) or item.pending == 0

        while ready < len(window) and complete(window[ready]):
            yield result(window[ready])
            ready += 1
        for f, toks, done in self._decode(todo, params, cancel, clock):
            if not done:
                continue
            job, local = owners[f]
            if job.first_token_ms is None:
                job.first_token_ms = (time.perf_counter() - job.start) * 1000
            self._finish(job, local, toks, cache, keys[f])
            while ready < len(window) and complete(window[ready]):
                yield result(window[ready])
                ready += 1
        if clock.cancelled:
            for item in window[ready:]:
                yield result(item, cancelled=not complete(item))
            return True
        return False


def _with_overrides(options: TranslationOptions | None, beams: int | None, variant: str | None) -> TranslationOptions:
    options = options or TranslationOptions()
    if beams is not None:
        options = options.replace(beams=beams)
    if variant is not None:
        options = options.replace(variant=variant)
    return options


def _valid_unicode(text: str) -> str:
    """Lone surrogates (from broken clipboards or binary junk) cannot be encoded; make them U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def _checked_text(text: object) -> str:
    """The text of one request, or an InputError saying why it cannot be translated."""
    if not isinstance(text, str):
        raise InputError("text must be a string")
    text = _valid_unicode(text)
    if len(text) > MAX_CHARS:
        raise InputError(
            f"the text has {len(text):,} characters; Qiao translates at most {MAX_CHARS:,} per request. "
            "Split it into smaller parts."
        )
    return text


def _batches(sentences: list[_Sentence], beams: int, model_max: int) -> Iterator[list[int]]:
    """Consecutive sentences (so streaming stays in reading order), bounded in count and in cache positions."""
    batch: list[int] = []
    src = limit = 0
    for i, s in enumerate(sentences):
        own_limit = length_limit(len(s.ids), model_max)
        new_src, new_limit = max(src, len(s.ids)), max(limit, own_limit)
        cost = (len(batch) + 1) * beams * (new_src + new_limit)
        if batch and (len(batch) >= BATCH_SENTENCES or cost > BATCH_POSITIONS):
            yield batch
            batch, new_src, new_limit = [], len(s.ids), own_limit
        batch.append(i)
        src, limit = new_src, new_limit
    if batch:
        yield batch


class _Assembler:
    """Turns finished sentences and committed tokens into text deltas in reading order, with the source layout.

    The output plan is fixed up front: layout text (newlines and indentation verbatim, the gap between two
    sentences of a line replaced by the target's joiner) and sentence chunks. A chunk in progress is emitted only up
    to its last non-space character (a later token may end in whitespace that the final strip removes), and, when
    punctuation is normalised, only up to what no later character can change (engine.punctuation.stable_prefix), so
    every delta is final and the deltas concatenate to the result.
    """

    def __init__(
        self,
        tokenizer: MarianTokenizer,
        segments: list[Segment],
        sentences: list[_Sentence],
        joiner: str,
        normalize: Callable[[str], str] | None = None,
    ):
        self.tokenizer = tokenizer
        self.streamable = not tokenizer.cleans_up
        self.normalize = normalize
        chunks: dict[int, list[int]] = {}
        for i, sentence in enumerate(sentences):
            chunks.setdefault(sentence.index, []).append(i)
        plan: list[tuple[str, str | int]] = []
        for si, seg in enumerate(segments):
            if seg.translate:
                for n, i in enumerate(chunks.get(si, [])):
                    if n:
                        plan.append(("text", joiner))
                    plan.append(("chunk", i))
            else:
                plan.append(("text", joiner if seg.inline_gap else seg.text))
        self.plan = plan
        self.pos = 0
        self.final: list[str | None] = [None] * len(sentences)  # decoded text, as the model wrote it
        self.partial: list[list[int]] = [[] for _ in sentences]
        self.emitted = ""  # text of the chunk in progress already emitted
        self.sentences_done = 0

    def finish(self, i: int, text: str) -> None:
        if self.final[i] is None:
            self.final[i] = text

    def progress(self, i: int, tokens: list[int]) -> None:
        if self.final[i] is None:
            self.partial[i] = tokens

    def drain(self) -> str:
        out = []
        while self.pos < len(self.plan):
            kind, value = self.plan[self.pos]
            if kind == "text":
                out.append(value)  # type: ignore[arg-type]
                self.pos += 1
                continue
            final = self.final[value]  # type: ignore[index]
            if final is not None:
                if self.normalize is not None:
                    final = self.normalize(final)
                out.append(final[len(self.emitted) :])
                self.emitted = ""
                self.pos += 1
                self.sentences_done += 1
                continue
            if self.streamable:
                safe = self.tokenizer.pieces_text(self.partial[value]).strip()  # type: ignore[index]
                if self.normalize is not None:
                    safe = self.normalize(punctuation.stable_prefix(safe))
                if len(safe) > len(self.emitted):
                    out.append(safe[len(self.emitted) :])
                    self.emitted = safe
            break
        return "".join(out)
