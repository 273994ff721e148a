"""Which language a text is written in (by script, no model), and which installed direction reads it.

One detector for every way text reaches Qiao (the window, the quick popup, `qiao translate`, `translate-file`, the
API): Chinese pasted into the English box used to be translated as if it were English, without a word.

Script share is enough for what Qiao's models read: Han characters weigh about a word each (×3 against a Latin
letter), so English with a Chinese name stays English and Chinese with an English brand name stays Chinese. Kana
makes a text Japanese and Hangul Korean, which Qiao says it cannot translate rather than reading them as Chinese.
Text without letters (numbers, a URL, an e-mail address, punctuation) is "unknown": it changes nothing. One Han
character alone is Chinese; fewer than two Latin letters alone are unknown ("3D", "x").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from engine.languages import FACTS

UNKNOWN = "unknown"
OTHER = "other"  # letters of a script Qiao has no name for here (Cyrillic, Arabic, …)
CLEAR = 60.0  # confidence (% of the weighted letters) from which a text is "clearly" in a language
SAMPLE_CHARS = 10_000  # a huge paste is judged by its start: enough letters, a bounded cost per keystroke
HAN_WEIGHT = 3  # a Han character carries about a word; a Latin letter about a fifth of one
NAMES = {"en": "English", "zh": "Chinese", "ja": "Japanese", "ko": "Korean"}

# Not language: links and addresses are Latin letters whatever the text around them is written in.
_NOT_TEXT = re.compile(r"(?:[a-z][a-z0-9+.-]*://|www\.)\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+", re.IGNORECASE)


def is_han(ch: str) -> bool:
    """A CJK ideograph (the unified blocks, extension A, compatibility, and the supplementary planes)."""
    o = ord(ch)
    return 0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or 0xF900 <= o <= 0xFAFF or 0x20000 <= o <= 0x2FA1F


def _is_kana(o: int) -> bool:
    # U+30FB (the katakana middle dot) is also how Chinese text writes the dot in foreign names: not counted
    return (0x3041 <= o <= 0x30FF and o != 0x30FB) or 0x31F0 <= o <= 0x31FF or 0xFF66 <= o <= 0xFF9D


def _is_hangul(o: int) -> bool:
    return 0xAC00 <= o <= 0xD7AF or 0x1100 <= o <= 0x11FF or 0x3130 <= o <= 0x318F


def _is_latin(ch: str, o: int) -> bool:
    return ch.isalpha() and (o < 0x0250 or 0x1E00 <= o <= 0x1EFF or 0xFF21 <= o <= 0xFF5A)


@dataclass(frozen=True)
class Counts:
    """The letters of a text by script (links and e-mail addresses left out)."""

    han: int = 0
    kana: int = 0
    hangul: int = 0
    latin: int = 0
    other: int = 0


def count_scripts(text: str, limit: int = SAMPLE_CHARS) -> Counts:
    """Letters by script in the first `limit` characters of `text`."""
    sample = _NOT_TEXT.sub(" ", text[:limit])
    han = kana = hangul = latin = other = 0
    for ch in sample:
        if ch.isascii():
            if ch.isalpha():
                latin += 1
            continue
        o = ord(ch)
        if is_han(ch):
            han += 1
        elif _is_kana(o):
            kana += 1
        elif _is_hangul(o):
            hangul += 1
        elif _is_latin(ch, o):
            latin += 1
        elif ch.isalpha():
            other += 1
    return Counts(han, kana, hangul, latin, other)


@dataclass(frozen=True)
class Detection:
    """A text's language: "en", "zh", "ja", "ko", OTHER or UNKNOWN, and its share of the weighted letters."""

    language: str
    confidence: float  # 0 … 100
    scores: tuple[tuple[str, float], ...] = ()  # every language seen, the likeliest first (what the API lists)

    @property
    def clear(self) -> bool:
        """Clearly this language: enough to switch a direction on."""
        return self.language not in (UNKNOWN, OTHER) and self.confidence >= CLEAR

    @property
    def name(self) -> str:
        """ "Chinese": the language's English name (the GUI translates it for its interface language)."""
        return NAMES.get(self.language, self.language)


def detect_language(text: str, limit: int = SAMPLE_CHARS) -> Detection:
    """The language of `text` by script (see the module's docstring for the rules)."""
    c = count_scripts(text, limit)
    cjk = c.han + c.kana
    # Japanese writes kana between its kanji (a third to a half of its characters); Chinese never does
    japanese = c.kana > 0 and c.kana * 10 >= cjk
    weights = {
        "ja" if japanese else "zh": cjk * HAN_WEIGHT if japanese else c.han * HAN_WEIGHT,
        "ko": c.hangul * HAN_WEIGHT,
        "en": c.latin if (c.latin >= 2 or cjk or c.hangul or c.other) else 0,
        OTHER: c.other,
    }
    total = sum(weights.values())
    if total == 0:
        return Detection(UNKNOWN, 0.0)
    scores = sorted(
        ((lang, round(100.0 * w / total, 1)) for lang, w in weights.items() if w), key=lambda item: -item[1]
    )
    language, confidence = scores[0]
    return Detection(language, confidence, tuple(scores))


@dataclass(frozen=True)
class DirectionChoice:
    """The direction to translate a text in, given what is installed.

    `pair`: the pair key to use ("zh-en"; the preferred one when the text is unknown or not clear);
    `switched`: `pair` differs from the preferred one because of the text;
    `missing`: the pair key that would read the text when no installed one does ("zh-en"), else None;
    `unsupported`: the text is clearly in a language no Qiao model reads (Japanese, Korean), else None."""

    pair: str
    detected: Detection
    switched: bool = False
    missing: str | None = None
    unsupported: str | None = None


def choose_pair(detected: Detection, installed: Sequence[str], preferred: str) -> DirectionChoice:
    """The installed pair that reads `detected`'s language, keeping `preferred` ("en-zh") whenever it does or
    the text is not clearly in another language. Of several candidates, the one back into `preferred`'s source
    language wins (Chinese in an en→zh box: zh→en)."""
    source = preferred.partition("-")[0]
    lang = detected.language
    if not detected.clear or lang == source:
        return DirectionChoice(preferred, detected)
    if lang not in FACTS:
        return DirectionChoice(preferred, detected, unsupported=lang)
    readers = [key for key in installed if key.partition("-")[0] == lang]
    back = f"{lang}-{source}"
    if back in readers:
        return DirectionChoice(back, detected, switched=True)
    if readers:
        return DirectionChoice(readers[0], detected, switched=True)
    return DirectionChoice(preferred, detected, missing=back)
