"""What the rest of the engine sees of a model family: the runtime model, its encoder state, the tokenizer and the
generation spec.

A family (engine/families/<name>/) implements these; the searches (engine.search) import only this module of the
families package, and the pipeline holds a loaded model and tokenizer through these types. They name exactly what
engine.search and engine.pipeline call, no more: a second family implements this surface and nothing else.

Nothing here loads or computes anything (no onnxruntime, no numpy work): only the shapes of the seam and the
frozen `GenerationSpec`, which is data.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

    from engine.bundle.manifest import Manifest
    from engine.config import EngineConfig


class EncoderState(Protocol):
    """An encoded batch of source rows, opaque to the searches except for its source mask and two row operations."""

    @property
    def mask(self) -> np.ndarray:
        """[sentences, source positions] int64: 1 on real tokens; its first dimension is the batch size."""
        ...

    def repeated(self, n: int) -> EncoderState:
        """Each row `n` times in a row: one per decoder row of a sentence (beams, candidates)."""
        ...

    def take(self, rows: Sequence[int]) -> EncoderState:
        """Only `rows`, in that order (a search that runs some sentences on their own)."""
        ...

    def allowing(self, ids: Iterable[int]) -> EncoderState:
        """A state whose runs may also emit the target `ids` (a forced prefix, glossary terms): a model that limits
        its output per batch (a lexical shortlist) adds them to the limit, kept through `repeated` and `take`;
        a model that scores every id returns the state itself."""
        ...


class Scorer(Protocol):
    """A bundle's beam scorer: each row's best `k` processed log-probabilities (engine.runtime.scorer.TopKScorer)."""

    mask: np.ndarray  # [V] float32: −inf at the tokens every row is banned from

    def top(self, logits: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]: ...


class RunSnapshot(Protocol):
    """A decoder run's state after its first `length` positions (DecoderRun.snapshot), opaque to the pipeline."""

    @property
    def length(self) -> int: ...


class DecoderRun(Protocol):
    """One batch being decoded step by step: what the searches drive.

    `step` feeds one token per row and returns logits [rows, V], valid until the next step; `reorder` makes row r
    continue row index[r]'s history (beam search); `select` keeps only `rows` (finished sentences leave).

    `snapshot` and `restore` are what the review window's shared start (engine.pipeline.alternatives) uses: it
    decodes a sentence's common start once at batch 1, goes back to any position of it, and starts wider runs from
    it. What a family keeps to restart from a prefix is its own (an attention cache's filled positions, the cells
    of a recurrent decoder)."""

    @property
    def length(self) -> int:
        """Positions decoded so far (the next step decodes position `length`)."""
        ...

    def step(self, tokens: np.ndarray) -> np.ndarray: ...

    def reorder(self, index: np.ndarray, shared: np.ndarray | None = None) -> None: ...

    def select(self, rows: np.ndarray) -> None: ...

    def snapshot(self) -> RunSnapshot:
        """The state after the positions decoded so far. It stays valid while this run keeps those positions: a
        restore to fewer positions, or a `select`, may end it (restoring it then raises ValueError)."""
        ...

    def restore(self, snapshot: RunSnapshot) -> None:
        """Continue from `snapshot`: one of this run's (go back to it) or of another run over the same sentence,
        with one row (every row continues from it) or as many rows as this one. The next step decodes position
        `snapshot.length`."""
        ...


@runtime_checkable
class AligningRun(Protocol):
    """A decoder run that also gives the model's soft alignment (Marian's: head 0 of the last decoder layer's
    cross-attention). A family whose runs lack it cannot align: engine.errors.NotSupported says so."""

    @property
    def alignment(self) -> np.ndarray:
        """[rows, source positions]: the attention each row's last step paid to each source token."""
        ...


class Model(Protocol):
    """A loaded model at one precision, as the translator and the searches use it."""

    @property
    def precision(self) -> str: ...

    @property
    def max_positions(self) -> int:
        """The most positions a source or target row may have."""
        ...

    @property
    def vocab_size(self) -> int:
        """The target vocabulary's size: the width of the logits."""
        ...

    def encode(self, ids: np.ndarray, mask: np.ndarray) -> EncoderState:
        """Source id rows [B, S] (padded) and their mask → the state every decoder step reads."""
        ...

    def start(self, enc: EncoderState, max_len: int, beams: int = 1) -> DecoderRun:
        """A decoding run of `beams` rows per sentence of `enc`, with room for `max_len` positions."""
        ...

    def scorer(self, params: ScorerSettings) -> Scorer | None:
        """The bundle's beam scorer when it computes what `params` ask for, else None (the full-vocabulary path)."""
        ...


class ScorerSettings(Protocol):
    """What a scorer depends on of the generation settings (engine.search.decoding.GenerationParams)."""

    @property
    def renormalize(self) -> bool: ...

    @property
    def bad_words(self) -> tuple[tuple[int, ...], ...]: ...


class Tokenizer(Protocol):
    """A bundle's tokenizer as the pipeline uses it: source text → ids, target ids → text."""

    vocab_size: int  # the target's
    unk_id: int
    eos_id: int
    pad_id: int

    @property
    def cleans_up(self) -> bool:
        """Whether decoding applies a clean-up that can change text at a sentence's end (streaming waits for it)."""
        ...

    def load_vocabulary(self) -> None:
        """Read every lazily read file now, so a damaged one fails while loading."""
        ...

    def encode(self, text: str, add_eos: bool = True) -> list[int]: ...

    def encode_batch(self, texts: Sequence[str], add_eos: bool = True) -> list[list[int]]: ...

    def decode(self, ids: Iterable[int]) -> str: ...

    def pieces_text(self, ids: Iterable[int]) -> str:
        """Unstripped text of target ids (the streaming detokeniser builds on it)."""
        ...

    @property
    def special_ids(self) -> frozenset[int]:
        """Target ids whose piece is no text the model writes (end, unknown, padding, control and language tokens
        such as Marian's `>>cmn_Hans<<`, byte pieces): what reasoning about piece surfaces skips (engine.pipeline
        .guards)."""
        ...

    def id_to_piece(self, idx: int) -> str: ...

    def token_to_id(self, piece: str) -> int: ...

    def pieces(self, text: str) -> list[str]:
        """The source pieces of `text`, as `encode` numbers them (no language token, no end token)."""
        ...

    def target_token_to_id(self, piece: str) -> int:
        """The target id of a piece that spells its own text (`<unk>`'s id where there is none): what a forced prefix
        and a glossary term are spelled with."""
        ...

    def encode_target(self, text: str) -> list[int]:
        """`text` as target ids, no end token (glossary terms)."""
        ...


# How the target language (a variant such as Simplified or Traditional Chinese) is chosen.
TARGET_BY_SOURCE_TOKEN = "source-token"  # a token put before the source (Marian's `>>cmn_Hans<<`)
TARGET_BY_FORCED_TOKEN = "forced-first-token"  # the first target token is forced (mBART, NLLB)
TARGET_FIXED = "none"  # the model writes one target language: nothing to choose
TARGET_RULES = (TARGET_BY_SOURCE_TOKEN, TARGET_BY_FORCED_TOKEN, TARGET_FIXED)


@dataclass(frozen=True)
class GenerationSpec:
    """How decoding starts and ends for one bundle, and how its target language is chosen: the family's rules,
    filled in from the bundle's manifest (engine.families.<name>.generation).

    `end_ids`: every token that ends a hypothesis (the first is the one the searches stop on); `forced_eos_id`:
    the token forced at the length limit (None: none is); `target_language`: one of TARGET_RULES; `length_rule`:
    the family's own output length limit as (ratio, slack) of engine.pipeline.length_limits.LengthRule (None: the
    direction's measured rule), for a family whose models were trained and are run with a fixed one."""

    decoder_start_id: int
    end_ids: tuple[int, ...]
    pad_id: int
    forced_eos_id: int | None = None
    target_language: str = TARGET_FIXED
    length_rule: tuple[float, int] | None = None

    def __post_init__(self) -> None:
        if not self.end_ids:
            raise ValueError("a generation spec needs at least one end token")
        if self.target_language not in TARGET_RULES:
            raise ValueError(f"unknown target-language rule {self.target_language!r} (one of {TARGET_RULES})")

    @property
    def eos_id(self) -> int:
        """The end token the searches stop on."""
        return self.end_ids[0]

    def source_id(self, language_id: int) -> int | None:
        """The id put before every source row to choose the target language whose token is `language_id`: itself
        under TARGET_BY_SOURCE_TOKEN, else None (nothing is put before the source)."""
        return language_id if self.target_language == TARGET_BY_SOURCE_TOKEN else None


class FamilyRuntime(Protocol):
    """A family package's entry points (engine/families/<name>/__init__.py), imported by the registry when a bundle
    of that family is loaded."""

    def load_model(self, manifest: Manifest, config: EngineConfig) -> Model: ...

    def load_tokenizer(self, manifest: Manifest) -> Tokenizer: ...

    def generation_spec(self, manifest: Manifest) -> GenerationSpec: ...
