"""What the searches take per row and give back per sentence, shared by greedy, beam and constrained search.

A search is called with the source id rows, the `GenerationParams`, per-row length limits and, optionally, one
`RowExtras` per row (a forced target prefix, constraints). Once a sentence is finished its `StepUpdate.outputs`
entry holds a `SentenceOutput`: the best hypothesis with its per-token log-probabilities, the n-best list (when
`params.num_return > 1`), which constraints it could not meet and whether a repetition loop was cut.

Scores follow transformers: a token's log-probability is the log-softmax of the processed logits at that step
(bad words and forced tokens applied), as `compute_transition_scores(..., normalize_logits=True)` gives for greedy
and beam search; a hypothesis' `score` is the sum over its tokens and its eos (when it ended) divided by its
generated length ** length_penalty, as `sequences_scores` (greedy uses the same formula with penalty 1.0).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Constraint:
    """A target token sequence the output must contain (a glossary term, a do-not-translate span).

    `options` are the tokenisations that count (e.g. with and without the word-start marker); meeting any one of
    them meets the constraint. `label` is what the user wrote (reported when it could not be met)."""

    options: tuple[tuple[int, ...], ...]
    label: str = ""


@dataclass(frozen=True)
class RowExtras:
    """Per-row additions to a search: a forced target prefix (decoded first, then the normal search continues) and
    constraints (only the constrained search takes them)."""

    prefix: tuple[int, ...] = ()
    constraints: tuple[Constraint, ...] = ()


@dataclass(frozen=True)
class Hypothesis:
    """One finished output: its tokens (eos excluded, forced prefix included), one log-probability per token (the
    prefix's tokens scored too), the eos log-probability (None when the length limit ended it) and the
    length-normalised `score`."""

    tokens: tuple[int, ...]
    logprobs: tuple[float, ...]
    eos_logprob: float | None
    score: float


@dataclass(frozen=True)
class SentenceOutput:
    """A finished sentence: its best hypothesis, the n-best list (best first, `best` included; only `best` unless
    more were asked for) and the indices of its row's constraints the search could not meet."""

    best: Hypothesis
    nbest: tuple[Hypothesis, ...] = ()
    unmet: tuple[int, ...] = field(default=())
    repeated: bool = False  # `params.stop_repeats` cut a repetition loop (engine.search.repetition) short here
    cut: bool = (
        False  # it stopped at its length limit (set by engine.pipeline.decode_loop, engine.pipeline.length_limits)
    )
