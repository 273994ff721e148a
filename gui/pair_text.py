"""How the window words a language pair: language and variant names in the interface language, headings, titles.

A bundle's manifest names its languages in English ("English", "Chinese"); the languages Qiao knows get a
translated name here, any other keeps the manifest's. Before a model is loaded the window still knows the direction
it asked for (a setting such as "en-zh"), so `expected_pair` builds the pair Qiao would expect for it.
"""

from __future__ import annotations

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from engine.languages import (
    FACTS,
    Language,
    LanguagePair,
    default_pair,
    offered_variants,
    written_variant,
    written_variants,
)

_CONTEXT = "PairText"
_NAMES = {
    "en": QT_TRANSLATE_NOOP("PairText", "English"),
    "zh": QT_TRANSLATE_NOOP("PairText", "Chinese"),
}
# The source heading carries the mnemonic that focuses the source editor: Alt+N whichever language it is.
_SOURCE_HEADINGS = {
    "en": QT_TRANSLATE_NOOP("PairText", "E&nglish"),
    "zh": QT_TRANSLATE_NOOP("PairText", "Chi&nese"),
}
_TITLES = {
    "en-zh": QT_TRANSLATE_NOOP("PairText", "English to Chinese"),
    "zh-en": QT_TRANSLATE_NOOP("PairText", "Chinese to English"),
}
_VARIANTS = {
    "hans": QT_TRANSLATE_NOOP("PairText", "Simplified"),
    "hant": QT_TRANSLATE_NOOP("PairText", "Traditional"),
}
# What each variant is called in its own script, shown beside the translated name in the Settings dialog.
NATIVE_VARIANTS = {"hans": "简体", "hant": "繁體"}


def _tr(text: str) -> str:
    return QCoreApplication.translate(_CONTEXT, text)


def language_name(language: Language) -> str:
    """ "English" / "英语": the translated name for a language Qiao knows, the manifest's name otherwise."""
    known = _NAMES.get(language.code)
    return _tr(known) if known else language.name


def variant_name(pair: LanguagePair, key: str) -> str:
    """ "Simplified" / "简体" for a known variant key, the manifest's name for any other."""
    known = _VARIANTS.get(key)
    if known:
        return _tr(known)
    variant = next((v for v in pair.variants if v.key == key), None)
    return variant.name if variant else key


def chosen_variant(pair: LanguagePair, wanted: str | None) -> str | None:
    """The variant a request is written in: `wanted` when a model of the pair writes it, else the pair's default
    (engine.languages.written_variant: Firefox's en→zh writes Simplified whatever is asked); None for a target
    without variants (English). What the window asks, records and shows, so nothing is labelled with a script the
    model did not write."""
    return written_variant(pair, wanted)


def script_choices(pair: LanguagePair) -> tuple[str, ...]:
    """The variant keys the script setting offers for `pair` (engine.languages.offered_variants): every variant Qiao
    knows of its target, so Traditional stays choosable, and explained, beside a model that writes Simplified only;
    () for a target without variants (English)."""
    return offered_variants(pair)


def listing(items: list[str] | tuple[str, ...]) -> str:
    """Items of a list in a sentence, with the interface language's separator: "Simplified, Traditional" in
    English, "简体、繁体" in Chinese (the enumeration comma; an ASCII ", " between Chinese words is a typo there)."""
    return _tr(QT_TRANSLATE_NOOP("PairText", ", ")).join(items)


def scripts_text(pair: LanguagePair) -> str:
    """What a model of `pair` writes, for the Models dialog and the model menu: "Simplified, Traditional",
    "Simplified only"; "" for a target without variants."""
    written = written_variants(pair)
    if not written:
        return ""
    names = [variant_name(pair, key) for key in written]
    if len(names) == 1 and len(script_choices(pair)) > 1:
        return _tr(QT_TRANSLATE_NOOP("PairText", "{variant} only")).format(variant=names[0])
    return listing(names)


def script_limit(model: str, pair: LanguagePair, wanted: str | None) -> str:
    """ "firefox-translations-enzh-base-memory writes Simplified only": said when the model `model` (its name, as the
    model indicator shows it) cannot write the chosen variant `wanted`; "" when it can (or the target has none)."""
    written = written_variants(pair)
    if not written or wanted is None or wanted in written:
        return ""
    return _tr(QT_TRANSLATE_NOOP("PairText", "{model} writes {scripts}")).format(
        model=model, scripts=scripts_text(pair)
    )


def source_heading(pair: LanguagePair) -> str:
    """The source pane's heading, with its mnemonic ("E&nglish")."""
    known = _SOURCE_HEADINGS.get(pair.source.code)
    return _tr(known) if known else pair.source.name.replace("&", "&&")


def target_heading(pair: LanguagePair, variant: str | None) -> str:
    """ "Chinese (Simplified)" for a target with variants (the one the model writes), "English" otherwise."""
    name = language_name(pair.target)
    chosen = chosen_variant(pair, variant)
    if chosen is None:
        return name
    return _tr(QT_TRANSLATE_NOOP("PairText", "{language} ({variant})")).format(
        language=name, variant=variant_name(pair, chosen)
    )


def arrow(pair_key: str) -> str:
    """ "English → Chinese" for a pair key, as the Models dialog lists bundles."""
    source, _, target = pair_key.partition("-")
    return f"{_name_of(source)} → {_name_of(target)}"


def code_name(code: str) -> str:
    """ "Chinese" for "zh": a language code's name in the interface language."""
    return _name_of(code)


def _name_of(code: str) -> str:
    known = _NAMES.get(code)
    if known:
        return _tr(known)
    facts = FACTS.get(code)
    return facts.name if facts else code


def window_title(pair: LanguagePair) -> str:
    """ "English to Chinese" (Qt appends "— Qiao" itself)."""
    known = _TITLES.get(pair.key)
    if known:
        return _tr(known)
    return _tr(QT_TRANSLATE_NOOP("PairText", "{source} to {target}")).format(
        source=language_name(pair.source), target=language_name(pair.target)
    )


def expected_pair(direction: str) -> LanguagePair | None:
    """The pair a bundle for `direction` ("en-zh") would have, with every variant Qiao knows; None if unknown."""
    source, _, target = direction.partition("-")
    facts = FACTS.get(target)
    tokens = [token for _, token, _ in facts.variants] if facts else []
    try:
        return default_pair(source, target, tokens)
    except KeyError:
        return None


def reverse_key(pair_key: str) -> str:
    source, _, target = pair_key.partition("-")
    return f"{target}-{source}"
