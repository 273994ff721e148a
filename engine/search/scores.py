"""Bookkeeping the searches share: row prefixes, per-row bans, loop detection and the finished outputs with scores.

Kept apart from engine.search.decoding so the search loops read as transformers' algorithm; everything here is
vectorised
over the rows of a step (a Python loop per row and step would cost more than the scorer itself on batch 8 × 4 beams).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from engine.runtime.exp_kernel import ExpBinding, ExpKernel, shared_kernel
from engine.search.repetition import MAX_PERIOD, MIN_REPEATS, MIN_SPAN
from engine.search.types import Hypothesis, RowExtras, SentenceOutput

NEG_INF = np.float32(-np.inf)


def row_prefixes(extras: Sequence[RowExtras | None] | None, rows: int) -> list[tuple[int, ...]]:
    """The forced target prefix of every row (empty without extras)."""
    if extras is None:
        return [()] * rows
    if len(extras) != rows:
        raise ValueError(f"{len(extras)} RowExtras for {rows} rows")
    return [tuple(int(t) for t in e.prefix) if e is not None else () for e in extras]


def prefix_matrix(prefixes: Sequence[tuple[int, ...]], fill: int) -> tuple[np.ndarray, np.ndarray]:
    """(lengths [B], tokens [B, max+1]) so step `t` (1-based position) reads token [:, t-1] for rows still forced."""
    lengths = np.array([len(p) for p in prefixes], dtype=np.int64)
    table = np.full((len(prefixes), int(lengths.max(initial=0)) + 1), fill, dtype=np.int64)
    for r, p in enumerate(prefixes):
        table[r, : len(p)] = p
    return lengths, table


class BadWordIndex:
    """Multi-token bad words indexed by the tokens before their last one.

    The subtitle-artefact bans of a real-scale vocabulary are thousands of sequences (4,350 a sentence measured with
    2 × 32k pieces): checked one by one they took 30 of a paragraph's 38 s. Indexed, a step costs one dict look-up
    per row and prefix length, whatever their number.
    """

    def __init__(self, words: Sequence[Sequence[int]]) -> None:
        grouped: dict[int, dict[tuple[int, ...], set[int]]] = {}
        for word in words:
            if len(word) > 1:
                head = tuple(int(t) for t in word[:-1])
                grouped.setdefault(len(head), {}).setdefault(head, set()).add(int(word[-1]))
        self.by_length = {m: {h: tuple(sorted(v)) for h, v in t.items()} for m, t in sorted(grouped.items())}

    def __bool__(self) -> bool:
        return bool(self.by_length)

    def bans(self, hist: np.ndarray, cur_len: int) -> list[tuple[np.ndarray, int]]:
        """For each banned token, the rows whose history (`hist[:, :cur_len]`, start token included, as
        transformers' NoBadWordsLogitsProcessor sees input_ids) ends with the beginning of a word ending in it."""
        rows_of: dict[int, list[int]] = {}
        for m, table in self.by_length.items():
            if m > cur_len:
                continue
            for r, tail in enumerate(hist[:, cur_len - m : cur_len].tolist()):
                for token in table.get(tuple(tail), ()):
                    rows_of.setdefault(token, []).append(r)
        return [(np.array(rows, dtype=np.int64), token) for token, rows in rows_of.items()]

    def after(self, seq: Sequence[int]) -> set[int]:
        """The tokens that may not follow `seq` (one row's history, start token included)."""
        out: set[int] = set()
        for m, table in self.by_length.items():
            if m <= len(seq):
                out.update(table.get(tuple(seq[len(seq) - m :]), ()))
        return out


@lru_cache(maxsize=32)
def bad_word_index(words: tuple[tuple[int, ...], ...]) -> BadWordIndex:
    """The index of `words`, built once per distinct set: a request's bans are the same for every search call
    (building 4,350 artefact sequences' index took 5.7 ms, paid per batch before)."""
    return BadWordIndex(words)


# Above this banned probability mass a row's normaliser is summed again over its allowed tokens: the shift
# log(1 − mass) would amplify the float32 error of the mass (relative error ~1e-7 / (1 − mass)). Rare with real bans
# (the subtitle artefacts the guards ban are unlikely continuations); a forced-choice test ban hits it every step.
MAX_BANNED_MASS = 0.5


def banned_mass_shift(
    logits: np.ndarray, values: np.ndarray, ids: np.ndarray, rows: np.ndarray, tokens: np.ndarray, mask: np.ndarray
) -> np.ndarray:
    """Per row: log(1 − P(the tokens banned in that row)), by which renormalisation (transformers'
    LogitNormalization after the bans) raises every allowed token's log-probability: subtract it from the scorer's.

    `values`, `ids` are the scorer's top-k for `logits` (log-probabilities over the tokens its `mask` allows), so a
    row's log-sum-exp is logits[r, ids[r, 0]] − values[r, 0] and a banned token's probability exp(logits[r, t] −
    lse): no pass over the vocabulary, except for a row whose banned mass passes MAX_BANNED_MASS. (`rows`, `tokens`)
    pairs may repeat (two bad words ending in one token, a bad word ending in eos while eos is banned); tokens the
    mask bans already are not counted twice."""
    n, vocab = logits.shape
    keep = mask[tokens] == 0.0
    pairs = np.unique(rows[keep] * vocab + tokens[keep])
    rows, tokens = pairs // vocab, pairs % vocab
    lse = logits[np.arange(n), ids[:, 0]].astype(np.float64) - values[:, 0].astype(np.float64)
    mass = np.bincount(rows, weights=np.exp(logits[rows, tokens].astype(np.float64) - lse[rows]), minlength=n)
    shift = np.log1p(-np.minimum(mass, MAX_BANNED_MASS))
    for r in np.flatnonzero(mass > MAX_BANNED_MASS).tolist():
        allowed = logits[r].astype(np.float64) + mask
        allowed[tokens[rows == r]] = -np.inf
        top = allowed.max()
        if np.isfinite(top):
            shift[r] = top + np.log(np.sum(np.exp(allowed - top))) - lse[r]
    return shift.astype(np.float32)


def looping(hist: np.ndarray, end: int, start: int = 1) -> np.ndarray:
    """Per row: `hist[:, start:end]` ends with a repetition loop, as engine.search.repetition.repeating_tail says."""
    out = np.zeros(hist.shape[0], dtype=bool)
    n = end - start
    for period in range(1, MAX_PERIOD + 1):
        repeats = max(MIN_REPEATS, -(-MIN_SPAN // period))
        span = period * repeats
        if n < span:
            continue
        tail = hist[:, end - span : end].reshape(-1, repeats, period)
        out |= np.all(tail == tail[:, -1:, :], axis=(1, 2))
    return out


def forced_logprobs(logits: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """log_softmax(logits)[row, tokens[row]] for the rows a prefix forces (the raw distribution: a prompt token
    is not generated, so no logits processor applies to it)."""
    x = logits.astype(np.float32, copy=False)
    m = np.max(x, axis=-1)
    lse = m + np.log(np.sum(np.exp(x - m[:, None]), axis=-1))
    return x[np.arange(len(tokens)), tokens] - lse


def hypothesis(
    tokens: Sequence[int], logprobs: Sequence[float], eos_logprob: float | None, length_penalty: float
) -> Hypothesis:
    """A finished output with its score: every log-probability (the prefix's too) and the eos one, over the
    generated length (eos counted) ** length_penalty, as transformers' sequences_scores for an unforced row."""
    total = float(np.sum(np.asarray(logprobs, dtype=np.float64)))
    length = len(tokens)
    if eos_logprob is not None:
        total += eos_logprob
        length += 1
    score = total / (max(length, 1) ** length_penalty)
    return Hypothesis(
        tokens=tuple(int(t) for t in tokens),
        logprobs=tuple(float(x) for x in logprobs),
        eos_logprob=None if eos_logprob is None else float(eos_logprob),
        score=float(score),
    )


def from_slot(seq: np.ndarray, lps: np.ndarray, eos: int, fill: int, length_penalty: float) -> Hypothesis:
    """A beam slot (positions after the start token) as a Hypothesis: up to eos, or without the trailing fill."""
    stop = np.flatnonzero(seq == eos)
    if stop.size:
        end = int(stop[0])
        return hypothesis(seq[:end].tolist(), lps[:end].tolist(), float(lps[end]), length_penalty)
    end = len(seq)
    while end and seq[end - 1] == fill:
        end -= 1
    return hypothesis(seq[:end].tolist(), lps[:end].tolist(), None, length_penalty)


def sentence_output(hyps: Sequence[Hypothesis], repeated: bool = False) -> SentenceOutput:
    return SentenceOutput(best=hyps[0], nbest=tuple(hyps), repeated=repeated)


# Σ exp(x) straight from the scores, without a shifted copy, when every row's max lies in here: the sum stays finite in
# float32 (65,001 · e^60 ≈ 7.6e30) and what underflows (x < −87) is under 1e-16 of the max's own term.
DIRECT_RANGE = (-40.0, 60.0)
# Below this many scores a call into ORT (~0.03 ms warm, ~0.1 ms right after a decoder step) costs more than numpy's
# exp over them (the tiny fixture's 1,882-id vocabulary measured slower with the kernel).
KERNEL_MIN_SCORES = 32768


class ChosenLogprobs:
    """log_softmax(scores)[row, tokens[row]] where tokens are the rows' argmax, for greedy's every step.

    The exp over the vocabulary is the cost (engine.runtime.exp_kernel: ORT's Exp where it loads and the scores are
    many,
    KERNEL_MIN_SCORES; numpy's otherwise); the sum stays numpy's pairwise float32 one, within ~1e-7 of float64.
    With every row's max in DIRECT_RANGE, lse = log Σ exp(x) is taken straight from the scores, in place (the
    processed scores are the search's scratch: the logits processors already write into them, and nothing reads
    them after the choice), and the log-probability in float64 beside the float32 max; otherwise the rows are
    shifted by their max into a buffer first (lse = max + log Σ exp(x − max)). Returns float64 log-probabilities.

    The buffer is made on the first (largest) step and kept for the whole search: a fresh 2 MB temporary per step
    would be a new mapping above the allocator's mmap threshold, faulted in every step
    (engine.runtime.native_memory)."""

    def __init__(self, kernel: ExpKernel | bool | None = True) -> None:
        """`kernel`: True for the shared ORT kernel (None where it cannot load), None or False for numpy's exp.
        The shared kernel is made when scores first reach KERNEL_MIN_SCORES: a shortlisted Bergamot search never
        does, and making its session cost a user's first translation ~1-3 ms."""
        self._shared = kernel is True  # the shared kernel, not asked for yet
        self.kernel: ExpKernel | None = None if kernel is True else kernel or None
        self._binding: ExpBinding | None = None
        self._buf: np.ndarray | None = None

    def __call__(self, scores: np.ndarray, tokens: np.ndarray, normalized: bool = False) -> np.ndarray:
        """`normalized`: the scores are log-probabilities already (renormalised processing), read as they are."""
        if normalized:
            return np.array([float(scores[r, t]) for r, t in enumerate(tokens.tolist())], dtype=np.float64)
        return np.array(self.logprobs(scores, tokens), dtype=np.float64)

    def logprobs(self, scores: np.ndarray, tokens: np.ndarray) -> list[float]:
        """The same as Python floats: greedy search reads them so, and making an array of them cost µs a step."""
        # scalar reads and Python floats: each numpy call costs µs with the caches cold after a decoder step
        values = [float(scores[r, t]) for r, t in enumerate(tokens.tolist())]
        lo, hi = DIRECT_RANGE
        if not (lo <= min(values) and max(values) <= hi):
            chosen = np.array(values, dtype=np.float32)[:, None]
            shifted = np.subtract(scores, chosen, out=self._buffer(scores.shape), dtype=np.float32)
            self._exp(shifted, shifted)
            return (-np.log(np.sum(shifted, axis=-1, dtype=np.float32).astype(np.float64))).tolist()
        flags = scores.flags
        if scores.dtype == np.float32 and flags.c_contiguous and flags.writeable:
            x = out = scores
        else:
            x, out = np.ascontiguousarray(scores, dtype=np.float32), self._buffer(scores.shape)
        self._exp(x, out)
        totals = np.add.reduce(out, axis=-1).tolist()  # np.sum's reduction without its Python wrappers (µs a step)
        return [c - math.log(t) for c, t in zip(values, totals)]

    def _exp(self, x: np.ndarray, out: np.ndarray) -> None:
        if x.size >= KERNEL_MIN_SCORES and self._shared:
            self.kernel, self._shared = shared_kernel(), False
        if self.kernel is None or x.size < KERNEL_MIN_SCORES:
            np.exp(x, out=out)
            return
        if self._binding is None or not self._binding.matches(x, out):
            self._binding = self.kernel.bind(x, out)  # rebound only when the batch shrinks (a new logits array)
        self._binding.run()

    def _buffer(self, shape: tuple[int, ...]) -> np.ndarray:
        size = int(np.prod(shape))
        if self._buf is None or self._buf.size < size:
            self._buf = np.empty(size, dtype=np.float32)
        return self._buf[:size].reshape(shape)


def running_best(seq: np.ndarray, params) -> list[int]:
    stop = np.flatnonzero(seq == params.eos_id)
    return seq[: stop[0]].tolist() if stop.size else seq.tolist()


def beam_output(seqs, lps, finished, cut, params, fill: int) -> SentenceOutput:
    """A sentence's finished slots (best first) as its SentenceOutput: `num_return` of them, as
    generate(num_return_sequences=…) returns."""
    slots = [j for j in range(min(params.num_return, len(seqs))) if j == 0 or finished[j]]
    hyps = [from_slot(seqs[j, 1:], lps[j, 1:], params.eos_id, fill, params.length_penalty) for j in slots]
    return sentence_output(hyps, repeated=bool(cut[0]))


def forced_row_logprobs(run, logits: np.ndarray, rows: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """The forced tokens' log-probabilities at `rows`. A run whose rows all have the same logits this step (its
    `uniform` is true: engine.pipeline.alternatives replays a shared start) needs only the first row's, and gives the
    step's logsumexp (`lse`) when it knows it."""
    if getattr(run, "uniform", False) and (tokens == tokens[0]).all():
        lse = getattr(run, "lse", None)
        if lse is None:
            one = forced_logprobs(logits[rows[:1]], tokens[:1])
        else:
            one = np.array([logits[rows[0], tokens[0]] - lse], dtype=np.float32)
        return np.repeat(one, len(rows))
    return forced_logprobs(logits[rows], tokens)


def common_prefix(seqs: list[np.ndarray], start: int, end: int) -> int:
    """Length (from `start`) of the prefix all rows share, looking no further than `end`."""
    stacked = np.stack([s[start:end] for s in seqs])
    same = np.all(stacked == stacked[0], axis=0)
    diff = np.flatnonzero(~same)
    return int(diff[0]) if diff.size else end - start


def take(a: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """a[b, idx[b, j]] for [B, n] or [B, n, L] arrays."""
    return np.take_along_axis(a, idx[:, :, None] if a.ndim == 3 else idx, axis=1)
