"""A Bergamot bundle's tokenizer: source text → the ids Marian feeds its encoder, target ids → the text Marian
writes, with the interface the pipeline uses of every family's tokenizer (engine.families.base.Tokenizer, and the
target-side spelling glossary constraints and forced prefixes need).

Marian (and so bergamot-translator) numbers tokens with SentencePiece's own ids: `</s>` 0, `<unk>` 1, no BOS. The
source ids of a line are SentencePiece's `Encode(line)` followed by `</s>`; the output is SentencePiece's `Decode`
of the generated ids (the final `</s>` decodes to nothing). Nothing typed in the text is special: `</s>` in the
input is three ordinary pieces, as in Marian. With separate vocabularies (`srcvocab`/`trgvocab`) the source model
encodes and the target model decodes and spells target text; with a shared one both are the same object. Both are
engine.families.bergamot.vocabulary (no sentencepiece at run time).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from engine.bundle.load_guard import opening
from engine.families.bergamot.vocabulary import BYTE, CONTROL, MARIAN, UNKNOWN, Vocabulary

if TYPE_CHECKING:
    from engine.bundle.manifest import Manifest


class BergamotTokenizer:
    """Source-side encoding and target-side decoding for one Bergamot bundle."""

    def __init__(self, info: dict, base: str | Path, *, sentencepiece: str = MARIAN) -> None:
        """`info` is the manifest's tokenizer section (engine.families.bergamot.converter.tokenizer.TokenizerInfo); its
        files are relative to `base` (the bundle folder). `sentencepiece`: engine.families.bergamot.vocabulary's
        MARIAN (what bergamot-translator computes) or PACKAGE (the sentencepiece package, for tests)."""
        folder = Path(base)
        source_file, target_file = str(info["source_file"]), str(info["target_file"])
        with opening(source_file):
            self.source = Vocabulary.from_file(folder / source_file, sentencepiece=sentencepiece)
        if target_file == source_file:
            self.target = self.source
        else:
            with opening(target_file):
                self.target = Vocabulary.from_file(folder / target_file, sentencepiece=sentencepiece)
        for label, vocab, size_key in (
            (source_file, self.source, "source_vocab_size"),
            (target_file, self.target, "vocab_size"),
        ):
            with opening(label):
                if size_key in info and int(info[size_key]) != vocab.size:
                    raise ValueError(f"{label} has {vocab.size} pieces, the manifest says {info[size_key]}")
                if (vocab.eos_id, vocab.unk_id) != (int(info["eos_id"]), int(info["unk_id"])):
                    raise ValueError(f"{label}'s `</s>` and `<unk>` ids are not the manifest's")
        self.vocab_size: int = self.target.size  # the target's: the width of the logits
        self.source_vocab_size: int = self.source.size
        self.eos_id: int = self.target.eos_id
        self.unk_id: int = self.target.unk_id
        self.pad_id: int = int(info.get("pad_id", self.eos_id))  # Marian pads with `</s>`
        self.language_tokens: list[str] = []  # one target language: nothing is put before the source
        self._special_ids: frozenset[int] | None = None  # made on first use

    @classmethod
    def from_manifest(cls, manifest: Manifest) -> BergamotTokenizer:
        """The tokenizer of a loaded bundle, its files read from the bundle folder."""
        return cls(manifest.tokenizer, manifest.bundle_dir)

    def load_vocabulary(self) -> None:
        """Nothing is read lazily: both vocabularies were read (and checked) when the tokenizer was made."""

    @property
    def separate_vocabularies(self) -> bool:
        """Whether source ids number another vocabulary than target ids (then `encode` ids are no target ids)."""
        return self.source is not self.target

    @property
    def cleans_up(self) -> bool:
        """SentencePiece's decoding is final as it stands: no clean-up rewrites a sentence's end."""
        return False

    # -- vocabulary -------------------------------------------------------------------------------------------
    @property
    def special_ids(self) -> frozenset[int]:
        """Target ids whose piece is no text of its own (base.Tokenizer): `</s>`, `<unk>`, control and byte pieces."""
        if self._special_ids is None:
            kinds = (UNKNOWN, CONTROL, BYTE)
            target = self.target
            self._special_ids = frozenset(i for i in range(target.size) if target.piece_type(i) in kinds)
        return self._special_ids

    def id_to_piece(self, idx: int) -> str:
        """The target piece of `idx`."""
        return self.target.id_to_piece(idx)

    def token_to_id(self, piece: str) -> int:
        """SentencePiece's PieceToId on the target side (`<unk>`'s id when there is none); there are no language
        tokens."""
        return self.target.piece_to_id(piece)

    def target_token_to_id(self, piece: str) -> int:
        """The target id of a piece that stands for its own text, else `<unk>`'s: what a glossary term or a forced
        prefix is spelled with (never `</s>`, `<unk>` or a byte piece by its name)."""
        return self.target.text_piece_to_id(piece)

    def source_token_to_id(self, piece: str) -> int:
        """SentencePiece's PieceToId on the source side."""
        return self.source.piece_to_id(piece)

    def language_id(self, token: str) -> int:
        """Bergamot models have no target-language tokens: always KeyError."""
        raise KeyError(f"this model has no language token {token}")

    # -- encoding ---------------------------------------------------------------------------------------------
    def encode(self, text: str, add_eos: bool = True) -> list[int]:
        """Marian's source ids: SentencePiece's ids of `text`, then `</s>` (with `add_eos`)."""
        ids = self.source.encode(text)
        if add_eos:
            ids.append(self.eos_id)
        return ids

    def encode_batch(self, texts: Sequence[str], add_eos: bool = True) -> list[list[int]]:
        return [self.encode(text, add_eos) for text in texts]

    def encode_target(self, text: str) -> list[int]:
        """`text` as the target side writes it, no `</s>`: the target model's own segmentation (byte pieces where
        it lacks a character and has byte fallback, `<unk>` where it has not)."""
        return self.target.encode(text)

    def pieces(self, text: str) -> list[str]:
        """The source pieces of `text` (what `encode` numbers, without `</s>`; an unknown run as its text)."""
        return self.source.pieces(text)

    # -- decoding ---------------------------------------------------------------------------------------------
    def pieces_text(self, ids: Iterable[int]) -> str:
        """The target ids' text with every `▁` a space (no dummy-prefix rule: a piece's own text, as the forced
        prefix's table reads it) and a trailing run of byte pieces that does not finish a character held back.
        Stripped, it is how the decoding of any continuation starts, unless that decoding itself starts with a
        space (a first piece `▁▁…` or a byte piece of whitespace): what the streaming detokeniser shows."""
        return self.target.surface(ids)

    def finish_text(self, text: str) -> str:
        """Nothing to finish: SentencePiece's decoding is the text."""
        return text

    def decode(self, ids: Iterable[int]) -> str:
        """SentencePiece's `Decode` of target ids, as bergamot-translator writes a sentence."""
        return self.target.decode(ids)
