"""Documents go to the installed direction that reads them, in the window as in `qiao translate-file` (issue #26
item 3): the real window, worker and engine on both fixture bundles installed in a scratch QIAO_DATA_DIR. A Chinese
.txt queued while the window is English → Chinese is translated by the zh→en bundle (loaded beside the window's,
which keeps its direction); without that bundle the row says which model to get; Japanese is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import BUNDLE, ZH_EN_BUNDLE
from tests.gui.test_real_window_documents import wait_ended
from tests.gui.window.test_language_switch import oracle, real_window  # noqa: F401 - fixtures

CHINESE = ["非常感谢。", "明天见。"]
ENGLISH = ["Thank you very much.", "See you tomorrow."]


def _txt(path: Path, lines: list[str]) -> Path:
    path.write_text("\n\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_chinese_document_is_translated_by_the_zh_en_bundle(qtbot, real_window, oracle, tmp_path):  # noqa: F811
    window = real_window()
    assert window.direction == "en-zh"
    zh = _txt(tmp_path / "zh.txt", CHINESE)
    en = _txt(tmp_path / "en.txt", ENGLISH)
    window.documents.add([zh, en])
    done = {e.source.name: e for e in wait_ended(qtbot, window, 2)}
    assert all(e.state.name == "DONE" for e in done.values()), [(e.state, e.reason) for e in done.values()]
    assert done["zh.txt"].output == tmp_path / "zh.en.txt"  # named for the language it was translated into
    assert done["en.txt"].output == tmp_path / "en.zh.txt"
    got_en = done["zh.txt"].output.read_text(encoding="utf-8").split("\n\n")
    assert [t.strip() for t in got_en if t.strip()] == [oracle("zh-en", t) for t in CHINESE]
    got_zh = done["en.txt"].output.read_text(encoding="utf-8").split("\n\n")
    assert [t.strip() for t in got_zh if t.strip()] == [oracle("en-zh", t) for t in ENGLISH]
    assert window.direction == "en-zh"  # the window keeps its own direction


def test_without_the_zh_en_bundle_the_row_names_the_model(qtbot, real_window, tmp_path):  # noqa: F811
    window = real_window(bundles=(BUNDLE,))
    zh = _txt(tmp_path / "zh.txt", CHINESE)
    window.documents.add([zh])
    (entry,) = wait_ended(qtbot, window)
    assert entry.state.name == "FAILED"
    message = window.documents_panel.rows[entry.key].detail.text()
    assert "opus-mt-zh-en" in message and "Chinese" in message, message
    assert not (tmp_path / "zh.zh.txt").exists()  # nothing written that looks like a translation


@pytest.mark.parametrize("bundles", [(BUNDLE, ZH_EN_BUNDLE)])
def test_a_japanese_document_is_refused(qtbot, real_window, tmp_path, bundles):  # noqa: F811
    window = real_window(bundles=bundles)
    ja = _txt(tmp_path / "ja.txt", ["ありがとうございます。", "また明日ね。"])
    window.documents.add([ja])
    (entry,) = wait_ended(qtbot, window)
    assert entry.state.name == "FAILED"
    assert "Japanese" in window.documents_panel.rows[entry.key].detail.text()
