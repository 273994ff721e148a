"""A broken model as a person meets it: worded in the interface language, the intact precision offered, the raw
engine text only under Details, and buttons that never fail silently."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from engine.errors import FileProblem
from gui import problem_text
from gui.i18n import install_translators
from gui.settings import Key
from tests.gui.fakes import BrokenManifest, FakeFactory, bundle_error, missing_locator

KINDS = (
    *("missing", "size", "hash", "unreadable", "outside", "not-file"),
    *("unlisted", "manifest", "format", "precision", "damaged"),
)


def damaged(precision: str) -> Exception:
    file = f"{precision}/decoder.onnx"
    return bundle_error("/models/opus", [FileProblem("hash", file, f"{file}: sha256 abc != def")])


def test_a_corrupt_int8_model_offers_the_intact_fp32_and_the_setting_follows(qtbot, make_window, settings):
    factory = FakeFactory(fail_for={"int8": damaged("int8")})
    window = make_window(factory, wait_ready=False)
    qtbot.waitUntil(lambda: window.problem is not None, timeout=5000)
    panel = window.model_panel
    assert panel.use_button.isVisible() and panel.use_button.text() == "Use FP32 instead"
    assert "The file int8/decoder.onnx is damaged" in panel.details.text()
    assert "sha256" not in panel.details.text() + panel.body.text(), "the raw engine text stays under Details"
    assert not panel.raw_details.isVisible()
    qtbot.mouseClick(panel.details_button, Qt.MouseButton.LeftButton)
    assert panel.raw_details.isVisible() and "sha256 abc != def" in panel.raw_details.text()
    qtbot.mouseClick(panel.use_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.model is not None, timeout=5000)
    assert window.model.precision == "fp32" and settings.get(Key.PRECISION) == "fp32", "the setting names what runs"
    assert not panel.isVisible() and window.translate_button.isEnabled()
    assert window.precision_label.text() == "FP32"
    assert "FP32" in window.status_message() and "INT8" in window.status_message()


def test_no_use_button_when_no_other_precision_is_intact(qtbot, make_window):
    factory = FakeFactory(fail_for={"int8": damaged("int8"), "fp32": damaged("fp32")})
    window = make_window(factory, wait_ready=False)
    qtbot.waitUntil(lambda: window.problem is not None, timeout=5000)
    assert not window.model_panel.use_button.isVisible()


def test_a_failed_switch_in_settings_keeps_the_setting_on_what_runs(qtbot, make_window, settings):
    factory = FakeFactory()
    window = make_window(factory)
    factory.translator.fail_for["fp32"] = damaged("fp32")
    settings.set(Key.PRECISION, "fp32")
    qtbot.waitUntil(lambda: "fp32/decoder.onnx" in window.notice.label.text(), timeout=5000)
    qtbot.waitUntil(lambda: settings.get(Key.PRECISION) == "int8", timeout=5000)
    assert window.model.precision == "int8" and window.precision_label.text() == "INT8"
    assert "Still using INT8" in window.notice.label.text() and "sha256" not in window.notice.label.text()


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_every_problem_kind_is_worded_for_a_person_with_the_file_and_the_fix(qapp, language):
    install_translators(language)
    for kind in KINDS:
        issue = FileProblem(kind, "int8/encoder.onnx", f"int8/encoder.onnx: raw english detail for {kind}")
        line = problem_text.describe(issue)
        assert "raw english" not in line and line
        if kind not in ("manifest", "format", "precision"):
            assert "int8/encoder.onnx" in line, (kind, line)
        if language == "zh_CN":
            assert re.search("[\u4e00-\u9fff]", line), f"{kind} not translated: {line}"
    fix = problem_text.fix([FileProblem("hash", "x", "y")])
    assert ("下载" in fix) if language == "zh_CN" else ("build or download the model again" in fix.lower())


def test_the_chinese_interface_shows_no_raw_english_engine_text(qtbot, make_window, settings):
    install_translators("zh_CN")
    window = make_window(FakeFactory(fail_for={"int8": damaged("int8")}), wait_ready=False)
    qtbot.waitUntil(lambda: window.problem is not None, timeout=5000)
    panel = window.model_panel
    shown = " ".join(w.text() for w in (panel.title, panel.body, panel.details, panel.use_button))
    assert "sha256" not in shown and "int8/decoder.onnx" in shown
    assert "FP32" in panel.use_button.text() and re.search("[\u4e00-\u9fff]", panel.use_button.text())


@pytest.mark.parametrize(
    "factory",
    [
        lambda: FakeFactory(manifest=BrokenManifest(KeyError("id"))),
        lambda: FakeFactory(manifest=BrokenManifest(TypeError("string indices must be integers, not 'str'"))),
        lambda: FakeFactory(fail=KeyError("id")),
    ],
    ids=["manifest-without-id", "model-is-a-string", "load-raises-keyerror"],
)
def test_a_malformed_manifest_never_leaves_the_window_loading(qtbot, make_window, factory):
    window = make_window(factory(), wait_ready=False)
    qtbot.waitUntil(lambda: window.problem is not None, timeout=5000)
    panel = window.model_panel
    assert not window.loading and "Loading" not in window.status_message()
    assert panel.title.text() == "The translation model could not be loaded"
    visible = " ".join(w.text() for w in (panel.title, panel.body, panel.details) if w.isVisible())
    assert "Error" not in visible and "build or download the model again" in visible.lower()
    assert re.match(r"(KeyError|TypeError)", panel.raw_details.text()), "the raw detail is kept under Details"


def test_open_model_folder_without_a_file_manager_offers_the_path(qtbot, make_window, monkeypatch, tmp_path):
    import gui.models.model_status as model_status

    monkeypatch.setattr(model_status, "open_folder", lambda path: False)  # QDesktopServices.openUrl failed
    window = make_window(locator=missing_locator(["/nowhere"]), wait_ready=False)
    qtbot.waitUntil(lambda: window.problem is not None, timeout=5000)
    expected = str(tmp_path / "data" / "Qiao" / "models" / "opus-mt-en-zh")
    QGuiApplication.clipboard().clear()
    qtbot.mouseClick(window.model_panel.open_button, Qt.MouseButton.LeftButton)
    assert window.notice.isVisible() and expected in window.notice.label.text()
    assert window.notice.action_button.isVisible() and window.notice.action_button.text() == "Copy path"
    qtbot.mouseClick(window.notice.action_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == expected


def test_try_again_that_fails_again_says_when_it_checked(qtbot, make_window):
    window = make_window(locator=missing_locator(["/nowhere"]), wait_ready=False)
    qtbot.waitUntil(lambda: window.problem is not None, timeout=5000)
    panel = window.model_panel
    assert not panel.feedback.isVisible(), "nothing to say before a retry"
    first = window.problem
    qtbot.mouseClick(panel.retry_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.problem is not first, timeout=5000)
    assert panel.feedback.isVisible()
    assert re.fullmatch(r"Still no model — checked at \d\d:\d\d:\d\d\.", panel.feedback.text())


def test_an_unexpected_engine_error_while_translating_is_worded_not_raw(qtbot, make_window, capsys):
    factory = FakeFactory()
    window = make_window(factory)

    def broken(*args, **kwargs):
        raise KeyError("id")

    factory.translator.stream = broken
    window.source.setPlainText("hello")
    window.translate()
    qtbot.waitUntil(lambda: not window.translating, timeout=5000)
    shown = window.notice.label.text()
    assert "unexpected error" in shown and "KeyError" not in shown
    assert "KeyError: 'id'" in capsys.readouterr().err, "the raw detail goes to the log for whoever reports it"
