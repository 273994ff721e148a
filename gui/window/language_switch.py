"""The window follows the language people actually paste: text clearly in the other language
(engine.text.source_language)
switches the direction, and one undo (Ctrl+Z in the source, or "Undo" in the notice bar) brings back the previous
direction and text. When no installed model reads the text, the notice names the model to get; Japanese or Korean
is said to be unsupported. Nothing changes for text without a clear language (numbers, a link, an even mix).

A paste (or an input method's commit) is judged at once, so the translation starts in the right direction; typing
one key at a time is judged when it pauses (a brand name typed at the start of a Chinese sentence must not flip the
window back and forth).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, QEvent, QObject, QTimer
from PySide6.QtGui import QKeyEvent, QKeySequence, QTextCursor

from engine.text.source_language import choose_pair, detect_language
from gui import pair_text

if TYPE_CHECKING:
    from gui.window.main_window import MainWindow

TYPING_PAUSE_MS = 700
PASTE_CHARS = 2  # more than one character at once is a paste, a drop or an input method's commit: judged at once
_UNSUPPORTED = {
    "ja": QT_TRANSLATE_NOOP("LanguageSwitch", "Japanese"),
    "ko": QT_TRANSLATE_NOOP("LanguageSwitch", "Korean"),
}


class LanguageSwitch(QObject):
    """Watches the window's source text; see the module docstring."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self._checked = window.source_pane.text()  # the text as last judged: the text an undo brings back
        self._undo: tuple[str, str, str, str] | None = None  # (old direction, old text, new direction, new text)
        self._applying = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(TYPING_PAUSE_MS)
        self._timer.timeout.connect(self.check)
        # contentsChange says how much was inserted; contentsChanged comes after the source pane's shared copy of the
        # text was invalidated (the editor's textChanged comes before: the copy would still be the old text)
        self._added = 0
        window.source.document().contentsChange.connect(self._contents_change)
        window.source.document().contentsChanged.connect(self._text_changed)
        window.source.installEventFilter(self)

    @property
    def can_undo(self) -> bool:
        """An automatic switch that one undo would take back."""
        return self._undo is not None

    def _contents_change(self, position: int, removed: int, added: int) -> None:
        # Qt reports a change that replaces the whole document with its final paragraph separator counted on both
        # sides (typing "a" into an empty box: removed 1, added 2)
        whole = removed and added == self.window.source.document().characterCount()
        self._added = added - 1 if whole else added

    def _text_changed(self) -> None:
        added, self._added = self._added, 0
        if self._applying:
            return
        if self._undo is not None and self.window.source_pane.text() != self._undo[3]:
            self._undo = None  # edited since the switch: Ctrl+Z is the editor's own again
        if added >= PASTE_CHARS:
            self._timer.stop()
            self.check()
        else:
            self._timer.start()

    @contextmanager
    def paused(self) -> Iterator[None]:
        """The window's own changes of the source (⇄, a history entry) are not judged: their text belongs to the
        direction the window sets with them."""
        was, self._applying = self._applying, True
        try:
            yield
        finally:
            self._applying = was
            self._checked = self.window.source_pane.text()
            self._undo = None

    def check(self) -> bool:
        """Judge the source text now (also before an explicit Translate); True when the direction was switched."""
        self._timer.stop()
        window = self.window
        text = window.source_pane.text()
        if text == self._checked:
            return False
        before, self._checked = self._checked, text
        if not text.strip():
            return False
        direction = window.direction
        installed = () if window.model_dir else window.available_pairs
        choice = choose_pair(detect_language(text), installed, direction)
        if choice.unsupported is not None:
            name = self.tr(_UNSUPPORTED.get(choice.unsupported, choice.unsupported))
            window.notice.show_message(
                self.tr("This text looks {language}; Qiao translates only English and Chinese.").format(language=name)
            )
            return False
        if choice.missing is not None:
            self._say_missing(choice.missing)
            return False
        if not choice.switched or choice.pair == direction:
            return False
        self._undo = (direction, before, choice.pair, text)
        window.switch_direction(choice.pair)
        window.notice.show_message(
            self.tr("The text is in {language}, so Qiao switched to {pair}. Undo (Ctrl+Z) goes back.").format(
                language=pair_text.language_name(detected_language(choice.pair)), pair=pair_text.arrow(choice.pair)
            ),
            (self.tr("Undo"), self.undo),
        )
        return True

    def _say_missing(self, pair: str) -> None:
        window = self.window
        language = pair_text.language_name(detected_language(pair))
        if window.model_dir:
            message = self.tr(
                "This text looks {language}, but Qiao was started with one model folder (--model) that reads {reads}."
            ).format(language=language, reads=pair_text.language_name(detected_language(window.direction)))
            window.notice.show_message(message)
            return
        window.notice.show_message(
            self.tr(
                "This text looks {language}, and no {pair} model is installed to translate it: get "
                "opus-mt-{key} in File → Models…"
            ).format(language=language, pair=pair_text.arrow(pair), key=pair),
            (self.tr("Models…"), window.open_models),
        )

    def undo(self) -> None:
        """Back to the direction and text from before the automatic switch (one editable step in the source)."""
        if self._undo is None:
            return
        old_direction, old_text, new_direction, _ = self._undo
        self._undo = None
        window = self.window
        window.notice.dismiss()
        self._applying = True
        try:
            cursor = window.source.textCursor()  # an edit of its own: Ctrl+Z again brings the pasted text back
            cursor.select(QTextCursor.SelectionType.Document)
            cursor.insertText(old_text)
        finally:
            self._applying = False
        self._checked = window.source_pane.text()
        if window.direction == new_direction:
            window.switch_direction(old_direction)
        else:
            window.translate()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Ctrl+Z in the source right after an automatic switch undoes the switch (direction and text)."""
        kind = event.type()
        undo_key = isinstance(event, QKeyEvent) and event.matches(QKeySequence.StandardKey.Undo)
        if self._undo is not None and undo_key and kind in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress):
            if kind == QEvent.Type.KeyPress:
                self.undo()
            event.accept()
            return kind == QEvent.Type.KeyPress
        return super().eventFilter(watched, event)


def detected_language(pair: str):
    """The source Language of a pair key ("zh-en" → Chinese), as pair_text words it."""
    expected = pair_text.expected_pair(pair)
    assert expected is not None
    return expected.source
