"""Convert Marian's SentencePiece model + vocab.json into `tokenizer.json` for the `tokenizers` library.

Why this shape: MarianTokenizer segments with the *source* SentencePiece model but numbers pieces by the joint
`vocab.json`. The Unigram model below holds only what the source model can produce: the unknown piece first (its
text is a character the normaliser deletes from every input, so Viterbi never matches it, with a score that does not
move the unknown-piece penalty), then every source piece. `source_ids.json` maps each Unigram id to its `vocab.json`
id: -1 for the unknown piece (a fused unknown run is looked up by its surface, as MarianTokenizer does) and `<unk>`
for source pieces missing from `vocab.json`. An earlier layout put the Unigram model in `vocab.json` order with a
placeholder in each of the ~64k slots the source model cannot produce; those placeholders alone cost ~14 MB of
resident memory in `tokenizers` (measured on the full-size benchmark vocabulary).

The target side (id → piece, for decoding) is `pieces.json`, the vocabulary in id order. Keeping the ~33k
target-only pieces in the Unigram model instead would put them in tokenizers' byte trie, which costs ~40 MB of
memory at run time for opus-mt-en-zh's vocabulary (measured with a synthetic vocabulary of that size).

Separate vocabularies (MarianTokenizer's `separate_vocabs`, `target_vocab.json`): `pieces.json` is the target
vocabulary (decoding, the output layer's ids), `source_pieces.json` the source one (vocab.json: what `source_ids`,
the language tokens and the special tokens number), and the manifest gains `source_vocab_size` and
`source_pieces_file`. Both must give `</s>`, `<unk>` and `<pad>` the same id: the engine and MarianTokenizer use
one number for each on both sides.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from pathlib import Path

from engine.errors import BuildError

# Candidates for the "unreachable" marker, in order of preference: characters that the model's own normaliser
# deletes. The choice is verified against the actual charsmap, never assumed.
_MARKER_CANDIDATES = ("\x01", "\x02", "\x03", "\x04", "\x05", "\x06", "\x07", "\x08")

_NORMAL, _UNKNOWN, _CONTROL, _USER_DEFINED, _UNUSED, _BYTE = 1, 2, 3, 4, 5, 6
PIECES_FILE = "pieces.json"
SOURCE_IDS_FILE = "source_ids.json"
SOURCE_PIECES_FILE = "source_pieces.json"
TARGET_VOCAB_FILE = "target_vocab.json"


@dataclass(frozen=True)
class TokenizerInfo:
    """What the runtime wrapper needs besides tokenizer.json (stored in the manifest)."""

    marker: str
    vocab_size: int
    unk_id: int
    eos_id: int
    pad_id: int
    special_tokens: list[dict]  # {"content", "id", "lstrip", "rstrip"}: split out of the text before SentencePiece
    control_pieces: list[str]  # target-side pieces SentencePiece decodes to nothing
    language_tokens: list[str]
    language_ids: dict[str, int]
    pieces_file: str  # the vocabulary in id order: target-side decoding and lookups of unknown runs
    source_ids_file: str  # Unigram id -> vocab.json id (-1: the unknown piece, looked up by its surface)
    clean_up_tokenization_spaces: bool
    source_only_pieces: int  # source pieces absent from vocab.json (encoded as <unk>, like MarianTokenizer)
    # separate vocabularies only (absent from the manifest otherwise, so shared ones are written as before)
    source_vocab_size: int | None = None
    source_pieces_file: str | None = None  # the source vocabulary in id order (lookups of unknown runs)

    def as_dict(self) -> dict:
        from dataclasses import asdict

        return {k: v for k, v in asdict(self).items() if v is not None or k not in _SEPARATE_ONLY}


_SEPARATE_ONLY = ("source_vocab_size", "source_pieces_file")


def _dense(vocab: dict[str, int], name: str) -> list[str]:
    """The pieces of `vocab` in id order; BuildError unless the ids are 0..N-1."""
    if sorted(vocab.values()) != list(range(len(vocab))):
        raise BuildError(f"{name} ids are not the dense range 0..N-1")
    return sorted(vocab, key=vocab.__getitem__)


def _load_spm(path: Path):
    # Generated protobuf code (its classes are made at import): looked up by name, so its attributes are Any
    model_pb2 = importlib.import_module("sentencepiece.sentencepiece_model_pb2")
    proto = model_pb2.ModelProto()
    proto.ParseFromString(path.read_bytes())
    return proto


def _pick_marker(charsmap: bytes) -> str:
    from tokenizers import normalizers

    if not charsmap:
        raise BuildError(
            "the source SentencePiece model has no precompiled normaliser; cannot build an exact tokenizer"
        )
    norm = normalizers.Precompiled(charsmap)
    for marker in _MARKER_CANDIDATES:
        if norm.normalize_str(f"a{marker}b") == "ab":
            return marker
    raise BuildError("no control character is deleted by this SentencePiece normaliser; cannot hide unreachable pieces")


def _normalizer(proto):
    from tokenizers import Regex, normalizers

    spec = proto.normalizer_spec
    steps = []
    if spec.precompiled_charsmap:
        steps.append(normalizers.Precompiled(spec.precompiled_charsmap))
    if spec.remove_extra_whitespaces:
        steps.append(normalizers.Replace(Regex(" {2,}"), " "))
        steps.append(normalizers.Replace(Regex("^ | $"), ""))
    if spec.add_dummy_prefix:
        steps.append(normalizers.Prepend(" "))
    if spec.escape_whitespaces:
        steps.append(normalizers.Replace(" ", "▁"))
    return normalizers.Sequence(steps)


def build_tokenizer_json(checkpoint_dir: Path, out_path: Path) -> TokenizerInfo:
    """Write `out_path` (tokenizer.json) for the checkpoint's source side and return the wrapper's metadata."""
    from tokenizers import Tokenizer, decoders, models
    from transformers import MarianTokenizer

    checkpoint_dir = Path(checkpoint_dir)
    hf = MarianTokenizer.from_pretrained(str(checkpoint_dir))
    source = _load_spm(checkpoint_dir / "source.spm")
    target = _load_spm(checkpoint_dir / "target.spm")
    for proto, side in ((source, "source"), (target, "target")):
        if proto.trainer_spec.model_type != 1:
            raise BuildError(f"the {side} SentencePiece model is not a unigram model")
        kinds = {p.type for p in proto.pieces}
        if _USER_DEFINED in kinds or _BYTE in kinds:
            raise BuildError(f"the {side} SentencePiece model uses user-defined or byte pieces (not supported)")

    vocab: dict[str, int] = json.loads((checkpoint_dir / "vocab.json").read_text(encoding="utf-8"))
    source_by_id = _dense(vocab, "vocab.json")
    target_vocab = vocab
    if hf.separate_vocabs:
        target_vocab = json.loads((checkpoint_dir / TARGET_VOCAB_FILE).read_text(encoding="utf-8"))
    by_id = _dense(target_vocab, TARGET_VOCAB_FILE) if hf.separate_vocabs else source_by_id
    size = len(by_id)
    for token in (hf.eos_token, hf.unk_token, hf.pad_token):
        if target_vocab.get(str(token)) != vocab.get(str(token)):
            raise BuildError(
                f"{token} is id {vocab.get(str(token))} in vocab.json but {target_vocab.get(str(token))} in "
                f"{TARGET_VOCAB_FILE}; Qiao needs one id for it on both sides"
            )

    marker = _pick_marker(source.normalizer_spec.precompiled_charsmap)
    source_pieces = [(p.piece, p.score) for p in source.pieces if p.type == _NORMAL]
    extras = [piece for piece, _ in source_pieces if piece not in vocab]
    unk_id = vocab[hf.unk_token]
    entries = [(marker, 0.0), *source_pieces]
    source_ids = [-1, *(vocab.get(piece, unk_id) for piece, _ in source_pieces)]

    tok = Tokenizer(models.Unigram(entries, unk_id=0, byte_fallback=False))
    tok.normalizer = _normalizer(source)
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.Strip(" ", 1, 0)])
    out_path.parent.mkdir(parents=True, exist_ok=True)
    tok.save(str(out_path), pretty=False)
    (out_path.parent / PIECES_FILE).write_text(json.dumps(by_id, ensure_ascii=False), encoding="utf-8")
    if hf.separate_vocabs:
        text = json.dumps(source_by_id, ensure_ascii=False)
        (out_path.parent / SOURCE_PIECES_FILE).write_text(text, encoding="utf-8")
    (out_path.parent / SOURCE_IDS_FILE).write_text(json.dumps(source_ids), encoding="utf-8")

    added = hf._added_tokens_decoder  # id -> AddedToken, exactly what MarianTokenizer splits on
    special = [
        {"content": t.content, "id": int(i), "lstrip": bool(t.lstrip), "rstrip": bool(t.rstrip)}
        for i, t in sorted(added.items())
    ]
    for s in special:
        if vocab.get(s["content"]) != s["id"]:
            raise BuildError(f"added token {s['content']!r} is not at its vocab.json id")
    control = sorted(p.piece for p in target.pieces if p.type == _CONTROL and p.piece in target_vocab)
    languages = [p for p in source_by_id if p.startswith(">>") and p.endswith("<<")]  # prepended to the source
    return TokenizerInfo(
        marker=marker,
        vocab_size=size,
        unk_id=unk_id,
        eos_id=vocab[hf.eos_token],
        pad_id=vocab[hf.pad_token],
        special_tokens=special,
        control_pieces=control,
        language_tokens=languages,
        language_ids={token: vocab[token] for token in languages},
        pieces_file=PIECES_FILE,
        source_ids_file=SOURCE_IDS_FILE,
        clean_up_tokenization_spaces=bool(hf.clean_up_tokenization_spaces),
        source_only_pieces=len(extras),
        source_vocab_size=len(source_by_id) if hf.separate_vocabs else None,
        source_pieces_file=SOURCE_PIECES_FILE if hf.separate_vocabs else None,
    )
