"""Keyboard-only and screen-reader use, and the Chinese interface's wording, on the real window, worker and engine:
the tiny Firefox-family en→zh bundle (tests/conftest.py; it writes Simplified only) and the tiny opus-mt fixture
installed in one profile's models folder, as a user who imported both has them. Tab must leave every table, what
the translation pane shows only by colour and shape (margin marks, wavy underlines) must be said in words where the
cursor is, the quick popup's translation must have a name, and lists in Chinese text use the enumeration comma."""

from __future__ import annotations

import re
import shutil

import pytest
from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtGui import QAccessible, QTextCursor
from PySide6.QtWidgets import QAbstractButton, QApplication, QLabel, QTableWidget, QWidget
from shiboken6 import isValid

from gui.i18n import install_translators
from gui.settings import Key, Settings
from gui.window.main_window import MainWindow
from tests.gui.conftest import TINY_BUNDLE
from tests.gui.real_windows import real_windows

FIREFOX, OPUS = "firefox-enzh", "opus-mt-en-zh"
CJK_COMMA_LIST = re.compile(r"[\u4e00-\u9fff）], [\u4e00-\u9fff（]")  # "简体, 繁体": ASCII comma between Chinese words


@pytest.fixture
def open_window(qtbot, tmp_path, monkeypatch, bergamot_bundle_dir):
    """open_(language, variant): the window as gui.app builds it on both bundles, the Firefox one chosen for en→zh,
    its interface in `language`; English again after the test."""
    monkeypatch.delenv("QIAO_DATA_DIR", raising=False)
    monkeypatch.setattr("engine.store.locate.SOURCE_ROOT", tmp_path / "no-checkout")
    for name, source in ((FIREFOX, bergamot_bundle_dir), (OPUS, TINY_BUNDLE)):
        shutil.copytree(source, tmp_path / "data" / "Qiao" / "models" / name)
    with real_windows(qtbot, tmp_path) as open_real:

        def open_(language: str = "en", variant: str = "hans") -> MainWindow:
            settings = Settings(tmp_path / "config" / "qiao.ini")
            settings.set(Key.LIVE_TRANSLATE, False)
            settings.set(Key.DIRECTION, "en-zh")
            settings.set(Key.VARIANT, variant)
            settings.set(Key.MODEL_EN_ZH, FIREFOX)
            settings.set(Key.UI_LANGUAGE, language)
            install_translators(language)
            w = open_real(settings)
            qtbot.waitUntil(lambda: w.model_control.loaded_model() is not None, timeout=10_000)
            return w

        try:
            yield open_
        finally:
            install_translators("en")


def translate(qtbot, window, text: str) -> None:
    window.source.setPlainText(text)
    window.translate()
    qtbot.waitUntil(lambda: not window.translating and window.last_result is not None, timeout=20_000)


def press(qtbot, key, modifier=Qt.KeyboardModifier.NoModifier) -> QWidget:
    """A key pressed where the focus is; the widget that has the focus afterwards."""
    qtbot.keyClick(QApplication.focusWidget(), key, modifier)
    return QApplication.focusWidget()


def description(widget: QWidget) -> str:
    """What a screen reader hears as the widget's description (through QAccessible, as AT-SPI asks it)."""
    return QAccessible.queryAccessibleInterface(widget).text(QAccessible.Text.Description)


def test_tab_leaves_the_models_tables_so_every_button_is_reached_without_a_mouse(qtbot, open_window):
    """Qt's tables take Tab for moving between cells, round and round: a keyboard user who entered the installed
    models never reached Use, Import, Verify, Remove, Check for models or Close. Now Tab goes on to them (the arrow
    keys choose the row), Shift+Tab comes back, and Esc closes the dialog."""
    window = open_window()
    dialog = window.open_models()
    qtbot.waitUntil(lambda: dialog.installed.rowCount() == 2, timeout=10_000)
    dialog.activateWindow()
    dialog.installed.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is dialog.installed)
    for _ in range(2):  # the keyboard chooses the row of the model not in use: its buttons come alive
        press(qtbot, Qt.Key.Key_Down)
    assert dialog.installed.selectedItems() and dialog.use_button.isEnabled(), "the arrow keys select a row"
    reached: list[QWidget] = []
    for _ in range(12):
        reached.append(press(qtbot, Qt.Key.Key_Tab))
    assert reached[0] is not dialog.installed, "Tab moved between the table's cells instead of leaving it"
    close = dialog.buttons.button(dialog.buttons.StandardButton.Close)
    for button in (dialog.use_button, dialog.import_button, dialog.verify_button, dialog.remove_button):
        assert button in reached, (button.objectName(), [w.objectName() for w in reached])
    assert dialog.check_button in reached and close in reached
    assert dialog.catalogue in reached, "the download list is in the Tab order too"
    dialog.installed.setFocus()
    press(qtbot, Qt.Key.Key_Tab)
    assert press(qtbot, Qt.Key.Key_Backtab) is dialog.installed, "Shift+Tab comes back to the table"
    press(qtbot, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not isValid(dialog) or not dialog.isVisible(), timeout=2000)  # closed (and deleted)


def test_what_the_translation_pane_marks_by_colour_is_said_in_words_at_the_cursor(qtbot, open_window):
    """The margin's marks (the user's own sentence, what the guards found) and the wavy underline under an unsure
    word were shown by shape and colour, with a tooltip only a mouse reaches: a screen-reader user moving the cursor
    through the translation heard nothing of them. Now the pane's description says them for the sentence and word
    at the cursor, and drops them when the cursor leaves."""
    window = open_window()
    pane, target = window.target_pane, window.target
    translate(qtbot, window, "Thank you very much. See you tomorrow.")
    assert len(pane.sentences()) == 2
    first, second = pane.sentence_range(0), pane.sentence_range(1)
    base = pane.tr("Edit the translation; your changes are kept when the source is translated again")

    unsure = pane.tr("The model was unsure of this word (Alt+Down lists alternatives).")
    pane.set_review_options(True, 100.0)  # every word below 100 %: all underlined
    target.setFocus()
    cursor = target.textCursor()
    cursor.setPosition(first[0])
    target.setTextCursor(cursor)
    assert pane.underlined(), "the words are underlined"
    flags = pane.flag_reasons(0)  # what the guards found in the first sentence, if anything
    assert description(target).split("\n") == [base, *flags, unsure]
    pane.set_review_options(False, 100.0)  # no underline drawn: nothing said either
    assert description(target).split("\n") == [base, *flags]

    cursor.setPosition(second[1])  # the end of the second sentence, then typing there makes it the user's own
    target.setTextCursor(cursor)
    qtbot.keyClicks(target, "x")  # QTest types ASCII only
    mine = pane.origin_text("user")
    assert pane.is_edited(1)
    assert description(target).split("\n") == [base, *pane.flag_reasons(1), mine], "the margin's edit bar is said"
    target.moveCursor(QTextCursor.MoveOperation.Start)
    assert description(target).split("\n") == [base, *flags], "the first sentence is the model's, not the user's"


def test_a_flagged_sentence_is_said_not_only_marked_with_a_red_dot(qtbot, open_window):
    """The guards' findings appear as a red-orange dot beside the sentence; its reasons are now the description
    of the translation at that sentence, the same words as the dot's tooltip."""
    window = open_window()
    pane, target = window.target_pane, window.target
    translate(qtbot, window, "Thank you very much. See you tomorrow.")  # the tiny model repeats itself: flagged
    flagged = [i for i in range(len(pane.sentences())) if pane.flag_reasons(i)]
    assert flagged, "the fixture's sentence is flagged by the guards"
    start = pane.sentence_range(flagged[0])[0]
    cursor = target.textCursor()
    cursor.setPosition(start)
    target.setTextCursor(cursor)
    said = description(target).split("\n")
    for reason in pane.flag_reasons(flagged[0]):
        assert reason in said, (reason, said)


def test_the_quick_popup_translation_has_a_name_and_its_note_is_read_with_it(qtbot, open_window):
    """A screen reader on the popup's translation heard an unnamed text box, and never the line under it saying
    that the model writes Simplified only. Now the box is named (译文 in Chinese) and its description carries the
    note."""
    from gui.app import attach_desktop, attach_quick
    from gui.desktop.single_instance import InstanceRequest
    from tests.gui.quick.fakes import FakeBackend

    window = open_window("zh_CN", variant="hant")
    desktop = attach_desktop(window, use_tray=False)
    quick = attach_quick(window, desktop, backend=FakeBackend())
    qtbot.addWidget(quick.popup)
    popup = quick.popup
    try:
        desktop.handle(InstanceRequest("popup", "Thank you very much."))
        qtbot.waitUntil(lambda: popup.state == "done" and bool(popup.translation), timeout=20_000)
        iface = QAccessible.queryAccessibleInterface(popup.result)
        assert iface.text(QAccessible.Text.Name) == "译文"
        assert popup.note.isVisible() and popup.note.text()
        assert popup.note.text() in iface.text(QAccessible.Text.Description)
        desktop.handle(InstanceRequest("popup", "Good morning."))  # the next request: the old note is not read
        assert popup.note.text() == ""
        assert description(popup.result) == popup.status.text()
    finally:
        quick.shutdown()


def shown_texts(root: QWidget) -> list[str]:
    """Every text a widget under `root` shows or gives as tooltip, table cells and menu entries included."""
    texts = []
    for w in [root, *root.findChildren(QWidget)]:
        for attr in ("text", "toolTip", "windowTitle"):
            value = getattr(w, attr, None)
            if callable(value) and isinstance(w, (QAbstractButton, QLabel, QWidget)):
                try:
                    got = value()
                except TypeError:
                    continue
                if isinstance(got, str):
                    texts.append(got)
        if isinstance(w, QTableWidget):
            for r in range(w.rowCount()):
                for c in range(w.columnCount()):
                    item = w.item(r, c)
                    if item is not None:
                        texts += [item.text(), item.toolTip()]
        for action in w.actions():
            texts += [action.text(), action.toolTip()]
    return texts


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_lists_in_chinese_use_the_enumeration_comma_and_the_documents_entry_has_a_mnemonic(
    qtbot, open_window, language
):
    """The Models dialog's Writes column said "简体, 繁体", its precisions "INT8, FP32" and File → Open document's
    tooltip listed the formats as "纯文本, Markdown, 网页（HTML）", an English comma in Chinese; View → Documents was
    the one entry without a mnemonic. English keeps its ", "."""
    window = open_window(language)
    dialog = window.open_models()
    qtbot.waitUntil(lambda: dialog.installed.rowCount() == 2, timeout=10_000)
    writes = [dialog.installed.item(r, 2).text() for r in range(2)]
    tip = window.menus.open_document_action.toolTip()
    documents = window.documents_panel.toggleViewAction()
    assert documents in window.view_menu.actions()
    texts = shown_texts(window) + shown_texts(dialog) + [a.text() for a in window.view_menu.actions()]
    if language == "zh_CN":
        assert "简体、繁体" in writes and "纯文本、Markdown、" in tip, (writes, tip)
        assert [t for t in texts if CJK_COMMA_LIST.search(t)] == []
        assert documents.text() == "文档(&D)"
    else:
        assert "Simplified, Traditional" in writes and "Plain text, Markdown, " in tip, (writes, tip)
        assert documents.text() == "&Documents"
    assert QCoreApplication.translate("PairText", ", ") == ("、" if language == "zh_CN" else ", ")
    dialog.reject()
