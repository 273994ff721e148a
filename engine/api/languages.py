"""Language codes as API clients send them, detection by script, and choosing the installed pair for a request.

Clients say "zh", "zh-Hans", "zh-CN", "zh-TW" or "zh-Hant" for Chinese (LibreTranslate itself moved from "zh" to
"zh-Hans"/"zh-Hant"); all mean the pair's target "zh", the script ones choosing the model's variant where it has
one. A script the direction's model cannot write (Traditional of Firefox's en→zh, which writes Simplified only) goes
to another installed model of the direction that writes it, or is refused (400) saying so: never answered silently
in the other script. Detection is engine.text.source_language's, the one the window, the popup and the CLI use: by
script, no model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engine.api.errors import ApiError, UnsupportedLanguage
from engine.languages import written_keys
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
    model: str = ""  # the installed model that translates the direction (a bundle name; "" when not known)
    # (variant key, bundle name): a variant this model cannot write that another installed model of the direction
    # writes (Traditional by opus-mt-en-zh beside Firefox's en→zh)
    elsewhere: tuple[tuple[str, str], ...] = ()

    @property
    def key(self) -> str:
        return f"{self.source}-{self.target}"

    @property
    def written(self) -> tuple[str, ...]:
        """The variants the direction's model writes (Simplified alone for a Chinese target without variants)."""
        return written_keys(self.target, self.variants)

    @property
    def writable(self) -> tuple[str, ...]:
        """The variants some installed model of the direction writes: this model's, then the others'."""
        return tuple(dict.fromkeys([*self.written, *(key for key, _ in self.elsewhere)]))


@dataclass(frozen=True)
class Direction:
    """What a request resolved to: the pair to run and the variant to ask for (None: the model's default)."""

    pair: PairInfo | None  # None when source and target are the same language: the text comes back as it is
    variant: str | None
    source: str  # the source language used (detected when the request said "auto")
    model: str | None = None  # another installed model of the direction, when only it writes the variant asked for

    @property
    def job_key(self) -> str:
        """What the engine loads for it: the pair key ("en-zh"), or "en-zh/opus-mt-en-zh" for another model."""
        key = self.pair.key if self.pair is not None else ""
        return f"{key}/{self.model}" if self.model else key


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
            return _with_variant(pair, variant, src)
    raise UnsupportedLanguage(f"no {src}-{tgt} model is installed{_installed(pairs)}")


def _with_variant(pair: PairInfo, variant: str | None, src: str) -> Direction:
    """The direction for an asked script: this model when it writes it (or none was asked), another installed model
    of the direction that writes it, else UnsupportedLanguage saying what the installed model writes."""
    if variant is None or variant in pair.written or not pair.written:
        return Direction(pair, variant if variant in pair.variants else None, src)
    other = dict(pair.elsewhere).get(variant)
    if other is not None:
        return Direction(pair, variant, src, model=other)
    asked = f"{pair.target}-{variant.capitalize()}"
    writes = " and ".join(f"{pair.target}-{key.capitalize()}" for key in pair.written)
    model = f" ({pair.model})" if pair.model else ""
    raise UnsupportedLanguage(
        f"{asked} is not supported: the installed {pair.key} model{model} writes {writes} only; install one that "
        f"writes {asked}, such as opus-mt-{pair.key}"
    )


def _installed(pairs: Sequence[PairInfo]) -> str:
    keys = ", ".join(p.key for p in pairs)
    return f" (installed: {keys})" if keys else " (no model is installed)"
