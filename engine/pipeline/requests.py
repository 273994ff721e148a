"""The segment-level seam: texts → jobs (segmentation, sentence plan, output plan) → decoded, streamed or whole.

`Pipeline` knows the bundle's tokenizer and language pair and nothing of sessions or locks: the Translator facade
hands it a `Decoding` (the search to call, the model's positions and precision, the sentence cache) for each run,
under its model lock. Two ways through it:

* `stream(job, ...)`: one text, StreamEvents as tokens are decoded, then the Translation (the GUI's live output);
* `run_window(window, ...)`: many independent texts (paragraphs, table cells, API items, CLI lines) decoded
  together, one Translation per text, in order, each as soon as it is complete (`Translator.translate_segments`).

Both fill `Translation.sentences` (engine.pipeline.sentence_results builds them): each sentence's place in both texts,
its
token scores and flags, and its origin. Before decoding, a sentence the translation memory (`options.memory`)
knows is taken as the user wrote it, and one the sentence cache knows is reused; both appear at once.

Every convention comes from the pair: sentencex's code and spacing of the source (engine.text.segment.Segmentation),
the joiner between two translated sentences of one line, the punctuation rules of the target script.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field

from engine.errors import InputError
from engine.families.base import Tokenizer
from engine.languages import LanguagePair
from engine.options import TranslationOptions
from engine.pipeline.assembly import Assembler
from engine.pipeline.decode_loop import Clock, Search, decode, unscored
from engine.pipeline.length_limits import LengthRule, length_rule
from engine.pipeline.planning import Sentence, plan_sentences
from engine.pipeline.sentence_cache import SentenceCache
from engine.pipeline.sentence_results import Memos, Row, RowPlanner, cache_extra, request_params, results_of
from engine.results import (
    ORIGIN_CACHE,
    ORIGIN_MEMORY,
    ORIGIN_MODEL,
    SentenceResult,
    StreamEvent,
    Translation,
    TranslationStats,
)
from engine.search.decoding import GenerationParams
from engine.search.types import SentenceOutput
from engine.text import punctuation
from engine.text.segment import Segmentation, segment_text

MAX_CHARS = 1_000_000  # one request; larger pastes get a clear error instead of an hours-long job
# Many texts are read in windows of about this many sentences (or texts): memory stays bounded whatever the input's
# length, and results stream out as the window's sentences finish.
WINDOW_SENTENCES = 256
WINDOW_TEXTS = 1024


@dataclass(frozen=True)
class Decoding:
    """What one run needs of the loaded model (given by the Translator while it holds the model)."""

    search: Search
    max_positions: int
    precision: str
    cache: SentenceCache
    scope: str = ""  # the model the cached results belong to (cache keys include it)


@dataclass
class Job:
    """One text of a request: its plan, its sentences, and their results as they arrive."""

    sentences: list[Sentence]
    out: Assembler
    start: float
    tokens: list[list[int]] = field(default_factory=list)
    pending: int = 0  # sentences not finished yet
    reused: int = 0  # sentences taken from the cache (memory hits are not counted)
    first_token_ms: float | None = None
    options: TranslationOptions = field(default_factory=TranslationOptions)
    rows: list[Row] = field(default_factory=list)  # per sentence: what its search needs, what it gave


class Pipeline:
    """Texts to translations for one bundle's tokenizer and language pair (see the module docstring)."""

    def __init__(self, tokenizer: Tokenizer, pair: LanguagePair, rule: LengthRule | None = None) -> None:
        """`rule`: the model family's own length rule (GenerationSpec.length_rule), else the direction's."""
        self.tokenizer = tokenizer
        self.pair = pair
        self.family_rule = rule
        self.segmentation = Segmentation.of(pair)
        self.joiner = pair.joiner
        self.memos = Memos()  # per-sentence work a re-translation would repeat (spans, flags, bans)
        self.planner = RowPlanner(tokenizer, self.memos)

    @property
    def length_rule(self) -> LengthRule:
        """The direction's decoder length limit (engine.pipeline.length_limits; looked up per run, so tests can lower
        it), or the model family's own."""
        return self.family_rule or length_rule(self.pair.key)

    # -- planning (no model needed: done before taking the model lock) ----------------------------------------------
    def job(self, text: str, options: TranslationOptions, lang_id: int | None, start: float) -> Job:
        """Segment and tokenise one checked text; each sentence's bans, constraints and memory hit."""
        segments = segment_text(text, options.join_wrapped_lines, self.segmentation) if text.strip() else []
        sentences = (
            plan_sentences(self.tokenizer, segments, lang_id, spaced=self.segmentation.spaced) if segments else []
        )
        rules = punctuation.rules_for(self.pair.target.script) if options.normalize_punctuation else None
        out = Assembler(self.tokenizer, segments, sentences, self.joiner, rules)
        rows = self.planner.rows(segments, sentences, options, lang_id, options.guards)
        tokens: list[list[int]] = [[] for _ in sentences]
        return Job(sentences, out, start, tokens, len(sentences), options=options, rows=rows)

    def read_window(
        self, texts: Iterator[object], options: TranslationOptions, lang_id: int | None
    ) -> list[Job | Translation]:
        """The next texts of `texts`, about WINDOW_SENTENCES sentences; a refused text is its error Translation."""
        window: list[Job | Translation] = []
        sentences = 0
        for text in texts:
            try:
                job = self.job(checked_text(text), options, lang_id, time.perf_counter())
            except InputError as exc:
                window.append(Translation(text="", error=str(exc)))
            else:
                window.append(job)
                sentences += len(job.sentences)
            if sentences >= WINDOW_SENTENCES or len(window) >= WINDOW_TEXTS:
                break
        return window

    # -- decoding ---------------------------------------------------------------------------------------------------
    def stream(
        self, job: Job, params: GenerationParams, decoding: Decoding, cancel: threading.Event | None
    ) -> Iterator[StreamEvent | Translation]:
        """StreamEvents for `job` as its sentences decode (cached ones and memory hits at once), then its
        Translation. `params` are the model's; the job's options add n-best, guards and bans."""
        params = request_params(params, job.options)
        out, total = job.out, len(job.sentences)
        pieces: list[str] = []
        todo, keys, owners = _reuse([job], decoding, params, self.length_rule)
        delta = out.drain()
        if delta or out.sentences_done:  # cached sentences at the start appear at once
            job.first_token_ms = (time.perf_counter() - job.start) * 1000
            pieces.append(delta)
            yield StreamEvent(delta, out.sentences_done, total)
        clock = Clock()
        for f, toks, output in _decode(todo, owners, params, decoding, cancel, clock, self.length_rule):
            if job.first_token_ms is None and toks:
                job.first_token_ms = (time.perf_counter() - job.start) * 1000
            local = owners[f][1]
            before = out.sentences_done
            if output is not None:
                self._finish(job, local, toks, output, decoding.cache, keys[f])
            else:
                out.progress(local, toks)
                if not out.shows(local):  # no text before the sentence ahead of it (µs a row a step skipped)
                    continue
            delta = out.drain()
            if delta or out.sentences_done != before:  # progress counts even when no new text
                pieces.append(delta)
                yield StreamEvent(delta, out.sentences_done, total)
        if not clock.cancelled:
            tail = out.drain()
            if tail:
                pieces.append(tail)
                yield StreamEvent(tail, out.sentences_done, total)
        yield self._translation(job, "".join(pieces), clock, params, decoding.precision, clock.cancelled)

    def run_window(
        self,
        window: list[Job | Translation],
        params: GenerationParams,
        decoding: Decoding,
        cancel: threading.Event | None,
    ) -> Generator[Translation, None, bool]:
        """Decode one window's sentences together; yields each text's result in order; returns True if cancelled.

        Every text of a window has the same options (one request)."""
        jobs = [job for job in window if isinstance(job, Job)]
        params = request_params(params, jobs[0].options if jobs else TranslationOptions())
        todo, keys, owners = _reuse(jobs, decoding, params, self.length_rule)
        clock = Clock()
        ready = 0

        def result(item: Job | Translation, cancelled: bool = False) -> Translation:
            if isinstance(item, Translation):
                return item
            return self._translation(item, item.out.drain(), clock, params, decoding.precision, cancelled)

        def complete(item: Job | Translation) -> bool:
            return isinstance(item, Translation) or item.pending == 0

        while ready < len(window) and complete(window[ready]):
            yield result(window[ready])
            ready += 1
        for f, toks, output in _decode(todo, owners, params, decoding, cancel, clock, self.length_rule):
            if output is None:
                continue
            job, local = owners[f]
            if job.first_token_ms is None:
                job.first_token_ms = (time.perf_counter() - job.start) * 1000
            self._finish(job, local, toks, output, decoding.cache, keys[f])
            while ready < len(window) and complete(window[ready]):
                yield result(window[ready])
                ready += 1
        if clock.cancelled:
            for item in window[ready:]:
                yield result(item, cancelled=not complete(item))
            return True
        return False

    def _finish(
        self, job: Job, local: int, tokens: list[int], output: SentenceOutput, cache: SentenceCache, key: tuple
    ) -> None:
        text = self.tokenizer.decode(tokens)
        job.tokens[local] = tokens
        job.rows[local].output, job.rows[local].origin = output, ORIGIN_MODEL
        job.out.finish(local, text)
        job.pending -= 1
        cache.put(key, tokens, text, output)  # only finished sentences: a cancelled one never gets here

    def _translation(
        self, job: Job, text: str, clock: Clock, params: GenerationParams, precision: str, cancelled: bool
    ) -> Translation:
        stats = _stats(job, clock, params, precision)
        return Translation(text, job.tokens, stats, cancelled, sentences=self.results(job))

    def results(self, job: Job) -> list[SentenceResult]:
        """The SentenceResult of every sentence whose text is in the output so far (all, unless cancelled)."""
        return results_of(job.rows, job.tokens, job.out, self.tokenizer, job.options, job.options.guards, self.memos)


def _decode(
    todo: list[Sentence], owners: list[tuple[Job, int]], params, decoding: Decoding, cancel, clock, rule: LengthRule
):
    """engine.pipeline.decode_loop.decode over the sentences to decode, with each one's extras and bans."""
    rows = [job.rows[local] for job, local in owners]
    extras = [row.extras for row in rows] if any(row.extras is not None for row in rows) else None
    bans = [row.bans for row in rows]
    return decode(
        todo, params, decoding.search, decoding.max_positions, cancel, clock, extras=extras, bans=bans, rule=rule
    )


def _reuse(
    jobs: list[Job], decoding: Decoding, params: GenerationParams, rule: LengthRule
) -> tuple[list[Sentence], list[tuple], list[tuple[Job, int]]]:
    """Fill every sentence the translation memory or the cache knows; returns the others (flat), their cache keys,
    and their owners. The length rule is part of the key: an output cut under one limit is not reused under another."""
    cache = decoding.cache
    flat: list[Sentence] = []
    keys: list[tuple] = []
    owners: list[tuple[Job, int]] = []
    for job in jobs:
        for local, sentence in enumerate(job.sentences):
            row = job.rows[local]
            if row.memory is not None:  # the user's own translation, shown as they wrote it
                row.origin = ORIGIN_MEMORY
                job.out.finish(local, row.memory, verbatim=True)
                job.pending -= 1
                continue
            extra = (*cache_extra(params, row), rule)
            key = cache.key(sentence.ids, params.num_beams, decoding.precision, decoding.scope, extra)
            hit = cache.lookup(key)
            if hit is not None:
                job.tokens[local] = hit.tokens
                row.origin, row.output = ORIGIN_CACHE, hit.output or unscored(hit.tokens)
                job.out.finish(local, hit.text)
                job.pending -= 1
                job.reused += 1
                continue
            flat.append(sentence)
            keys.append(key)
            owners.append((job, local))
    return flat, keys, owners


def _stats(job: Job, clock: Clock, params: GenerationParams, precision: str) -> TranslationStats:
    seconds = clock.seconds()
    return TranslationStats(
        total_ms=(time.perf_counter() - job.start) * 1000,
        first_token_ms=job.first_token_ms,
        source_tokens=sum(len(s.ids) for s in job.sentences),
        target_tokens=sum(len(t) for t in job.tokens),
        tokens_per_s=clock.tokens / seconds if seconds > 0 else 0.0,  # the tokens decoded, not the reused
        precision=precision,
        beams=params.num_beams,
        sentences=len(job.sentences),
        sentences_reused=job.reused,
    )


def valid_unicode(text: str) -> str:
    """Lone surrogates (from broken clipboards or binary junk) cannot be encoded; make them U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def checked_text(text: object) -> str:
    """The text of one request, or an InputError saying why it cannot be translated."""
    if not isinstance(text, str):
        raise InputError("text must be a string")
    text = valid_unicode(text)
    if len(text) > MAX_CHARS:
        raise InputError(
            f"the text has {len(text):,} characters; Qiao translates at most {MAX_CHARS:,} per request. "
            "Split it into smaller parts."
        )
    return text
