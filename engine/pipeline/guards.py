"""Guards against known Marian failures: flag a suspicious sentence, keep subtitle artefacts out of the output.

`check_sentence` looks at one decoded sentence and returns its flags (engine.results.Flag), each with an English
sentence naming the offending text: output far longer or shorter than the source suggests, numbers / URLs /
e-mail addresses / inline code / placeholders of the source missing or changed, a repetition loop the search cut,
glossary terms it could not place. `artefact_bans` gives the bad-word token sequences that keep the OPUS/TED
subtitle artefacts ("(掌声)", "(笑声)", "(Applause)" …) out of the search unless the source speaks of them, and
`strip_artefacts` removes any that got through anyway (a last resort after decoding).
"""

from __future__ import annotations

import bisect
import re
import unicodedata
import weakref
from array import array
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Protocol

import numpy as np

from engine.results import FLAG_ARTEFACT, FLAG_CONSTRAINT, FLAG_LENGTH, FLAG_NUMBERS, FLAG_REPETITION, Flag
from engine.text.protected import protected_matches
from engine.text.punctuation import has_words, is_cjk

# -- length -------------------------------------------------------------------------------------------------------
# A text's length in "units": non-space characters, a CJK character counting CJK_WEIGHT, so English and Chinese
# lengths compare directly (the ratio of a good translation is about 1 in both directions).
# Measured 2026-12-01 over real human en→zh translations: the 81 zh_CN gettext catalogues in
# /usr/share/locale/zh_CN/LC_MESSAGES (21,429 English messages of 2+ words with a Chinese translation; no format
# strings, no markup), and the fixture corpus tests/fixtures/tiny_marian/corpus.tsv (120 sentences, references):
#   English non-space characters per Chinese character, median: 3.2 (gettext), 2.95 (corpus) → CJK_WEIGHT 3.
#   target/source unit ratio, sources of ≥ 30 units: gettext en→zh n=9,108 min 0.154 max 2.733, median 1.0;
#   zh→en (the same pairs reversed) n=9,548 min 0.314 max 1.867; corpus en→zh min 0.56 max 1.82 (n=82 at ≥ 20).
#   Band [0.25, 3.0] flags 0.21 % of the good en→zh translations and none zh→en (at ≥ 40 units: none either way);
#   shorter sources vary too much (at ≥ 20 units 0.48 % en→zh are outside, at any length the ratio spans 0.15–3.5),
#   so sentences under MIN_UNITS units or MIN_SOURCE_TOKENS tokens are not judged, except that an empty translation of
#   a source with words (or digits) in it is flagged at any length (a small model gives "" for some short sentences).
CJK_WEIGHT = 3
MIN_UNITS = 30
MIN_SOURCE_TOKENS = 6
SHORT_RATIO = 0.25
LONG_RATIO = 3.0


# engine.text.punctuation.is_cjk's ranges, as one pattern (counting with it is ~10x faster than calling is_cjk per
# character)
_CJK_RANGES = (
    "\u2e80-\u2fff\u3001-\u312f\u31a0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\ufe30-\ufe4f"
    "\uff00-\uffef\U00020000-\U0003ffff"
)  # the ideographic space U+3000 is a space here
_CJK = re.compile(f"[{_CJK_RANGES}]")
_SPACE = re.compile(r"\s")
_LATIN = re.compile(f"[^\\W\\d_{_CJK_RANGES}]")  # letters of the other scripts


def length_units(text: str) -> int:
    """Non-space characters, each CJK character counted CJK_WEIGHT times."""
    return len(text) - len(_SPACE.findall(text)) + (CJK_WEIGHT - 1) * len(_CJK.findall(text))


def _length_flag(source: str, target: str, source_tokens: int, target_tokens: int) -> Flag | None:
    src = length_units(source)
    if src < MIN_UNITS or source_tokens < MIN_SOURCE_TOKENS:
        if not target.strip() and has_words(source):  # too short to judge, but gone all the same
            return Flag(FLAG_LENGTH, "The translation is empty although the source has words in it.")
        return None
    tgt = length_units(target)
    ratio = tgt / src
    if not target.strip() or not target_tokens:
        return Flag(FLAG_LENGTH, "The translation is empty although the source is a full sentence.")
    if ratio < SHORT_RATIO:
        return Flag(
            FLAG_LENGTH,
            f"The translation “{_clip(target)}” is far shorter than the source suggests; part of it may be missing.",
        )
    if ratio > LONG_RATIO:
        return Flag(
            FLAG_LENGTH,
            f"The translation “{_clip(target)}” is far longer than the source suggests; it may say more than the "
            "source does.",
        )
    return None


def _clip(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- numbers and verbatim spans ------------------------------------------------------------------------------------
# A number: digits with optional thousands separators and a decimal part; a clock time's minutes apart.
_NUMBER = re.compile(r"(?<![\d.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?")
_CLOCK = re.compile(r"(?<!\d)(\d{1,2}):(\d{2})(?!\d)")
_CN_DIGITS = {
    "零": 0, "〇": 0, "一": 1, "壹": 1, "二": 2, "两": 2, "贰": 2, "三": 3, "叁": 3, "四": 4, "肆": 4,
    "五": 5, "伍": 5, "六": 6, "陆": 6, "七": 7, "柒": 7, "八": 8, "捌": 8, "九": 9, "玖": 9,
}  # fmt: skip
_CN_UNITS = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
_CN_BIG = {"万": 10**4, "萬": 10**4, "亿": 10**8, "億": 10**8}
_CN_RUN = re.compile(r"(?:\d+(?:\.\d+)?)?[" + "".join([*_CN_DIGITS, *_CN_UNITS, *_CN_BIG]) + r"]+")


def _masked(text: str, spans: Iterable[tuple[int, int]]) -> str:
    chars = list(text)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


def numbers_in(text: str) -> list[tuple[str, Decimal]]:
    """(as written, value) of each number in `text`: "3,000" and "3000" have one value; full-width digits count;
    a clock time "3:00" gives its hour, and its minutes unless they are 00."""
    text = unicodedata.normalize("NFKC", text)
    found: list[tuple[int, str, Decimal]] = []
    clocks = []
    for m in _CLOCK.finditer(text):
        clocks.append(m.span())
        found.append((m.start(), m.group(1), Decimal(m.group(1))))
        if m.group(2) != "00":
            found.append((m.start(2), m.group(2), Decimal(m.group(2))))
    for m in _NUMBER.finditer(_masked(text, clocks)):
        whole = m.group(1).replace(",", "")
        value = Decimal(whole + ("." + m.group(2) if m.group(2) else ""))
        found.append((m.start(), m.group(), value))
    return [(shown, value) for _, shown, value in sorted(found, key=lambda f: f[0])]


def chinese_number(text: str) -> Decimal | None:
    """The value of a number written with Chinese numerals ("三千", "一九九五", "1.5万", "两"), or None."""
    digits_only = all(c in _CN_DIGITS for c in text)
    if digits_only:
        return Decimal("".join(str(_CN_DIGITS[c]) for c in text)) if text else None
    m = re.match(r"\d+(?:\.\d+)?", text)
    number = Decimal(m.group()) if m else Decimal(0)
    rest = text[m.end() :] if m else text
    total = section = Decimal(0)
    for ch in rest:
        if ch in _CN_DIGITS:
            number = Decimal(_CN_DIGITS[ch])
        elif ch in _CN_UNITS:
            section += (number or Decimal(1)) * _CN_UNITS[ch]
            number = Decimal(0)
        else:
            big = _CN_BIG[ch]
            if big == 10**8:
                total = (total + section + number) * big
            else:
                total += (section + number) * big
            section = number = Decimal(0)
    return total + section + number


def _number_flags(source: str, target: str) -> list[Flag]:
    spans = protected_matches(source)
    src_numbers = numbers_in(_masked(source, [(s.start, s.end) for s in spans]))
    tgt_numbers = numbers_in(target)
    tgt_values = {v for _, v in tgt_numbers}
    src_values = {v for _, v in src_numbers}
    flags: list[Flag] = []
    missing: list[tuple[str, Decimal]] = []
    for shown, value in src_numbers:
        if value not in tgt_values and all(value != v for _, v in missing):
            missing.append((shown, value))
    extra = [shown for shown, v in tgt_numbers if v not in src_values]
    runs = [(m.group(), chinese_number(m.group())) for m in _CN_RUN.finditer(unicodedata.normalize("NFKC", target))]
    for shown, value in missing:
        written = next((run for run, v in runs if v == value), None)
        if written is not None:
            detail = f"“{shown}” is changed: the translation writes it in Chinese numerals (“{written}”)."
        elif len(missing) == 1 and len(extra) == 1:
            detail = f"“{shown}” is changed: the translation has “{extra[0]}” instead."
        else:
            detail = f"“{shown}” is missing from the translation."
        flags.append(Flag(FLAG_NUMBERS, detail))
    folded = _fold(target)
    for span in spans:
        if span.target in target:
            continue
        if _fold(span.target) in folded:
            detail = f"“{span.target}” is changed in the translation (it must stay exactly as written)."
        else:
            detail = f"“{span.target}” is missing from the translation."
        flags.append(Flag(FLAG_NUMBERS, detail))
    return flags


def _fold(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).casefold().split())


# -- repetition ----------------------------------------------------------------------------------------------------
def _repeated_text(target: str) -> str | None:
    """The block of text the output ends by repeating (3+ times), when there is one."""
    text = target.rstrip()
    for period in range(1, min(24, len(text) // 3) + 1):
        block = text[-period:]
        if block.strip() and text.endswith(block * 3):
            return block.strip()
    return None


# -- the check -----------------------------------------------------------------------------------------------------
def check_sentence(
    source: str,
    target: str,
    *,
    source_tokens: int,
    target_tokens: int,
    repeated: bool = False,
    unmet: Sequence[str] = (),
) -> tuple[Flag, ...]:
    """Every guard's flag for one decoded sentence (none when it looks right). `source_tokens` / `target_tokens`
    are the model's token counts (the source's decides whether the sentence is long enough to judge its length);
    `repeated` is the search's SentenceOutput.repeated; `unmet` the labels of constraints it could not place."""
    flags: list[Flag] = []
    length = _length_flag(source, target, source_tokens, target_tokens)
    if length is not None:
        flags.append(length)
    flags.extend(_number_flags(source, target))
    if repeated:
        block = _repeated_text(target)
        if block:
            detail = f"The model kept repeating “{_clip(block, 20)}”; the repetition was cut short."
        else:
            detail = f"The model started repeating itself after “{_clip(target)}”; the repetition was cut short."
        flags.append(Flag(FLAG_REPETITION, detail))
    for artefact in artefacts_in(source, target):
        flags.append(Flag(FLAG_ARTEFACT, f"“{artefact}” is a subtitle artefact the source does not have."))
    for label in unmet:
        flags.append(Flag(FLAG_CONSTRAINT, f"The glossary term “{label}” could not be placed in the translation."))
    return tuple(flags)


# -- subtitle artefacts --------------------------------------------------------------------------------------------
# name → (words that show the source speaks of it, the artefact's words in Chinese, in English)
_ARTEFACTS: dict[str, tuple[re.Pattern[str], tuple[str, ...], tuple[str, ...]]] = {
    "applause": (re.compile(r"applau|clap|ovation|掌声|鼓掌|拍手", re.I), ("掌声", "鼓掌"), ("Applause", "applause")),
    "laughter": (re.compile(r"laugh|giggl|chuckl|笑", re.I), ("笑声",), ("Laughter", "laughter")),
    "music": (re.compile(r"music|song|sing|melod|♪|♫|音乐|歌|乐曲", re.I), ("音乐",), ("Music", "music")),
    "cheering": (re.compile(r"cheer|欢呼", re.I), ("欢呼",), ()),
}
_OPEN = ("(", "（")
_CLOSE = (")", "）")
_MAX_SEQUENCES = 2000  # per artefact spelling; far more than any real vocabulary needs (see artefact_bans)


def _allowed(source: str) -> set[str]:
    return {name for name, (mention, _, _) in _ARTEFACTS.items() if mention.search(source)}


def _artefact_words(source: str, *, both: bool = False) -> list[str]:
    """The artefacts to keep out: those of the target language (English for a Chinese source, Chinese otherwise;
    `both` for either) the source gives no reason for."""
    allowed = _allowed(source)
    chinese_source = not both and is_chinese(source)
    words: list[str] = []
    for name, (_, zh, en) in _ARTEFACTS.items():
        if name not in allowed:
            words.extend((*zh, *en) if both else en if chinese_source else zh)
    return words


def is_chinese(text: str) -> bool:
    """Mostly Chinese (CJK characters outweigh Latin letters, each CJK character counted CJK_WEIGHT times)."""
    cjk = len(_CJK.findall(text))
    return cjk * CJK_WEIGHT > len(_LATIN.findall(text))


def artefacts_in(source: str, target: str) -> list[str]:
    """The artefacts of `target` ("(掌声)", "（Applause）"; brackets of either width) the source has no reason for."""
    words = _artefact_words(source, both=True)
    if not words:
        return []
    return [m.group().strip() for m in _artefact_pattern(words).finditer(target)]


def _artefact_pattern(words: Sequence[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True))
    return re.compile(r"[ \t]*[(（][ \t]*(?:" + alternatives + r")[ \t]*[)）][ \t]*", re.IGNORECASE)


def strip_artefacts(source: str, target: str) -> tuple[str, bool]:
    """`target` without the subtitle artefacts the source has no reason for, and whether any was removed.
    Spaces around a removed artefact collapse to one between Latin words and to none elsewhere."""
    words = _artefact_words(source, both=True)
    if not words:
        return target, False
    pattern = _artefact_pattern(words)
    removed = False

    def cut(m: re.Match[str]) -> str:
        nonlocal removed
        removed = True
        before = m.string[m.start() - 1] if m.start() else ""
        after = m.string[m.end()] if m.end() < len(m.string) else ""
        spaced = before and after and not is_cjk(before) and not is_cjk(after) and after not in ".,;:!?"
        return " " if spaced else ""

    text = pattern.sub(cut, target)
    return (text.strip() if removed else target), removed


class PieceTokenizer(Protocol):
    """What the bans need of a family's tokenizer (engine.families.base.Tokenizer)."""

    vocab_size: int

    @property
    def special_ids(self) -> frozenset[int]:
        """Ids whose piece is no text (end, unknown, padding, control and language tokens, byte pieces)."""
        ...

    def id_to_piece(self, idx: int) -> str: ...


def artefact_bans(source: str, tokenizer: PieceTokenizer) -> tuple[tuple[int, ...], ...]:
    """Bad-word sequences (GenerationParams.bad_words) that make every spelling of the artefacts the source has no
    reason for impossible, in the tokenizer's joint vocabulary.

    A spelling is any token sequence whose text contains the artefact starting inside its first token: the first
    token ends with the start of it ("(", "▁(", "(笑"), the middle tokens continue it, the last token completes it
    (and may go on: ")" or ")。"). Banning the last token after the others leaves no way to write it; an artefact
    the vocabulary cannot spell (a character it lacks) needs no ban. Which artefacts: see `_ARTEFACTS`, those of
    the target language (`is_chinese(source)`: English ones, else Chinese ones), in half- and full-width
    brackets; `strip_artefacts` removes either language's."""
    words = _artefact_words(source)
    if not words:
        return ()
    index = _piece_index(tokenizer)
    bans: list[tuple[int, ...]] = []
    seen: set[tuple[int, ...]] = set()
    for word in words:
        for op in _OPEN:
            for cl in _CLOSE:
                for seq in index.spellings(op + word + cl):
                    if seq not in seen:
                        seen.add(seq)
                        bans.append(seq)
    return tuple(bans)


class _PieceIndex:
    """Piece surfaces ("▁" as a space) of one vocabulary, and the spellings of each artefact found so far.

    Held without a Python object per piece, and built without one either: the vocabulary is read in chunks of
    _CHUNK pieces, each chunk joined into one string and kept as UTF-8, so the temporary piece strings of one chunk
    are freed (and their memory reused) before the next is read. What stays: the surfaces as one UTF-8 blob with
    int32 byte offsets, and three int32 arrays of positions (sorted by first character and length, by last
    character; the token ids are the positions shifted past the skipped ids). With a real-scale 65k joint
    vocabulary (bench/real_tokenizer.py) it holds 1.5 MB and adds 1.6 MB to the process; the earlier layout
    (a str blob, UCS-4 because of three emoji pieces, int64 offsets and ids, a dict of numpy views per character
    and a hash table) held 5.1 MB and added 6.1 MB, and as Python tuples and lists 25 MB. Lookups yield the same
    pieces in the same (id) order, so the bans are unchanged.
    """

    def __init__(self, tokenizer: PieceTokenizer) -> None:
        skip = tokenizer.special_ids  # the family's fact: the pieces that name a token rather than spell text
        skipped: list[int] = []  # ids with no surface: special or empty
        lengths = array("i")  # characters per kept piece
        chunks: list[bytes] = []
        codes: list[np.ndarray] = []  # code points of each chunk, for the first and last characters
        for lo in range(0, tokenizer.vocab_size, _CHUNK):
            pieces: list[str] = []
            for i in range(lo, min(lo + _CHUNK, tokenizer.vocab_size)):
                piece = "" if i in skip else tokenizer.id_to_piece(i)
                if piece:
                    pieces.append(piece)
                else:
                    skipped.append(i)
            lengths.extend(map(len, pieces))
            text = "".join(pieces).replace("▁", " ")
            del pieces
            chunks.append(text.encode("utf-8"))
            codes.append(np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32))
        self._blob = b"".join(chunks)
        del chunks
        code = np.concatenate([np.zeros(0, np.uint32), *codes]).astype(np.int64)
        del codes
        starts = np.zeros(len(lengths) + 1, dtype=np.int64)  # position → where its surface starts (in characters)
        np.cumsum(np.frombuffer(lengths, dtype=np.int32), out=starts[1:])
        utf8 = 1 + (code >= 0x80) + (code >= 0x800) + (code >= 0x10000)  # bytes per character
        byte_at = np.zeros(len(code) + 1, dtype=np.int64)
        np.cumsum(utf8, out=byte_at[1:])
        # position → where its surface starts in _blob, and ends: the next start (array: fast scalar indexing)
        self._starts = array("i", byte_at[starts].astype(np.int32).tobytes())
        # position p is id p + (the skipped ids before it): the k-th skipped id s shifts the positions from s - k
        self._shift = [s - k for k, s in enumerate(skipped)]
        first, last = code[starts[:-1]], code[starts[1:] - 1]
        # by first character, then length (capped: longer pieces share a key and are told apart by comparing them)
        keys = first << 10 | np.minimum(np.diff(starts), _LONG)
        self._first_order = np.argsort(keys, kind="stable").astype(np.int32)  # ties stay in id order
        self._first_keys, self._first_bounds = _runs(keys[self._first_order])
        self._last_order = np.argsort(last, kind="stable").astype(np.int32)
        self._last_codes, self._last_bounds = _runs(last[self._last_order])
        self._holding: dict[str, np.ndarray] = {}  # character → positions of the pieces that contain it
        self._cache: dict[str, tuple[tuple[int, ...], ...]] = {}

    def _id(self, pos: int) -> int:
        return pos + bisect.bisect_right(self._shift, pos)

    def _surface(self, pos: int) -> bytes:
        """The piece's surface in UTF-8: compared as bytes, never decoded (UTF-8 keeps prefixes, suffixes and
        substrings of whole characters what they are in text)."""
        return self._blob[self._starts[pos] : self._starts[pos + 1]]

    def _pieces(self, positions: np.ndarray) -> Iterable[tuple[int, bytes]]:
        """(token id, UTF-8 surface) for each position, in the given order."""
        for pos in positions.tolist():
            yield self._id(pos), self._surface(pos)

    def _starting(self, char: str) -> np.ndarray:
        """Positions of the pieces whose first character is `char`, ascending."""
        code = ord(char) << 10
        a, b = np.searchsorted(self._first_keys, [code, code + (1 << 10)]).tolist()
        return np.sort(self._first_order[self._first_bounds[a] : self._first_bounds[b]])

    def _exactly(self, text: str) -> list[int]:
        """Ids of the pieces whose surface is `text`, ascending."""
        key = ord(text[0]) << 10 | min(len(text), _LONG)
        wanted = text.encode("utf-8")
        k = int(np.searchsorted(self._first_keys, key))
        if k == len(self._first_keys) or self._first_keys[k] != key:
            return []
        group = self._first_order[self._first_bounds[k] : self._first_bounds[k + 1]].tolist()
        return [self._id(p) for p in group if self._surface(p) == wanted]

    def _ending(self, char: str) -> np.ndarray:
        """Positions of the pieces whose last character is `char`, ascending."""
        k = int(np.searchsorted(self._last_codes, ord(char)))
        if k == len(self._last_codes) or self._last_codes[k] != ord(char):
            return _NONE
        return self._last_order[self._last_bounds[k] : self._last_bounds[k + 1]]

    def _containing(self, char: str) -> np.ndarray:
        if char not in self._holding:
            blob = np.frombuffer(self._blob, dtype=np.uint8)
            needle = char.encode("utf-8")
            at = np.flatnonzero(blob[: len(blob) - len(needle) + 1] == needle[0])
            for k, byte in enumerate(needle[1:], 1):  # UTF-8 never matches inside another character
                at = at[blob[at + k] == byte]
            starts = np.frombuffer(self._starts, dtype=np.int32)
            pieces = np.searchsorted(starts, at, "right") - 1  # ascending, as `at` is
            # repeats dropped here: np.unique's first call imports numpy.ma (~6 ms of a user's first translation)
            self._holding[char] = pieces[np.diff(pieces, prepend=pieces[:1] - 1) != 0]
        return self._holding[char]

    def spellings(self, text: str) -> tuple[tuple[int, ...], ...]:
        if text not in self._cache:
            self._cache[text] = tuple(self._spell(text))
        return self._cache[text]

    def _spell(self, text: str) -> list[tuple[int, ...]]:
        out: list[tuple[int, ...]] = []
        whole = text.encode("utf-8")
        out.extend((i,) for i, s in self._pieces(self._containing(text[0])) if whole in s)
        steps: dict[int, tuple[list[int], list[tuple[int, list[int]]]]] = {}
        for j in range(len(text) - 1, 0, -1):  # the first token ends with text[:j]
            head = text[:j].encode("utf-8")
            for i, surface in self._pieces(self._ending(text[j - 1])):
                if surface.endswith(head) and whole not in surface:
                    self._extend(text, j, (i,), out, steps)
        return out

    def _extend(self, text: str, done: int, seq: tuple[int, ...], out: list[tuple[int, ...]], steps: dict) -> None:
        if len(out) >= _MAX_SEQUENCES:
            return
        if done not in steps:  # what can follow text[:done] depends on `done` alone: looked up once per spelling
            steps[done] = self._next(text[done:])
        last, middle = steps[done]
        out.extend((*seq, i) for i in last)
        for k, pieces in middle:
            for i in pieces:
                self._extend(text, done + k, (*seq, i), out, steps)

    def _next(self, rest: str) -> tuple[list[int], list[tuple[int, list[int]]]]:
        """The pieces that complete `rest` (and may go on), and for each k the pieces that are exactly rest[:k]."""
        start = rest.encode("utf-8")
        last = [i for i, s in self._pieces(self._starting(rest[0])) if s.startswith(start)]
        middle = [(k, ids) for k in range(1, len(rest)) if (ids := self._exactly(rest[:k]))]
        return last, middle


_CHUNK = 4096  # pieces read at a time while building an index
_LONG = (1 << 10) - 1  # piece lengths from here on share a lookup key
_NONE = np.zeros(0, dtype=np.int32)


def _runs(sorted_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of `sorted_keys` and where each one's run starts (with the end appended)."""
    distinct, first = np.unique(sorted_keys, return_index=True)
    return distinct, np.append(first, len(sorted_keys)).astype(np.int32)


_INDEXES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _piece_index(tokenizer: PieceTokenizer) -> _PieceIndex:
    """One index per tokenizer object (built on first use: one pass over the vocabulary)."""
    try:
        index = _INDEXES.get(tokenizer)
    except TypeError:  # not weak-referenceable: no caching
        return _PieceIndex(tokenizer)
    if index is None:
        index = _INDEXES[tokenizer] = _PieceIndex(tokenizer)
    return index
