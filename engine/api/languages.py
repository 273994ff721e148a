"""Language codes as API clients send them, detection by script, and choosing the installed pair for a request.

Clients say "zh", "zh-Hans", "zh-CN", "zh-TW" or "zh-Hant" for Chinese (LibreTranslate itself moved from "zh" to
"zh-Hans"/"zh-Hant"); all mean the pair's target "zh", the script ones choosing the model's variant where it has
one. Detection is engine.text.source_language's, the one the window, the popup and the CLI use: by script, no model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engine.api.errors import ApiError, UnsupportedLanguage
from engine.text.source_language import UNKNOWN, detect_language

AUTO = "auto"
# Script subtags and regions → the variant key Qiao's en→zh models use
_VARIANT_OF = {"hans": "hans", "cn": "hans", "sg": "hans", "hant": "hant", "tw": "hant", "hk": "hant", "mo": "hant"}


@dataclass(frozen=True)
class PairInfo:
    """One installed direction, as the API lists it."""

    source: str  # "en"
    target: str  # "zh"
    source_name: str  # "English"
    target_name: str  # "Chinese"
    variants: tuple[str, ...] = ()  # the target variant keys the model offers ("hans", "hant")

    @property
    def key(self) -> str:
        return f"{self.source}-{self.target}"


@dataclass(frozen=True)
class Direction:
    """What a request resolved to: the pair to run and the variant to ask for (None: the model's default)."""

    pair: PairInfo | None  # None when source and target are the same language: the text comes back as it is
    variant: str | None
    source: str  # the source language used (detected when the request said "auto")


def parse_code(code: object, field: str) -> tuple[str, str | None]:
    """("zh", "hant") from "zh-Hant" / "zh_TW"; ("en", None) from "en" or "EN". ApiError for a non-string."""
    if not isinstance(code, str) or not code.strip():
        raise ApiError(f"Invalid request: missing {field} parameter")
    base, _, rest = code.strip().replace("_", "-").lower().partition("-")
    return base, _VARIANT_OF.get(rest.split("-")[0]) if rest else None


def detect(text: str) -> list[tuple[str, float]]:
    """[(language, confidence 0…100)], the likelier first, English and Chinese always listed. Text without
    letters (digits, a URL, emoji) is English at confidence 0: LibreTranslate's clients expect a language."""
    found = detect_language(text)
    if found.language == UNKNOWN:
        return [("en", 0.0), ("zh", 0.0)]
    scores = list(found.scores)
    return scores + [(lang, 0.0) for lang in ("en", "zh") if all(lang != s for s, _ in scores)]


def resolve(
    pairs: Sequence[PairInfo],
    texts: Sequence[str],
    source: object,
    target: object,
    detector: Callable[[str], list[tuple[str, float]]] = detect,
) -> Direction:
    """The installed pair for `source` → `target` ("auto" source: detected over all `texts`).

    UnsupportedLanguage (400) names what is installed when no model translates that way."""
    src, _ = parse_code(source, "source")
    tgt, variant = parse_code(target, "target")
    if src == AUTO:
        joined = "\n".join(texts)
        src = detector(joined)[0][0]
    known = {p.source for p in pairs} | {p.target for p in pairs}
    for code in (src, tgt):
        if code not in known:
            raise UnsupportedLanguage(f"{code} is not supported{_installed(pairs)}")
    if src == tgt:
        return Direction(None, None, src)
    for pair in pairs:
        if pair.source == src and pair.target == tgt:
            return Direction(pair, variant if variant in pair.variants else None, src)
    raise UnsupportedLanguage(f"no {src}-{tgt} model is installed{_installed(pairs)}")


def _installed(pairs: Sequence[PairInfo]) -> str:
    keys = ", ".join(p.key for p in pairs)
    return f" (installed: {keys})" if keys else " (no model is installed)"
