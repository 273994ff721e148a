"""Which installed direction `qiao translate` and `qiao translate-file` use for a text (engine.text.source_language).

Forced (`--direction PAIR`, `--from/--to`, `--model`, QIAO_MODEL_DIR): that bundle translates everything, and a
text clearly in another language gets a note. Otherwise (`--direction auto`, the default) each text goes to the
installed direction that reads it; a text no installed model reads is refused with the model to get (Chinese with
only en→zh installed) or the language Qiao does not translate (Japanese, Korean), instead of coming out as
nonsense. Text without letters (numbers, a link) keeps the default direction (en→zh when installed). Translators
are loaded when first needed and kept: a file of English and Chinese lines loads each model once.

`--variant` names a script Qiao knows of the target (hans, hant) or one the model has. A model that cannot write the
one asked (Firefox's en→zh writes Simplified only) translates in the one it writes, and the command says so once on
stderr, naming an installed model that writes it; `--json` records carry the variant actually written.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from engine.config import MAX_BEAMS, EngineConfig
from engine.errors import InputError
from engine.languages import LanguagePair, offered_variants, variant_label, written_variant, written_variants
from engine.text.source_language import NAMES, Detection, DirectionChoice, choose_pair, detect_language

if TYPE_CHECKING:
    from engine.options import TranslationOptions
    from engine.pipeline.translator import Translator  # loaded on first use: the CLI's --help stays quick

AUTO = "auto"


@dataclass(frozen=True)
class Routed:
    """A text's direction: the pair key to translate it with, or `refusal` (why it is not translated)."""

    pair: str
    detected: Detection
    refusal: str | None = None
    note: str | None = None  # a forced direction that does not read the text: said, not refused

    def detected_record(self) -> dict:
        """For --json: {"language": "zh", "confidence": 100.0} ("unknown" when the text has no letters)."""
        return {"language": self.detected.language, "confidence": self.detected.confidence}


def _arrow(key: str) -> str:
    source, _, target = key.partition("-")
    return f"{NAMES.get(source, source)} → {NAMES.get(target, target)}"


def refusal(choice: DirectionChoice) -> str | None:
    """Why a text is not translated in auto mode (None: it is)."""
    found = choice.detected
    if choice.unsupported is not None:
        return (
            f"the text looks {found.name} ({found.confidence:.0f} % of its letters); Qiao translates only English "
            "and Chinese — nothing was translated"
        )
    if choice.missing is not None:
        return (
            f"the text looks {found.name} ({found.confidence:.0f} % of its letters) and no {choice.missing} "
            f"({_arrow(choice.missing)}) model is installed: get it with `qiao model download opus-mt-{choice.missing}`"
            f", or pass --direction {choice.pair} to translate it as {NAMES.get(choice.pair.split('-')[0])} anyway"
        )
    return None


class Directions:
    """The translators of one command, by pair key, and the direction of each text."""

    def __init__(self, args: argparse.Namespace) -> None:
        from engine.paths import model_dir_override
        from engine.store.installed import installed_models
        from engine.store.locate import DEFAULT_PAIR

        self._args = args
        self._translators: dict[str, Translator] = {}
        self._noted: set[str] = set()  # pair keys whose script note was said
        asked = args.direction
        self.forced = (asked is not None and asked != AUTO) or bool(args.model) or model_dir_override() is not None
        self._variants: set[str] = set()
        if self.forced:
            self.installed: tuple[str, ...] = ()
            translator = self._load(asked if asked != AUTO else None)
            self.default = translator.manifest.pair.key
            self._translators[self.default] = translator
            return
        usable = [m.pair for m in installed_models() if m.problem is None and m.pair is not None]
        self.installed = tuple(dict.fromkeys(p.key for p in usable))
        self._variants = {v for p in usable for v in offered_variants(p)}
        self.default = DEFAULT_PAIR if DEFAULT_PAIR in self.installed or not self.installed else self.installed[0]

    @property
    def auto(self) -> bool:
        """Texts may go to more than one direction."""
        return not self.forced and len(self.installed) > 1

    def route(self, text: str, current: str | None = None) -> Routed:
        """The direction for `text`; `current` (the previous text's) is kept for a text that is not clearly in
        any language (numbers, a link, an even mix)."""
        found = detect_language(text)
        if self.forced:
            choice = choose_pair(found, (), self.default)
            note = None
            if choice.missing or choice.unsupported:
                reads = NAMES.get(self.default.split("-")[0])
                note = f"the text looks {found.name}, and the {self.default} model reads {reads}"
            return Routed(self.default, found, note=note)
        if not found.clear:
            return Routed(current or self.default, found)
        choice = choose_pair(found, self.installed, self.default)
        return Routed(choice.pair, found, refusal=refusal(choice))

    def translator(self, key: str, options) -> Translator:
        """The translator for `key`, loaded once; `options` are checked against its pair on first load."""
        if key not in self._translators:
            translator = self._load(key)
            options.validate(offered_variants(translator.manifest.pair), MAX_BEAMS)
            self._translators[key] = translator
        return self._translators[key]

    def for_request(self, key: str, options: TranslationOptions) -> tuple[Translator, TranslationOptions]:
        """The translator for `key` and the options it runs: a variant it cannot write replaced by the one it writes
        (said once per direction on stderr, with an installed model that writes it)."""
        translator = self.translator(key, options)
        pair = translator.manifest.pair
        wanted = options.variant
        if wanted is None or not written_variants(pair) or wanted in written_variants(pair):
            return translator, options
        written = written_variant(pair, wanted)
        if key not in self._noted:
            self._noted.add(key)
            from engine.cli.io import say

            writers = [name for name in self._writers(key, wanted) if name != translator.bundle_dir.name]
            say(f"note: {script_note(translator.bundle_dir.name, pair, wanted, writers)}")
        return translator, options.replace(variant=written)

    def written(self, key: str, options) -> str | None:
        """The variant a loaded direction writes for `options` (None for a target without variants)."""
        translator = self._translators.get(key)
        return written_variant(translator.manifest.pair, options.variant) if translator is not None else None

    def _writers(self, key: str, wanted: str) -> list[str]:
        """Installed models of `key` that write `wanted` (names, as --model takes them)."""
        from engine.store.installed import installed_models

        return [
            m.name
            for m in installed_models()
            if m.problem is None and m.pair is not None and m.pair.key == key and wanted in written_variants(m.pair)
        ]

    def check_first(self, options) -> None:
        """The request's own mistakes once, before any text: a forced pair's variant and options."""
        if self.forced:
            translator = self._translators[self.default]
            _check_variant(translator.manifest.pair, options.variant)
            options.validate(offered_variants(translator.manifest.pair), MAX_BEAMS)
            return
        options.validate((), MAX_BEAMS)
        if options.variant is not None and self._variants and options.variant not in self._variants:
            offered = ", ".join(sorted(self._variants))
            raise InputError(f"unknown variant {options.variant!r}; the installed models offer {offered}")

    def _load(self, key: str | None) -> Translator:
        from engine.pipeline.translator import Translator
        from engine.store.installed import find_bundle

        args = self._args
        bundle = find_bundle(args.model, pair=key)
        if key is not None:
            self._note_fallback(key, bundle)
        return Translator(bundle, EngineConfig(precision=args.precision, threads=args.threads or None))

    def _note_fallback(self, key: str, bundle: Path) -> None:
        """The model chosen for `key` in the window is gone, moved or damaged and another one translates: said once
        on stderr (engine.store.choice.pick falls back silently)."""
        from engine.cli.io import say
        from engine.cli.models import fallback_note
        from engine.paths import model_dir_override
        from engine.store.choice import chosen_for
        from engine.store.installed import installed_models

        if self._args.model or model_dir_override() is not None or not chosen_for(key):
            return  # nothing chosen (the usual case): no second read of every manifest at start-up
        models = installed_models()
        used = next((m for m in models if m.path == bundle), None)
        note = fallback_note(models, key, used)
        if note is not None:
            say(f"note: {note}")


def _check_variant(pair: LanguagePair, variant: str | None) -> None:
    """An explicit --variant for a model without variants is a mistake on the command line (the window keeps one
    saved choice for both directions instead, which TranslationOptions.validate allows)."""
    if variant is not None and not written_variants(pair):
        raise InputError(f"--variant {variant}: the {pair.key} model has no target variants")


def script_note(model: str, pair: LanguagePair, wanted: str, writers: list[str]) -> str:
    """ "firefox-enzh writes Simplified Chinese only: this translation is in Simplified, not Traditional …"."""
    written = [variant_label(pair, key) for key in written_variants(pair)]
    chosen = variant_label(pair, written_variant(pair, wanted) or "")
    asked = variant_label(pair, wanted)
    only = " only" if len(written) == 1 else ""
    writes = f"{model} writes {' and '.join(written)} {pair.target.name}{only}"
    text = f"{writes}: this translation is in {chosen}, not {asked}"
    if writers:
        return f"{text} ({writers[0]} writes {asked}: --model {writers[0]})"
    return f"{text} (no installed {pair.key} model writes {asked}: `qiao model download opus-mt-{pair.key}` gets one)"


def refuse_if_needed(routed: Routed) -> None:
    """Plain (one request) output: a refusal is the command's error."""
    if routed.refusal is not None:
        raise InputError(routed.refusal)
