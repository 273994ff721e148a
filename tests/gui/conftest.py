"""Shared set-up for the GUI tests: offscreen Qt, no network, a private settings/autosave folder per test."""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before any QApplication exists; never a real display in tests
sys.path.insert(0, str(Path(__file__).resolve().parent))  # `import fakes`

import pytest

from tests.gui.fakes import FakeFactory, fixed_locator

ROOT = Path(__file__).resolve().parents[2]
TINY_BUNDLE = ROOT / "tests" / "fixtures" / "tiny_marian" / "bundle"


class NetworkAttempt(AssertionError):
    pass


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple]]:
    """Any socket connection or name lookup fails loudly, and the test fails even if the app swallowed the error."""
    attempts: list[tuple] = []

    def refuse(name: str) -> Callable:
        def _refuse(*args: object, **kwargs: object) -> None:
            attempts.append((name, args[1:] if name.startswith("socket.") else args))
            raise NetworkAttempt(f"network access attempted: {name}{args}")

        return _refuse

    monkeypatch.setattr(socket.socket, "connect", refuse("socket.connect"))
    monkeypatch.setattr(socket.socket, "connect_ex", refuse("socket.connect_ex"))
    monkeypatch.setattr(socket, "create_connection", refuse("create_connection"))
    monkeypatch.setattr(socket, "getaddrinfo", refuse("getaddrinfo"))
    yield attempts
    assert attempts == [], f"the app tried to use the network: {attempts}"


@pytest.fixture(autouse=True)
def private_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Settings, autosave and any user-data model folder live in this test's tmp folder."""
    monkeypatch.setenv("QIAO_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("QIAO_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.delenv("QIAO_MODEL_DIR", raising=False)
    return tmp_path


@pytest.fixture(autouse=True)
def reset_app(qapp) -> Iterator[None]:
    """Undo process-wide state a test may change (interface language, theme)."""
    yield
    from gui.i18n import install_translators
    from gui.theme import apply_theme

    install_translators("en")
    apply_theme(qapp, "system")
    # Qt's offscreen platform crashes at exit when the clipboard still holds a QMimeData the app set (a copied
    # translation is marked as Qiao's own that way); under xcb it does not. Each test leaves the clipboard empty.
    qapp.clipboard().clear()


@pytest.fixture
def settings(tmp_path: Path):
    from gui.settings import Settings

    return Settings(tmp_path / "config" / "qiao.ini")


@pytest.fixture(scope="session")
def engine_output() -> Callable[..., str]:
    """What the real engine itself returns for a text (called directly, no GUI): the oracle for window tests."""
    from engine.pipeline.translator import Translator

    cache: dict[str, Translator] = {}

    def translate(text: str, precision: str = "int8", variant: str = "hans") -> str:
        if precision not in cache:
            cache[precision] = Translator(TINY_BUNDLE, precision=precision)
        return cache[precision].translate(text, variant=variant).text

    return translate


@pytest.fixture
def make_window(qtbot, tmp_path: Path, settings) -> Iterator[Callable]:
    """Build a MainWindow on the real engine and the tiny model, or on the fakes a test passes (each hook not given
    is the engine's own, as gui.worker.engine.local_engine fills them in); closed at teardown."""
    from gui.window.main_window import MainWindow
    from gui.worker.engine import local_engine

    windows: list[MainWindow] = []

    def make(
        factory=None,
        locator=None,
        *,
        settings_obj=None,
        wait_ready=True,
        model_dir=None,
        pair_lister=None,
        model_store=None,
        document_job=None,
    ):
        if factory is None and locator is None:  # the real engine on the committed tiny model
            model_dir = model_dir or str(TINY_BUNDLE)
        else:
            factory = factory or FakeFactory()
            locator = locator or fixed_locator(tmp_path / "bundle")
        engine = local_engine(
            factory,
            locator,
            lambda pair=None: tmp_path / "data" / "Qiao" / "models" / f"opus-mt-{pair or 'en-zh'}",
            getattr(factory, "verify", None),
            pair_lister,
            document_job,
        )
        window = MainWindow(
            settings_obj or settings,
            tmp_path / "state" / "source.txt",
            model_dir,
            engine=engine,
            model_store=model_store,
        )
        qtbot.addWidget(window)
        windows.append(window)
        window.show()
        if wait_ready:
            qtbot.waitUntil(lambda: window.model is not None, timeout=10_000)
        return window

    yield make
    for w in windows:
        w.shutdown()
        assert not w.engine.thread.isRunning()
