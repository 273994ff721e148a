"""The glossary dialog: add, edit, remove, import CSV and TSV (merge or replace), export, a malformed import's
message, the two switches, saving only on OK; and Tools → Glossary… with the requests' glossary source."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMainWindow, QMenu

from engine.glossary import Glossary, GlossaryEntry
from engine.glossary_io import read_glossary
from gui.records.glossary_dialog import CASE, SOURCE, TARGET, WHOLE, GlossaryDialog, attach_glossary
from gui.records.glossary_store import GlossaryStore
from gui.settings import Key

START = Glossary((GlossaryEntry("train", "火车"), GlossaryEntry("Qiao")))


@pytest.fixture
def store(tmp_path):
    s = GlossaryStore(tmp_path / "glossary.tsv")
    s.save(START)
    return s


@pytest.fixture
def dialog(qtbot, store, settings):
    d = GlossaryDialog(store, settings)
    qtbot.addWidget(d)
    d.show()
    return d


def cell(d, r, c):
    return d.table.item(r, c)


def test_shows_the_stored_entries(dialog):
    assert dialog.table.rowCount() == 2
    assert [cell(dialog, 0, SOURCE).text(), cell(dialog, 0, TARGET).text()] == ["train", "火车"]
    assert cell(dialog, 1, TARGET).text() == ""  # do not translate: an empty target
    assert cell(dialog, 0, CASE).checkState() == Qt.CheckState.Unchecked
    assert cell(dialog, 0, WHOLE).checkState() == Qt.CheckState.Checked
    assert dialog.entries() == START.entries
    assert dialog.protect_box.isChecked() and dialog.enabled_box.isChecked()


def test_add_edit_and_ok_saves(dialog, store, settings, qtbot):
    dialog.add_button.click()
    r = dialog.table.rowCount() - 1
    assert dialog.table.currentRow() == r
    cell(dialog, r, SOURCE).setText("GPU")
    cell(dialog, r, TARGET).setText("显卡")
    cell(dialog, r, CASE).setCheckState(Qt.CheckState.Checked)
    cell(dialog, r, WHOLE).setCheckState(Qt.CheckState.Unchecked)
    cell(dialog, 0, TARGET).setText("列车")  # edit an existing one
    dialog.protect_box.setChecked(False)
    dialog.enabled_box.setChecked(False)
    assert store.glossary() == START  # nothing is saved before OK
    with qtbot.waitSignal(store.changed, timeout=1000):
        dialog.buttons.button(dialog.buttons.StandardButton.Ok).click()
    want = Glossary(
        (GlossaryEntry("train", "列车"), GlossaryEntry("Qiao"), GlossaryEntry("GPU", "显卡", True, False)),
        protect=False,
    )
    assert store.glossary() == want
    assert read_glossary(store.path) == want  # on disk too
    assert settings.get(Key.GLOSSARY_ENABLED) is False
    assert not dialog.isVisible()


def test_an_empty_new_row_is_not_saved(dialog, store):
    dialog.add_row()
    dialog.accept()
    assert store.glossary() == START


def test_remove_and_cancel_forgets(dialog, store):
    assert not dialog.remove_button.isEnabled()
    dialog.table.selectRow(0)
    assert dialog.remove_button.isEnabled()
    dialog.remove_button.click()
    assert [e.source for e in dialog.entries()] == ["Qiao"]
    dialog.reject()
    assert store.glossary() == START


def test_the_delete_key_removes_the_selected_rows(dialog, qtbot):
    dialog.table.setFocus()
    dialog.table.selectRow(1)
    qtbot.keyClick(dialog.table, Qt.Key.Key_Delete)
    assert [e.source for e in dialog.entries()] == ["train"]


def test_import_csv_merges_when_asked(dialog, tmp_path):
    path = tmp_path / "more.csv"
    path.write_text('source,target,case_sensitive\nTrain,动车,no\n"Smith, John",约翰·史密斯,yes\n', encoding="utf-8")
    dialog.ask_import_path = lambda: str(path)
    asked = []
    dialog.ask_merge = lambda count: asked.append(count) or "merge"
    dialog.import_button.click()
    assert asked == [2]
    # "Train" (any case) replaces "train" in its place; the new term is added
    assert dialog.entries() == (
        GlossaryEntry("Train", "动车"),
        GlossaryEntry("Qiao"),
        GlossaryEntry("Smith, John", "约翰·史密斯", True, True),
    )
    assert "Imported 2 entries from more.csv" in dialog.message.text()


def test_import_tsv_replaces_when_asked(dialog, tmp_path):
    path = tmp_path / "new.tsv"
    path.write_text("# mine\nGPU\t显卡\tyes\tno\n", encoding="utf-8")
    dialog.ask_merge = lambda count: "replace"
    assert dialog.import_from(path)
    assert dialog.entries() == (GlossaryEntry("GPU", "显卡", True, False),)


def test_import_into_an_empty_table_does_not_ask(qtbot, tmp_path, settings):
    d = GlossaryDialog(GlossaryStore(tmp_path / "empty.tsv"), settings)
    qtbot.addWidget(d)
    d.ask_merge = lambda count: pytest.fail("asked")
    path = tmp_path / "a.tsv"
    path.write_text("a\tb\n", encoding="utf-8")
    assert d.import_from(path)
    assert d.entries() == (GlossaryEntry("a", "b"),)


def test_cancelled_import_changes_nothing(dialog, tmp_path):
    path = tmp_path / "a.tsv"
    path.write_text("a\tb\n", encoding="utf-8")
    dialog.ask_merge = lambda count: None
    assert not dialog.import_from(path)
    assert dialog.entries() == START.entries


def test_a_malformed_import_shows_the_message_and_keeps_the_table(dialog, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("a,b\nc,d,perhaps\n", encoding="utf-8")
    assert not dialog.import_from(path)
    assert dialog.message.isVisible()
    assert "bad.csv" in dialog.message.text() and "line 2" in dialog.message.text()
    assert "perhaps" in dialog.message.text()
    assert dialog.entries() == START.entries


@pytest.mark.parametrize(("name", "fmt", "written"), [("out.csv", None, "out.csv"), ("out", "tsv", "out.tsv")])
def test_export(dialog, tmp_path, name, fmt, written):
    dialog.ask_export_path = lambda: (str(tmp_path / name), fmt or "csv")
    dialog.export_button.click()
    path = tmp_path / written
    assert read_glossary(path) == START
    if written.endswith(".csv"):
        assert path.read_text(encoding="utf-8").splitlines()[0] == "source,target,case_sensitive,whole_word"
    assert f"Exported 2 entries to {path}" in dialog.message.text()


def test_a_failed_export_says_why(dialog, tmp_path):
    (tmp_path / "dir.tsv").mkdir()
    assert not dialog.export_to(tmp_path / "dir.tsv")
    assert "Could not export" in dialog.message.text()


def test_a_store_problem_is_shown_when_the_dialog_opens(qtbot, tmp_path, settings):
    path = tmp_path / "g.tsv"
    path.write_text("a\tb\tmaybe\n", encoding="utf-8")
    d = GlossaryDialog(GlossaryStore(path), settings)
    qtbot.addWidget(d)
    d.show()
    assert d.message.isVisible() and "kept as" in d.message.text()


def test_store_and_parent_only(qtbot, store):
    parent = QMainWindow()
    qtbot.addWidget(parent)
    d = GlossaryDialog(store, parent)
    assert d.parent() is parent and d.settings is None and not d.enabled_box.isVisibleTo(d)


class _Requests:
    glossary_source = staticmethod(lambda: None)


class _Window(QMainWindow):
    def __init__(self, settings):
        super().__init__()
        self.settings = settings
        self.requests = _Requests()
        self.help_menu = QMenu("&Help", self)
        self.menuBar().addMenu(self.help_menu)


def test_attach_adds_tools_glossary_before_help_and_sets_the_source(qtbot, store, settings):
    window = _Window(settings)
    qtbot.addWidget(window)
    action = attach_glossary(window, store)
    menus = [a.menu() for a in window.menuBar().actions()]
    assert menus == [window.tools_menu, window.help_menu]
    assert window.tools_menu.actions() == [action] and action.text() == "&Glossary…"
    assert window.requests.glossary_source() == START
    settings.set(Key.GLOSSARY_ENABLED, False)
    assert window.requests.glossary_source() is None
    settings.set(Key.GLOSSARY_ENABLED, True)
    new = Glossary((GlossaryEntry("a", "b"),))
    store.save(new)
    assert window.requests.glossary_source() == new  # always the store's current glossary
    action.trigger()
    dialog = window.glossary_menu.dialog
    assert isinstance(dialog, GlossaryDialog) and dialog.isVisible() and dialog.entries() == new.entries
    action.trigger()  # a second time: the same dialog, not two
    assert window.glossary_menu.dialog is dialog
    dialog.reject()


def test_attach_uses_an_existing_tools_menu(qtbot, store, settings):
    window = _Window(settings)
    qtbot.addWidget(window)
    window.tools_menu = window.menuBar().addMenu("&Tools")
    before = window.tools_menu
    attach_glossary(window, store)
    assert window.tools_menu is before and len(before.actions()) == 1


def test_attach_to_the_real_window(make_window, store):
    window = make_window()
    attach_glossary(window, store)
    assert window.requests.options().glossary == START


def test_a_damaged_glossary_is_reported_in_the_window(make_window, tmp_path):
    path = tmp_path / "g.tsv"
    path.write_text("a\tb\tmaybe\n", encoding="utf-8")
    window = make_window()
    attach_glossary(window, GlossaryStore(path))
    assert "kept as" in window.notice.label.text() and window.notice.isVisible()
    assert window.requests.options().glossary == Glossary()  # empty, yet it still protects placeholders
