"""Lexically constrained beam search: glossary terms and do-not-translate spans that must appear in the output.

Dynamic beam allocation (Post & Vilar 2018, as in Sockeye): each step a hypothesis may continue with its best
`2·beams` tokens, with the next token of every match in progress and with the first token of every constraint it has
not met (engine.search.constraint_banks tracks which). The candidates are grouped into banks by constraint tokens met
and
the beam is divided among the banks, so hypotheses that made progress are not crowded out by better-scored ones that
made none. End of sentence is allowed only once every constraint is met; at the length limit the best hypothesis
ends anyway, and the constraints it lacks are reported in `SentenceOutput.unmet` (so are constraints no
tokenisation of which fits the limit, which are not searched for at all).

The beam is the requested one but at least 1 + the number of constraints (so `num_beams == 1` gets 2 or more).
A forced target prefix (`RowExtras.prefix`) is decoded first and counts towards the constraints. Scores follow
engine.search.types: per-token log-probabilities of the processed logits (the prefix's scored too), and a
hypothesis' score is their sum (eos included) / its length (prefix and eos included) ** length_penalty. Repetition
loops are not cut here: `StepUpdate.best` (the most advanced live hypothesis) lets the caller watch for them.

Rows without constraints are not searched here: they run, in step with the constrained rows, through the search the
translator would use for them (engine.search.decoding's greedy or beam search), so their output is exactly that
search's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.families.base import EncoderState
from engine.search.constraint_banks import ConstraintSet, Progress, allocate
from engine.search.decoding import (
    GenerationParams,
    LogitsProcessor,
    Steps,
    StepUpdate,
    _topk_desc,
    beam_search,
    greedy_search,
    log_softmax,
)
from engine.search.scores import bad_word_index, banned_mass_shift
from engine.search.types import Constraint, Hypothesis, RowExtras, SentenceOutput

_DEAD = -1.0e30  # log-probabilities at or below this are banned tokens


def beam_size(params: GenerationParams, extras: Sequence[RowExtras]) -> int:
    """The beam the constrained rows share: the requested one, but at least one slot per constraint plus one."""
    most = max((len(e.constraints) for e in extras), default=0)
    return max(params.num_beams, 2, 1 + most)


def constrained_beam_search(
    model, enc: EncoderState, params: GenerationParams, max_lengths: np.ndarray, extras: Sequence[RowExtras] | None
) -> Steps:
    """Decode every row, meeting each row's `RowExtras.constraints` (see the module docstring); yields a
    `StepUpdate` after every decoder step, like engine.search.decoding's searches."""
    batch = enc.mask.shape[0]
    extras = list(extras) if extras is not None else [RowExtras()] * batch
    tight = [b for b in range(batch) if extras[b].constraints]
    free = [b for b in range(batch) if not extras[b].constraints]
    plain = _plain_search(model, enc, params, max_lengths, extras, free) if free else None
    search = _Search(model, enc.take(tight), params, max_lengths[tight], [extras[b] for b in tight]) if tight else None
    last: StepUpdate | None = None
    committed: list[list[int]] = [[] for _ in range(batch)]
    done = [False] * batch
    best: list[list[int]] = [[] for _ in range(batch)]
    outputs: list[SentenceOutput | None] = [None] * batch
    try:
        while True:
            if plain is not None:
                last = next(plain, None) or last
                plain = plain if last is None or not last.tokens else None  # its last update carries `tokens`
            if search is not None and not search.finished:
                search.step()
            if last is not None:
                for j, b in enumerate(free):
                    committed[b], done[b] = last.tokens[j] if last.tokens else last.committed[j], last.done[j]
                    best[b] = last.best[j] if len(last.best) > j else committed[b]
                    outputs[b] = last.outputs[j] if len(last.outputs) > j else None
            if search is not None:
                for j, b in enumerate(tight):
                    committed[b], done[b], best[b] = search.committed(j), search.done(j), search.best(j)
                    outputs[b] = search.output(j)
            if plain is None and (search is None or search.finished):
                break
            yield StepUpdate([list(c) for c in committed], list(done), outputs=list(outputs), best=list(best))
    finally:
        if plain is not None:
            plain.close()
    yield StepUpdate(committed=committed, done=[True] * batch, tokens=committed, outputs=outputs, best=committed)


def _plain_search(model, enc, params, max_lengths, extras, rows) -> Steps:
    """The unconstrained rows through engine.search.decoding's search, as Translator._search would run them alone."""
    search = greedy_search if params.num_beams == 1 else beam_search
    sub = [extras[b] for b in rows]
    if any(e.prefix for e in sub):  # only a search that takes row extras can force prefixes
        return search(model, enc.take(rows), params, max_lengths[rows], sub)
    return search(model, enc.take(rows), params, max_lengths[rows])


@dataclass
class _Hyp:
    tokens: list[int]
    logprobs: list[float]
    score: float  # sum of the log-probabilities
    state: Progress


@dataclass
class _Cand:
    score: float
    flat: int  # beam slot × vocab + token: ties break by it, as transformers' topk over the flat row does
    parent: _Hyp
    slot: int
    token: int
    logprob: float
    state: Progress
    hit: bool  # ends here (eos or the length limit)


class _Row:
    """One constrained sentence: its constraints, live hypotheses and finished ones."""

    def __init__(self, extras: RowExtras, limit: int, params: GenerationParams, k: int, vocab: int) -> None:
        self.limit, self.k = int(limit), k
        forbidden = {w[0] for w in params.bad_words if len(w) == 1} | {params.eos_id}
        room = self.limit - 1 - (params.forced_eos_id is not None)
        usable, self.index, self.impossible = [], [], []
        for c, constraint in enumerate(extras.constraints):
            options = tuple(
                o
                for o in constraint.options
                if len(o) <= room and all(0 <= t < vocab and t not in forbidden for t in o)
            )
            if options:
                usable.append(Constraint(options, constraint.label))
                self.index.append(c)
            else:
                self.impossible.append(c)  # no tokenisation fits in the length limit or avoids banned tokens
        self.cset = ConstraintSet(usable)
        self.prefix = tuple(extras.prefix[:room])
        self.running: list[_Hyp | None] = [_Hyp([], [], 0.0, self.cset.start)] + [None] * (k - 1)
        self.pool: list[tuple[float, Hypothesis]] = []  # finished with every constraint met, best first (≤ k)
        self.fallback: tuple[tuple[int, float], Hypothesis, list[int]] | None = None  # best ended at the limit
        self.committed: list[int] = []
        self.output: SentenceOutput | None = None

    def forced(self, cur_len: int, params: GenerationParams) -> int | None:
        if cur_len <= len(self.prefix):
            return self.prefix[cur_len - 1]
        if params.forced_eos_id is not None and cur_len == self.limit - 1:
            return params.forced_eos_id
        return None

    def finish(self, cand: _Cand, params: GenerationParams) -> None:
        """Record a hypothesis that ends with `cand` (eos or the length limit)."""
        h, eos = cand.parent, cand.token == params.eos_id
        tokens = h.tokens if eos else [*h.tokens, cand.token]
        logprobs = h.logprobs if eos else [*h.logprobs, cand.logprob]
        norm = cand.score / (len(h.tokens) + 1) ** params.length_penalty
        hyp = Hypothesis(tuple(tokens), tuple(logprobs), cand.logprob if eos else None, norm)
        if self.cset.complete(cand.state):
            self.pool.append((norm, hyp))
            self.pool.sort(key=lambda e: -e[0])  # stable: an earlier one stays first on a tie
            del self.pool[self.k :]
            return
        key = (self.cset.met_count(cand.state), norm)
        if self.fallback is None or key > self.fallback[0]:
            self.fallback = (key, hyp, [self.index[c] for c in self.cset.unmet(cand.state)])

    def select(self, cands: list[_Cand], params: GenerationParams) -> list[_Cand]:
        """Finish the ending candidates that rank among the best `k` complete ones; return the next beam."""
        cands.sort(key=lambda c: (-c.score, c.flat))
        rank = 0
        for cand in cands:
            if self.cset.complete(cand.state):
                if cand.hit and rank < self.k:
                    self.finish(cand, params)
                rank += 1
            elif cand.hit:
                self.finish(cand, params)
        going = [c for c in cands if not c.hit]
        return [going[i] for i in allocate([c.state.bank for c in going], self.k)]

    def satisfied(self, cur_len: int, params: GenerationParams) -> bool:
        """transformers' stopping rule over the hypotheses that could end now: `k` finished ones and no complete
        live one that could still beat the worst of them."""
        live = [h for h in self.running if h is not None]
        if cur_len >= self.limit or not live:
            return True
        if len(self.pool) < self.k:
            return False
        if params.early_stopping is True:
            return True
        lp = params.length_penalty
        length = self.limit - 1 if params.early_stopping == "never" and lp > 0.0 else cur_len - 1
        complete = [h.score for h in live if self.cset.complete(h.state)]
        return not complete or max(complete) / length**lp <= self.pool[-1][0]

    def close(self, params: GenerationParams) -> None:
        if self.pool:
            hyps, unmet = [h for _, h in self.pool], []
        elif self.fallback is not None:
            hyps, unmet = [self.fallback[1]], self.fallback[2]
        else:  # nothing could be generated at all
            hyps, unmet = (
                [Hypothesis((), (), None, -math.inf)],
                [self.index[c] for c in self.cset.unmet(self.cset.start)],
            )
        nbest: list[Hypothesis] = []
        for h in hyps:
            if len(nbest) < max(1, params.num_return) and all(h.tokens != n.tokens for n in nbest):
                nbest.append(h)
        self.output = SentenceOutput(
            best=nbest[0],
            nbest=tuple(nbest) if params.num_return > 1 else (nbest[0],),
            unmet=tuple(sorted(unmet + self.impossible)),
        )
        self.committed = list(nbest[0].tokens)
        self.running = [None] * self.k

    def update_committed(self) -> None:
        """Extend the tokens every live and finished hypothesis shares (they can no longer change)."""
        seqs = [h.tokens for h in self.running if h is not None] + [list(h.tokens) for _, h in self.pool]
        if not seqs:
            return
        n = len(self.committed)
        shortest = min(len(s) for s in seqs)
        while n < shortest and all(s[n] == seqs[0][n] for s in seqs):
            n += 1
        self.committed = list(seqs[0][:n])

    def best(self) -> list[int]:
        if self.output is not None:
            return list(self.output.best.tokens)
        live = [h for h in self.running if h is not None]
        return list(max(live, key=lambda h: (h.state.bank, h.score)).tokens) if live else self.committed


class _Search:
    """The constrained rows, `k` decoder rows each, decoded together; finished sentences leave the batch."""

    def __init__(self, model, enc: EncoderState, params: GenerationParams, limits: np.ndarray, extras) -> None:
        self.p, self.k = params, beam_size(params, extras)
        k = self.k
        self.vocab = model.vocab_size
        self.rows = [_Row(e, limit, params, k, self.vocab) for e, limit in zip(extras, limits)]
        state = enc.repeated(k)
        self.run = model.start(state, int(limits.max()))
        self.active = list(range(len(self.rows)))
        self.cur_len = 1
        self.proc = LogitsProcessor(params, np.asarray(limits))
        self.multi_bad = [w for w in params.bad_words if len(w) > 1]
        self.bad_index = bad_word_index(tuple(self.multi_bad))
        self.scorer = model.scorer(params)  # None (a bundle without one): full-vocabulary log-softmax
        self.finished = False

    # -- per-row views ----------------------------------------------------------------------------------------------
    def committed(self, i: int) -> list[int]:
        return self.rows[i].committed

    def done(self, i: int) -> bool:
        return self.rows[i].output is not None

    def output(self, i: int) -> SentenceOutput | None:
        return self.rows[i].output

    def best(self, i: int) -> list[int]:
        return self.rows[i].best()

    # -- one decoder step -------------------------------------------------------------------------------------------
    def _scores(self, logits: np.ndarray, width: int):
        """(top log-probs, top ids) per decoder row, and log-probability lookups for any token: `proc` after the
        logits processors (bad words, min length), `raw` before them (forced prefix tokens are scored so)."""
        if self.scorer is not None:
            values, ids = self.scorer.top(logits, width)
            shift = logits[np.arange(len(logits)), ids[:, 0]] - values[:, 0]  # log-sum-exp of each row
            raw = proc = lambda s, t: float(logits[s, t] - shift[s])
            if self.p.renormalize:  # the scorer's values are normalised over its mask's allowed tokens only
                raw = lambda s, t: float(self.lsm_row(logits, s)[t])  # noqa: E731 - prefix tokens, rare
            return values, ids, proc, raw
        lsm = log_softmax(logits.astype(np.float32, copy=False))
        hist = None  # every decoder row's tokens so far, start included (multi-token bad words read them)
        if self.multi_bad:
            hist = np.full((len(logits), self.cur_len), self.p.pad_id, dtype=np.int64)
            hist[:, 0] = self.p.decoder_start_id
            for r, h in enumerate(h for i in self.active for h in self.rows[i].running):
                if h is not None:
                    hist[r, 1:] = h.tokens
        processed = self.proc(lsm.copy(), hist, self.cur_len, np.repeat(self.active, self.k))
        ids = _topk_desc(processed, width)
        values = np.take_along_axis(processed, ids, axis=1)
        return values, ids, lambda s, t: float(processed[s, t]), lambda s, t: float(lsm[s, t])

    def lsm_row(self, logits: np.ndarray, s: int) -> np.ndarray:
        """log_softmax of decoder row `s`'s raw logits (a forced prefix token is scored before any processing)."""
        return log_softmax(logits[s : s + 1].astype(np.float32, copy=False))[0]

    def _renormalised(self, s: int, banned: set[int], options: dict[int, float], logits) -> dict[int, float]:
        """`options` (the scorer's log-probabilities) normalised again over the tokens `h` may take, as
        renormalize_logits does after the bans (engine.search.scores.banned_mass_shift)."""
        tokens = np.array(sorted(banned), dtype=np.int64)
        top_id = next(iter(options))  # the scorer's best token: its value gives the row's log-sum-exp
        ids, values = np.array([[top_id]]), np.array([[options[top_id]]], dtype=np.float32)
        row = logits[s : s + 1]
        shift = float(banned_mass_shift(row, values, ids, np.zeros(len(tokens), np.int64), tokens, self.scorer.mask)[0])
        return {t: lp - shift for t, lp in options.items()}

    def _banned(self, h: _Hyp) -> set[int]:
        """Tokens `h` may not continue with: eos before the minimum length, the last token of a multi-token bad
        word whose beginning `h` ends with (the scorer has banned the single-token ones already)."""
        p = self.p
        out = {p.eos_id} if self.cur_len < p.min_length or self.cur_len - 1 < p.min_new_tokens else set()
        seq = [p.decoder_start_id, *h.tokens]
        out.update(self.bad_index.after(seq))
        return out

    def _candidates(self, row: _Row, base: int, values, ids, proc, raw, logits) -> list[_Cand]:
        p, cur_len, cset = self.p, self.cur_len, row.cset
        at_limit = cur_len + 1 >= row.limit
        forced = row.forced(cur_len, p)
        cands = []
        for j, h in enumerate(row.running):
            if h is None:
                continue
            s = base + j
            if forced is not None:
                prefix = cur_len <= len(row.prefix)
                options = {forced: raw(s, forced) if prefix else 0.0}  # forced eos: transformers scores it 0
            else:
                options = dict(zip(ids[s].tolist(), values[s].tolist()))
                for t in cset.next_tokens(h.state) - options.keys():
                    options[t] = proc(s, t)
            banned = self._banned(h) if forced is None else set()
            if banned and self.p.renormalize and self.scorer is not None:
                options = self._renormalised(s, banned, options, logits)
            for t, lp in options.items():
                if not lp > _DEAD or t in banned:
                    continue
                eos = t == p.eos_id
                state = h.state if eos else cset.advance(h.state, t)
                if eos and not at_limit and not cset.complete(state):
                    continue  # no end before every constraint is met
                cands.append(_Cand(h.score + lp, j * self.vocab + t, h, j, t, lp, state, eos or at_limit))
        return cands

    def step(self) -> None:
        k, p = self.k, self.p
        tokens = np.array(
            [
                (h.tokens[-1] if h.tokens else p.decoder_start_id) if h else p.pad_id
                for i in self.active
                for h in self.rows[i].running
            ],
            dtype=np.int64,
        )
        logits = self.run.step(tokens)
        values, ids, proc, raw = self._scores(logits, 2 * k)
        parents = np.arange(len(tokens))
        for a, i in enumerate(self.active):
            row = self.rows[i]
            chosen = row.select(self._candidates(row, a * k, values, ids, proc, raw, logits), p)
            row.running = [
                _Hyp([*c.parent.tokens, c.token], [*c.parent.logprobs, c.logprob], c.score, c.state) for c in chosen
            ] + [None] * (k - len(chosen))
            parents[a * k : a * k + len(chosen)] = [a * k + c.slot for c in chosen]
        self.run.reorder(parents)
        self.cur_len += 1
        keep = []
        for a, i in enumerate(self.active):
            row = self.rows[i]
            if row.satisfied(self.cur_len, p):
                row.close(p)
            else:
                row.update_committed()
                keep.append(a)
        if len(keep) < len(self.active):
            self.active = [self.active[a] for a in keep]
            if not self.active:
                self.finished = True
                return
            self.run.select(np.array([a * k + j for a in keep for j in range(k)], dtype=np.int64))
