"""One sentence at a time, for the review window: decode it (optionally from a forced target prefix), and the
alternatives at one token position with the rest of the sentence re-decoded after each (the DeepL interaction).

`Translator.translate_sentence` and `Translator.alternatives` only take the model lock and call in here. The
alternatives at `position` of a sentence whose tokens are `tokens`:

1. the distribution there given tokens[:position]: one batch-1 decoder pass over the prefix;
2. the best candidates that give a different word there (distinct after detokenisation, the current token's word
   excluded, eos and banned tokens never);
3. every candidate's rest of the sentence decoded together, one batch of prefix-forced rows of the same length
   (tokens[:position] + candidate), over one encoder run repeated per row; with the options' beams (what
   `translate_sentence(source, prefix=alternative.tokens[:position + 1])` gives, so choosing one shows the text
   that was offered). The shared part is not decoded again: the batch's decoder cache starts as the batch-1
   pass left it and its logits are replayed (`_Prefilled`), so the batch decodes only from the candidate on.
   bench/alternatives.py measures greedy and beams on the full-size model.

Step 3 costs a decoder step per token of the rest for all candidates (about 10 ms a step at 5 rows on 2 cores), so
a 20-token sentence cannot be re-decoded within the 150 ms the issue asks for the first alternatives. Steps 1–2 can
(one batch-1 pass over the prefix, nothing at all left of the previous click on the sentence):
`iter_alternatives` yields the candidate words first (`Alternative.complete` False, the rest not decoded yet), then
the list again whenever a rest grew by a step, then the final list — exactly what `alternatives` returns. A first
click on a sentence still decodes its start (about 5 ms a token): `prepare` does that ahead of the click (the
window asks for it while the pointer rests on a sentence), so the click finds its candidates at once.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from engine.config import MAX_BEAMS
from engine.errors import InputError, QiaoError
from engine.families.base import EncoderState, Model, Tokenizer
from engine.options import TranslationOptions
from engine.pipeline import guards
from engine.pipeline.length_limits import DEFAULT_RULE, LengthRule, length_limit, reached_limit
from engine.pipeline.sentence_results import cut_flags
from engine.results import Alternative, Flag, SentenceResult
from engine.search.batch import encode_rows, forced_ids, search_encoded
from engine.search.decoding import GenerationParams, StepUpdate, log_softmax
from engine.search.types import Constraint, RowExtras, SentenceOutput
from engine.text import punctuation
from engine.text.target_prefix import encode_target_prefix
from engine.text.token_spans import final_text, token_spans

CANDIDATE_POOL = 64  # candidates looked at to find k distinct words at a position


class SearchCancelled(QiaoError):
    """The caller's cancel event stopped a sentence request (the review window asked for something newer)."""


@dataclass(frozen=True)
class SentenceSettings:
    """What a sentence request reads of its bundle besides the model and the tokenizer: the generation defaults,
    the length rule (engine.pipeline.length_limits), the target's script (its punctuation rules) and the id put
    before the source for the request's variant (None: nothing)."""

    defaults: GenerationParams
    length_rule: LengthRule = DEFAULT_RULE
    target_script: str = ""
    language_id: int | None = None


class SharedStarts:
    """The review window's kept shared start (`_Prefilled`, the last sentence asked about), held by whoever owns the
    model (the translator), so a later click on the same sentence decodes nothing again."""

    def __init__(self) -> None:
        self.start: _Prefilled | None = None


class SentenceRun:
    """What one sentence request needs: the model (held under its owner's lock), its tokenizer, the bundle's
    settings and the request's options."""

    def __init__(
        self, model: Model, tokenizer: Tokenizer, settings: SentenceSettings, options: TranslationOptions
    ) -> None:
        self.model = model
        self.tok = tokenizer
        self.settings = settings
        self.options = options
        self.rules = punctuation.rules_for(settings.target_script) if options.normalize_punctuation else None

    # -- inputs ---------------------------------------------------------------------------------------------------
    def source_ids(self, source: str) -> list[int]:
        lang = self.settings.language_id
        ids = [*([lang] if lang is not None else []), *self.tok.encode(source, add_eos=False), self.tok.eos_id]
        if len(ids) > self.model.max_positions:
            raise InputError(f"the sentence has {len(ids)} tokens; the model reads at most {self.model.max_positions}")
        return ids

    def prefix_ids(self, prefix: str | Sequence[int]) -> tuple[int, ...]:
        if isinstance(prefix, str):
            return tuple(encode_target_prefix(self.tok, prefix))
        ids = tuple(prefix)
        special = {self.tok.eos_id, self.tok.pad_id, self.settings.defaults.decoder_start_id}
        for t in ids:
            if isinstance(t, bool) or not isinstance(t, int | np.integer) or not 0 <= t < self.tok.vocab_size:
                raise InputError(f"prefix tokens must be ids of this model's vocabulary, not {t!r}")
            if t in special:
                raise InputError(f"the prefix may not contain the special token {t}")
        return tuple(int(t) for t in ids)

    def params(self, source: str, num_return: int = 1) -> GenerationParams:
        beams = max(self.options.beams or self.settings.defaults.num_beams, num_return)
        if not 1 <= beams <= MAX_BEAMS:
            raise InputError(f"beams must be between 1 and {MAX_BEAMS}, not {beams}")
        defaults = self.settings.defaults
        params = defaults.replace(num_beams=beams, num_return=num_return, stop_repeats=self.options.guards)
        if self.options.guards:
            params = params.replace(bad_words=params.bad_words + tuple(guards.artefact_bans(source, self.tok)))
        return params

    def constraints(self, source: str) -> tuple[Constraint, ...]:
        if not self.options.glossary:
            return ()
        from engine.pipeline.glossary_match import constraints_for

        return tuple(constraints_for(self.options.glossary, source, self.tok))

    def limit(self, source_ids: Sequence[int], prefix_len: int) -> int:
        model_max = self.model.max_positions
        rule = self.settings.length_rule
        return min(model_max, length_limit(len(source_ids), model_max, rule) + prefix_len)

    # -- decoding -------------------------------------------------------------------------------------------------
    def encode(self, rows: Sequence[Sequence[int]], targets: Iterable[int] = ()) -> EncoderState:
        """The rows' encoder state; its runs may emit `targets` (forced and constraint ids) whatever the model's own
        limit on its output (base.EncoderState.allowing)."""
        return encode_rows(self.model, rows, self.tok.pad_id).allowing(targets)

    def search(
        self,
        enc: EncoderState,
        params: GenerationParams,
        limits: np.ndarray,
        extras: list[RowExtras],
        cancel: threading.Event | None,
        model=None,
    ) -> list[SentenceOutput]:
        """Every row's SentenceOutput; constrained rows go through engine.search.constrained (always on the plain
        model)."""
        last = None
        for update in self.steps(enc, params, limits, extras, cancel, model):
            last = update
        assert last is not None
        return list(last.outputs)  # type: ignore[arg-type]

    def steps(
        self,
        enc: EncoderState,
        params: GenerationParams,
        limits: np.ndarray,
        extras: list[RowExtras],
        cancel: threading.Event | None,
        model=None,
    ) -> Iterator[StepUpdate]:
        """The search's updates, one per decoder step; `cancel` raises SearchCancelled after the step it is seen."""
        params = params.replace(max_length=int(limits.max()))
        constrained = any(e.constraints for e in extras)  # the constrained search runs on the plain model
        steps = search_encoded(self.model if constrained else (model or self.model), enc, params, limits, extras)
        try:
            for update in steps:
                if cancel is not None and cancel.is_set():
                    raise SearchCancelled("cancelled")
                yield update
        finally:
            steps.close()

    # -- results --------------------------------------------------------------------------------------------------
    def text(self, tokens: Sequence[int]) -> str:
        return final_text(self.tok, tokens, self.rules)

    def result(self, source: str, out: SentenceOutput, constraints: Sequence[Constraint]) -> SentenceResult:
        best = out.best
        text, spans = token_spans(self.tok, best.tokens, self.rules)
        alternatives, seen = [], {text}
        for hyp in out.nbest[1:]:
            alt = self.text(hyp.tokens)
            if alt not in seen:
                seen.add(alt)
                alternatives.append(Alternative(text=alt, tokens=hyp.tokens, score=hyp.score))
        unmet = tuple(constraints[i].label for i in out.unmet)
        return SentenceResult(
            index=0,
            source=source,
            source_span=(0, len(source)),
            target_span=(0, len(text)),
            tokens=best.tokens,
            logprobs=best.logprobs,
            token_spans=spans,
            score=best.score,
            alternatives=tuple(alternatives),
            flags=self.flags(source, text, best.tokens, out.repeated, unmet) + cut_flags(out),
            unmet=unmet,
            text=text,
        )

    def flags(self, source: str, text: str, tokens, repeated: bool, unmet: tuple[str, ...]) -> tuple[Flag, ...]:
        if not self.options.guards:
            return ()
        n_source = len(self.tok.encode(source))
        return tuple(
            guards.check_sentence(
                source, text, source_tokens=n_source, target_tokens=len(tokens), repeated=repeated, unmet=unmet
            )
        )


def translate_sentence(
    run: SentenceRun,
    source: str,
    prefix: str | Sequence[int] = (),
    cancel: threading.Event | None = None,
) -> SentenceResult:
    """One sentence (not segmented), decoded after the forced `prefix` (call under the model owner's lock)."""
    ids = run.source_ids(source)
    forced = run.prefix_ids(prefix)
    params = run.params(source, num_return=run.options.alternatives + 1)
    constraints = run.constraints(source)
    limits = np.array([run.limit(ids, len(forced))], dtype=np.int64)
    enc = run.encode([ids], forced_ids(RowExtras(forced, constraints)))
    (out,) = run.search(enc, params, limits, [RowExtras(forced, constraints)], cancel)
    if not out.repeated and reached_limit(len(out.best.tokens), int(limits[0]), params.forced_eos_id is not None):
        out = replace(out, cut=True)
    return run.result(source, out, constraints)


def alternatives(
    run: SentenceRun,
    kept: SharedStarts,
    source: str,
    tokens: Sequence[int],
    position: int,
    k: int = 5,
    cancel: threading.Event | None = None,
) -> list[Alternative]:
    """Up to `k` other words at `position`, each with the rest re-decoded, best (most probable there) first."""
    *_, last = iter_alternatives(run, kept, source, tokens, position, k, cancel, partial=False)
    return last


def iter_alternatives(
    run: SentenceRun,
    kept: SharedStarts,
    source: str,
    tokens: Sequence[int],
    position: int,
    k: int = 5,
    cancel: threading.Event | None = None,
    *,
    partial: bool = True,
) -> Iterator[list[Alternative]]:
    """`alternatives` as it is found: with `partial`, first the candidate words (`complete` False, each the
    sentence up to its word), then the list again after every decoder step that grew a rest (the finished rows
    complete, the others the best hypothesis so far), always in the same order; the last list is the final one
    (every entry complete). Without candidates there is one, empty, list. `cancel` raises SearchCancelled within
    a step; so does closing the generator stop the decoding."""
    current = run.prefix_ids(tokens)
    if isinstance(position, bool) or not isinstance(position, int) or not 0 <= position < len(current):
        raise InputError(f"position must be a token index of the sentence (0–{len(current) - 1}), not {position!r}")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"k must be a positive whole number, not {k!r}")
    ids = run.source_ids(source)
    params = run.params(source)
    constraints = run.constraints(source)
    head = current[:position]
    shared = _shared_start(kept, run, ids, forced_ids(RowExtras(current, constraints)))
    shared.feed((params.decoder_start_id, *head), cancel)
    enc = shared.enc
    logprobs = log_softmax(shared.logits[-1].astype(np.float32, copy=True))
    candidates = _candidates(run, head, current[position], logprobs, params, k)
    if cancel is not None and cancel.is_set():
        raise SearchCancelled("cancelled")
    if not candidates:
        yield []
        return
    started = [
        Alternative(
            text=run.text((*head, c)),
            tokens=(*head, c),
            score=float(logprobs[c]),
            position=position,
            word=word,
            complete=False,
        )
        for c, word in candidates
    ]
    if partial:
        yield started
    n = len(candidates)
    rows = enc.repeated(n)
    limits = np.full(n, run.limit(ids, position + 1), dtype=np.int64)
    extras = [RowExtras((*head, c), constraints) for c, _ in candidates]
    shown = [a.tokens for a in started]
    last = None
    for update in run.steps(rows, params, limits, extras, cancel, model=shared):
        last = update
        if not partial or all(update.done):
            continue
        now = _progress(run, started, update)
        tokens_now = [a.tokens for a in now]
        if tokens_now != shown:
            shown = tokens_now
            yield now
    assert last is not None
    yield [_finished(run, alt, out) for alt, out in zip(started, last.outputs)]  # type: ignore[arg-type]


def prepare(
    run: SentenceRun, kept: SharedStarts, source: str, tokens: Sequence[int], cancel: threading.Event | None = None
) -> int:
    """Decode the start of the sentence `source` → `tokens` at batch 1 and keep it (what a click's step 1 does), so
    that a later click anywhere in it finds its candidates at once: the popup asks this while the pointer rests on a
    sentence. Returns how many positions are kept; `cancel` stops it between steps, keeping those decoded."""
    current = run.prefix_ids(tokens)
    if not current:
        raise InputError("the sentence has no tokens to prepare alternatives for")
    ids = run.source_ids(source)
    params = run.params(source)
    shared = _shared_start(kept, run, ids, forced_ids(RowExtras(current, run.constraints(source))))
    shared.feed((params.decoder_start_id, *current[:-1]), cancel)  # the last click position reads tokens[:-1]
    return len(shared.fed)


def _finished(run: SentenceRun, started: Alternative, out: SentenceOutput) -> Alternative:
    """The candidate with its rest decoded."""
    text = run.text(out.best.tokens)
    return Alternative(
        text=text, tokens=out.best.tokens, score=out.best.score, position=started.position, word=started.word
    )


def _progress(run: SentenceRun, started: Sequence[Alternative], update: StepUpdate) -> list[Alternative]:
    """Every candidate after a step: finished ones complete, the others their best hypothesis so far (never shorter
    than the candidate itself: a beam's running best may still be inside the forced start)."""
    out = []
    for i, alt in enumerate(started):
        done = update.outputs[i] if i < len(update.outputs) else None
        if done is not None:
            out.append(_finished(run, alt, done))
            continue
        best = tuple(int(t) for t in update.best[i]) if i < len(update.best) else ()
        if len(best) <= len(alt.tokens) or best[: len(alt.tokens)] != alt.tokens:
            out.append(alt)
        else:
            out.append(
                Alternative(run.text(best), best, alt.score, position=alt.position, word=alt.word, complete=False)
            )
    return out


class _Prefilled:
    """The model, with the start every row shares decoded once at batch 1 (`feed`): a run it starts continues from
    those positions (DecoderRun.restore of the batch-1 run's snapshot there), and replays their logits to every row
    (the search forces those tokens anyway).

    It stays with the model's owner for the last sentence asked about (`_shared_start`): a click on another word of
    the same sentence decodes only the tokens not fed before (none, left of the last click), and no encoder."""

    def __init__(self, model: Model, enc: EncoderState, source: tuple[int, ...], capacity: int) -> None:
        self.model, self.enc, self.source = model, enc, source
        self._begin(capacity)

    def _begin(self, capacity: int) -> None:
        # a step costs more the longer an attention cache: room for the sentence's length limit, grown when needed
        self.capacity = capacity
        self.single = self.model.start(self.enc, capacity)
        self.marks = [self.single.snapshot()]  # marks[i]: the state after the first i positions
        self.fed: list[int] = []
        self.all_logits: list[np.ndarray] = []
        self.all_lse: list[np.float32] = []  # each position's logsumexp, for the forced tokens' log-probabilities
        self.logits: list[np.ndarray] = []  # those of the current request's shared start
        self.lse: list[np.float32] = []

    def feed(self, tokens: Sequence[int], cancel: threading.Event | None = None) -> None:
        """Make the shared start `tokens` (the start token first), reusing every position already decoded.

        `cancel` stops it between steps (SearchCancelled); the positions decoded until then are kept."""
        common = 0
        while common < min(len(self.fed), len(tokens)) and self.fed[common] == tokens[common]:
            common += 1
        if common < len(self.fed) and common < len(tokens):  # diverged: decode again from there
            del self.fed[common:], self.all_logits[common:], self.all_lse[common:], self.marks[common + 1 :]
            self.single.restore(self.marks[common])
        if len(tokens) > self.capacity:  # longer than the room: start over with more
            self._begin(min(self.model.max_positions, len(tokens) + 16))
        for t in tokens[len(self.fed) :]:
            if cancel is not None and cancel.is_set():
                raise SearchCancelled("cancelled")
            logits = self.single.step(np.array([t], dtype=np.int64))[0].copy()
            top = np.max(logits)
            self.all_lse.append(np.float32(top + np.log(np.sum(np.exp(logits - top)))))
            self.all_logits.append(logits)
            self.fed.append(int(t))
            self.marks.append(self.single.snapshot())
        self.logits = self.all_logits[: len(tokens)]
        self.lse = self.all_lse[: len(tokens)]

    def scorer(self, params):
        return self.model.scorer(params)

    def start(self, enc: EncoderState, max_len: int, beams: int = 1) -> _ReplayRun:
        run = self.model.start(enc, max_len, beams)
        run.restore(self.marks[len(self.logits)])
        return _ReplayRun(run, self.logits, self.lse)


def _shared_start(kept: SharedStarts, run: SentenceRun, ids: list[int], targets: Iterable[int]) -> _Prefilled:
    """The kept `_Prefilled` when it is for this model and source and its runs may emit `targets` already, else a
    new one (kept instead): over the kept encoder output allowing `targets` too when only those differ (a model
    with a per-batch output limit, base.EncoderState.allowing), else over a new encoder run."""
    start = kept.start
    if start is not None and start.model is run.model and start.source == tuple(ids):
        enc = start.enc.allowing(targets)
        if enc is start.enc:
            return start
    else:
        enc = run.encode([ids], targets)
    start = kept.start = _Prefilled(run.model, enc, tuple(ids), run.limit(ids, 0))
    return start


class KeepsSharedStarts(Protocol):
    """An owner of a model that keeps the review window's shared start (engine.pipeline.translator.Translator)."""

    review_starts: SharedStarts


def forget_shared_start(owner: KeepsSharedStarts) -> None:
    """Drop the kept decoder states (benchmarks measuring a first click; memory)."""
    owner.review_starts.start = None


class _ReplayRun:
    """A decoder run over rows that share their first positions: those steps return the stored logits (every row
    the same, so reordering them changes nothing, and `uniform` tells the search so), the later ones run the
    decoder. A replayed step is a read-only broadcast: the searches only read a step where every row is forced."""

    def __init__(self, run, logits: list[np.ndarray], lse: list[np.float32]) -> None:
        self.run, self.logits, self.lses, self.pos, self.live = run, logits, lse, 0, False

    @property
    def uniform(self) -> bool:
        return not self.live

    @property
    def lse(self) -> np.float32 | None:
        """The logsumexp of the step just replayed."""
        return None if self.live or not self.pos else self.lses[self.pos - 1]

    def step(self, tokens: np.ndarray) -> np.ndarray:
        if self.pos < len(self.logits):
            self.pos += 1
            return np.broadcast_to(self.logits[self.pos - 1], (len(tokens), self.logits[0].shape[0]))
        self.live = True
        return self.run.step(tokens)

    def reorder(self, index: np.ndarray, shared: np.ndarray | None = None) -> None:
        if self.live:
            self.run.reorder(index, shared)

    def select(self, rows: np.ndarray) -> None:
        self.run.select(rows)


def _candidates(
    run: SentenceRun, head: Sequence[int], current: int, logprobs: np.ndarray, params: GenerationParams, k: int
) -> list[tuple[int, str]]:
    """(token, word) of the best tokens there whose word differs from the current one and from each other."""
    banned = {params.eos_id, params.pad_id, *(w[0] for w in params.bad_words if len(w) == 1)}
    base = run.text(head)

    def word(token: int) -> str:
        shown = run.text([*head, token])
        return shown[len(base) :].strip() if shown.startswith(base) else shown.strip()

    seen = {word(current)}
    out: list[tuple[int, str]] = []
    pool = np.argpartition(-logprobs, CANDIDATE_POOL)[:CANDIDATE_POOL]
    pool = pool[np.lexsort((pool, -logprobs[pool]))]  # most probable first, ties by id
    for token in pool.tolist():
        if token == current or token in banned or not np.isfinite(logprobs[token]):
            continue
        w = word(token)
        if not w or w in seen:
            continue
        seen.add(w)
        out.append((token, w))
        if len(out) == k:
            break
    return out
