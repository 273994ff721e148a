"""The window's model state on its own: ModelControl given a stub of the request controller (the model, the
problem, load_model), real small widgets and recording callbacks; no worker, no window."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QLabel, QToolButton, QWidget

from gui.models.model_status import ModelStatusPanel
from gui.notice_bar import NoticeBar
from gui.settings import Key
from gui.window.model_control import ModelControl
from gui.worker.model_load import ModelInfo, ModelProblem
from tests.gui.fakes import EN_ZH, ZH_EN, FakeModel

INFO = ModelInfo("/b/en-zh", "opus-mt-en-zh", "CC-BY-4.0", "", "int8", ("int8", "fp32"), 4, 0.1, pair=EN_ZH)
MISSING = ModelProblem("missing", "no model", ("/models",), None, "/models/opus-mt-en-zh", pair_key="en-zh")


class Requests:
    """The request controller as ModelControl sees it: what is loaded, what is wrong, and a load to ask for."""

    def __init__(self) -> None:
        self.model: ModelInfo | None = None
        self.problem: ModelProblem | None = None
        self.translating = False
        self.loads = 0

    def load_model(self) -> None:
        self.loads += 1


@pytest.fixture
def control(qtbot, settings):
    def make(model_dir: str | None = None) -> tuple[ModelControl, Requests, list]:
        host = QWidget()
        qtbot.addWidget(host)
        requests, calls = Requests(), []
        control = ModelControl(
            host,
            requests,
            settings,
            notice=NoticeBar(host),
            model_panel=ModelStatusPanel(host),
            precision_label=QLabel(host),
            swap_action=QAction(host),
            swap_button=QToolButton(host),
            model_dir=model_dir,
            model_store=None,
            show_status=lambda render: calls.append(("status", render())),
            pair_changed=lambda: calls.append("pair"),
            update_actions=lambda: calls.append("actions"),
        )
        return control, requests, calls

    return make


def test_swap_is_offered_only_when_the_reverse_model_is_installed(control):
    model_control, requests, _ = control()
    requests.model = INFO
    model_control.update_swap()
    assert (
        not model_control.swap_action.isEnabled()
        and "No Chinese → English model" in model_control.swap_action.toolTip()
    )
    model_control.available_pairs = ("en-zh", "zh-en")
    model_control.update_swap()
    assert model_control.swap_action.isEnabled() and model_control.swap_button.toolTip().startswith("Swap")
    pinned, _, _ = control(model_dir="/one/bundle")
    pinned.available_pairs = ("en-zh", "zh-en")
    pinned.update_swap()
    assert not pinned.swap_action.isEnabled() and "--model" in pinned.swap_action.toolTip()


def test_the_pair_is_the_models_or_else_the_direction_settings(control, settings):
    model_control, requests, _ = control()
    settings.set(Key.DIRECTION, "zh-en")
    assert model_control.pair == ZH_EN and model_control.direction == "zh-en"
    requests.model = INFO
    assert model_control.pair == EN_ZH and model_control.direction == "en-zh"


def test_a_model_installed_for_the_direction_shown_is_loaded_if_none_is(control):
    model_control, requests, _ = control()
    requests.problem = MISSING
    zh_en = FakeModel(Path("/m/zh-en"), "opus-mt-zh-en", ZH_EN)
    model_control.models_changed([zh_en])
    assert model_control.available_pairs == ("zh-en",) and requests.loads == 0, "not the direction shown"
    en_zh = FakeModel(Path("/m/en-zh"), "opus-mt-en-zh", EN_ZH)
    model_control.loading = True
    model_control.models_changed([en_zh, zh_en])
    assert requests.loads == 0, "a load is already under way"
    model_control.loading = False
    model_control.models_changed([en_zh, zh_en])
    assert requests.loads == 1 and model_control.available_pairs == ("en-zh", "zh-en")


def test_loading_then_ready_updates_the_status_the_precision_and_the_pairs(control):
    model_control, requests, calls = control()
    model_control._model_loading("load", "int8")
    assert model_control.loading and model_control.precision_label.text() == "INT8"
    assert calls[-1] == "actions"
    requests.model = replace(INFO, pairs=("en-zh",))
    model_control._model_ready(requests.model)
    assert not model_control.loading and model_control.available_pairs == ("en-zh",)
    assert "pair" in calls and calls[-1] == "actions"
    assert any(c[0] == "status" and "opus-mt-en-zh" in c[1] for c in calls if isinstance(c, tuple))


def test_a_damaged_precision_replaced_by_another_is_said_once_ready(control, settings):
    model_control, requests, calls = control()
    requests.problem = replace(MISSING, kind="invalid", precision="int8", alternatives=("fp32",))
    model_control.use_precision("fp32")
    assert settings.get(Key.PRECISION) == "fp32"
    requests.problem, requests.model = None, replace(INFO, precision="fp32")
    model_control._model_ready(requests.model)
    said = [c[1] for c in calls if isinstance(c, tuple)]
    assert said[-1] == "Using the FP32 model because the INT8 model is damaged; the Precision setting is now FP32."
    model_control._model_ready(requests.model)
    assert "damaged" not in [c[1] for c in calls if isinstance(c, tuple)][-1], "said once"


def test_a_failed_load_shows_the_problem_and_try_again_says_it_checked(control):
    model_control, requests, calls = control()
    model_control._model_failed(replace(MISSING, pairs=("zh-en",)))
    assert model_control.available_pairs == ("zh-en",) and not model_control.loading
    assert calls[-2] == ("status", "No translation model: see the message above.")
    model_control.retry_model()
    assert requests.loads == 1 and model_control._retrying
    model_control._model_failed(MISSING)
    assert not model_control._retrying
