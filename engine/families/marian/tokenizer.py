"""MarianTokenizer, id for id, without sentencepiece or transformers.

`tokenizer.json` (written by `engine.families.marian.converter.tokenizer_json`) holds SentencePiece's normaliser and the
source
pieces; engine.text.unigram segments with them (the `tokenizers` library normalises); `source_ids.json` turns the
pieces'
indices into vocab.json ids. This wrapper adds the three things MarianTokenizer does around SentencePiece:

* special tokens (`</s>`, `<unk>`, `<pad>`) typed in the text are split out first, and a chunk that starts with a
  language code (`>>cmn_Hans<<`) keeps it as one token;
* SentencePiece fuses a run of unknown characters into one piece, which MarianTokenizer then looks up by its surface
  string in the joint vocabulary (so Chinese inside English input keeps its real ids);
* decoding follows the target side: control pieces vanish, `▁` becomes a space, the result is stripped.

With separate vocabularies (manifest `source_vocab_size`, `source_pieces_file`) `pieces.json` is the target
vocabulary (decoding, `id_to_piece`, `token_to_id`) and the source ids, unknown runs included, come from the source
one, as MarianTokenizer's `separate_vocabs` does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from itertools import pairwise
from pathlib import Path

import numpy as np

from engine.bundle.load_guard import opening
from engine.text.unigram import UnigramSegmenter


class MarianTokenizer:
    """Source-side encoding and target-side decoding for one model bundle."""

    def __init__(self, tokenizer_json: str | Path, info: dict, base: str | Path | None = None) -> None:
        """`info` is the manifest's tokenizer section; its other files are relative to `base` (the bundle folder;
        default: the folder of `tokenizer_json`)."""
        with opening(info.get("file", Path(tokenizer_json).name)):
            self._segmenter = UnigramSegmenter(tokenizer_json)
        folder = Path(base) if base is not None else Path(tokenizer_json).parent
        self._pieces_path = folder / info["pieces_file"]
        ids_file = folder / info["source_ids_file"]
        self.vocab_size: int = int(info["vocab_size"])  # the target's (decoding)
        self.source_vocab_size: int = int(info.get("source_vocab_size", self.vocab_size))
        source_pieces = info.get("source_pieces_file")
        self._source_pieces_path = folder / source_pieces if source_pieces else None
        self._source_label = source_pieces
        self._source_index: dict[str, int] | None = None  # source piece → id, read at the first unknown run
        with opening(info["source_ids_file"]):
            self._source_ids = np.asarray(json.loads(ids_file.read_text(encoding="utf-8")), dtype=np.int64)
            if self._source_ids.shape != (self._segmenter.size,):
                raise ValueError(f"{ids_file.name} does not match the tokenizer's vocabulary")
            ids = self._source_ids
            if ids.size and not (ids.min() >= -1 and ids.max() < self.source_vocab_size):
                raise ValueError(f"{ids_file.name} has ids outside the vocabulary of {self.source_vocab_size}")
        self._pieces_label = info["pieces_file"]
        self.unk_id: int = int(info["unk_id"])
        self.eos_id: int = int(info["eos_id"])
        self.pad_id: int = int(info["pad_id"])
        self.language_tokens: list[str] = list(info.get("language_tokens", []))
        self._language_ids: dict[str, int] = dict(info.get("language_ids", {}))
        self._special = {s["content"]: s for s in info["special_tokens"]}
        self._skip_ids = {int(s["id"]) for s in info["special_tokens"]} | {self.unk_id, self.eos_id, self.pad_id}
        self._control = set(info.get("control_pieces", []))
        self._clean_up = bool(info.get("clean_up_tokenization_spaces", False))
        contents = sorted(self._special, key=len, reverse=True)
        self._split_re = re.compile("(" + "|".join(map(re.escape, contents)) + ")") if contents else None
        self._blob: str | None = None  # every piece, concatenated in id order …
        self._offsets: np.ndarray | None = None  # … and where each starts: ~1.5 MB instead of 65k str objects
        self._ids: dict[str, int] | None = None
        self._special_ids: frozenset[int] | None = None  # made on first use

    @classmethod
    def from_manifest(cls, manifest) -> MarianTokenizer:
        """The tokenizer of a loaded bundle (engine.bundle.manifest.Manifest), its files read from the bundle folder."""
        info = manifest.tokenizer
        return cls(manifest.path(info["file"]), info, base=manifest.bundle_dir)

    def load_vocabulary(self) -> None:
        """Read pieces.json (and source_pieces.json) now rather than at first use, so a damaged file fails while
        loading."""
        self._pieces_blob()
        if self._source_pieces_path is not None:
            self._source_ids_by_piece()

    @property
    def separate_vocabularies(self) -> bool:
        """Whether source ids number another vocabulary than target ids (then `encode` ids are no target ids)."""
        return self._source_pieces_path is not None

    @property
    def cleans_up(self) -> bool:
        """Whether decoding applies transformers' English clean-up (then text can change at sentence end)."""
        return self._clean_up

    # -- vocabulary -------------------------------------------------------------------------------------------
    def _load_pieces(self) -> list[str]:
        with opening(self._pieces_label):
            pieces = json.loads(self._pieces_path.read_text(encoding="utf-8"))
            if not isinstance(pieces, list) or not all(isinstance(p, str) for p in pieces):
                raise ValueError(f"{self._pieces_path.name} is not a list of strings")
            if len(pieces) != self.vocab_size:
                raise ValueError(
                    f"{self._pieces_path.name} has {len(pieces)} pieces, the manifest says {self.vocab_size}"
                )
        return pieces

    def _pieces_blob(self) -> tuple[str, np.ndarray]:
        """pieces.json, read once for both directions of lookup."""
        if self._blob is None:
            pieces = self._load_pieces()
            self._offsets = np.concatenate([[0], np.cumsum([len(p) for p in pieces])]).astype(np.int64)
            self._blob = "".join(pieces)
        return self._blob, self._offsets  # type: ignore[return-value]

    @property
    def special_ids(self) -> frozenset[int]:
        """Target ids whose piece is no text of its own (base.Tokenizer): `</s>`, `<unk>`, `<pad>`, the control
        pieces, the language tokens (`>>cmn_Hans<<`) and any other `<…>` piece."""
        if self._special_ids is None:
            skip, control = self._skip_ids, self._control
            blob, offsets = self._pieces_blob()
            bounds = offsets.tolist()
            self._special_ids = frozenset(
                i
                for i, (a, b) in enumerate(pairwise(bounds))
                if i in skip or blob[a:b] in control or _is_control(blob[a:b])
            )
        return self._special_ids

    def id_to_piece(self, idx: int) -> str:
        blob, offsets = self._pieces_blob()
        return blob[offsets[idx] : offsets[idx + 1]]

    def token_to_id(self, piece: str) -> int:
        """The vocab.json id of `piece`, or `<unk>`'s id, like MarianTokenizer's lookup. A language token answers
        its source id (what is prepended to the source); everything else the target's: to spell target text use
        `target_token_to_id`."""
        if piece in self._language_ids:
            return self._language_ids[piece]
        return self.target_token_to_id(piece)

    def target_token_to_id(self, piece: str) -> int:
        """The target vocabulary's id of `piece` (pieces.json), or `<unk>`'s: the ids a decoder writes, so what a
        glossary term or a forced prefix is spelled with (with separate vocabularies source ids number others)."""
        if self._ids is None:  # only target spelling and odd language codes need the reverse table
            blob, offsets = self._pieces_blob()
            bounds = offsets.tolist()
            self._ids = {blob[a:b]: i for i, (a, b) in enumerate(pairwise(bounds))}
        return self._ids.get(piece, self.unk_id)

    def encode_target(self, text: str) -> list[int]:
        """`text` as target ids, no `</s>`: the source SentencePiece model's pieces looked up in the target
        vocabulary (a bundle has no target model), `<unk>` where it lacks one. With a shared vocabulary this is
        `encode(text, add_eos=False)` for plain text; with separate ones `encode` gives source ids."""
        return [self.target_token_to_id(piece) for piece in self.pieces(text)]

    def _source_ids_by_piece(self) -> dict[str, int]:
        """source_pieces.json as piece → id (the source side's vocab.json again)."""
        if self._source_index is None:
            assert self._source_pieces_path is not None and self._source_label is not None
            with opening(self._source_label):
                pieces = json.loads(self._source_pieces_path.read_text(encoding="utf-8"))
                if not isinstance(pieces, list) or not all(isinstance(p, str) for p in pieces):
                    raise ValueError(f"{self._source_pieces_path.name} is not a list of strings")
                if len(pieces) != self.source_vocab_size:
                    raise ValueError(
                        f"{self._source_pieces_path.name} has {len(pieces)} pieces, "
                        f"the manifest says {self.source_vocab_size}"
                    )
            self._source_index = {piece: i for i, piece in enumerate(pieces)}
        return self._source_index

    def source_token_to_id(self, piece: str) -> int:
        """The source vocabulary's id of `piece` (vocab.json), or `<unk>`'s: what an unknown run is encoded as."""
        if self._source_pieces_path is None:
            return self.token_to_id(piece)
        if piece in self._language_ids:
            return self._language_ids[piece]
        return self._source_ids_by_piece().get(piece, self.unk_id)

    def language_id(self, token: str) -> int:
        """Id of a target-language token such as `>>cmn_Hans<<`; raises KeyError if the model lacks it."""
        if token not in self._language_ids:
            raise KeyError(f"this model has no language token {token}")
        return self._language_ids[token]

    # -- encoding ---------------------------------------------------------------------------------------------
    def _chunks(self, text: str) -> list[tuple[str, bool]]:
        """Split on special tokens the way transformers' PreTrainedTokenizer.tokenize does."""
        if self._split_re is None:
            return [(text, False)]
        parts = self._split_re.split(text)
        chunks: list[tuple[str, bool]] = [(p, i % 2 == 1) for i, p in enumerate(parts)]
        for i, (part, is_special) in enumerate(chunks):
            if not is_special:
                continue
            spec = self._special[part]
            if spec["rstrip"] and i + 1 < len(chunks) and chunks[i + 1][0]:
                chunks[i + 1] = (chunks[i + 1][0].lstrip(), False)
            if spec["lstrip"] and i > 0 and chunks[i - 1][0]:
                chunks[i - 1] = (chunks[i - 1][0].rstrip(), False)
        return [c for c in chunks if c[0]]

    def encode_batch(self, texts: Sequence[str], add_eos: bool = True) -> list[list[int]]:
        """Ids exactly as `MarianTokenizer(text).input_ids` (with `add_eos`)."""
        plans: list[list[tuple[str, int]]] = []
        pending: list[str] = []
        for text in texts:
            plan: list[tuple[str, int]] = []
            for chunk, is_special in self._chunks(text):
                if is_special:
                    plan.append(("id", self._special[chunk]["id"]))
                    continue
                if chunk.startswith(">>"):
                    end = chunk.find("<<")
                    if end != -1:
                        plan.append(("id", self.source_token_to_id(chunk[: end + 2])))
                        chunk = chunk[end + 2 :]
                plan.append(("spm", len(pending)))
                pending.append(chunk)
            plans.append(plan)
        segmented = [self._segmenter.segment(chunk) for chunk in pending]
        out: list[list[int]] = []
        for plan in plans:
            ids: list[int] = []
            for kind, value in plan:
                if kind == "id":
                    ids.append(value)
                else:
                    ids.extend(self._map_ids(segmented[value]))
            if add_eos:
                ids.append(self.eos_id)
            out.append(ids)
        return out

    def encode(self, text: str, add_eos: bool = True) -> list[int]:
        return self.encode_batch([text], add_eos=add_eos)[0]

    def pieces(self, text: str) -> list[str]:
        """The SentencePiece pieces of `text` (no special-token handling): what `encode` maps to ids."""
        return [piece for piece, _ in self._segmenter.segment(text)]

    def _map_ids(self, pieces: list[tuple[str, int]]) -> list[int]:
        """Unigram indices → vocab.json ids; a fused unknown run is looked up by its surface, as Marian does."""
        mapped = self._source_ids[[index for _, index in pieces]]
        if mapped.size and mapped.min() < 0:
            for j in np.flatnonzero(mapped < 0).tolist():
                mapped[j] = self.source_token_to_id(pieces[j][0])
        return mapped.tolist()

    # -- decoding ---------------------------------------------------------------------------------------------
    def pieces_text(self, ids: Iterable[int]) -> str:
        """Unstripped text of target ids (specials skipped); the streaming detokeniser builds on this."""
        skip, control, size = self._skip_ids, self._control, self.vocab_size
        parts = []
        for i in ids:
            i = int(i)
            if i in skip or i < 0 or i >= size:
                continue
            piece = self.id_to_piece(i)
            if piece not in control:
                parts.append(piece)
        return "".join(parts).replace("▁", " ")

    def finish_text(self, text: str) -> str:
        """Final clean-up MarianTokenizer applies to decoded text."""
        text = text.strip()
        return clean_up_tokenization(text) if self._clean_up else text

    def decode(self, ids: Iterable[int]) -> str:
        """`MarianTokenizer.decode(ids, skip_special_tokens=True)`."""
        return self.finish_text(self.pieces_text(ids))


def clean_up_tokenization(text: str) -> str:
    """transformers' `clean_up_tokenization` (applied only when the checkpoint asks for it)."""
    return (
        text.replace(" .", ".")
        .replace(" ?", "?")
        .replace(" !", "!")
        .replace(" ,", ",")
        .replace(" ' ", "'")
        .replace(" n't", "n't")
        .replace(" 'm", "'m")
        .replace(" 's", "'s")
        .replace(" 've", "'ve")
        .replace(" 're", "'re")
    )


def _is_control(piece: str) -> bool:
    """A Marian vocabulary piece that names a token rather than spelling text: `<…>` or a language code `>>…`."""
    return (piece.startswith("<") and piece.endswith(">")) or piece.startswith(">>")
