"""The target pane: the editor the translation streams into, its heading (language, variant) and a note; once a
translation has finished, its sentences (where each is, how sure the model was, what the guards flagged, which the
user made their own).

While a translation streams the editor is read-only, so the model's text is never mixed with typing: a key that
would type is swallowed and `typed_while_read_only` lets the window say why. Once it finishes the text is the
user's to edit; each sentence's range follows every edit (gui.sentence_view), an edited sentence gets a margin
mark and its English → the user's text goes into `edits` (first in the window's translation memory), so a
re-translation gives it back. A kept sentence that came back under other settings than it was made under (another
script, direction, or a glossary term it lacks: gui.review.review_kept decides) is marked "stale" until it is edited or
translated again.
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from itertools import compress, repeat
from operator import attrgetter, eq

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QMenu, QTextEdit, QWidget

from engine.languages import Language, LanguagePair
from engine.results import (
    FLAG_ARTEFACT,
    FLAG_CONSTRAINT,
    FLAG_LENGTH,
    FLAG_NUMBERS,
    FLAG_REPETITION,
    ORIGIN_MEMORY,
    SentenceResult,
    Translation,
)
from gui.fonts import pane_font
from gui.pair_text import chosen_variant, language_name, target_heading
from gui.review.confidence import token_index, unsure_spans
from gui.review.edit_memory import EditMemory, KeptContext
from gui.review.review_colors import owned_tint, stale_tint, unsure_underline
from gui.review.review_editor import MARK_EDIT, MARK_FLAG, MARK_STALE, Mark, ReviewEditor, text_after_change
from gui.sentence_view import (
    EDIT_ORIGIN_ALTERNATIVE,
    EDIT_ORIGIN_MEMORY,
    EDIT_ORIGIN_USER,
    SentenceRanges,
    spans_fit,
)
from gui.window.pane import Pane

DEFAULT_THRESHOLD = 35


class TargetPane(Pane):
    """The translation: streamed in read-only, then editable sentence by sentence (see the module docstring)."""

    sentence_edited = Signal(int)  # the user changed sentence i's text
    sentence_replaced = Signal(int)  # replace_sentence put another text in sentence i
    text_edited = Signal()  # the shown translation changed by the user's doing (typing, a choice): save it
    sentences_changed = Signal()  # a new result's sentences are known (or they were dropped)

    def __init__(self, parent: QWidget | None = None) -> None:
        editor = ReviewEditor()
        editor.setObjectName("target")
        editor.setTabChangesFocus(True)
        super().__init__(editor, parent)
        self.editor: ReviewEditor = editor
        self.layers = editor.layers  # the alignment highlight and the unsure underlines
        self.language: Language | None = None  # None until the window knows its pair
        self.variant: str | None = None  # the variant the heading names (and the font is chosen for)
        self.edits = EditMemory()  # the session's edits, by English sentence; the window puts it in its memory
        self.context: KeptContext | None = None  # what the shown translation was made under (edits remember it)
        self._stale: dict[int, str] = {}  # kept sentences that contradict the settings now → why (the tooltip)
        # Called with the context menu and the character it opened at (gui.review.review_kept offers "Translate again")
        self.menu_extenders: list[Callable[[QMenu, int], None]] = []
        self.source_text = ""  # the source the shown sentences were translated from
        self.ranges = SentenceRanges()
        self.underline = True  # Key.CONFIDENCE_UNDERLINE
        self.threshold: float = DEFAULT_THRESHOLD  # Key.CONFIDENCE_THRESHOLD, percent
        self._streaming = False
        self._replacing = False
        self._underlined = (0, -1)  # the characters whose sentences' underlines are built
        editor.marks = self._marks
        editor.verticalScrollBar().valueChanged.connect(self._scrolled)
        editor.about_to_replace.connect(self._about_to_replace)
        editor.text_replaced.connect(self._text_replaced)
        editor.document().contentsChange.connect(self._contents_change)
        editor.cursorPositionChanged.connect(self._describe)
        self._set_editable(False)

    # ---- headings ------------------------------------------------------------------------------------------

    def retranslate(self, pair: LanguagePair | None, variant: str | None) -> None:
        """Every visible string (the heading names the language and variant); called again when the language,
        the pair or the variant changes."""
        self.language = pair.target if pair is not None else None
        self.variant = chosen_variant(pair, variant) if pair is not None else None
        if pair is None:
            self.heading.setText(self.tr("Translation"))
            self.editor.setPlaceholderText(self.tr("The translation appears here as it is written."))
            self.editor.setAccessibleName(self.tr("Translation"))
        else:
            name = language_name(pair.target)
            self.heading.setText(target_heading(pair, variant))
            self.editor.setPlaceholderText(
                self.tr("The {language} translation appears here as it is written.").format(language=name)
            )
            self.editor.setAccessibleName(self.tr("{language} translation").format(language=name))
        self._describe()

    def _describe(self) -> None:
        """The editor's description for screen readers: what can be done with it, then what the margin marks and
        the wavy underline show at the cursor only by shape and colour (the sentence's flags, a sentence kept from
        other settings or made the user's own, an unsure word), in words; read again as the cursor moves."""
        if self.editor.isReadOnly():
            lines = [self.tr("Read-only; select and copy the translation")]
        else:
            lines = [self.tr("Edit the translation; your changes are kept when the source is translated again")]
        lines += self.notes_at(self.editor.textCursor().position())
        text = "\n".join(lines)
        if text != self.editor.accessibleDescription():  # each change is an event the screen reader hears
            self.editor.setAccessibleDescription(text)

    def notes_at(self, pos: int) -> list[str]:
        """What the marks beside the sentence at character `pos` and an underline under the word there say, one
        line each (the margin's tooltip, which only a mouse reaches); nothing while the text streams in."""
        if self._streaming or not len(self.ranges):
            return []
        i = self.sentence_at(pos)
        if i is None:
            return []
        notes = list(self.flag_reasons(i))
        if i in self._stale:
            notes += self._stale[i].split("\n")
        origin = self.ranges.origin(i)
        if origin is not None:
            notes.append(self.origin_text(origin))
        start, end = self.ranges.span(i)
        if any(a <= pos <= b for a, b in self.unsure_ranges(start, end)):
            notes.append(self.tr("The model was unsure of this word (Alt+Down lists alternatives)."))
        return notes

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.LanguageChange:
            self._describe()
        elif event.type() == QEvent.Type.PaletteChange:
            self._refresh_underlines()
            self._refresh_owned()
            self.editor.update_margin()

    def apply_font(self, size: int) -> None:
        script = self.language.script if self.language is not None else "latin"
        self.editor.setFont(pane_font(script, self.variant, size))

    def set_note(self, text: str, tooltip: str = "") -> None:
        """The one-word note beside the heading (e.g. "Restored"), with its meaning as tooltip and for readers."""
        self.info.setText(text)
        self.info.setToolTip(tooltip)
        self.info.setAccessibleName(text)
        self.info.setAccessibleDescription(tooltip)

    # ---- streaming -----------------------------------------------------------------------------------------

    def begin_stream(self) -> None:
        """A translation is about to stream in: read-only until it finishes; the old sentences are gone."""
        self._streaming = True
        self._drop_sentences()
        self._set_editable(False)

    def end_stream(self) -> None:
        """Nothing streams any more (finished, failed or stopped): what is shown can be edited."""
        self._streaming = False
        self._set_editable(self.editor.document().characterCount() > 1)

    @property
    def streaming(self) -> bool:
        return self._streaming

    def append(self, text: str) -> None:
        """Add streamed text at the end; keep the view at the end if the reader was there."""
        bar = self.editor.verticalScrollBar()
        follow = bar.value() >= bar.maximum() - 2
        cursor = QTextCursor(self.editor.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text)
        if follow:
            bar.setValue(bar.maximum())

    def _set_editable(self, on: bool) -> None:
        self.editor.setReadOnly(not on)
        if not on:
            self.editor.setTextInteractionFlags(
                Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
            )
        self._describe()

    # ---- the finished result -------------------------------------------------------------------------------

    def set_result(self, translation: Translation, source_text: str) -> None:
        """The shown text is `translation.text`, finished: know its sentences, and let the user edit it."""
        self._streaming = False
        text = self.editor.toPlainText()
        self.source_text = source_text
        results = translation.sentences if text == translation.text else []
        spans = list(map(attrgetter("target_span"), results))
        if not spans_fit(spans, len(text)):
            results, spans = [], []  # a result that does not fit its own text: show it without sentences
        memory = map(eq, map(attrgetter("origin"), results), repeat(ORIGIN_MEMORY))
        origins = dict.fromkeys(compress(range(len(results)), memory), EDIT_ORIGIN_MEMORY)
        self.ranges.reset(text, results, spans, origins)
        self._stale = {}
        self._set_editable(bool(text))
        self._refresh_underlines()
        self._refresh_owned()
        self.editor.update_margin()
        self._describe()
        self.sentences_changed.emit()

    def _drop_sentences(self) -> None:
        had = bool(self.ranges.items)
        self.ranges.reset(self.editor.toPlainText() if not self._streaming else "")
        self._stale = {}
        self.editor.layers.set("underline", [])
        self.editor.layers.set("owned", [])
        self.editor.update_margin()
        self._describe()
        if had:
            self.sentences_changed.emit()

    def _about_to_replace(self) -> None:
        """Before the program replaces the whole text: no sentence is left to follow (nor to take for edited)."""
        had = bool(self.ranges.items)
        self.ranges.reset("")
        self._stale = {}
        self.editor.layers.set("highlight", [])
        if had:
            self.sentences_changed.emit()

    def _text_replaced(self) -> None:
        """The program put a whole new text in (a restore, a clear, the streamed text made final)."""
        self._drop_sentences()
        self.ranges.text = self.editor.toPlainText()
        if not self._streaming:
            self._set_editable(bool(self.ranges.text))

    # ---- the sentences -------------------------------------------------------------------------------------

    def sentences(self) -> list[SentenceResult]:
        """The shown sentences now, in reading order: replaced ones as replaced, each `target_span` where the
        sentence is in the editor now and `text` what the editor shows there."""
        return [self.sentence(i) for i in range(len(self.ranges))]

    def sentence(self, i: int) -> SentenceResult:
        return dataclasses.replace(self.ranges.results[i], target_span=self.ranges.span(i), text=self.ranges.current(i))

    def sentence_at(self, pos: int) -> int | None:
        return self.ranges.index_at(pos)

    def sentence_range(self, i: int) -> tuple[int, int]:
        return self.ranges.span(i)

    def edit_origin(self, i: int) -> str | None:
        """Whose text sentence i is: None (the model's), or EDIT_ORIGIN_USER / _ALTERNATIVE / _MEMORY."""
        return self.ranges.origin(i)

    def is_edited(self, i: int) -> bool:
        """The text is the user's own (typed now, or their earlier version from the memory), not the model's."""
        return self.ranges.origin(i) in (EDIT_ORIGIN_USER, EDIT_ORIGIN_MEMORY)

    def token_at(self, pos: int) -> tuple[int, int] | None:
        """(sentence, token position) of the token at editor position `pos`; None outside a sentence, in an edited
        one, or where the result has no tokens."""
        i = self.sentence_at(pos)
        if i is None or self.is_edited(i):
            return None
        result = self.ranges.results[i]
        t = token_index(result, pos - self.ranges.starts[i])
        return (i, t) if t is not None and t < len(result.tokens) else None

    def replace_sentence(self, i: int, result: SentenceResult, *, origin: str, text: str | None = None) -> None:
        """Put `result`'s text (`text` when given, else `result.text`) in place of sentence i; nothing else in
        the document changes. `origin` is "alternative" (the user chose it) or "memory" (their earlier edit)."""
        if origin not in (EDIT_ORIGIN_ALTERNATIVE, EDIT_ORIGIN_MEMORY):
            raise ValueError(f"unknown origin {origin!r}")
        new = text if text is not None else result.text
        if not new and result.target_span[1] > result.target_span[0]:
            raise ValueError("the result carries no text to put in the sentence")
        start, end = self.ranges.span(i)
        kept = self.ranges.results[i]
        cursor = QTextCursor(self.editor.document())
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        self._replacing = True
        try:
            cursor.insertText(new)
        finally:
            self._replacing = False
        placed = dataclasses.replace(
            result,
            index=kept.index,
            source=kept.source,
            source_span=kept.source_span,
            target_span=(start, start + len(new)),
            text=new,
        )
        self.ranges.replace(i, placed, new, self.ranges.text)
        self.ranges.set_origin(i, origin, was=True)
        self._stale.pop(i, None)
        self._keep_edit(i)
        self._refresh_underlines()
        self._refresh_owned()
        self.editor.update_margin()
        self._describe()
        self.sentence_replaced.emit(i)
        self.text_edited.emit()

    # ---- edits ---------------------------------------------------------------------------------------------

    def rows_of(self, i: int) -> range:
        """The rows of sentence i's English: itself, or every part of a sentence the engine split in parts."""
        results = self.ranges.results
        span = results[i].source_span
        first, last = i, i
        while first > 0 and results[first - 1].source_span == span:
            first -= 1
        while last + 1 < len(results) and results[last + 1].source_span == span:
            last += 1
        return range(first, last + 1)

    def _keep_edit(self, i: int) -> None:
        """The edit memory holds the user's text for sentence i's English (all its parts), or nothing when it is
        the model's again."""
        rows = self.rows_of(i)
        source = self.ranges.results[i].source
        if any(self.ranges.origin(r) is not None for r in rows):
            text = self.ranges.text[self.ranges.starts[rows[0]] : self.ranges.ends[rows[-1]]]
            self.edits.remember(source, text, self.context)
        else:
            self.edits.forget(source)

    def _contents_change(self, pos: int, removed: int, added: int) -> None:
        if self.editor.replacing:
            return  # setPlainText / clear: the program's text, not an edit
        if not self.ranges.items:
            # Streamed text (read when it finishes), or a text without sentences: nothing to follow
            if not self._streaming and not self._replacing and not self.editor.isReadOnly():
                self.text_edited.emit()
            return
        old = self.ranges.text
        new_text = text_after_change(self.editor, old, pos, removed)
        if self._replacing:
            self.ranges.text = new_text
            return
        if new_text == old:
            return
        removed = max(0, min(removed, len(old) - pos))
        touched = self.ranges.apply(pos, removed, len(new_text) - len(old) + removed, new_text)
        changed_origin = False
        ranges = self.ranges
        for i in touched:
            self._stale.pop(i, None)  # the user has seen it and made it theirs under the settings of now
            now = ranges.current(i)
            before = ranges.origin(i)
            ranges.set_origin(i, ranges.was(i) if now == ranges.original(i) else EDIT_ORIGIN_USER)
            self._keep_edit(i)
            changed_origin |= ranges.origin(i) != before
        if changed_origin:
            self._refresh_underlines()
        if touched:
            self._refresh_owned()
            self.editor.update_margin()
            self._describe()
        for i in touched:
            self.sentence_edited.emit(i)
        if not self.editor.isReadOnly():
            self.text_edited.emit()

    # ---- confidence and marks ------------------------------------------------------------------------------

    def set_review_options(self, underline: bool, threshold: float) -> None:
        """Key.CONFIDENCE_UNDERLINE and Key.CONFIDENCE_THRESHOLD (percent) as the settings have them."""
        self.underline, self.threshold = underline, threshold
        self._refresh_underlines()
        self._describe()

    def unsure_ranges(self, first: int = 0, last: int | None = None) -> list[tuple[int, int]]:
        """The editor ranges of unsure words in the sentences that reach characters first..last (all by
        default); empty with the underline switched off."""
        ranges = self.ranges
        if not self.underline or not len(ranges):
            return []
        out = []
        begin = bisect_left(ranges.ends, first)
        end = len(ranges) if last is None else bisect_right(ranges.starts, last)
        for i in range(begin, end):
            result = ranges.results[i]
            if not result.logprobs or ranges.origin(i) in (EDIT_ORIGIN_USER, EDIT_ORIGIN_MEMORY):
                continue
            start = ranges.starts[i]
            out.extend((start + a, start + b) for a, b in unsure_spans(result, ranges.original(i), self.threshold))
        return out

    def _refresh_underlines(self) -> None:
        """Underline the unsure words on screen (and a screen's worth around them): a 70 000-sentence document
        costs no more than a short one; scrolling brings the next ones (see `_scrolled`)."""
        if not len(self.ranges) or not self.underline:
            self._underlined = (0, -1)
            self.editor.layers.set("underline", [])
            return
        first, last = self.editor.visible_range()
        spare = max(2000, last - first)
        first, last = max(0, first - spare), last + spare
        self._underlined = (first, last)
        fmt = QTextCharFormat()
        fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
        fmt.setUnderlineColor(unsure_underline(self.editor.palette()))
        selections = []
        doc = self.editor.document()
        for a, b in self.unsure_ranges(first, last):
            selection = QTextEdit.ExtraSelection()
            cursor = QTextCursor(doc)
            cursor.setPosition(a)
            cursor.setPosition(b, QTextCursor.MoveMode.KeepAnchor)
            selection.cursor = cursor
            selection.format = fmt
            selections.append(selection)
        self.editor.layers.set("underline", selections)

    # ---- kept sentences that no longer match the settings -------------------------------------------------------

    def set_stale(self, stale: dict[int, str]) -> None:
        """Sentences (index → why, one reason a line) kept from other settings than the shown translation's."""
        self._stale = {i: why for i, why in stale.items() if 0 <= i < len(self.ranges)}
        self._refresh_owned()
        self.editor.update_margin()
        self._describe()

    def stale(self) -> dict[int, str]:
        """The kept sentences marked as contradicting the settings now, with why."""
        return dict(self._stale)

    def _refresh_owned(self) -> None:
        """A faint tint under the user's own sentences (typed, chosen, remembered), beside their margin bar; an
        amber one under those kept from other settings."""
        palette = self.editor.palette()
        tint, warn = owned_tint(palette), stale_tint(palette)
        selections = []
        doc = self.editor.document()
        for i in sorted(set(self.ranges.owned()) | set(self._stale)):
            start, end = self.ranges.span(i)
            if start >= end:
                continue
            selection = QTextEdit.ExtraSelection()
            cursor = QTextCursor(doc)
            cursor.setPosition(start)
            cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
            selection.cursor = cursor
            selection.format.setBackground(warn if i in self._stale else tint)
            selections.append(selection)
        self.editor.layers.set("owned", selections)

    def _scrolled(self) -> None:
        """New lines on screen: underline them if they are outside what was underlined."""
        if not len(self.ranges) or not self.underline:
            return
        first, last = self.editor.visible_range()
        done_first, done_last = self._underlined
        if first < done_first or last > done_last:
            self._refresh_underlines()

    def underlined(self) -> list[tuple[int, int]]:
        """The ranges the editor draws a wavy underline under now (its extra selections)."""
        return [(s.cursor.selectionStart(), s.cursor.selectionEnd()) for s in self.editor.layers.get("underline")]

    def _marks(self, first: int, last: int) -> list[Mark]:
        """The margin marks of the sentences on screen (characters first..last)."""
        ranges = self.ranges
        marks = []
        for i in range(bisect_left(ranges.ends, first), bisect_right(ranges.starts, last)):
            start, end = ranges.span(i)
            reasons = self.flag_reasons(i)
            if reasons:
                marks.append(Mark(start, end, MARK_FLAG, "\n".join(reasons)))
            origin = ranges.origin(i)
            if i in self._stale:
                marks.append(Mark(start, end, MARK_STALE, self._stale[i]))
            if origin is not None:
                marks.append(Mark(start, end, MARK_EDIT, self.origin_text(origin)))
        return marks

    def flag_reasons(self, i: int) -> list[str]:
        """Why the guards flagged sentence i, one line each (the engine's detail, else a general wording)."""
        result = self.ranges.results[i]
        if not result.flags and not result.unmet:
            return []
        general = {
            FLAG_LENGTH: self.tr("The translation is much longer or shorter than the source suggests."),
            FLAG_NUMBERS: self.tr("A number, address or code of the source is missing or changed."),
            FLAG_REPETITION: self.tr("The model repeated itself; the repetition was cut."),
            FLAG_ARTEFACT: self.tr("A subtitle note such as “(掌声)” was kept out of the translation."),
            FLAG_CONSTRAINT: self.tr("A glossary term could not be used."),
        }
        lines = [flag.detail or general.get(flag.kind, flag.kind) for flag in result.flags]
        if not any(flag.kind == FLAG_CONSTRAINT for flag in result.flags):  # the guards name each term already
            lines += [
                self.tr("The glossary term “{term}” could not be placed.").format(term=term) for term in result.unmet
            ]
        return lines

    def origin_text(self, origin: str) -> str:
        if origin == EDIT_ORIGIN_USER:
            return self.tr("You edited this sentence; translating again keeps your version.")
        if origin == EDIT_ORIGIN_ALTERNATIVE:
            return self.tr("You chose this alternative; translating again keeps it.")
        return self.tr("Your version of this sentence, kept from your earlier edit.")
