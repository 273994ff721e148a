"""Click a word of the translation → its alternatives; choose one → the sentence is rewritten from there.

`attach_alternatives(window)` wires the target pane (its sentence API: `sentences`, `sentence_at`, `sentence_range`,
`token_at`, `replace_sentence`, `is_edited`), the window's worker (review requests) and the window's options:

- a click (not a drag, not a selection) on a word of a machine-translated sentence opens the popup for that token
  position; Alt+Down opens it at the text cursor's token; the popup lists the candidate words as soon as the worker
  has them (`alternatives_progress`: their rests "…", filled in as they are decoded), then the final list
  (`alternatives_ready`);
- taking an alternative asks the worker for that sentence with the alternative's tokens forced
  (`worker.sentence`; one whose rest was still being decoded forces its start up to the word, which decodes to what
  its finished rest would have been), then replaces exactly that sentence (origin "alternative"); nothing else
  changes;
- while the pointer rests on a sentence (or the text cursor enters one), the worker decodes its start ahead
  (`worker.prepare_alternatives`, stopped by anything else), so a click there gets its words without decoding;
- right-click on a sentence adds its n-best list (`SentenceResult.alternatives`) to the editor's context menu; when
  the shown result has none, "More translations…" re-runs the sentence with n-best asked for
  (`review_requests.more_translations_options`, a plain `sentence` request) and lists them in the popup.

Every answer is checked against the sentence as it is now: one that comes after the sentence changed (edited,
replaced, re-translated) is dropped, never applied to the wrong text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, Qt
from PySide6.QtGui import QAction, QContextMenuEvent, QKeyEvent, QMouseEvent, QTextCursor
from PySide6.QtWidgets import QApplication, QMenu, QPlainTextEdit

from engine.options import TranslationOptions
from engine.results import Alternative, SentenceResult
from gui.review.alternatives_popup import AlternativesPopup
from gui.worker.review import REVIEW, more_translations_options
from gui.worker.scheduler import CANCELLED, INTERNAL, NO_MODEL

ORIGIN_ALTERNATIVE = "alternative"  # gui.sentence_view.EDIT_ORIGIN_ALTERNATIVE
K = 5  # alternatives asked for per word
MENU_TEXT_CHARS = 60  # an n-best entry longer than this is shortened in the menu (the whole text is its tooltip)


@dataclass(frozen=True)
class _Target:
    """A sentence as it was when the user asked; an answer applies only while it is still so."""

    index: int
    source: str
    tokens: tuple[int, ...]
    text: str


@dataclass(frozen=True)
class _Asked:
    """A review request the controller waits for, and what its answer is for."""

    request_id: int
    target: _Target
    options: TranslationOptions  # the options of the sentence's own translation request (a choice is re-run with them)
    kind: str  # "alternatives" (fill the popup) | "nbest" (fill the popup from a sentence result) | "apply"


def forced_tokens(alternative: Alternative) -> tuple[int, ...]:
    """The tokens a choice forces: all of a finished alternative; of one still being decoded, its start up to its
    word (the engine's rest after it is defined as what that prefix decodes to, beams included)."""
    if alternative.complete or alternative.position is None:
        return tuple(alternative.tokens)
    return tuple(alternative.tokens[: alternative.position + 1])


def review_pane(window: Any) -> Any:
    """The object with the target pane's sentence API: `window.target` (the brief's name) or `window.target_pane`."""
    for name in ("target", "target_pane"):
        pane = getattr(window, name, None)
        if pane is not None and hasattr(pane, "token_at") and hasattr(pane, "replace_sentence"):
            return pane
    raise TypeError("the window's target pane has no sentence API (token_at, replace_sentence)")


def editor_of(pane: Any) -> QPlainTextEdit:
    """The pane's text editor (the pane itself when it is one)."""
    return pane if isinstance(pane, QPlainTextEdit) else pane.editor


def char_at(editor: QPlainTextEdit, point: QPoint) -> int | None:
    """The index of the character drawn under `point` (viewport coordinates); None beside the text (past a line's
    end, in the margin)."""
    cursor = editor.cursorForPosition(point)
    pos = cursor.position()
    rect = editor.cursorRect(cursor)
    candidates = (pos - 1, pos) if point.x() < rect.x() else (pos, pos - 1)
    length = editor.document().characterCount() - 1
    for c in candidates:
        if not 0 <= c < length:
            continue
        left = QTextCursor(editor.document())
        left.setPosition(c)
        right = QTextCursor(editor.document())
        right.setPosition(c + 1)
        a, b = editor.cursorRect(left), editor.cursorRect(right)
        if a.top() != b.top() or editor.document().characterAt(c) in "\u2029\n":
            continue  # the character ends a line: only its own line's glyph counts
        if a.x() <= point.x() < b.x() and a.top() <= point.y() <= a.bottom():
            return c
    return None


class AlternativesController(QObject):
    """See the module docstring."""

    def __init__(self, window: Any) -> None:
        super().__init__(window if isinstance(window, QObject) else None)
        self.window = window
        self.pane = review_pane(window)
        self.editor = editor_of(self.pane)
        self.worker = window.engine.worker
        self.popup = AlternativesPopup(self.editor)
        self.popup.forward_to = self.editor
        self.popup.chosen.connect(self._chosen)
        self.popup.dismissed.connect(self._dismissed)
        self.worker.alternatives_ready.connect(self._alternatives_ready)
        progress = getattr(self.worker, "alternatives_progress", None)  # a worker without it sends the final list only
        if progress is not None:
            progress.connect(self._alternatives_progress)
        self.worker.sentence_ready.connect(self._sentence_ready)
        self.worker.review_failed.connect(self._review_failed)
        self.editor.document().contentsChanged.connect(self._text_changed)
        self._viewport = self.editor.viewport()  # kept: the filter must not call into a widget being destroyed
        self._viewport.installEventFilter(self)
        self._viewport.setMouseTracking(True)  # hovering prepares the sentence under the pointer
        self.editor.cursorPositionChanged.connect(self._cursor_moved)
        self._prepared: _Target | None = None  # the sentence whose start the worker was last asked to prepare
        self.editor.installEventFilter(self)
        self._asked: _Asked | None = None  # what the popup shows (alternatives / n-best)
        self._applying: _Asked | None = None  # a taken choice being decoded
        self._press: QPoint | None = None

    # ---- asking ---------------------------------------------------------------------------------------------

    def open_at_char(self, char: int) -> bool:
        """Open the popup for the token that produced character `char`; False where there is none (an edited
        sentence, between sentences, a choice still being applied)."""
        if self._applying is not None:
            return False
        found = self.pane.token_at(char)
        if found is None:
            return False
        index, position = found
        target = self._target(index)
        sentence = self.pane.sentences()[index]
        if target is None or not 0 <= position < len(target.tokens) or position >= len(sentence.token_spans):
            return False
        start, end = sentence.token_spans[position]
        options = self.window.requests.options()
        request_id = self.worker.alternatives(target.source, target.tokens, position, options, k=K)
        self._asked = _Asked(request_id, target, options, "alternatives")
        begin = self.pane.sentence_range(index)[0]
        self.popup.set_text_font(self.editor.font())
        self.popup.open_at(self._anchor(begin + start, begin + end), target.text, start, target.text[start:end])
        return True

    def open_at_cursor(self) -> bool:
        """Alt+Down: the token at the text cursor (the one after it; at a sentence's end, the one before)."""
        pos = self.editor.textCursor().position()
        return any(self.open_at_char(c) for c in (pos, pos - 1) if c >= 0)

    def more_translations(self, index: int, at: QPoint | None = None) -> int | None:
        """Re-run sentence `index` asking for n-best; the popup lists them. Returns the request id."""
        target = self._target(index)
        if target is None or self._applying is not None:
            return None
        options = self.window.requests.options()
        model = getattr(self.window, "model", None)
        more = more_translations_options(options, getattr(model, "default_beams", None))
        request_id = self.worker.sentence(target.source, more, ())
        self._asked = _Asked(request_id, target, options, "nbest")
        begin, end = self.pane.sentence_range(index)
        anchor = QRect(at, at) if at is not None else self._anchor(begin, end)
        self.popup.set_text_font(self.editor.font())
        self.popup.open_at(anchor, target.text, len(target.text))
        return request_id

    def take(self, index: int, alternative: Alternative) -> int | None:
        """Replace sentence `index` with `alternative` (decoded with its tokens forced, for its scores and spans)."""
        target = self._target(index)
        if target is None:
            return None
        return self._apply(target, self.window.requests.options(), alternative)

    def extend_menu(self, menu: QMenu, char: int, at: QPoint | None = None) -> None:
        """Put the n-best list of the sentence at `char` first in `menu` (or "More translations…")."""
        index = self.pane.sentence_at(char)
        if index is None or self._target(index) is None:
            return
        sentence: SentenceResult = self.pane.sentences()[index]
        before = menu.actions()[0] if menu.actions() else None
        added: list[QAction] = []
        alternatives = [a for a in sentence.alternatives if a.text != self._target(index).text]  # type: ignore[union-attr]
        if alternatives:
            title = QAction(self.tr("Other translations"), menu)
            title.setEnabled(False)
            added.append(title)
            for alt in alternatives:
                text = alt.text if len(alt.text) <= MENU_TEXT_CHARS else alt.text[: MENU_TEXT_CHARS - 1] + "…"
                action = QAction(text.replace("&", "&&"), menu)
                action.setToolTip(alt.text)
                action.triggered.connect(lambda _=False, i=index, a=alt: self.take(i, a))
                added.append(action)
        else:
            action = QAction(self.tr("More translations…"), menu)
            action.setToolTip(self.tr("Translate this sentence again and list other ways to say it"))
            action.triggered.connect(lambda _=False, i=index, p=at: self.more_translations(i, p))
            added.append(action)
        for action in added:
            menu.insertAction(before, action)
        if before is not None:
            menu.insertSeparator(before)

    # ---- answers --------------------------------------------------------------------------------------------

    def _alternatives_progress(self, request_id: int, alternatives: list) -> None:
        """The words (and the rests decoded so far) before the final list: shown at once, rows updated in place."""
        if alternatives and self._answer_for(request_id):
            self.popup.set_alternatives(alternatives)

    def _alternatives_ready(self, request_id: int, alternatives: list) -> None:
        if self._answer_for(request_id):
            self.popup.set_alternatives(alternatives)

    def _answer_for(self, request_id: int) -> bool:
        """Whether an alternatives answer is for the popup as it is open now (a stale one is dropped; one for a
        sentence that changed since closes the popup)."""
        asked = self._asked
        if asked is None or asked.request_id != request_id or asked.kind != "alternatives":
            return False
        if not self._still(asked.target):
            self._asked = None
            self.popup.close()
            return False
        return True

    def _sentence_ready(self, request_id: int, result: SentenceResult) -> None:
        asked, applying = self._asked, self._applying
        if applying is not None and applying.request_id == request_id:
            self._applying = None
            if not result.text and result.tokens:  # a producer that left the text out: never blank the sentence
                self._status(self.tr("The alternative could not be applied."))
            elif self._still(applying.target):
                self.pane.replace_sentence(applying.target.index, result, origin=ORIGIN_ALTERNATIVE)
                self._cursor_after_change(applying.target, result)
            return
        if asked is None or asked.request_id != request_id or asked.kind != "nbest":
            return
        if not self._still(asked.target):
            self._asked = None
            self.popup.close()
            return
        best = Alternative(result.text, tuple(result.tokens), result.score if result.score is not None else 0.0)
        self.popup.set_alternatives([best, *result.alternatives])

    def _cursor_after_change(self, target: _Target, result: SentenceResult) -> None:
        """The text cursor goes after the first word that changed, where the user was looking (Qt would leave it
        after the whole new sentence, and the alignment would then tint the next one)."""
        start = self.pane.sentence_range(target.index)[0]
        changed = next((k for k, (a, b) in enumerate(zip(target.tokens, result.tokens)) if a != b), 0)
        spans = result.token_spans
        offset = spans[changed][1] if changed < len(spans) else 0
        cursor = self.editor.textCursor()
        cursor.setPosition(min(start + offset, len(self.editor.toPlainText())))
        self.editor.setTextCursor(cursor)

    def _review_failed(self, request_id: int, message: str) -> None:
        if self._applying is not None and self._applying.request_id == request_id:
            self._applying = None
            if message != CANCELLED:
                self._status(self._wording(message))
        elif self._asked is not None and self._asked.request_id == request_id:
            self.popup.set_message(self._wording(message))

    def _text_changed(self) -> None:
        """A translation finished (or the text changed otherwise) under the open popup: close it if its sentence
        is no longer the one it was opened for (its rows would rewrite the wrong text). Any sentence may be new
        now: the next hover prepares again."""
        self._prepared = None
        if self._asked is not None and self.popup.isVisible() and not self._still(self._asked.target):
            self.popup.close()

    def _chosen(self, alternative: Alternative) -> None:
        asked, self._asked = self._asked, None
        if asked is not None and self._still(asked.target):
            self._apply(asked.target, asked.options, alternative)

    def _dismissed(self) -> None:
        if self._asked is not None and self._applying is None:
            self.worker.cancel(REVIEW)  # the answer is no longer wanted
        self._asked = None

    def _apply(self, target: _Target, options: TranslationOptions, alternative: Alternative) -> int:
        request_id = self.worker.sentence(target.source, options, forced_tokens(alternative))
        self._applying = _Asked(request_id, target, options, "apply")
        return request_id

    # ---- ahead of a click -------------------------------------------------------------------------------------

    def prepare_at_char(self, char: int) -> bool:
        """Ask the worker to decode the start of the sentence at `char` (once per sentence as it is now); False when
        there is nothing to prepare (between sentences, an edited one, already asked, a popup or choice open)."""
        prepare = getattr(self.worker, "prepare_alternatives", None)
        if prepare is None or self._applying is not None or self.popup.isVisible():
            return False
        index = self.pane.sentence_at(char)
        target = self._target(index) if index is not None else None
        if target is None or target == self._prepared:
            return False
        self._prepared = target
        prepare(target.source, target.tokens, self.window.requests.options())
        return True

    def _cursor_moved(self) -> None:
        """Alt+Down opens at the cursor: the sentence it moved into is prepared."""
        self.prepare_at_char(self.editor.textCursor().position())

    # ---- the sentence now -----------------------------------------------------------------------------------

    def _target(self, index: int) -> _Target | None:
        sentences = self.pane.sentences()
        if not 0 <= index < len(sentences) or self.pane.is_edited(index):
            return None
        sentence = sentences[index]
        if not sentence.tokens:  # the user's own text (translation memory): no token to change
            return None
        start, end = self.pane.sentence_range(index)
        return _Target(index, sentence.source, tuple(sentence.tokens), self.editor.toPlainText()[start:end])

    def _still(self, target: _Target) -> bool:
        return self._target(target.index) == target

    def _anchor(self, start: int, end: int) -> QRect:
        """The characters start..end on screen (global coordinates; the first line of them when they wrap)."""
        first = QTextCursor(self.editor.document())
        first.setPosition(start)
        last = QTextCursor(self.editor.document())
        last.setPosition(end)
        a, b = self.editor.cursorRect(first), self.editor.cursorRect(last)
        right = b.left() if b.top() == a.top() and b.left() > a.left() else a.right()
        top_left = self.editor.viewport().mapToGlobal(a.topLeft())
        return QRect(top_left, self.editor.viewport().mapToGlobal(QPoint(right, a.bottom())))

    def _wording(self, message: str) -> str:
        if message == NO_MODEL:
            return self.tr("No alternatives: no translation model is loaded.")
        if message == CANCELLED:
            return self.tr("Cancelled")
        if message.startswith(INTERNAL):
            return self.tr("No alternatives: an unexpected error in the engine.")
        return self.tr("No alternatives: {reason}").format(reason=message)

    def _status(self, text: str) -> None:
        bar = getattr(self.window, "statusBar", None)
        if callable(bar):
            bar().showMessage(text, 8000)

    # ---- events ---------------------------------------------------------------------------------------------

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if watched is self.editor and kind == QEvent.Type.KeyPress:
            key_event: QKeyEvent = event  # type: ignore[assignment]
            if key_event.key() == Qt.Key.Key_Down and key_event.modifiers() == Qt.KeyboardModifier.AltModifier:
                self.open_at_cursor()
                return True
        elif watched is self._viewport:
            if kind == QEvent.Type.MouseMove:
                move: QMouseEvent = event  # type: ignore[assignment]
                if move.buttons() == Qt.MouseButton.NoButton:
                    char = char_at(self.editor, move.position().toPoint())
                    if char is not None:
                        self.prepare_at_char(char)
            elif kind == QEvent.Type.MouseButtonPress:
                press: QMouseEvent = event  # type: ignore[assignment]
                plain = press.button() == Qt.MouseButton.LeftButton and not press.modifiers()
                self._press = press.position().toPoint() if plain else None
            elif kind == QEvent.Type.MouseButtonRelease:
                self._released(event)  # type: ignore[arg-type]
            elif kind == QEvent.Type.ContextMenu:
                return self._context_menu(event)  # type: ignore[arg-type]
        return super().eventFilter(watched, event)

    def _released(self, event: QMouseEvent) -> None:
        press, self._press = self._press, None
        if press is None or event.button() != Qt.MouseButton.LeftButton:
            return
        point = event.position().toPoint()
        if (point - press).manhattanLength() >= QApplication.startDragDistance():
            return  # a drag-selection (a click inside a selection clears it on this release, as usual)
        char = char_at(self.editor, point)
        if char is not None:
            self.open_at_char(char)

    def _context_menu(self, event: QContextMenuEvent) -> bool:
        """The editor's own menu, with the sentence's n-best first."""
        char = char_at(self.editor, event.pos())
        if char is None:
            char = self.editor.cursorForPosition(event.pos()).position()
        menu = self.editor.createStandardContextMenu(event.pos())
        self.extend_menu(menu, char, event.globalPos())
        for extend in getattr(self.pane, "menu_extenders", ()):  # e.g. "Translate this sentence again"
            extend(menu, char)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.popup(event.globalPos())
        return True


def attach_alternatives(window: Any) -> AlternativesController:
    """Wire the click-a-word alternatives into `window` (kept alive as `window.alternatives`)."""
    controller = AlternativesController(window)
    window.alternatives = controller
    return controller
