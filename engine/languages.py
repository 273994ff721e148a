"""A bundle's language pair as data: what it reads and writes, its target variants, and how its text is laid out.

Format 4 manifests carry this as `languages` (written by the build pipeline, read by everything that used to say
"Chinese"): headings, placeholders and fonts (`Language.script`), the variants setting (hidden when a pair has
none), segmentation of the source (`segmenter`, `Language.spaced`), the output joiner, the self-test sentence.

    "languages": {
      "source": {"code": "en", "name": "English", "script": "latin"},
      "target": {"code": "zh", "name": "Chinese", "script": "han"},
      "variants": [{"key": "hans", "token": ">>cmn_Hans<<", "name": "Simplified"}, ...],   # [] when none
      "default_variant": "hans",                                                          # null when none
      "joiner": "",                # between two translated sentences of one line
      "segmenter": "en",           # sentencex language code for the source
      "self_test": "Thank you very much."
    }

`FACTS` holds what Qiao knows about each language it supports; `default_pair()` fills a pair from them (the
pipeline, from the checkpoint's languages, with the user's overrides). Reading never consults FACTS: a bundle says
everything about itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# ISO 639-3 / Marian names → the two-letter codes Qiao uses (`opus-mt-en-zh`, tokenizer_config's "eng"/"zho").
ISO3 = {"eng": "en", "zho": "zh", "cmn": "zh", "chi": "zh"}
SCRIPTS = ("latin", "han")  # a language's writing system: fonts and segmentation follow from it
MAX_VARIANTS = 16
# Varieties Qiao can name, by the ISO 639-3 code of a Marian target token (`>>yue_Hant<<`), per target language,
# and the scripts it can name. A multi-target model's tokens outside these (Chinese in Hiragana, Latin script…)
# are not offered: Qiao could neither name nor display them sensibly.
VARIETIES: dict[str, dict[str, str]] = {
    "zh": {
        "cmn": "Mandarin",
        "zho": "Chinese",
        "yue": "Cantonese",
        "lzh": "Classical Chinese",
        "wuu": "Wu",
        "gan": "Gan",
        "hak": "Hakka",
        "nan": "Min Nan",
    },
    "en": {"eng": "English"},
}
SCRIPT_NAMES = {"Hans": "Simplified", "Hant": "Traditional"}
_TOKEN = re.compile(r">>([a-z]{3})(?:_([A-Z][a-z]{3}))?<<")


@dataclass(frozen=True)
class LanguageFacts:
    """What Qiao knows about one language (used to fill a new bundle's `languages`, and by validation)."""

    code: str
    name: str  # English name; the GUI translates it for its interface language
    script: str  # one of SCRIPTS
    joiner: str  # between two sentences of this language on one line
    segmenter: str  # sentencex code
    self_test: str  # a sentence every model of this source language should translate
    bleu_tokenize: str  # sacrebleu tokenizer for this language as the target
    # Target variants: key → (language token, English name). Marian multi-target models pick one with a token.
    variants: tuple[tuple[str, str, str], ...] = ()
    default_variant: str | None = None


FACTS: dict[str, LanguageFacts] = {
    "en": LanguageFacts(
        code="en",
        name="English",
        script="latin",
        joiner=" ",
        segmenter="en",
        self_test="Thank you very much.",
        bleu_tokenize="13a",
    ),
    "zh": LanguageFacts(
        code="zh",
        name="Chinese",
        script="han",
        joiner="",
        segmenter="zh",
        self_test="非常感谢。",
        bleu_tokenize="zh",
        variants=(("hans", ">>cmn_Hans<<", "Simplified"), ("hant", ">>cmn_Hant<<", "Traditional")),
        default_variant="hans",
    ),
}


@dataclass(frozen=True)
class Language:
    code: str  # "en", "zh"
    name: str  # "English", "Chinese"
    script: str  # "latin" | "han"

    @property
    def spaced(self) -> bool:
        """Whether words are separated by spaces (hard-wrapped lines join with a space, not with nothing)."""
        return self.script != "han"

    def as_dict(self) -> dict:
        return {"code": self.code, "name": self.name, "script": self.script}


@dataclass(frozen=True)
class Variant:
    key: str  # "hans": what settings, options and the CLI's --variant name
    token: str | None  # ">>cmn_Hans<<": prepended to the source; None for a model that needs no token
    name: str  # "Simplified"

    def as_dict(self) -> dict:
        return {"key": self.key, "token": self.token, "name": self.name}


@dataclass(frozen=True)
class LanguagePair:
    """A bundle's direction and text conventions (manifest `languages`)."""

    source: Language
    target: Language
    variants: tuple[Variant, ...] = ()
    default_variant: str | None = None
    joiner: str = " "
    segmenter: str = "en"
    self_test: str = ""

    @property
    def key(self) -> str:
        """ "en-zh": how bundles are grouped and chosen by direction."""
        return f"{self.source.code}-{self.target.code}"

    @property
    def reverse_key(self) -> str:
        return f"{self.target.code}-{self.source.code}"

    def variant(self, key: str | None) -> Variant | None:
        """The variant `key` names, the default for None, None when the pair has no variants."""
        if not self.variants:
            return None
        wanted = key if key is not None else self.default_variant
        for v in self.variants:
            if v.key == wanted:
                return v
        return None

    @property
    def variant_keys(self) -> tuple[str, ...]:
        return tuple(v.key for v in self.variants)

    def tokens(self) -> dict[str, str]:
        """{variant key: language token} for the variants that have a token (the old manifest `scripts`)."""
        return {v.key: v.token for v in self.variants if v.token}

    def as_dict(self) -> dict:
        return {
            "source": self.source.as_dict(),
            "target": self.target.as_dict(),
            "variants": [v.as_dict() for v in self.variants],
            "default_variant": self.default_variant,
            "joiner": self.joiner,
            "segmenter": self.segmenter,
            "self_test": self.self_test,
        }

    @classmethod
    def from_dict(cls, raw: dict) -> LanguagePair:
        """Build from a manifest's `languages` that passed engine.bundle.schema (no checks repeated here)."""
        return cls(
            source=Language(**{k: raw["source"][k] for k in ("code", "name", "script")}),
            target=Language(**{k: raw["target"][k] for k in ("code", "name", "script")}),
            variants=tuple(Variant(v["key"], v.get("token"), v["name"]) for v in raw.get("variants", [])),
            default_variant=raw.get("default_variant"),
            joiner=raw["joiner"],
            segmenter=raw["segmenter"],
            self_test=raw["self_test"],
        )


def code_of(name: str) -> str:
    """ "eng" / "en" / "zho" → "en" / "zh"; unknown names come back lower-cased."""
    low = name.strip().lower()
    return ISO3.get(low, low)


def _more_variants(
    target: str, language_tokens: list[str] | tuple[str, ...], known: tuple[Variant, ...]
) -> tuple[Variant, ...]:
    """Every other `>>xxx<<` / `>>xxx_Scrp<<` token of a multi-target model that names a variety of `target` in a
    script Qiao can name (VARIETIES, SCRIPT_NAMES), in vocabulary order: key the tag in lower case ("yue_hant"),
    name "Cantonese (Traditional)"."""
    taken = {v.token for v in known} | {v.key for v in known}
    out: list[Variant] = []
    for token in language_tokens:
        match = _TOKEN.fullmatch(token)
        if match is None or token in taken:
            continue
        variety = VARIETIES.get(target, {}).get(match.group(1))
        script = match.group(2)
        if variety is None or (script is not None and script not in SCRIPT_NAMES):
            continue
        key = token[2:-2].lower()
        if key in taken:
            continue
        taken.add(key)
        out.append(Variant(key, token, f"{variety} ({SCRIPT_NAMES[script]})" if script else variety))
    return tuple(out)


def default_pair(source: str, target: str, language_tokens: list[str] | tuple[str, ...] = ()) -> LanguagePair:
    """The pair Qiao would write for `source` → `target` (codes as code_of reads them).

    Variants are the target's known ones whose token the model has (`language_tokens`, from its vocabulary), then
    every other token of the model that names a variety of the target Qiao can name (`_more_variants`; at most
    MAX_VARIANTS in all); a model without them (opus-mt-zh-en) gets none. KeyError for a language Qiao knows
    nothing about.
    """
    src, tgt = FACTS[code_of(source)], FACTS[code_of(target)]
    have = set(language_tokens)
    variants = tuple(Variant(k, tok, name) for k, tok, name in tgt.variants if tok in have)
    variants = (variants + _more_variants(tgt.code, language_tokens, variants))[:MAX_VARIANTS]
    default = tgt.default_variant if any(v.key == tgt.default_variant for v in variants) else None
    if variants and default is None:
        default = variants[0].key
    return LanguagePair(
        source=Language(src.code, src.name, src.script),
        target=Language(tgt.code, tgt.name, tgt.script),
        variants=variants,
        default_variant=default,
        joiner=tgt.joiner,
        segmenter=src.segmenter,
        self_test=src.self_test,
    )


def offered_variants(pair: LanguagePair) -> tuple[str, ...]:
    """The variant keys a request to a model of `pair` may name: every variant Qiao knows of the target (so
    Traditional can be asked of a model that writes Simplified only, and be told so), then any other the model has;
    () for a target without variants (English)."""
    facts = FACTS.get(pair.target.code)
    known = tuple(key for key, _, _ in facts.variants) if facts is not None else ()
    return tuple(dict.fromkeys([*known, *pair.variant_keys]))


def variant_label(pair: LanguagePair, key: str) -> str:
    """ "Traditional": a variant's English name, from the model's pair or what Qiao knows of the target."""
    named = next((v.name for v in pair.variants if v.key == key), None)
    facts = FACTS.get(pair.target.code)
    known = next((name for k, _, name in facts.variants if k == key), None) if facts is not None else None
    return named or known or key


def written_variants(pair: LanguagePair) -> tuple[str, ...]:
    """The target variant keys a model of `pair` can write: the pair's own variants; for a pair that declares none
    although its target has variants Qiao knows (Chinese from Firefox's en→zh, which has no script token and writes
    Simplified only), the target's default variant alone; () for a target without variants (English).

    This is what a request for a variant the model lacks actually gets, so the window, the CLI and the API can say
    so and record the truth instead of the variant that was asked for."""
    return written_keys(pair.target.code, pair.variant_keys)


def written_keys(target: str, variant_keys: tuple[str, ...]) -> tuple[str, ...]:
    """written_variants for a target language code and a model's variant keys (the API knows a pair by these)."""
    if variant_keys:
        return variant_keys
    facts = FACTS.get(target)
    return (facts.default_variant,) if facts is not None and facts.default_variant else ()


def written_variant(pair: LanguagePair, wanted: str | None) -> str | None:
    """The variant a request for `wanted` (None: the model's default) is written in by a model of `pair`: `wanted`
    when the model writes it, else the pair's default (the first it writes); None for a target without variants."""
    written = written_variants(pair)
    if not written:
        return None
    if wanted in written:
        return wanted
    return pair.default_variant if pair.default_variant in written else written[0]
