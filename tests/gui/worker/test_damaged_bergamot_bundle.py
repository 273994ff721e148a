"""A damaged Firefox Translations (Bergamot) bundle in the real window, with the real worker and engine: the window
names the damaged file and what to do, and stays usable with the other installed model."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gui.settings import Key
from gui.window.main_window import MainWindow
from gui.worker.engine import local_engine


def _open(qtbot, tmp_path: Path, settings, direction: str) -> MainWindow:
    settings.set(Key.DIRECTION, direction)
    w = MainWindow(settings, tmp_path / "state" / "source.txt", engine=local_engine())
    qtbot.addWidget(w)
    w.show()
    qtbot.waitUntil(lambda: w.model is not None or w.problem is not None, timeout=20_000)
    return w


@pytest.mark.parametrize("damage", ["truncated", "emptied"])
def test_a_bergamot_manifest_too_damaged_to_state_its_direction_is_named_not_reported_missing(
    qtbot, tmp_path, settings, monkeypatch, bergamot_bundle_dir, bergamot_zh_en_bundle_dir, damage
):
    monkeypatch.delenv("QIAO_DATA_DIR", raising=False)
    models = tmp_path / "data" / "Qiao" / "models"
    enzh = models / "firefox-enzh"
    shutil.copytree(bergamot_bundle_dir, enzh)
    shutil.copytree(bergamot_zh_en_bundle_dir, models / "firefox-zhen")
    manifest = enzh / "manifest.json"
    data = manifest.read_bytes()
    manifest.write_bytes(data[: len(data) // 2] if damage == "truncated" else b"")

    w = _open(qtbot, tmp_path, settings, "en-zh")
    try:
        assert w.model is None and w.problem is not None
        # before: "No translation model found ... none was found for English → Chinese" with a download offer,
        # though the user's model is there with a damaged manifest
        assert w.problem.kind == "invalid", w.problem
        assert w.problem.bundle_dir == str(enzh)
        assert any("manifest.json" in d for d in w.problem.details), w.problem.details
        panel = w.model_panel
        assert panel.title.text() == "The translation model failed its check"
        assert panel.location.text() == str(enzh) and "manifest.json" in panel.details.text()
        assert panel.models_button.isVisibleTo(w)  # a way to replace it

        # the other direction's model still works in the same window
        assert w.swap_action.isEnabled(), w.swap_button.toolTip()
        w.swap()
        qtbot.waitUntil(lambda: w.model is not None and w.model.pair.key == "zh-en", timeout=20_000)
        assert w.problem is None
        w.source.setPlainText("我喜欢绿茶。")
        w.translate()
        qtbot.waitUntil(lambda: not w.translating, timeout=20_000)
        assert w.target.toPlainText().strip()
    finally:
        w.shutdown()
