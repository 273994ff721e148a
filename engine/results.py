"""What a translation request returns: plain dataclasses, so the CLI prints them and the GUI passes them in signals."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class TranslationStats:
    """Per-request figures shown in the status bar and printed by `qiao translate --json`."""

    total_ms: float
    first_token_ms: float | None  # None when nothing was decoded (empty input)
    source_tokens: int
    target_tokens: int
    tokens_per_s: float
    precision: str  # "int8" | "fp32"
    beams: int
    sentences: int
    # Sentences whose result came from the translator's cache (unchanged since an earlier request), not decoded.
    sentences_reused: int = 0

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class StreamEvent:
    """One step of a streamed translation.

    Concatenating every `delta` of a request, in order, gives exactly `Translation.text`.
    """

    delta: str
    sentences_done: int
    sentences_total: int


# Why a sentence is flagged (engine.pipeline.guards): the window marks it in the margin with the reason on hover.
FLAG_LENGTH = "length"  # the output is far longer or shorter than the source's length suggests
FLAG_NUMBERS = "numbers"  # a number, URL, e-mail address or code span of the source is missing or changed
FLAG_REPETITION = "repetition"  # the model was caught repeating itself; the loop was cut
FLAG_ARTEFACT = "artefact"  # a subtitle artefact ("(掌声)") was kept out of the output
FLAG_CONSTRAINT = "constraint"  # a glossary or do-not-translate term could not be met
FLAG_CUT = (
    "cut"  # the output reached the decoder's length limit (engine.pipeline.length_limits): its end may be missing
)
CUT_DETAIL = "the translation reached the length limit and was cut; its end may be missing"

ORIGIN_MODEL = "model"  # decoded for this request
ORIGIN_CACHE = "cache"  # the same sentence, decoded by an earlier request with the same settings
ORIGIN_MEMORY = "memory"  # the user's own translation from the translation memory (engine.memory)


@dataclass(frozen=True)
class Flag:
    """A known Marian failure seen in one sentence: `kind` (FLAG_*) and `detail`, the English reason with the
    offending text (e.g. "“2021” is missing from the translation")."""

    kind: str
    detail: str


@dataclass(frozen=True)
class Alternative:
    """One alternative translation of a sentence: its text (as it would be shown), tokens and score.

    From the n-best list, or from `Translator.alternatives` (another token at one position, the rest re-decoded):
    then `position` is that token's index and `word` the text it contributes there."""

    text: str
    tokens: tuple[int, ...]
    score: float
    position: int | None = None
    word: str = ""
    # False while `Translator.iter_alternatives` is still decoding its rest: `text`/`tokens` are the sentence so far
    # (the word and the rest decoded until now) and `score` the word's log-probability there, not the sentence's
    complete: bool = True


@dataclass(frozen=True)
class SentenceResult:
    """One decoded row of a request (a sentence; a very long sentence gives several rows, each with its part).

    Offsets are Python string indices, end exclusive. `source_span` is in the request's text (the whole sentence,
    its line breaks included when wrapped lines were joined; every part of a split sentence has the same span);
    `target_span` is in `Translation.text`. `token_spans[i]` is the part of the sentence's text (relative to
    `target_span[0]`) token i produced, empty (a, a) for a token that adds no character; the punctuation
    normalisation is taken into account. `logprobs` are the tokens' log-probabilities (empty for ORIGIN_MEMORY).
    """

    index: int  # the row's number in reading order (0, 1, …)
    source: str  # the sentence as the model read it (wrapped lines joined)
    source_span: tuple[int, int]
    target_span: tuple[int, int]
    tokens: tuple[int, ...] = ()
    logprobs: tuple[float, ...] = ()
    token_spans: tuple[tuple[int, int], ...] = ()
    score: float | None = None  # length-normalised log-probability (None: not decoded here)
    origin: str = ORIGIN_MODEL
    alternatives: tuple[Alternative, ...] = ()  # n-best, best excluded, distinct texts (options.alternatives)
    flags: tuple[Flag, ...] = ()
    unmet: tuple[str, ...] = ()  # glossary / do-not-translate terms the search could not place
    # The row's own text (Translation.text[target_span] in a request; what `Translator.translate_sentence` made,
    # which has no Translation around it). "" where the producer did not fill it.
    text: str = ""


@dataclass(frozen=True)
class Translation:
    """A finished (or cancelled) request. On cancel, `text` holds the part already translated.

    `error` is set (and `text` empty, `stats` None) only by `Translator.translate_segments`, for a text it refuses on
    its own (too long, not a string): the English reason, so a bulk job reports that text and goes on.
    """

    text: str
    tokens: list[list[int]] = field(default_factory=list)  # generated ids per sentence, eos excluded
    stats: TranslationStats | None = None
    cancelled: bool = False
    error: str | None = None
    # Per sentence, in reading order: where it is in both texts, its token scores, flags and n-best (the finished
    # sentences only, on cancel).
    sentences: list[SentenceResult] = field(default_factory=list)
