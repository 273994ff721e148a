"""Greedy and beam search over the ONNX decoder, reproducing transformers' `generate()` token for token.

Both searches are lazy generators: after every decoder step they yield a `StepUpdate` with, per sentence, the
tokens that can no longer change (greedy: everything so far; beam: the prefix every live and finished hypothesis
shares). The consumer streams those, and stops the search (cancellation) simply by not asking for the next step.

The logits processing follows transformers 4.57 for the options Marian checkpoints use: bad words, min length,
min new tokens, forced EOS at the length limit, and optional renormalisation; beam search is the vectorised
algorithm of `GenerationMixin._beam_search` (2·beams candidates, length penalty, early-stopping heuristic).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from engine.onnx_model import EncoderState
from engine.search_types import SentenceOutput

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
    stop_repeats: bool = False  # beam search: a hypothesis caught in a loop (engine.repetition) stops there

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
        return dataclasses.replace(self, **changes)


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

    def __init__(self, params: GenerationParams, max_lengths: np.ndarray) -> None:
        self.p = params
        self.max_lengths = max_lengths  # per row, total length including the start token
        single = [w[0] for w in params.bad_words if len(w) == 1]
        self.single_bad = np.array(single, dtype=np.int64)
        self.multi_bad = [w for w in params.bad_words if len(w) > 1]

    def __call__(self, scores: np.ndarray, sequences: Sequence[Sequence[int]], cur_len: int, rows: np.ndarray):
        """scores [N,V] float32 (modified in place and returned); `rows` maps each score row to its max length."""
        p = self.p
        if self.single_bad.size:
            scores[:, self.single_bad] = NEG_INF
        for word in self.multi_bad:
            prefix = list(word[:-1])
            for r, seq in enumerate(sequences):
                if list(seq[len(seq) - len(prefix) :]) == prefix:
                    scores[r, word[-1]] = NEG_INF
        if cur_len < p.min_length or cur_len - 1 < p.min_new_tokens:
            scores[:, p.eos_id] = NEG_INF
        if p.forced_eos_id is not None:
            forced = self.max_lengths[rows] - 1 == cur_len
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


def greedy_search(model, enc: EncoderState, params: GenerationParams, max_lengths: np.ndarray) -> Iterator[StepUpdate]:
    """Batched greedy decoding. Finished rows leave the batch (their results cannot change)."""
    batch = enc.mask.shape[0]
    proc = LogitsProcessor(params, max_lengths)
    generated: list[list[int]] = [[] for _ in range(batch)]
    done = [False] * batch
    active = np.arange(batch)
    tokens = np.full(batch, params.decoder_start_id, dtype=np.int64)
    run = model.start(enc, int(max_lengths.max()))
    cur_len = 1
    while active.size:
        logits = run.step(tokens)
        seqs = [[params.decoder_start_id, *generated[r]] for r in active] if proc.multi_bad else []
        scores = proc(logits.astype(np.float32, copy=False), seqs, cur_len, active)
        next_tokens = np.argmax(scores, axis=-1)
        cur_len += 1
        keep = []
        for i, r in enumerate(active):
            tok = int(next_tokens[i])
            if tok == params.eos_id:
                done[r] = True
            else:
                generated[r].append(tok)
                if cur_len >= max_lengths[r]:
                    done[r] = True
            if not done[r]:
                keep.append(i)
        yield StepUpdate(committed=generated, done=list(done))
        if len(keep) < active.size:
            idx = np.array(keep, dtype=np.int64)
            active = active[idx]
            if not active.size:
                break
            run.select(idx)
            next_tokens = next_tokens[idx]
        tokens = next_tokens.astype(np.int64)
    yield StepUpdate(committed=generated, done=[True] * batch, tokens=generated)


def _common_prefix(seqs: list[np.ndarray], start: int, end: int) -> int:
    """Length (from `start`) of the prefix all rows share, looking no further than `end`."""
    stacked = np.stack([s[start:end] for s in seqs])
    same = np.all(stacked == stacked[0], axis=0)
    diff = np.flatnonzero(~same)
    return int(diff[0]) if diff.size else end - start


def fast_scoring_ok(params: GenerationParams) -> bool:
    """The TopK scorer covers single-token bad words, the EOS ban of min lengths and forced EOS; anything else
    (multi-token bad words, renormalised scores with an EOS ban) takes the exact full-vocabulary path."""
    multi = any(len(w) > 1 for w in params.bad_words)
    ban_possible = params.min_length > 0 or params.min_new_tokens > 0
    return not multi and not (params.renormalize and ban_possible)


def _fast_candidates(scorer, logits, running_scores, params, cur_len, forced, keep, vocab):
    """Top `keep` continuations per sentence from per-hypothesis top-k lists (exact; see engine.scorer).

    Returns (scores, parent beam, token) [B, keep], ordered like torch.topk over the flat beams×vocab row:
    by score, ties by flat index."""
    batch, k = running_scores.shape
    ban_eos = cur_len < params.min_length or cur_len - 1 < params.min_new_tokens
    width = keep + 1 if ban_eos else keep
    values, ids = scorer.top(logits, width)
    values = values.reshape(batch, k, width)
    ids = ids.reshape(batch, k, width)
    if ban_eos:
        values = np.where(ids == params.eos_id, NEG_INF, values)
    if forced.any():  # forced EOS: every hypothesis may only end, at no cost
        values[forced] = NEG_INF
        ids[forced] = params.eos_id
        values[forced, :, 0] = 0.0
    scores = (values + running_scores[:, :, None]).reshape(batch, k * width)
    beams = np.repeat(np.arange(k), width)[None, :]
    flat_index = beams * vocab + ids.reshape(batch, k * width)
    order = np.lexsort((flat_index, -scores), axis=-1)[:, :keep]
    top_scores = np.take_along_axis(scores, order, axis=1)
    parent = np.take_along_axis(np.broadcast_to(beams, scores.shape), order, axis=1)
    token = np.take_along_axis(ids.reshape(batch, k * width), order, axis=1)
    return top_scores, parent, token


def _strip(seq: np.ndarray, eos: int, fill: int) -> list[int]:
    """Generated tokens of a finished hypothesis: up to eos, or without the trailing fill when it never ended."""
    stop = np.flatnonzero(seq == eos)
    if stop.size:
        return [int(t) for t in seq[: stop[0]]]
    end = len(seq)
    while end and seq[end - 1] == fill:
        end -= 1
    return [int(t) for t in seq[:end]]


def beam_search(model, enc: EncoderState, params: GenerationParams, max_lengths: np.ndarray) -> Iterator[StepUpdate]:
    """transformers' vectorised beam search (num_return_sequences=1), in numpy over the ONNX decoder."""
    batch = enc.mask.shape[0]
    k = params.num_beams
    max_len = int(max_lengths.max())
    proc = LogitsProcessor(params, np.repeat(max_lengths, k))
    keep = 2 * k  # beams_to_keep = max(2, 1 + n_eos) * num_beams with one eos token
    top_mask = np.zeros(keep, dtype=bool)
    top_mask[:k] = True
    prompt = 1
    fill = params.pad_id if params.pad_id else params.eos_id
    running = np.full((batch, k, max_len), fill, dtype=np.int64)
    running[:, :, 0] = params.decoder_start_id
    sequences = running.copy()
    running_scores = np.zeros((batch, k), dtype=np.float32)
    running_scores[:, 1:] = BIG_NEG
    beam_scores = np.full((batch, k), BIG_NEG, dtype=np.float32)
    finished = np.zeros((batch, k), dtype=bool)
    unsatisfied = np.ones((batch, 1), dtype=bool)
    row_max = max_lengths[:, None]
    lp = params.length_penalty
    state = EncoderState(cross=[np.repeat(c, k, axis=0) for c in enc.cross], mask=np.repeat(enc.mask, k, axis=0))
    run = model.start(state, max_len)
    cur_len = 1
    rows = np.arange(batch * k)
    committed: list[list[int]] = [[] for _ in range(batch)]
    done = [False] * batch
    scorer = model.scorer(params) if fast_scoring_ok(params) else None  # None: exact full-vocabulary path
    while True:
        tokens = running[:, :, cur_len - 1].reshape(-1)
        logits = run.step(tokens)
        vocab = logits.shape[-1]
        if scorer is not None:
            forced = (max_lengths - 1 == cur_len) if params.forced_eos_id is not None else np.zeros(batch, bool)
            top_scores, parent, token = _fast_candidates(
                scorer, logits, running_scores, params, cur_len, forced, keep, vocab
            )
        else:
            log_probs = log_softmax(logits.astype(np.float32, copy=False))
            seqs = list(running[:, :, :cur_len].reshape(batch * k, cur_len)) if proc.multi_bad else []
            log_probs = proc(log_probs, seqs, cur_len, rows)
            acc = (log_probs.reshape(batch, k, vocab) + running_scores[:, :, None]).reshape(batch, k * vocab)
            top_idx = _topk_desc(acc, keep)
            top_scores = np.take_along_axis(acc, top_idx, axis=1)
            parent = top_idx // vocab
            token = top_idx % vocab
        top_seqs = np.take_along_axis(running, parent[:, :, None], axis=1)
        top_seqs[:, :, cur_len] = token
        hits = (token == params.eos_id) | (cur_len + 1 >= row_max)
        # running beams for the next step
        top_running = top_scores + hits.astype(np.float32) * BIG_NEG
        nxt = _topk_desc(top_running, k)
        running = np.take_along_axis(top_seqs, nxt[:, :, None], axis=1)
        running_scores = np.take_along_axis(top_running, nxt, axis=1)
        running_parent = np.take_along_axis(parent, nxt, axis=1)
        # finished hypotheses
        just_finished = hits & top_mask[None, :]
        cand = top_scores / np.float32((cur_len + 1 - prompt) ** lp)
        full = np.all(finished, axis=-1, keepdims=True) & (params.early_stopping is True)
        cand = cand + full.astype(np.float32) * BIG_NEG
        cand = cand + (~unsatisfied).astype(np.float32) * BIG_NEG
        cand = cand + (~just_finished).astype(np.float32) * BIG_NEG
        merged_seqs = np.concatenate([sequences, top_seqs], axis=1)
        merged_scores = np.concatenate([beam_scores, cand], axis=1)
        merged_finished = np.concatenate([finished, just_finished], axis=1)
        best = _topk_desc(merged_scores, k)
        sequences = np.take_along_axis(merged_seqs, best[:, :, None], axis=1)
        beam_scores = np.take_along_axis(merged_scores, best, axis=1)
        finished = np.take_along_axis(merged_finished, best, axis=1)
        # reorder the self-attention cache to follow each surviving beam's parent
        flat_parent = (running_parent + np.arange(batch)[:, None] * k).reshape(-1)
        run.reorder(flat_parent)
        cur_len += 1
        # early-stop heuristic
        if params.early_stopping == "never" and lp > 0.0:
            best_len = row_max - prompt
        else:
            best_len = np.full_like(row_max, cur_len - prompt)
        best_possible = running_scores[:, :1] / (best_len.astype(np.float32) ** np.float32(lp))
        worst = np.where(finished, np.min(beam_scores, axis=1, keepdims=True), BIG_NEG)
        unsatisfied = unsatisfied & np.any(best_possible > worst, axis=-1, keepdims=True)
        open_beams = not (np.all(finished) and params.early_stopping is True)
        more = bool(np.any(unsatisfied)) and open_beams and not bool(np.all(hits))
        # streaming: what every live and finished hypothesis of a sentence agrees on is final
        for b in range(batch):
            if done[b]:
                continue
            if not unsatisfied[b, 0] or cur_len >= max_lengths[b]:
                done[b] = True  # slot 0 of the finished hypotheses can no longer change
                committed[b] = _strip(sequences[b, 0, 1:], params.eos_id, fill)
                continue
            cands = [running[b, j] for j in range(k)] + [sequences[b, j] for j in range(k) if finished[b, j]]
            n = len(committed[b])
            extra = _common_prefix(cands, 1 + n, cur_len)
            if extra:
                seg = cands[0][1 + n : 1 + n + extra]
                stop = np.flatnonzero(seg == params.eos_id)
                seg = seg[: stop[0]] if stop.size else seg
                committed[b].extend(int(t) for t in seg)
        if not more or cur_len >= max_len:
            break
        yield StepUpdate(committed=committed, done=list(done))
    results = [_strip(sequences[b, 0, 1:], params.eos_id, fill) for b in range(batch)]
    yield StepUpdate(committed=results, done=[True] * batch, tokens=results)
