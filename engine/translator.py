"""The engine's facade: one object per process holds a bundle's ORT sessions and translates text.

Study notes that shaped it: faster-whisper (one facade, dataclass results, streaming as a lazy generator, sessions
created once with explicit options) and CTranslate2 (cancellation checked between decoder steps).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.decoding import GenerationParams, beam_search, greedy_search
from engine.errors import BundleError, InputError
from engine.manifest import Manifest, verify_bundle, verify_files
from engine.native_memory import release_free_memory, tune_allocator
from engine.onnx_model import OnnxMarian
from engine.options import TranslationOptions
from engine.repetition import repeating_tail
from engine.results import StreamEvent, Translation, TranslationStats
from engine.segment import Segment, segment_text
from engine.tokenizer import MarianTokenizer
from engine.verified_cache import VerifiedFiles

PRECISIONS = ("int8", "fp32")
MAX_CHARS = 1_000_000  # one request; larger pastes get a clear error instead of an hours-long job
MAX_BEAMS = 8
CHUNK_TOKENS = 200  # a longer sentence is split into pieces of at most this many source tokens
BATCH_SENTENCES = 8
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


class Translator:
    """Translate English to Chinese with one bundle; safe to call from one worker thread at a time."""

    def __init__(
        self, bundle_dir: str | Path, precision: str = "int8", threads: int | None = None, verify: bool = True
    ) -> None:
        tune_allocator()
        self.bundle_dir = Path(bundle_dir)
        self._verify = verify
        self._verified = VerifiedFiles() if verify else None
        self.manifest: Manifest = verify_bundle(self.bundle_dir, precision, hashes=verify, cache=self._verified)
        tok = self.manifest.tokenizer
        self.tokenizer = MarianTokenizer(self.manifest.path(tok["file"]), tok)
        self._threads = threads
        self._model: OnnxMarian | None = None
        self._lock = threading.Lock()
        self.defaults = GenerationParams.from_generation_config(self.manifest.generation)
        self._joiner = self.manifest.raw.get("sentence_joiner", "")
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
            raise BundleError(str(self.bundle_dir), [f"this bundle has no {precision} model"])
        if check:
            problems = verify_files(self.manifest, precision, hashes=self._verify, cache=self._verified)
            if problems:
                raise BundleError(str(self.bundle_dir), problems)
        # Parsing the tokenizer and the graphs leaves freed heap behind; hand it back before and after the
        # sessions are built, so the process's high-water mark is the engine, not its loading garbage.
        release_free_memory()
        model = OnnxMarian(self.manifest, precision, self._threads)
        self._model = model  # the previous sessions are released with the old object
        release_free_memory()

    def set_precision(self, precision: str) -> None:
        """Switch INT8 ↔ FP32 without restarting (loads the other graphs; the old ones are freed)."""
        with self._lock:
            if self._model is None or self._model.precision != precision:
                self._load(precision)

    def set_threads(self, threads: int | None) -> None:
        with self._lock:
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
        with self._lock:
            *_, last = self._search(batch, params, np.full(len(batch), limit, dtype=np.int64))
        return last.tokens

    # -- text ------------------------------------------------------------------------------------------------------
    def language_token(self, script: str) -> str:
        scripts = self.manifest.scripts
        if script not in scripts:
            raise InputError(f"unknown script {script!r}; this model offers {', '.join(scripts) or 'none'}")
        return scripts[script]

    def _sentences(self, segments: list[Segment], lang_id: int | None) -> list[_Sentence]:
        """Token ids of every sentence; sentences over CHUNK_TOKENS are split at word boundaries, never cut."""
        eos = self.tokenizer.eos_id
        prefix = [lang_id] if lang_id is not None else []
        texts = [(i, s.text) for i, s in enumerate(segments) if s.translate]
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
        script: str | None = None,
        cancel: threading.Event | None = None,
    ) -> Iterator[StreamEvent | Translation]:
        """Lazily translate `text`: yields StreamEvents as tokens are decoded, then the final Translation.

        `options` is the request; `beams`/`script`, when given, override its fields (callers that set one thing).
        """
        options = _with_overrides(options, beams, script)
        beams, script = options.beams, options.script
        if not isinstance(text, str):
            raise InputError("text must be a string")
        text = _valid_unicode(text)
        if len(text) > MAX_CHARS:
            raise InputError(
                f"the text has {len(text):,} characters; Qiao translates at most {MAX_CHARS:,} per request. "
                "Split it into smaller parts."
            )
        params = self.params(beams)
        lang = self.language_token(script) if self.manifest.scripts else None
        start = time.perf_counter()
        segments = segment_text(text) if text.strip() else []  # whitespace only: an empty result, not an error
        with self._lock:
            try:
                yield from self._stream(segments, params, lang, cancel, start)
            finally:
                release_free_memory()

    def _stream(self, segments, params, lang, cancel, start) -> Iterator[StreamEvent | Translation]:
        model = self._model
        assert model is not None
        lang_id = self.tokenizer.token_to_id(lang) if lang else None
        sentences = self._sentences(segments, lang_id)
        total = len(sentences)
        tokens_out: list[list[int]] = [[] for _ in range(total)]
        pieces: list[str] = []
        first_token_ms: float | None = None
        decode_s = 0.0
        cancelled = False
        out = _Assembler(self.tokenizer, segments, sentences, self._joiner)
        for batch_idx in _batches(sentences, params.num_beams, model.max_positions):
            if cancel is not None and cancel.is_set():
                cancelled = True
                break
            batch = [sentences[i] for i in batch_idx]
            limits = np.array([length_limit(len(s.ids), model.max_positions) for s in batch], dtype=np.int64)
            t0 = time.perf_counter()
            search = self._search([s.ids for s in batch], params.replace(max_length=int(limits.max())), limits)
            finished = [False] * len(batch)
            for update in search:
                if first_token_ms is None and any(update.committed):
                    first_token_ms = (time.perf_counter() - start) * 1000
                for j, i in enumerate(batch_idx):
                    if finished[j]:
                        continue
                    toks = update.committed[j]
                    finished[j] = update.done[j] or (params.num_beams == 1 and repeating_tail(toks))
                    if finished[j]:
                        tokens_out[i] = list(toks)
                    before = out.sentences_done
                    delta = out.update(i, list(toks), finished[j])
                    if delta or out.sentences_done != before:  # progress counts even when no new text
                        pieces.append(delta)
                        yield StreamEvent(delta, out.sentences_done, total)
                if all(finished) or (cancel is not None and cancel.is_set()):
                    break
            search.close()
            decode_s += time.perf_counter() - t0
            if not all(finished):
                cancelled = True
                break
        if not cancelled:
            tail = out.drain()
            if tail:
                pieces.append(tail)
                yield StreamEvent(tail, out.sentences_done, total)
        target_tokens = sum(len(t) for t in tokens_out)
        stats = TranslationStats(
            total_ms=(time.perf_counter() - start) * 1000,
            first_token_ms=first_token_ms,
            source_tokens=sum(len(s.ids) for s in sentences),
            target_tokens=target_tokens,
            tokens_per_s=target_tokens / decode_s if decode_s > 0 else 0.0,
            precision=self.precision,
            beams=params.num_beams,
            sentences=total,
        )
        yield Translation(text="".join(pieces), tokens=tokens_out, stats=stats, cancelled=cancelled)

    def translate(
        self,
        text: str,
        options: TranslationOptions | None = None,
        *,
        beams: int | None = None,
        script: str | None = None,
        cancel: threading.Event | None = None,
        on_event: Callable[[StreamEvent], None] | None = None,
    ) -> Translation:
        """Translate `text`; `on_event` receives the streamed deltas, `cancel` stops within one decoder step."""
        result: Translation | None = None
        for item in self.stream(text, options, beams=beams, script=script, cancel=cancel):
            if isinstance(item, Translation):
                result = item
            elif on_event is not None:
                on_event(item)
        assert result is not None
        return result

    def translate_batch(
        self,
        texts: Sequence[str],
        options: TranslationOptions | None = None,
        *,
        cancel: threading.Event | None = None,
    ) -> Iterator[Translation]:
        """One Translation per text, in order (bulk jobs: `qiao translate --json`, documents, the local API).

        Each result is what `translate(text, options)` gives for that text alone.
        """
        # TODO(contract stub): translated one by one; to be replaced by batching sentences across texts.
        for text in texts:
            yield self.translate(text, options, cancel=cancel)


def _with_overrides(options: TranslationOptions | None, beams: int | None, script: str | None) -> TranslationOptions:
    options = options or TranslationOptions()
    if beams is not None:
        options = options.replace(beams=beams)
    if script is not None:
        options = options.replace(script=script)
    return options


def _valid_unicode(text: str) -> str:
    """Lone surrogates (from broken clipboards or binary junk) cannot be encoded; make them U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


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
    """Turns committed tokens into text deltas in reading order, with the source layout in between.

    The output plan is fixed up front: layout text (newlines and indentation verbatim, the gap between two
    sentences of a line replaced by the target's joiner) and sentence chunks. A chunk in progress is emitted only up
    to its last non-space character (a later token may end in whitespace that the final strip removes), so every
    delta is final and the deltas concatenate to the result.
    """

    def __init__(self, tokenizer: MarianTokenizer, segments: list[Segment], sentences: list[_Sentence], joiner: str):
        self.tokenizer = tokenizer
        self.streamable = not tokenizer.cleans_up
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
        self.final: list[str | None] = [None] * len(sentences)
        self.partial: list[list[int]] = [[] for _ in sentences]
        self.emitted = ""  # text of the chunk in progress already emitted
        self.sentences_done = 0

    def update(self, i: int, tokens: list[int], done: bool) -> str:
        if self.final[i] is not None:
            return ""
        if done:
            self.final[i] = self.tokenizer.decode(tokens)
        else:
            self.partial[i] = tokens
        return self.drain()

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
                out.append(final[len(self.emitted) :])
                self.emitted = ""
                self.pos += 1
                self.sentences_done += 1
                continue
            if self.streamable:
                safe = self.tokenizer.pieces_text(self.partial[value]).strip()  # type: ignore[index]
                if len(safe) > len(self.emitted):
                    out.append(safe[len(self.emitted) :])
                    self.emitted = safe
            break
        return "".join(out)
