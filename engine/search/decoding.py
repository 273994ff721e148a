"""Greedy and beam search over the ONNX decoder, reproducing transformers' `generate()` token for token.

Both searches are lazy generators: after every decoder step they yield a `StepUpdate` with, per sentence, the
tokens that can no longer change (greedy: everything so far; beam: the prefix every live and finished hypothesis
shares). The consumer streams those, and stops the search (cancellation) simply by not asking for the next step.

The logits processing follows transformers 4.57 for the options Marian checkpoints use: bad words, min length,
min new tokens, forced EOS at the length limit, and optional renormalisation; beam search is the vectorised
algorithm of `GenerationMixin._beam_search` (2·beams candidates, length penalty, early-stopping heuristic).

Beyond generate()'s tokens, both give what engine.search.types describes: every token's log-probability and each
finished sentence's `SentenceOutput` (score, n-best) from the step it is done, the best running hypothesis every
step, a forced target prefix per row (`RowExtras.prefix`, as generate(decoder_input_ids=[start, *prefix])), and
with `params.stop_repeats` the repetition guard. Multi-token bad words and min-length EOS bans stay on beam search's
TopK scorer path (each hypothesis' top-k list is widened by the tokens it may lose), renormalised scores included
(opus-mt's generation config asks for them: the banned tokens' probability, read from the logits, gives the shift;
engine.search.scores.banned_mass_shift). Only a bundle without a scorer takes the full-vocabulary path. The
bookkeeping lives in engine.search.scores.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field

import numpy as np

from engine.families.base import EncoderState, GenerationSpec
from engine.search.repetition import repeating_tail
from engine.search.scores import (
    ChosenLogprobs,
    bad_word_index,
    banned_mass_shift,
    beam_output,
    common_prefix,
    forced_row_logprobs,
    hypothesis,
    looping,
    prefix_matrix,
    row_prefixes,
    running_best,
    sentence_output,
    take,
)
from engine.search.types import RowExtras, SentenceOutput

NEG_INF = np.float32(-np.inf)
BIG_NEG = np.float32(-1.0e9)


@dataclass(frozen=True)
class GenerationParams:
    """Decoding settings; defaults come from the bundle's generation config (`from_generation_config`)."""

    eos_id: int
    pad_id: int
    decoder_start_id: int
    num_beams: int = 1
    max_length: int = 512  # total decoder length including the start token, as in transformers
    min_length: int = 0
    min_new_tokens: int = 0
    forced_eos_id: int | None = None
    bad_words: tuple[tuple[int, ...], ...] = ()
    length_penalty: float = 1.0
    early_stopping: bool | str = False
    renormalize: bool = False
    num_return: int = 1  # n-best: hypotheses per sentence in SentenceOutput.nbest (≤ num_beams)
    stop_repeats: bool = False  # beam search: a hypothesis caught in a loop (engine.search.repetition) stops there
    # beam search: a finished sentence's beams leave the batch (the others decode fewer rows; see `beam_search`)
    drop_finished: bool = True

    @classmethod
    def from_spec(cls, spec: GenerationSpec, gen: dict, **overrides) -> GenerationParams:
        """The family's start, end and pad tokens (`spec`) with the bundle's search settings (`gen`, the manifest's
        generation config: beams, lengths, bad words, length penalty, renormalisation)."""
        params = cls.from_generation_config(gen).replace(
            eos_id=spec.eos_id,
            pad_id=spec.pad_id,
            decoder_start_id=spec.decoder_start_id,
            forced_eos_id=spec.forced_eos_id,
        )
        return params.replace(**overrides) if overrides else params

    @classmethod
    def from_generation_config(cls, gen: dict, **overrides) -> GenerationParams:
        eos = gen["eos_token_id"]
        eos = eos[0] if isinstance(eos, list) else eos
        params = cls(
            eos_id=int(eos),
            pad_id=int(gen["pad_token_id"]),
            decoder_start_id=int(gen["decoder_start_token_id"]),
            num_beams=int(gen.get("num_beams") or 1),
            max_length=int(gen.get("max_length") or 512),
            min_length=int(gen.get("min_length") or 0),
            forced_eos_id=gen.get("forced_eos_token_id"),
            bad_words=tuple(tuple(int(t) for t in w) for w in (gen.get("bad_words_ids") or [])),
            length_penalty=float(gen.get("length_penalty", 1.0)),
            early_stopping=gen.get("early_stopping", False),
            renormalize=bool(gen.get("renormalize_logits", False)),
        )
        return params.replace(**overrides) if overrides else params

    def replace(self, **changes) -> GenerationParams:
        """dataclasses.replace without its per-field walk (a search call makes several: ~4 µs each that way)."""
        unknown = changes.keys() - _PARAM_FIELDS
        if unknown:
            raise TypeError(f"GenerationParams has no field {sorted(unknown)[0]!r}")
        new = object.__new__(GenerationParams)
        new.__dict__.update(self.__dict__, **changes)
        return new


_PARAM_FIELDS = frozenset(f.name for f in dataclasses.fields(GenerationParams))


@dataclass
class StepUpdate:
    """Committed (final) tokens per sentence after a step; `done` marks sentences whose output is complete."""

    committed: list[list[int]]
    done: list[bool]
    tokens: list[list[int]] = field(default_factory=list)  # final tokens once all are done (eos excluded)
    # Per sentence: its SentenceOutput from the step it finished on (None while it runs)
    outputs: list[SentenceOutput | None] = field(default_factory=list)
    # Per sentence: the best running hypothesis' tokens now (beam search; greedy: the committed tokens)
    best: list[list[int]] = field(default_factory=list)


class LogitsProcessor:
    """The subset of transformers' logits processors that Marian generation configs use."""

    def __init__(self, params: GenerationParams, max_lengths: np.ndarray, prompt: np.ndarray | None = None) -> None:
        self.p = params
        self.max_lengths = max_lengths  # per score row, total length including the start token
        # per score row: the decoder prompt's length (start token + forced prefix), which min_new_tokens skips
        self.prompt = np.ones_like(max_lengths) if prompt is None else prompt
        # from these lengths on no row can have eos banned / none has reached its forced eos yet (checks skipped)
        self.bans_end = max(params.min_length, int(self.prompt.max(initial=1)) + params.min_new_tokens)
        self.forced_from = int(max_lengths.min(initial=1)) - 1
        single = [w[0] for w in params.bad_words if len(w) == 1]
        self.single_bad = np.array(single, dtype=np.int64)
        self.multi_bad = [w for w in params.bad_words if len(w) > 1]
        self.bad_index = bad_word_index(tuple(self.multi_bad))

    def eos_banned(self, cur_len: int, rows: np.ndarray) -> np.ndarray:
        """Per score row: a minimum length forbids ending now."""
        p = self.p
        return (cur_len < p.min_length) | (cur_len - self.prompt[rows] < p.min_new_tokens)

    def forced_eos(self, cur_len: int, rows: np.ndarray) -> np.ndarray:
        """Per score row: the length limit forces eos now."""
        if self.p.forced_eos_id is None:
            return np.zeros(len(rows), dtype=bool)
        return self.max_lengths[rows] - 1 == cur_len

    def __call__(self, scores: np.ndarray, hist: np.ndarray | None, cur_len: int, rows: np.ndarray) -> np.ndarray:
        """scores [N,V] float32 (modified in place and returned); `rows` maps each score row to its limits; `hist`
        [N, ≥cur_len] holds each row's tokens so far (start included), needed only for multi-token bad words."""
        p = self.p
        if self.single_bad.size:
            scores[:, self.single_bad] = NEG_INF
        if self.multi_bad:
            assert hist is not None
            for banned_rows, token in self.bad_index.bans(hist, cur_len):
                scores[banned_rows, token] = NEG_INF
        if cur_len < self.bans_end:
            ban = self.eos_banned(cur_len, rows)
            if ban.any():
                scores[ban, p.eos_id] = NEG_INF
        if p.forced_eos_id is not None and cur_len >= self.forced_from:
            forced = self.forced_eos(cur_len, rows)
            if forced.any():
                scores[forced] = NEG_INF
                scores[forced, p.forced_eos_id] = 0.0
        if p.renormalize:
            scores = log_softmax(scores)
        return scores


def log_softmax(x: np.ndarray) -> np.ndarray:
    m = np.max(x, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, np.float32(0.0))
    shifted = x - m
    return shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))


def _topk_desc(x: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest entries per row, largest first; ties keep the lower index first."""
    if k < x.shape[-1]:
        part = np.argpartition(-x, k - 1, axis=-1)[..., :k]
        part.sort(axis=-1)  # restore index order so the stable sort below breaks ties by index
        vals = np.take_along_axis(x, part, axis=-1)
        order = np.argsort(-vals, axis=-1, kind="stable")
        return np.take_along_axis(part, order, axis=-1)
    return np.argsort(-x, axis=-1, kind="stable")[..., :k]


# A search: its updates, and close() to stop it early (the caller stops a cancelled search this way).
Steps = Generator[StepUpdate, None, None]


def greedy_search(
    model,
    enc: EncoderState,
    params: GenerationParams,
    max_lengths: np.ndarray,
    extras: Sequence[RowExtras | None] | None = None,
) -> Steps:
    """Batched greedy decoding; a row with a prefix is forced through it first (generate() with
    decoder_input_ids=[start, *prefix]). Finished rows leave the batch (their results cannot change).

    Each token's log-probability is log_softmax of the processed logits at it (compute_transition_scores with
    normalize_logits=True); with `params.stop_repeats` a row caught in a loop (engine.search.repetition) ends there.

    Renormalisation (`params.renormalize`) changes nothing here: it is a log_softmax over the processed logits,
    which keeps each row's argmax and is the normalisation the chosen token's log-probability takes anyway, so the
    rows are not normalised twice (a full-vocabulary pass per step)."""
    batch = enc.mask.shape[0]
    plen, ptab = prefix_matrix(row_prefixes(extras, batch), params.pad_id)
    max_len = int(max_lengths.max())
    proc = LogitsProcessor(params.replace(renormalize=False), max_lengths, 1 + plen)
    hist = np.full((batch, max_len + 1), params.pad_id, dtype=np.int64)  # tokens so far, start included
    hist[:, 0] = params.decoder_start_id
    generated: list[list[int]] = [[] for _ in range(batch)]
    logps: list[list[float]] = [[] for _ in range(batch)]
    outputs: list[SentenceOutput | None] = [None] * batch
    done = [False] * batch
    active = np.arange(batch)
    tokens = np.full(batch, params.decoder_start_id, dtype=np.int64)
    run = model.start(enc, max_len)
    narrow = _narrow(run, params, proc, plen, ptab)
    step = run.step
    if narrow is not None:  # the run's shortlist columns: scores, bans and choices over them, ids mapped back
        step, proc, ids = run.step_shortlist, narrow.proc, narrow.ids
    cur_len = 1
    chosen_logprobs = ChosenLogprobs()
    longest = int(plen.max(initial=0))
    none_forced = np.zeros(0, dtype=np.int64)
    # the per-row loop's constants as Python objects (a numpy scalar read and compared costs ~0.1 µs a row and step)
    eos_id, stop_repeats = params.eos_id, params.stop_repeats
    limits, prefix_lengths = max_lengths.tolist(), plen.tolist()
    rows = active.tolist()
    # from this length on the logits processors change nothing (no bans, no forced eos, no minimum length left)
    idle_from = (
        proc.bans_end if not (proc.single_bad.size or proc.multi_bad or proc.p.forced_eos_id is not None) else None
    )
    while rows:
        logits = step(tokens)
        # each numpy call costs µs with the caches cold after a decoder step: none that changes nothing
        scores = logits if logits.dtype == np.float32 else logits.astype(np.float32)
        # rows still inside their prefix
        forced = np.flatnonzero(plen[active] >= cur_len) if cur_len <= longest else none_forced
        if forced.size:
            forced_tokens = ptab[active[forced], cur_len - 1]
            at = forced_tokens if narrow is None else columns_of(ids, forced_tokens)
            forced_lp = forced_row_logprobs(run, scores, forced, at)
        if forced.size == len(rows):  # nothing to choose this step
            next_tokens, lp = forced_tokens.copy(), forced_lp.tolist()
        else:
            if idle_from is None or cur_len < idle_from:
                seen = hist[active] if proc.multi_bad else None
                scores = proc(scores, seen, cur_len, active)
            next_tokens = scores.argmax(axis=-1)  # the method: np.argmax's wrapper costs µs a step
            lp = chosen_logprobs.logprobs(scores, next_tokens)
            if narrow is not None:
                next_tokens = ids[next_tokens]
            if forced.size:
                next_tokens[forced] = forced_tokens
                for f, x in zip(forced.tolist(), forced_lp.tolist()):
                    lp[f] = x
        if proc.multi_bad:  # the history is read by multi-token bad words only
            hist[active, cur_len] = next_tokens
        cur_len += 1
        keep = []
        for i, (r, tok, x) in enumerate(zip(rows, next_tokens.tolist(), lp)):
            eos_lp, repeated = None, False
            if tok == eos_id:
                done[r], eos_lp = True, x
            else:
                generated[r].append(tok)
                logps[r].append(x)
                if cur_len >= limits[r]:
                    done[r] = True
                elif stop_repeats and cur_len - 1 > prefix_lengths[r] and repeating_tail(generated[r]):
                    done[r] = repeated = True
            if done[r]:
                outputs[r] = sentence_output([hypothesis(generated[r], logps[r], eos_lp, 1.0)], repeated)
            else:
                keep.append(i)
        yield StepUpdate(committed=generated, done=list(done), outputs=list(outputs), best=generated)
        if len(keep) < len(rows):
            if not keep:
                break
            idx = np.array(keep, dtype=np.int64)
            active = active[idx]
            rows = [rows[i] for i in keep]
            run.select(idx)
            next_tokens = next_tokens[idx]
        tokens = next_tokens.astype(np.int64, copy=False)  # the run copies them into its own input
    yield StepUpdate(committed=generated, done=[True] * batch, tokens=generated, outputs=outputs, best=generated)


@dataclass(frozen=True)
class _Narrow:
    """Greedy search over a run's shortlist columns (`run.step_shortlist`): `ids` [K] the sorted vocabulary ids of
    the columns, `proc` the logits processors with their ids mapped (`columns_of` maps ids to columns)."""

    ids: np.ndarray
    proc: LogitsProcessor


def columns_of(ids: np.ndarray, tokens) -> np.ndarray:
    """The column of each of `tokens` among the sorted `ids` (−1 where it is not one of them). A search over the
    sorted ids, not a vocabulary-wide map: that array cost ~0.2 ms a request to allocate and fill (its pages fresh
    after the encoder's run)."""
    tokens = np.asarray(tokens, dtype=np.int64)
    at = np.searchsorted(ids, tokens)
    inside = at < len(ids)
    found = np.zeros(tokens.shape, dtype=bool)
    found[inside] = ids[at[inside]] == tokens[inside]
    return np.where(found, at, -1)


def _narrow(run, params: GenerationParams, proc: LogitsProcessor, plen: np.ndarray, ptab: np.ndarray):
    """The narrow form of a greedy search when the run offers it (a shortlisted model: every id outside its
    shortlist scores −inf, so the log-softmax, argmax (lowest id first: the ids are sorted) and every ban over the
    columns are the full row's) and nothing needs an id outside the columns: eos, the forced eos and every forced
    prefix token are in the shortlist, and no multi-token bad word is set. None: the full-width path."""
    step, ids = getattr(run, "step_shortlist", None), getattr(run, "shortlist", None)
    if step is None or ids is None or proc.multi_bad:
        return None
    ids = np.asarray(ids, dtype=np.int64)
    # one search over the ids for eos, the forced eos and the single-token bans (each call is several numpy ones)
    singles = [w[0] for w in params.bad_words if len(w) == 1]
    forced = [] if params.forced_eos_id is None else [params.forced_eos_id]
    columns = columns_of(ids, [params.eos_id, *forced, *singles]).tolist()
    if min(columns[: 1 + len(forced)]) < 0:
        return None
    if plen.any() and (columns_of(ids, ptab[np.arange(ptab.shape[1])[None, :] < plen[:, None]]) < 0).any():
        return None
    mapped = proc.p.replace(
        eos_id=columns[0],
        forced_eos_id=columns[1] if forced else None,
        bad_words=tuple((c,) for c in columns[1 + len(forced) :] if c >= 0),
    )
    return _Narrow(ids, LogitsProcessor(mapped, proc.max_lengths, proc.prompt))


def _fast_candidates(scorer, logits, running_scores, params, eos_ban, forced, keep, vocab, bans):
    """Top `keep` continuations per sentence from per-hypothesis top-k lists (exact; see engine.runtime.scorer).

    `eos_ban` [B] and `bans` (multi-token bad words: (flat hypothesis rows, token)) widen each list by the most
    tokens a hypothesis may lose, so `keep` allowed ones always remain. With renormalised scores a hypothesis that
    loses tokens to a ban has its log-probabilities shifted by −log(1 − their probability), which is what
    normalising again over the allowed tokens does. Returns (scores, parent beam, token, token log-probability)
    [B, keep], ordered like torch.topk over the flat beams×vocab row: by score, ties by index."""
    batch, k = running_scores.shape
    width = keep + int(eos_ban.any())
    if bans:
        counts = np.zeros(batch * k, dtype=np.int64)
        for rows, _ in bans:
            counts[rows] += 1
        width += int(counts.max())
    values, ids = scorer.top(logits, width)
    if params.renormalize and (bans or eos_ban.any()):
        ban_rows = [rows for rows, _ in bans]
        ban_tokens = [np.full(len(rows), token, dtype=np.int64) for rows, token in bans]
        if eos_ban.any():
            eos_rows = np.flatnonzero(np.repeat(eos_ban, k))
            ban_rows.append(eos_rows)
            ban_tokens.append(np.full(len(eos_rows), params.eos_id, dtype=np.int64))
        rows, tokens = np.concatenate(ban_rows), np.concatenate(ban_tokens)
        values = values - banned_mass_shift(logits, values, ids, rows, tokens, scorer.mask)[:, None]
    if bans:
        hit = np.zeros(values.shape, dtype=bool)
        for rows, token in bans:
            hit[rows] |= ids[rows] == token
        values = np.where(hit, NEG_INF, values)
    values = values.reshape(batch, k, width)
    ids = ids.reshape(batch, k, width)
    if eos_ban.any():
        values = np.where((ids == params.eos_id) & eos_ban[:, None, None], NEG_INF, values)
    if forced.any():  # forced EOS: every hypothesis may only end, at no cost
        values[forced] = NEG_INF
        ids[forced] = params.eos_id
        values[forced, :, 0] = 0.0
    token_lp = values.reshape(batch, k * width)
    scores = (values + running_scores[:, :, None]).reshape(batch, k * width)
    beams = np.repeat(np.arange(k), width)[None, :]
    flat_index = beams * vocab + ids.reshape(batch, k * width)
    order = np.lexsort((flat_index, -scores), axis=-1)[:, :keep]
    top_scores = np.take_along_axis(scores, order, axis=1)
    parent = np.take_along_axis(np.broadcast_to(beams, scores.shape), order, axis=1)
    token = np.take_along_axis(ids.reshape(batch, k * width), order, axis=1)
    return top_scores, parent, token, np.take_along_axis(token_lp, order, axis=1)


def _exact_candidates(logits, running_scores, proc, hist, cur_len, rows, keep):
    """The same from the full vocabulary: log_softmax, every logits processor, topk over beams×vocab."""
    batch, k = running_scores.shape
    vocab = logits.shape[-1]
    log_probs = proc(log_softmax(logits.astype(np.float32, copy=False)), hist, cur_len, rows)
    flat = log_probs.reshape(batch, k * vocab)
    acc = (log_probs.reshape(batch, k, vocab) + running_scores[:, :, None]).reshape(batch, k * vocab)
    top_idx = _topk_desc(acc, keep)
    top_scores = np.take_along_axis(acc, top_idx, axis=1)
    return top_scores, top_idx // vocab, top_idx % vocab, np.take_along_axis(flat, top_idx, axis=1)


def shared_prefix(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """Per row of [B, k, n] token histories: how many leading tokens the old and the new history share."""
    differ = (old != new).reshape(-1, old.shape[-1])
    return np.where(differ.any(axis=1), differ.argmax(axis=1), old.shape[-1])


def beam_search(
    model,
    enc: EncoderState,
    params: GenerationParams,
    max_lengths: np.ndarray,
    extras: Sequence[RowExtras | None] | None = None,
) -> Steps:
    """transformers' vectorised beam search, in numpy over the ONNX decoder.

    A row with a prefix runs as generate(decoder_input_ids=[start, *prefix]) does: its beams follow the prefix
    unscored (running scores 0, -1e9, …), then search, its lengths counted after the prefix. Rows with different
    prefix lengths step together. With `params.stop_repeats` a hypothesis caught in a loop (engine.search.repetition)
    ends there like one that hit eos; `SentenceOutput.repeated` says when the chosen best is such a one.

    With `params.drop_finished` a sentence's beams leave the batch on the step its output is final, as greedy
    search's rows do (generate() decodes them to the end of the longest). Its output and every other sentence's
    search are the same either way (FP32 equals generate() with it); INT8 quantises each step's activations with
    one scale for all rows, so fewer rows can change a later token."""
    batch = enc.mask.shape[0]
    k = params.num_beams
    max_len = int(max_lengths.max())
    plen, ptab = prefix_matrix(row_prefixes(extras, batch), params.pad_id)
    prompt = (1 + plen)[:, None]  # decoder prompt length per sentence
    rows = np.arange(batch * k)
    proc = LogitsProcessor(params, np.repeat(max_lengths, k), np.repeat(1 + plen, k))
    keep = 2 * k  # beams_to_keep = max(2, 1 + n_eos) * num_beams with one eos token
    top_mask = np.zeros(keep, dtype=bool)
    top_mask[:k] = True
    forced_first = np.full(keep, BIG_NEG, dtype=np.float32)  # a forced step keeps generate()'s initial scores
    forced_first[0] = 0.0
    fill = params.pad_id if params.pad_id else params.eos_id
    running = np.full((batch, k, max_len), fill, dtype=np.int64)
    running[:, :, 0] = params.decoder_start_id
    running_lp = np.zeros((batch, k, max_len), dtype=np.float32)  # each token's log-probability
    sequences, seq_lp = running.copy(), running_lp.copy()
    running_scores = np.zeros((batch, k), dtype=np.float32)
    running_scores[:, 1:] = BIG_NEG
    beam_scores = np.full((batch, k), BIG_NEG, dtype=np.float32)
    finished = np.zeros((batch, k), dtype=bool)
    cut = np.zeros((batch, k), dtype=bool)  # finished because the repetition guard stopped it
    no_loops = np.zeros((batch, keep), dtype=bool)
    unsatisfied = np.ones((batch, 1), dtype=bool)
    row_max = max_lengths[:, None]
    lp = params.length_penalty
    run = model.start(enc, max_len, beams=k)
    cur_len = 1
    committed: list[list[int]] = [[] for _ in range(batch)]
    outputs: list[SentenceOutput | None] = [None] * batch
    done = [False] * batch
    alive = list(range(batch))  # the sentence each position of the state arrays belongs to
    scorer = model.scorer(params)  # None (a bundle without one): the exact full-vocabulary path every step
    while True:
        live = len(alive)
        tokens = running[:, :, cur_len - 1].reshape(-1)
        logits = run.step(tokens)
        forced = np.flatnonzero(plen >= cur_len)  # sentences still inside their prefix
        if forced.size:
            forced_tokens = ptab[forced, cur_len - 1]
            forced_lp = forced_row_logprobs(run, logits, forced * k, forced_tokens)  # its beams are all the same
        hist = running[:, :, :cur_len].reshape(live * k, cur_len) if proc.multi_bad else None
        if forced.size == live:  # every sentence inside its prefix: nothing to score
            top_scores = np.tile(forced_first, (live, 1))
            parent = np.tile(np.arange(keep) % k, (live, 1))
            token = np.repeat(forced_tokens[:, None], keep, axis=1)
            token_lp = np.repeat(forced_lp[:, None], keep, axis=1)
        elif scorer is not None:
            eos_ban = proc.eos_banned(cur_len, rows).reshape(live, k)[:, 0]
            forced_eos = (max_lengths - 1 == cur_len) if params.forced_eos_id is not None else np.zeros(live, bool)
            bans = proc.bad_index.bans(hist, cur_len) if hist is not None else []
            top_scores, parent, token, token_lp = _fast_candidates(
                scorer, logits, running_scores, params, eos_ban, forced_eos, keep, logits.shape[-1], bans
            )
        else:
            top_scores, parent, token, token_lp = _exact_candidates(
                logits, running_scores, proc, hist, cur_len, rows, keep
            )
        if 0 < forced.size < live:
            top_scores[forced] = forced_first
            parent[forced] = np.arange(keep) % k
            token[forced] = forced_tokens[:, None]
            token_lp[forced] = forced_lp[:, None]
        top_seqs = take(running, parent)
        top_seqs[:, :, cur_len] = token
        top_lp = take(running_lp, parent)
        top_lp[:, :, cur_len] = token_lp
        hits = (token == params.eos_id) | (cur_len + 1 >= row_max)
        loops = no_loops
        if params.stop_repeats:
            loops = looping(top_seqs.reshape(live * keep, max_len), cur_len + 1).reshape(live, keep)
            loops &= (token != params.eos_id) & (plen < cur_len)[:, None]
            hits = hits | loops
        # running beams for the next step
        top_running = top_scores + hits.astype(np.float32) * BIG_NEG
        nxt = _topk_desc(top_running, k)
        fed = running[:, :, :cur_len]  # the tokens the cache holds, per row
        running, running_lp = take(top_seqs, nxt), take(top_lp, nxt)
        running_scores = take(top_running, nxt)
        running_parent = take(parent, nxt)
        # finished hypotheses
        just_finished = hits & top_mask[None, :]
        generated = np.maximum(cur_len + 1 - prompt, 1).astype(np.float64)
        cand = top_scores / (generated**lp).astype(np.float32)
        full = np.all(finished, axis=-1, keepdims=True) & (params.early_stopping is True)
        cand = cand + full.astype(np.float32) * BIG_NEG
        cand = cand + (~unsatisfied).astype(np.float32) * BIG_NEG
        cand = cand + (~just_finished).astype(np.float32) * BIG_NEG
        best = _topk_desc(np.concatenate([beam_scores, cand], axis=1), k)
        sequences = take(np.concatenate([sequences, top_seqs], axis=1), best)
        seq_lp = take(np.concatenate([seq_lp, top_lp], axis=1), best)
        beam_scores = take(np.concatenate([beam_scores, cand], axis=1), best)
        finished = take(np.concatenate([finished, just_finished], axis=1), best)
        cut = take(np.concatenate([cut, loops & just_finished], axis=1), best)
        # reorder the self-attention cache to follow each surviving beam's parent
        flat_parent = (running_parent + np.arange(live)[:, None] * k).reshape(-1)
        run.reorder(flat_parent, shared_prefix(fed, running[:, :, :cur_len]))
        cur_len += 1
        # early-stop heuristic
        never = params.early_stopping == "never" and lp > 0.0
        best_len = np.maximum(row_max - prompt if never else cur_len - prompt, 1)
        best_possible = running_scores[:, :1] / (best_len.astype(np.float32) ** np.float32(lp))
        worst = np.where(finished, np.min(beam_scores, axis=1, keepdims=True), BIG_NEG)
        still_forced = (plen >= cur_len)[:, None]
        unsatisfied = unsatisfied & (np.any(best_possible > worst, axis=-1, keepdims=True) | still_forced)
        open_beams = not (np.all(finished) and params.early_stopping is True)
        more = bool(np.any(unsatisfied)) and open_beams and not bool(np.all(hits))
        # streaming: what every live and finished hypothesis of a sentence agrees on is final
        for s, b in enumerate(alive):
            if done[b]:
                continue
            if not unsatisfied[s, 0] or cur_len >= max_lengths[s]:
                done[b] = True  # the finished hypotheses can no longer change
                output = beam_output(sequences[s], seq_lp[s], finished[s], cut[s], params, fill)
                outputs[b] = output
                committed[b] = list(output.best.tokens)
                continue
            cands = [running[s, j] for j in range(k)] + [sequences[s, j] for j in range(k) if finished[s, j]]
            n = len(committed[b])
            extra = common_prefix(cands, 1 + n, cur_len)
            if extra:
                seg = cands[0][1 + n : 1 + n + extra]
                stop = np.flatnonzero(seg == params.eos_id)
                seg = seg[: stop[0]] if stop.size else seg
                committed[b].extend(int(t) for t in seg)
        if not more or cur_len >= max_len:
            break
        best_now = [committed[b] for b in range(batch)]
        for s, b in enumerate(alive):
            if not done[b]:
                best_now[b] = running_best(running[s, 0, 1:cur_len], params)
        yield StepUpdate(committed=committed, done=list(done), outputs=list(outputs), best=best_now)
        stay = [s for s, b in enumerate(alive) if not done[b]] if params.drop_finished else []
        if 0 < len(stay) < len(alive):
            # the finished sentences' beams leave the batch: every per-sentence array keeps the others' entries
            kept = np.array(stay, dtype=np.int64)
            alive = [alive[s] for s in stay]
            # numpy's shape types cannot follow a row selection (each keeps its rank; the types cannot say so)
            (running, running_lp, sequences, seq_lp, running_scores, beam_scores, finished, cut, no_loops,
             unsatisfied, max_lengths, plen, ptab) = (  # type: ignore[assignment]
                a[kept]
                for a in (running, running_lp, sequences, seq_lp, running_scores, beam_scores, finished, cut,
                          no_loops, unsatisfied, max_lengths, plen, ptab)
            )  # fmt: skip
            row_max, prompt, rows = max_lengths[:, None], (1 + plen)[:, None], np.arange(len(stay) * k)
            proc = LogitsProcessor(params, np.repeat(max_lengths, k), np.repeat(1 + plen, k))
            run.select((kept[:, None] * k + np.arange(k)).reshape(-1))
    for s, b in enumerate(alive):
        if outputs[b] is None:
            outputs[b] = beam_output(sequences[s], seq_lp[s], finished[s], cut[s], params, fill)
    results = [list(o.best.tokens) for o in outputs]  # type: ignore[union-attr]
    yield StepUpdate(committed=results, done=[True] * batch, tokens=results, outputs=outputs, best=results)
