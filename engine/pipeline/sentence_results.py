"""Per-sentence work of a request around the search: what each row needs before decoding (bad words, constraints,
a translation-memory hit, its place in the source) and its `SentenceResult` once its text is in the output.

The request's options decide the search's settings (`request_params`): n-best asks the beam for alternatives + 1
hypotheses (beams raised to at least that), guards cut repetition loops in beams. Per row: the subtitle-artefact
bans of engine.pipeline.guards (unless its source has them), the glossary's constraints
(engine.pipeline.glossary_match), and the
user's own translation from `options.memory`, which replaces decoding. engine.pipeline.glossary_match is imported when a
request needs it; with guards off (`options.guards`, the CLI's --no-guards) a request has no guards' flags or bans.
"""

from __future__ import annotations

import importlib
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from functools import partial
from types import ModuleType
from typing import TypeVar

from engine.errors import InputError
from engine.options import TranslationOptions
from engine.pipeline import guards as guard_checks
from engine.pipeline.assembly import Assembler
from engine.pipeline.decode_loop import Bans, is_scored
from engine.pipeline.planning import Sentence
from engine.results import CUT_DETAIL, FLAG_CONSTRAINT, FLAG_CUT, ORIGIN_MEMORY, Alternative, Flag, SentenceResult
from engine.search.decoding import GenerationParams
from engine.search.types import Constraint, RowExtras, SentenceOutput
from engine.text.punctuation import TargetRules
from engine.text.segment import Segment
from engine.text.token_spans import final_text, token_spans

T = TypeVar("T")
_INTERNED_MAX = 256  # distinct ban sets kept shared (there are only a few: subsets of one fixed list)


@dataclass
class Row:
    """One decoder row of a text: what the search needs for it, and what it gave."""

    source: str  # the text the model reads for this row
    span: tuple[int, int]  # its sentence in the request's text (shared by the pieces of a split sentence)
    source_tokens: int  # its source length in tokens (language token and eos excluded)
    bans: Bans = ()
    extras: RowExtras | None = None  # constraints, when the glossary has terms for it
    # Glossary terms the vocabulary cannot write at all: not searched for (the row decodes as without them),
    # reported unmet
    unspellable: tuple[str, ...] = ()
    memory: str | None = None  # the user's own translation: used instead of decoding
    output: SentenceOutput | None = None  # once finished (memory hits have none)
    origin: str | None = None  # ORIGIN_* once finished


def request_params(params: GenerationParams, options: TranslationOptions) -> GenerationParams:
    """The search settings a request's options imply: n-best (`alternatives` + 1 hypotheses, the beam raised to at
    least that many) and, with guards, repetition loops cut (greedy and beam search)."""
    num_return = options.alternatives + 1
    return params.replace(
        num_return=num_return, num_beams=max(params.num_beams, num_return), stop_repeats=options.guards
    )


def _glossary_match() -> ModuleType:
    try:
        return importlib.import_module("engine.pipeline.glossary_match")
    except ModuleNotFoundError as exc:
        if exc.name != "engine.pipeline.glossary_match":
            raise
        raise InputError(
            "this build of Qiao cannot apply a glossary (engine.pipeline.glossary_match is missing)"
        ) from exc


class RowPlanner:
    """Rows of a text for one tokenizer; keeps equal ban sets as one shared object (they sit in cache keys)."""

    def __init__(self, tokenizer: object, memos: Memos | None = None) -> None:
        self.tokenizer = tokenizer
        self.memos = memos if memos is not None else Memos()
        self._interned: dict[Bans, Bans] = {}

    def rows(
        self,
        segments: Sequence[Segment],
        sentences: Sequence[Sentence],
        options: TranslationOptions,
        lang_id: int | None,
        guards: bool,
    ) -> list[Row]:
        """One Row per planned sentence: its source and span, bans, constraints and translation-memory hit.

        `guards`: whether the request has guards on (engine.pipeline.guards' artefact bans)."""
        starts, pos = [], 0
        for seg in segments:
            starts.append(pos)
            pos += len(seg.text)
        match = _glossary_match() if options.glossary else None
        memory = options.memory
        overhead = 1 + (lang_id is not None)
        rows = []
        for sentence in sentences:
            seg = segments[sentence.index]
            source = sentence.source or seg.sentence
            start = starts[sentence.index]
            row = Row(source, (start, start + len(seg.text)), max(0, len(sentence.ids) - overhead))
            if memory is not None:
                hit = memory.lookup(source)
                row.memory = hit if isinstance(hit, str) else None
            if row.memory is None:
                if guards:
                    # The memo keeps the shared set: each source's own copy of the ~4,350 ban sequences was a
                    # 35 KB tuple per sentence, 36 MB of a 500-translation soak's growth at real scale.
                    row.bans = self.memos.bans.get(source, partial(self._artefact_bans, source))
                if match is not None:
                    found = tuple(match.constraints_for(options.glossary, source, self.tokenizer))
                    constraints = tuple(c for c in found if c.options)
                    row.unspellable = tuple(c.label for c in found if not c.options)
                    row.extras = RowExtras(constraints=constraints) if constraints else None
            rows.append(row)
        return rows

    def _artefact_bans(self, source: str) -> Bans:
        return self._intern(tuple(guard_checks.artefact_bans(source, self.tokenizer)))  # type: ignore[arg-type]

    def _intern(self, bans: Bans) -> Bans:
        if len(self._interned) > _INTERNED_MAX:
            self._interned.clear()
        return self._interned.setdefault(bans, bans)


class LRU:
    """A bounded memo of a pure function's results, least recently used out first."""

    def __init__(self, max_entries: int = 4096) -> None:
        self.max_entries = max_entries
        self._items: OrderedDict[Hashable, object] = OrderedDict()

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        if key in self._items:
            self._items.move_to_end(key)
            return self._items[key]  # type: ignore[return-value]
        value = compute()
        self._items[key] = value
        if len(self._items) > self.max_entries:
            self._items.popitem(last=False)
        return value

    def clear(self) -> None:
        self._items.clear()


@dataclass
class Memos:
    """What a re-translation while typing would compute again for the same sentences: token spans (quadratic in a
    sentence's length: every prefix is decoded), the guards' flags and a source's artefact bans. Each is a pure
    function of its key (for one tokenizer)."""

    spans: LRU = field(default_factory=LRU)
    flags: LRU = field(default_factory=LRU)
    bans: LRU = field(default_factory=LRU)


def cache_extra(params: GenerationParams, row: Row) -> tuple:
    """What besides ids, beams, precision and model changes this row's output (a part of its cache key)."""
    constraints: tuple[Constraint, ...] = row.extras.constraints if row.extras is not None else ()
    return (params.num_return, params.stop_repeats, row.bans, constraints, row.unspellable)


def results_of(
    rows: Sequence[Row],
    tokens: Sequence[Sequence[int]],
    out: Assembler,
    tokenizer: object,
    options: TranslationOptions,
    guards: bool,
    memos: Memos | None = None,
) -> list[SentenceResult]:
    """A text's SentenceResults: every finished row whose text the assembler has drained into the output."""
    results = []
    for local, row in enumerate(rows):
        span, shown = out.span(local), out.text_of(local)
        if row.origin is None or span is None or shown is None:
            continue
        results.append(
            sentence_result(
                local,
                row,
                tokens[local],
                shown,
                span,
                tokenizer=tokenizer,
                rules=out.rules,
                options=options,
                guards=guards,
                memos=memos,
            )
        )
    return results


def sentence_result(
    index: int,
    row: Row,
    tokens: Sequence[int],
    shown: str,
    span: tuple[int, int],
    *,
    tokenizer: object,
    rules: TargetRules | None,
    options: TranslationOptions,
    guards: bool,
    memos: Memos | None = None,
) -> SentenceResult:
    """The finished row's SentenceResult: `shown` is its text in the output, at `span`."""
    if row.origin == ORIGIN_MEMORY or row.output is None:
        return SentenceResult(index, row.source, row.span, span, origin=row.origin or ORIGIN_MEMORY, text=shown)
    output = row.output
    best = output.best
    scored = is_scored(best)

    def compute_spans() -> tuple[tuple[int, int], ...]:
        return token_spans(tokenizer, tokens, rules, shown)[1]  # type: ignore[arg-type]

    spans = memos.spans.get((tuple(tokens), shown), compute_spans) if memos is not None else compute_spans()
    constraints = row.extras.constraints if row.extras is not None else ()
    unmet = row.unspellable + tuple(constraints[k].label for k in output.unmet if 0 <= k < len(constraints))
    return SentenceResult(
        index=index,
        source=row.source,
        source_span=row.span,
        target_span=span,
        tokens=tuple(tokens),
        logprobs=tuple(best.logprobs) if scored else (),
        token_spans=spans,
        score=best.score if scored else None,
        origin=row.origin or "",
        alternatives=_alternatives(output, shown, options.alternatives, tokenizer, rules),
        flags=_flags(row, shown, len(tokens), output.repeated, unmet, guards, memos) + cut_flags(output),
        unmet=unmet,
        text=shown,
    )


def _alternatives(
    output: SentenceOutput, shown: str, k: int, tokenizer: object, rules: TargetRules | None
) -> tuple[Alternative, ...]:
    """Up to k n-best hypotheses after the best, each text shown once and none the best's text."""
    if k <= 0:
        return ()
    seen = {shown}
    out = []
    for h in output.nbest:
        if h == output.best:
            continue
        text = final_text(tokenizer, h.tokens, rules)  # type: ignore[arg-type]
        if text in seen:
            continue
        seen.add(text)
        out.append(Alternative(text, tuple(h.tokens), h.score))
        if len(out) == k:
            break
    return tuple(out)


def cut_flags(output: SentenceOutput) -> tuple[Flag, ...]:
    """FLAG_CUT when the search stopped the output at its length limit (guards on or off: it is never silent)."""
    return (Flag(FLAG_CUT, CUT_DETAIL),) if output.cut else ()


def _flags(
    row: Row,
    shown: str,
    target_tokens: int,
    repeated: bool,
    unmet: tuple[str, ...],
    guards: bool,
    memos: Memos | None,
) -> tuple[Flag, ...]:
    """engine.pipeline.guards' flags (with guards on), and always one FLAG_CONSTRAINT for glossary terms not placed."""
    flags: tuple[Flag, ...] = ()
    if guards:

        def check() -> tuple[Flag, ...]:
            return tuple(
                guard_checks.check_sentence(
                    row.source,
                    shown,
                    source_tokens=row.source_tokens,
                    target_tokens=target_tokens,
                    repeated=repeated,
                    unmet=unmet,
                )
            )

        key = (row.source, shown, row.source_tokens, target_tokens, repeated, unmet)
        flags = memos.flags.get(key, check) if memos is not None else check()
    if unmet and not any(f.kind == FLAG_CONSTRAINT for f in flags):
        terms = ", ".join(f"“{u}”" for u in unmet)
        flags += (Flag(FLAG_CONSTRAINT, f"the glossary's {terms} could not be placed in the translation"),)
    return flags
