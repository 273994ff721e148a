"""Kept sentences against the settings of now: a sentence the translation memory gave back (the user's edit or
chosen alternative) is never allowed to contradict the translation around it without a word.

The README promises that translating again keeps the user's version of each sentence. That version was written
under some settings: a script (Simplified / Traditional), a direction, a glossary. When a later translation brings it
back under others (the user switched to Traditional, added a glossary term, swapped the direction), the pane would
show Simplified inside Traditional, or a sentence without the term the glossary requires. Here each kept sentence
of a finished translation is checked (`stale_reasons`), marked in the target pane with why, announced once in the
notice bar with "Translate them again", and offered for a fresh translation from the sentence's context menu. A
fresh translation releases the kept text from the memory (gui.review.edit_memory) and translates the source again: the
other sentences come from the cache at once and every other kept sentence stays. A document translated meanwhile has
no one to ask: `settled` gives its job only the kept sentences that match the settings.

A script reason says what changed, since the script recorded is the one the model wrote, not the one the setting asked
(gui.pair_text.chosen_variant): the setting (the user switched to Traditional), the model in use (it cannot write the
chosen script: Firefox's en→zh writes Simplified only), or the model the sentence was kept from (it could not write the
script the setting asked, and the model in use can). What the setting asked when a sentence was kept is known for the
edits of this session (`KeptReview` notes it as each is made); for one from the history it is not, and the setting is
named.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from engine.glossary import Glossary
from engine.options import TranslationOptions
from engine.pipeline.glossary_match import matched_spans
from engine.results import Translation
from gui.pair_text import arrow, variant_name
from gui.review.edit_memory import KeptContext
from gui.sentence_view import EDIT_ORIGIN_MEMORY
from gui.settings import Key

SCRIPT = "script"  # written in another variant of the target language
GLOSSARY = "glossary"  # lacks a term the glossary requires for its source
DIRECTION = "direction"  # kept from the other direction

# Why a SCRIPT reason arose
BY_SETTING = "setting"  # the script setting changed since the sentence was kept
BY_MODEL = "model"  # the model in use cannot write the script the setting asks, which the kept one is in
BY_EARLIER_MODEL = "earlier model"  # kept from a model that could not write the script asked; this one can


@dataclass(frozen=True)
class Stale:
    """One way a kept sentence contradicts the settings: `then`/`now` are variant or pair keys; `term`/`target`
    the glossary entry it lacks; `cause` why a script differs (BY_SETTING, BY_MODEL, BY_EARLIER_MODEL)."""

    kind: str
    then: str = ""
    now: str = ""
    term: str = ""
    target: str = ""
    cause: str = ""


def stale_reasons(
    source: str,
    text: str,
    kept: KeptContext | None,
    now: KeptContext,
    glossary: Glossary | None,
    *,
    asked_then: str | None = None,
    asked_now: str | None = None,
) -> list[Stale]:
    """How kept `text` (the user's version of `source`, made under `kept`; None: not known) contradicts a translation
    made under `now` with `glossary`; empty when it does not. Only what is known is judged: an unknown variant is
    not guessed from the characters. `asked_then` / `asked_now`: the script the setting asked when the text was
    kept / now (None: not known), which tell a changed setting from a model that writes another script."""
    out: list[Stale] = []
    if kept is not None and kept.pair and now.pair and kept.pair != now.pair:
        out.append(Stale(DIRECTION, kept.pair, now.pair))
    elif kept is not None and kept.variant and now.variant and kept.variant != now.variant:
        out.append(
            Stale(SCRIPT, kept.variant, now.variant, cause=script_cause(kept.variant, asked_then, now, asked_now))
        )
    if glossary is not None and glossary.entries:
        seen: set[tuple[str, str]] = set()
        for span in matched_spans(Glossary(glossary.entries, protect=False), source):
            if span.target not in text and (span.label, span.target) not in seen:
                seen.add((span.label, span.target))
                out.append(Stale(GLOSSARY, term=span.label, target=span.target))
    return out


def script_cause(then: str, asked_then: str | None, now: KeptContext, asked_now: str | None) -> str:
    """Why a sentence kept in `then` differs from a translation written in `now.variant`: the model in use writes
    another script than the one asked now (BY_MODEL), the model it was kept from wrote another than the one asked
    then (BY_EARLIER_MODEL), else the setting changed (BY_SETTING, also what is said when neither ask is known)."""
    if asked_now is not None and asked_now != now.variant:
        return BY_MODEL
    if asked_then is not None and asked_then != then:
        return BY_EARLIER_MODEL
    return BY_SETTING


def describe(reason: Stale, pair: Any) -> str:
    """One line for the sentence's tooltip: what changed since it was kept."""
    if reason.kind == SCRIPT:
        name = (lambda key: variant_name(pair, key)) if pair is not None else (lambda key: key)
        if reason.cause == BY_MODEL:
            return QCoreApplication.translate(
                "KeptReview",
                "Kept in {then}; the model in use cannot write {then}, so the translation around it is in {now}.",
            ).format(now=name(reason.now), then=name(reason.then))
        if reason.cause == BY_EARLIER_MODEL:
            return QCoreApplication.translate(
                "KeptReview",
                "Kept from a model that wrote {then}; the model in use writes {now}, as your script setting asks.",
            ).format(now=name(reason.now), then=name(reason.then))
        return QCoreApplication.translate(
            "KeptReview", "Kept from before you switched to {now}: it is still in {then}."
        ).format(now=name(reason.now), then=name(reason.then))
    if reason.kind == DIRECTION:
        return QCoreApplication.translate(
            "KeptReview", "Kept from before you switched the direction: it was written for {then}."
        ).format(then=arrow(reason.then))
    return QCoreApplication.translate(
        "KeptReview", "The glossary asks for “{target}” for “{term}”; this kept version does not have it."
    ).format(target=reason.target, term=reason.term)


class KeptReview(QObject):
    """Checks each finished translation's kept sentences, marks and announces the stale ones, and translates them
    again on request (see the module docstring)."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window = window
        self.pane = window.target_pane
        self.notice_text = ""  # the notice shown for the translation now shown ("" when none)
        self.asked: str | None = None  # the script the setting asked for the translation now shown
        # source → (the context an edit of this session was kept under, the script the setting asked then)
        self._asked_when_kept: dict[str, tuple[KeptContext | None, str | None]] = {}
        window.requests.finished.connect(self._finished)  # after the window's own slot: the pane has the result
        self.pane.sentence_edited.connect(self._kept)
        self.pane.sentence_replaced.connect(self._kept)
        self.pane.menu_extenders.append(self.extend_menu)

    def context_now(self) -> KeptContext:
        """What the shown translation was made under: the loaded pair and the variant its request asked for."""
        made = self.window.requests.made
        model = getattr(self.window, "model", None)
        pair = getattr(model, "pair", None)
        return KeptContext(pair.key if pair is not None else None, made.options.variant if made is not None else None)

    def asked_now(self) -> str | None:
        """The script the setting asks (None for a target without scripts): what the model in use may not write."""
        if self.context_now().variant is None:
            return None
        settings = getattr(self.window, "settings", None)
        return settings.get(Key.VARIANT) if settings is not None else None

    @Slot(int)
    def _kept(self, index: int) -> None:
        """Sentence `index` was edited or replaced: note the script the setting asked when the user made it theirs."""
        if 0 <= index < len(self.pane.ranges):
            self._asked_when_kept[self.pane.sentence(index).source] = (self.pane.context, self.asked)

    def _asked_then(self, source: str, kept: KeptContext | None) -> str | None:
        """The script the setting asked when `source`'s kept text was made, when known (an edit of this session
        whose context is the one the memory gives back)."""
        noted = self._asked_when_kept.get(source)
        return noted[1] if noted is not None and kept is not None and noted[0] == kept else None

    @Slot(int, object)
    def _finished(self, _request_id: int, result: Translation) -> None:
        context = self.context_now()
        self.pane.context = context
        self.asked = self.asked_now()
        self._withdraw_notice()
        if result.error or not self.pane.ranges.items:
            return
        made = self.window.requests.made
        glossary = made.options.glossary if made is not None else None
        memory = self.window.requests.memory
        pair = getattr(getattr(self.window, "model", None), "pair", None)
        stale: dict[int, str] = {}
        for i in self.pane.ranges.owned():  # only the kept ones: a 70 000-sentence paste has none to build
            if self.pane.edit_origin(i) != EDIT_ORIGIN_MEMORY:
                continue
            sentence = self.pane.sentence(i)
            found = memory.kept(sentence.source)
            kept = KeptContext(*found[1]) if found is not None and found[1] is not None else None
            asked_then = self._asked_then(sentence.source, kept)
            reasons = stale_reasons(
                sentence.source, sentence.text, kept, context, glossary, asked_then=asked_then, asked_now=self.asked
            )
            if reasons:
                stale[i] = "\n".join(describe(r, pair) for r in reasons)
        self.pane.set_stale(stale)
        if stale:
            self.notice_text = (
                QCoreApplication.translate(
                    "KeptReview",
                    "A sentence you kept does not match the current settings; it is marked in the translation.",
                )
                if len(stale) == 1
                else QCoreApplication.translate(
                    "KeptReview", "{n} sentences you kept do not match the current settings; they are marked."
                ).format(n=len(stale))
            )
            label = (
                QCoreApplication.translate("KeptReview", "Translate it again")
                if len(stale) == 1
                else QCoreApplication.translate("KeptReview", "Translate them again")
            )
            self.window.notice.show_message(self.notice_text, (label, self.retranslate_all))

    def _withdraw_notice(self) -> None:
        """The notice about the translation shown before goes with it, and its action; other messages stay."""
        if self.notice_text:
            self.window.notice.withdraw(self.notice_text)
        self.notice_text = ""

    def retranslate(self, indices: list[int]) -> bool:
        """Translate the source again with the kept texts of sentences `indices` released (the model's
        translation under the settings of now replaces them); False when none of them is a kept sentence."""
        count = len(self.pane.ranges)
        sources = {self.pane.ranges.results[i].source for i in indices if 0 <= i < count}
        if not sources:
            return False
        for source in sources:
            self.pane.edits.release(source)
        self._withdraw_notice()
        self.window.translate()
        return True

    def retranslate_all(self) -> bool:
        """Every stale kept sentence of the shown translation, under the settings of now."""
        return self.retranslate(sorted(self.pane.stale()))

    def extend_menu(self, menu: QMenu, char: int) -> None:
        """On a stale kept sentence: "Translate this sentence again" (and "… all marked sentences" when several)."""
        index = self.pane.sentence_at(char)
        stale = self.pane.stale()
        if index is None or index not in stale:
            return
        before = menu.actions()[0] if menu.actions() else None
        one = QAction(QCoreApplication.translate("KeptReview", "Translate this sentence again"), menu)
        one.setToolTip(stale[index])
        one.triggered.connect(lambda _=False, i=index: self.retranslate([i]))
        actions = [one]
        if len(stale) > 1:
            every = QAction(QCoreApplication.translate("KeptReview", "Translate all marked sentences again"), menu)
            every.triggered.connect(lambda _=False: self.retranslate_all())
            actions.append(every)
        for action in actions:
            menu.insertAction(before, action)
        if before is not None:
            menu.insertSeparator(before)


class SettledMemory:
    """The window's translation memory as a document reads it (on the engine's thread): a kept sentence is given
    only when it does not contradict `now` and `glossary` (`stale_reasons`: another direction or script, a glossary
    term it lacks); otherwise None, and the model translates the sentence."""

    def __init__(self, memory: object, now: KeptContext, glossary: Glossary | None) -> None:
        self.memory, self.now, self.glossary = memory, now, glossary

    def lookup(self, source: str) -> str | None:
        found = self.memory.kept(source)  # type: ignore[attr-defined]
        if found is None:
            return None
        text, made = found
        kept = KeptContext(*made) if made is not None else None
        return None if stale_reasons(source, text, kept, self.now, self.glossary) else text


def settled(options: TranslationOptions, pair: str) -> TranslationOptions:
    """The options a document of `pair` is translated with (gui.documents.document_queue): `options` with its memory
    limited to what matches them (SettledMemory), since a document has no one to ask as the window does; a memory
    that cannot say what its sentences were made under is passed as it is."""
    memory = options.memory
    if memory is None or not hasattr(memory, "kept"):
        return options
    return replace(options, memory=SettledMemory(memory, KeptContext(pair, options.variant), options.glossary))


def attach_kept_review(window: Any) -> KeptReview:
    """Wire the kept-sentence check into `window` (kept alive as `window.kept_review`)."""
    review = KeptReview(window)
    window.kept_review = review
    return review
