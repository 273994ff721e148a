"""One SentencePiece unigram model, encoding and decoding id for id and character for character as SentencePiece
does, without sentencepiece: what Marian (and so bergamot-translator) calls for every line.

The file is what engine.families.bergamot.converter.tokenizer writes: the pieces in id order with their float32 scores
and types, the special ids, byte fallback, and the normaliser as plain `{from: to}` rules.

* Normalising is SentencePiece's `Normalizer::Normalize` (normalizer.cc): at each position a user-defined piece
  that starts there is kept as typed (the longest one), else the longest rule that starts there replaces its key,
  else the character stays; leading, trailing and repeated spaces are dropped (`remove_extra_whitespaces`), a space
  is put in front (`add_dummy_prefix`) and spaces become `▁` (`escape_whitespaces`). A lone surrogate is what its
  three UTF-8 bytes would be there: three U+FFFD.
* Segmenting is engine.text.unigram's Viterbi (SentencePiece's `EncodeOptimized`) over the normal and user-defined
  pieces; a user-defined piece scores `length in bytes × max(FLT_MIN, highest normal score) − 0.1` (so it nearly
  always wins), an uncovered character the lowest normal score − 10. A run of unknown characters is one `<unk>`,
  or, with byte fallback, the `<0xXX>` pieces of its UTF-8 bytes. Marian's SentencePiece compares a piece's path
  sum in float64 before storing it as float32; the sentencepiece 0.2 package compares the float32 sums, so the two
  split some near ties differently (checked against bergamot-translator itself: one line in 900 of a trained
  1,600-piece vocabulary, and lines of digits in others). The 0.2 package also scores user-defined pieces
  otherwise (only a hand-made model with scores near zero can tell).
* Decoding is `SentencePieceProcessor::Decode` as bergamot-translator's SentencePiece (browsermt/sentencepiece,
  0.1.9x) runs it: control pieces vanish, `<unk>` reads " ⁇ ", runs of byte pieces are decoded as UTF-8 with one
  U+FFFD for each byte that starts no valid character, `▁` becomes a space, and while the text is still empty each
  piece loses one leading `▁` (the dummy prefix). SentencePiece 0.2 drops only the first one when
  `remove_extra_whitespaces` is off; with it on (the default, and every Firefox model) the two agree.
"""

from __future__ import annotations

import base64
import json
import sys
from array import array
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from engine.text.unigram import UNK_PENALTY, UnigramSegmenter

FORMAT = "qiao-sentencepiece"
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
SPACE = "▁"
MARIAN = "marian"  # browsermt/sentencepiece, 0.1.9x: what Marian and bergamot-translator are built with
PACKAGE = "package"  # the sentencepiece 0.2 Python package (the build extra's)
_FLT_MIN = float(np.finfo(np.float32).tiny)  # SentencePiece starts its highest score there, not at -FLT_MAX
_SURROGATE = "\ufffd" * 3  # a lone surrogate's three UTF-8 bytes, each invalid on its own
_MEMO_LIMIT = 1 << 16  # trie steps remembered (CharsMap._next): ~10 MB at most


class CharsMap:
    """SentencePiece's precompiled character map, read where it is stored: a Darts-clone double array (built from
    a DAWG: keys with equal endings share units) over UTF-8 bytes, whose leaves point at NUL-terminated
    replacements. Unpacked into a dict, nmt_nfkc's map is ~225,000 rules (mostly Hangul jamo sequences) and tens of
    megabytes of Python objects; walked in place it is its ~240 kB blob and a cache of the characters seen."""

    def __init__(self, blob: bytes) -> None:
        """ValueError unless `blob` is a well-formed map: every leaf inside the array, every replacement inside
        the blob and NUL-terminated."""
        self._units = array("I")
        self._pool = b""
        self._root = -1
        self._chars: dict[str, tuple[int, int]] = {}  # character → (base after it, its replacement's offset or -1)
        # (base, character) → `_step`'s answer past the first character: the trie never changes, and text repeats
        # the few pairs it meets (a letter followed by another: NFKC keys start with most letters)
        self._next: dict[tuple[int, str], tuple[int, int]] = {}
        self._values: dict[int, str] = {}
        if not blob:
            return
        if len(blob) <= 4:
            raise ValueError("the precompiled character map is broken")
        size = int.from_bytes(blob[:4], "little")
        if not 0 < size < len(blob) or size % 4:
            raise ValueError("the character map's trie does not fit its blob")
        units = np.frombuffer(blob, dtype="<u4", count=size // 4, offset=4).astype(np.int64)
        pool = blob[4 + size :]
        nodes = np.flatnonzero(((units >> 31) == 0) & (((units >> 8) & 1) == 1))  # units with a leaf below
        leaves = nodes ^ _offsets(units[nodes])
        if leaves.size:
            if int(leaves.max()) >= units.size or not bool(((units[leaves] >> 31) == 1).all()):
                raise ValueError("the character map's trie points outside itself")
            last_nul = pool.rfind(b"\0")
            if int((units[leaves] & 0x7FFFFFFF).max()) > last_nul:
                raise ValueError("a replacement lies outside the character map")
        self._units = array("I", units.astype(np.uint32).tobytes()) if sys.byteorder == "little" else array("I")
        if sys.byteorder != "little":
            self._units.extend(units.tolist())
        self._pool = pool
        self._root = int(_offsets(units[:1])[0])

    def _value(self, offset: int) -> str:
        found = self._values.get(offset)
        if found is None:
            found = self._pool[offset : self._pool.index(b"\0", offset)].decode("utf-8")
            self._values[offset] = found
        return found

    def _step(self, base: int, ch: str) -> tuple[int, int]:
        """Follow `ch`'s UTF-8 bytes from `base`: (-1, -1) when no key goes on so, else (the base after it, the
        offset of the replacement of the key that ends there or -1)."""
        if "\ud800" <= ch <= "\udfff":  # a lone surrogate: bytes no key holds
            return -1, -1
        units = self._units
        n = len(units)
        unit = 0
        for b in ch.encode("utf-8"):
            pos = base ^ b
            if pos >= n:
                return -1, -1
            unit = units[pos]
            if unit & 0x800000FF != b:
                return -1, -1
            base = pos ^ ((unit >> 10) << ((unit & 0x200) >> 6))
        return base, (units[base] & 0x7FFFFFFF if (unit >> 8) & 1 else -1)

    def inert_ascii(self) -> frozenset[str]:
        """The printable ASCII characters (space included) that stay themselves however ASCII text goes on: the
        key of each alone, if it is one, maps to it, and no key goes on from it with an ASCII character."""
        chars = [chr(code) for code in range(0x20, 0x7F)]
        if self._root < 0:
            return frozenset(chars)
        steps = [self._step(self._root, ch) for ch in chars]
        units = np.frombuffer(self._units, dtype=np.uint32)
        labels = np.arange(1, 0x80)
        at = np.array([max(base, 0) for base, _ in steps])[:, None] ^ labels  # each node's ASCII children, if any
        child = (units[np.minimum(at, len(units) - 1)] & 0x800000FF) == labels
        going_on = (child & (at < len(units))).any(axis=1)
        return frozenset(
            ch
            for ch, (base, value), more in zip(chars, steps, going_on.tolist())
            if (base < 0 or not more) and (value < 0 or self._value(value) == ch)
        )

    def match(self, text: str, i: int) -> tuple[str, int] | None:
        """(replacement, characters replaced) of the longest key at `text[i:]`, or None."""
        if self._root < 0:
            return None
        ch = text[i]
        entry = self._chars.get(ch)
        if entry is None:
            entry = self._chars[ch] = self._step(self._root, ch)
        base, value = entry
        best = (value, 1) if value >= 0 else None
        j, n = i + 1, len(text)
        memo = self._next
        while base >= 0 and j < n:
            key = (base, text[j])
            found = memo.get(key)
            if found is None:
                if len(memo) >= _MEMO_LIMIT:  # bounded whatever the text: a rare long run of unusual pairs
                    memo.clear()
                found = memo[key] = self._step(base, text[j])
            base, value = found
            j += 1
            if value >= 0:
                best = (value, j - i)
        return (self._value(best[0]), best[1]) if best is not None else None


def _offsets(units: np.ndarray) -> np.ndarray:
    """Darts-clone's `offset()` of each unit."""
    return (units >> 10) << ((units & 0x200) >> 6)


class Normalizer:
    """SentencePiece's normaliser: its character map, the whitespace flags, and the user-defined pieces it leaves
    as they are."""

    def __init__(self, spec: dict, user_defined: Iterable[str] = ()) -> None:
        charsmap = spec.get("charsmap", "")
        if not isinstance(charsmap, str):
            raise ValueError("the normaliser's character map is not base64 text")
        self._map = CharsMap(base64.b64decode(charsmap, validate=True))
        self._user = frozenset(user_defined)
        self._user_longest: dict[str, int] = {}  # first character → the longest user-defined piece it starts
        for piece in self._user:
            self._user_longest[piece[0]] = max(len(piece), self._user_longest.get(piece[0], 0))
        self.add_dummy_prefix = bool(spec["add_dummy_prefix"])
        self.remove_extra_whitespaces = bool(spec["remove_extra_whitespaces"])
        self.escape_whitespaces = bool(spec["escape_whitespaces"])
        # ASCII that normalises to itself character for character (`_plain`): no user-defined piece starts there
        self._inert = self._map.inert_ascii() - {piece[0] for piece in self._user}

    def _prefix(self, text: str, i: int) -> tuple[str, int]:
        """(what the text at `i` becomes, how many characters that consumes): SentencePiece's NormalizePrefix."""
        ch = text[i]
        most = self._user_longest.get(ch)
        if most:
            for end in range(min(len(text), i + most), i, -1):
                if text[i:end] in self._user:
                    return text[i:end], end - i
        found = self._map.match(text, i)
        if found is not None:
            return found
        if "\ud800" <= ch <= "\udfff":
            return _SURROGATE, 1
        return ch, 1

    def __call__(self, text: str) -> str:
        if text.isascii() and self._inert.issuperset(text):
            return self._plain(text)
        n = len(text)
        i = 0
        squeeze = self.remove_extra_whitespaces
        if squeeze:
            while i < n:
                piece, used = self._prefix(text, i)
                if piece != " ":
                    break
                i += used
        if i >= n:
            return ""
        space = SPACE if self.escape_whitespaces else " "
        out = [space] if self.add_dummy_prefix else []
        prev_space = squeeze
        while i < n:
            piece, used = self._prefix(text, i)
            if prev_space:
                piece = piece.lstrip(" ")
            if piece:
                out.append(piece.replace(" ", SPACE) if self.escape_whitespaces else piece)
                prev_space = piece.endswith(" ")
            i += used
            if not squeeze:
                prev_space = False
        normalized = "".join(out)
        return normalized.rstrip(space) if squeeze else normalized

    def _plain(self, text: str) -> str:
        """`self(text)` for text whose every character stays itself (`_inert`): only the whitespace rules apply.
        Most English text is such; character by character it cost ~0.5 µs a character (45 µs a sentence)."""
        if self.remove_extra_whitespaces:
            text = " ".join(word for word in text.split(" ") if word)
        if not text:
            return ""
        if self.add_dummy_prefix:
            text = " " + text
        return text.replace(" ", SPACE) if self.escape_whitespaces else text


class Vocabulary:
    """One SentencePiece model: `encode(text)` → ids, `decode(ids)` → text, pieces by id and back."""

    def __init__(self, data: dict, *, sentencepiece: str = MARIAN) -> None:
        """`data`: the parsed JSON file (see the module docstring); ValueError if it is not one. `sentencepiece`:
        whose SentencePiece to be: MARIAN (0.1.9x, what bergamot-translator runs; the default) or PACKAGE (the
        `sentencepiece` 0.2 package, the oracle tests can run: it rounds path sums before comparing them, and
        drops only one dummy `▁` when whitespace is kept)."""
        if sentencepiece not in (MARIAN, PACKAGE):
            raise ValueError(f"sentencepiece is {MARIAN!r} or {PACKAGE!r}, not {sentencepiece!r}")
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != 1:
            raise ValueError("not a Qiao SentencePiece vocabulary (format, version)")
        pieces, scores, types = data["pieces"], data["scores"], data["types"]
        if not (isinstance(pieces, list) and all(isinstance(p, str) and p for p in pieces)):
            raise ValueError("the vocabulary's pieces are not a list of strings")
        if not (isinstance(types, list) and isinstance(scores, list) and len(types) == len(scores) == len(pieces)):
            raise ValueError("the vocabulary's scores and types do not match its pieces")
        self.size = len(pieces)
        self.unk_id = _id(data, "unk_id", self.size)
        self.eos_id = _id(data, "eos_id", self.size)
        self.byte_fallback = bool(data["byte_fallback"])
        self.unk_surface = str(data["unk_surface"])
        self._pieces: list[str] = pieces
        self._types = bytes(types)  # ValueError for a type outside 0..255
        normal = [float(s) for s, t in zip(scores, types, strict=True) if t == NORMAL]
        if types[self.unk_id] != UNKNOWN or types[self.eos_id] != CONTROL or not normal:
            raise ValueError("the vocabulary's `<unk>`, `</s>` or normal pieces are not where it says")
        f32 = np.float32
        highest = max(_FLT_MIN, *normal)
        unk_score = float(f32(min(normal)) - f32(UNK_PENALTY))
        index: dict[str, int] = {}  # what the search may match: normal and user-defined pieces
        user: list[str] = []
        values = [0.0] * self.size
        for i, (piece, score, kind) in enumerate(zip(pieces, scores, types, strict=True)):
            if kind == NORMAL:
                values[i] = float(f32(score))
            elif kind == USER_DEFINED:  # `length * max_score_ - 0.1`: float32 product, double difference
                values[i] = float(f32(f32(len(piece.encode("utf-8"))) * f32(highest))) - 0.1
                user.append(piece)
            else:
                continue
            index.setdefault(piece, i)
        self._index = index
        self._unused = {p: i for i, p in enumerate(pieces) if types[i] == UNUSED}
        text_kinds = (NORMAL, USER_DEFINED, UNUSED)
        self._reserved = {p: i for i, p in enumerate(pieces) if types[i] not in text_kinds}  # a few hundred at most
        self.normalizer = Normalizer(data["normalizer"], user)
        denorm = data.get("denormalizer")
        self._denormalizer = Normalizer(denorm) if denorm else None
        self._segmenter = UnigramSegmenter.from_pieces(
            index, values, self.unk_id, unk_score, self.normalizer, unrounded=sentencepiece == MARIAN
        )
        self._strip_every_piece = sentencepiece == MARIAN or self.normalizer.remove_extra_whitespaces
        self._byte_ids: list[int] = []
        if self.byte_fallback:  # KeyError: a byte piece is missing
            self._byte_ids = [self._reserved[f"<0x{b:02X}>"] for b in range(256)]
            if any(types[i] != BYTE for i in self._byte_ids):
                raise ValueError("the vocabulary's byte pieces are not of the byte type")
        self._byte_of = {i: b for b, i in enumerate(self._byte_ids)}
        # The ids that are no piece of their own text (byte, control, unknown: a few hundred at most): ids that
        # avoid them decode without those rules, in a few C loops (`_plain`)
        self._special_ids = frozenset(i for i, kind in enumerate(self._types) if kind in (BYTE, CONTROL, UNKNOWN))
        self._streamed: tuple[tuple[int, ...], str] = ((), "")  # `surface`'s last settled ids and their text

    @classmethod
    def from_file(cls, path: str | Path, *, sentencepiece: str = MARIAN) -> Vocabulary:
        return cls(json.loads(Path(path).read_bytes()), sentencepiece=sentencepiece)

    # -- pieces -------------------------------------------------------------------------------------------------
    def id_to_piece(self, idx: int) -> str:
        return self._pieces[idx]

    def piece_type(self, idx: int) -> int:
        return self._types[idx]

    def piece_to_id(self, piece: str) -> int:
        """SentencePiece's PieceToId: the reserved pieces (control, `<unk>`, bytes) first, then the others;
        `<unk>`'s id when there is none."""
        found = self._reserved.get(piece)
        return found if found is not None else self.text_piece_to_id(piece)

    def text_piece_to_id(self, piece: str) -> int:
        """The id of a piece that stands for its own text (normal, user-defined, unused), else `<unk>`'s: what
        spelling a text in pieces may use (never `</s>`, a byte or `<unk>` by their names)."""
        found = self._index.get(piece)
        if found is None:
            found = self._unused.get(piece, self.unk_id)
        return found

    # -- encoding -----------------------------------------------------------------------------------------------
    def encode(self, text: str) -> list[int]:
        """SentencePiece's `Encode(text)` ids (no `</s>`)."""
        ids: list[int] = []
        unk, byte_ids = self.unk_id, self._byte_ids
        for piece, k in self._segmenter.segment(text):
            if k == unk and byte_ids:
                ids.extend(byte_ids[b] for b in piece.encode("utf-8", "surrogatepass"))
            else:
                ids.append(k)
        return ids

    def pieces(self, text: str) -> list[str]:
        """SentencePiece's `Encode(text, out_type=str)`: each piece as matched (an unknown run as its own text, or
        its byte pieces' names)."""
        out: list[str] = []
        unk, byte_ids, names = self.unk_id, self._byte_ids, self._pieces
        for piece, k in self._segmenter.segment(text):
            if k == unk and byte_ids:
                out.extend(names[byte_ids[b]] for b in piece.encode("utf-8", "surrogatepass"))
            else:
                out.append(piece)
        return out

    def normalize(self, text: str) -> str:
        return self.normalizer(text)

    # -- decoding -----------------------------------------------------------------------------------------------
    def decode(self, ids: Iterable[int]) -> str:
        """SentencePiece's `Decode(ids)` (ids outside the vocabulary are skipped, where SentencePiece refuses)."""
        ids = ids if isinstance(ids, (list, tuple)) else list(ids)
        if self._plain(ids):  # the usual sentence: 36 -> 9 µs right after a model run
            text = self._plain_text(ids)
            return self._denormalizer(text) if self._denormalizer is not None else text
        return self._render(ids, strip_dummy=True, whole=True)

    def _plain(self, ids: list[int] | tuple[int, ...]) -> bool:
        """Whether every id is in the vocabulary and a piece of its own text (none of `_special_ids`)."""
        return bool(ids) and self._special_ids.isdisjoint(ids) and min(ids) >= 0 and max(ids) < self.size

    def _plain_text(self, ids: list[int] | tuple[int, ...]) -> str:
        """`_text(ids, strip_dummy=True, whole=True)[0]` for `_plain` ids: while the text is still empty each piece
        loses one leading `▁` (only the first one in 0.2 with whitespace kept), then the pieces as they are."""
        pieces = self._pieces
        strip = self.normalizer.add_dummy_prefix or self.normalizer.remove_extra_whitespaces
        head, k = "", 0
        while strip and k < len(ids):
            head = pieces[ids[k]]
            k += 1
            if head.startswith(SPACE):
                head = head[1:]
                strip = self._strip_every_piece
            if head:
                break
        return (head + "".join(map(pieces.__getitem__, ids[k:]))).replace(SPACE, " ")

    def surface(self, ids: Iterable[int]) -> str:
        """The text of `ids` without the dummy-prefix rule (each `▁` a space) and without a trailing run of byte
        pieces that could still become a character: a prefix of what more ids would give, for streaming.

        A stream asks again with one more id each step: the text of the last call's ids up to its last settled
        piece (one that no later id changes: not a byte) is remembered, so only the ids after it are rendered:
        a 28-id stream 0.10 -> 0.04 ms, a 200-id one 4.3 -> 0.4 ms (rendered whole each step, it was quadratic).
        One more id that is a piece of its own text, the usual step, is added to the remembered text directly."""
        ids = ids if isinstance(ids, tuple) else tuple(ids)
        known, known_text = self._streamed
        last = len(known)
        if len(ids) == last + 1 and ids[:last] == known:  # one more id, the usual step: no `_text` call
            i = ids[last]
            if 0 <= i < self.size and i not in self._special_ids:
                text = known_text + self._pieces[i].replace(SPACE, " ")
                self._streamed = (ids, text)
                return self._denormalizer(text) if self._denormalizer is not None else text
        start = len(known) if known and ids[: len(known)] == known else 0
        text, settled, settled_text = self._text(ids[start:] if start else ids, False, False)
        if settled:
            prefix = (known, known_text) if start else ((), "")
            self._streamed = (prefix[0] + ids[start : start + settled], prefix[1] + settled_text)
        text = known_text + text if start else text
        return self._denormalizer(text) if self._denormalizer is not None else text

    def _render(self, ids: Iterable[int], *, strip_dummy: bool, whole: bool) -> str:
        text = self._text(ids, strip_dummy, whole)[0]
        return self._denormalizer(text) if self._denormalizer is not None else text

    def _text(self, ids: Iterable[int], strip_dummy: bool, whole: bool) -> tuple[str, int, str]:
        """(the text of `ids` before denormalising, how many leading ids end on a settled piece, their text)."""
        types, pieces, size = self._types, self._pieces, self.size
        strip_dummy = strip_dummy and (self.normalizer.add_dummy_prefix or self.normalizer.remove_extra_whitespaces)
        parts: list[str] = []
        empty = True  # nothing written yet
        pending = bytearray()
        settled = settled_parts = 0
        for n, i in enumerate(ids, 1):
            i = int(i)
            if not 0 <= i < size:
                continue
            kind = types[i]
            if kind == BYTE:
                pending.append(self._byte_of[i])
                continue
            if pending:
                parts.append(decode_bytes(pending))
                pending.clear()
                empty = False
            settled = n
            if kind == CONTROL:
                settled_parts = len(parts)
                continue
            if kind == UNKNOWN:
                text = self.unk_surface
            else:
                text = pieces[i]
                if empty and strip_dummy and text.startswith(SPACE):
                    text = text[1:]
                    strip_dummy = self._strip_every_piece  # 0.2 with whitespace kept: only the first one goes
                text = text.replace(SPACE, " ")
            if text:
                parts.append(text)
                empty = False
            settled_parts = len(parts)
        settled_text = "".join(parts[:settled_parts])
        if pending:
            parts.append(decode_bytes(pending if whole else pending[: complete_bytes(pending)]))
        return "".join(parts), settled, settled_text


def _id(data: dict, key: str, size: int) -> int:
    value = data.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < size:
        raise ValueError(f"the vocabulary's {key} is not an id")
    return value


def _char_length(lead: int) -> int:
    """How many bytes a UTF-8 character starting with `lead` has (SentencePiece's DecodeUTF8); 0: none."""
    if lead < 0x80:
        return 1
    if lead & 0xE0 == 0xC0:
        return 2
    if lead & 0xF0 == 0xE0:
        return 3
    if lead & 0xF8 == 0xF0:
        return 4
    return 0


def decode_bytes(data: bytes | bytearray) -> str:
    """Bytes as SentencePiece decodes byte pieces: valid UTF-8 characters, and U+FFFD for each byte that starts
    none (a character cut short gives one per byte, where Python's decoder would give one in all)."""
    out: list[str] = []
    i, n = 0, len(data)
    while i < n:
        size = _char_length(data[i])
        if size and i + size <= n:
            try:
                out.append(bytes(data[i : i + size]).decode("utf-8"))
            except UnicodeDecodeError:
                pass
            else:
                i += size
                continue
        out.append("\ufffd")
        i += 1
    return "".join(out)


def complete_bytes(data: bytes | bytearray) -> int:
    """How many leading bytes of `data` decode the same whatever bytes follow: all but a last character that is
    cut short and could still be completed."""
    n = len(data)
    for start in range(max(0, n - 3), n):
        size = _char_length(data[start])
        if size > n - start and all(b & 0xC0 == 0x80 for b in data[start + 1 :]):
            return start
    return n
