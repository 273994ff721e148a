"""Stand-ins for the quick-translate tests: the worker with its popup channel (as the worker issue adds it), a
shortcut backend the test fires by hand, and a clock the test moves."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from engine.options import TranslationOptions
from gui.quick.shortcut import ShortcutBackend, ShortcutResult, parse_keys


class FakePopupWorker(QObject):
    """`translate(text, options, channel=…) -> id` and the worker's three translation signals, emitted by tests."""

    translation_progress = Signal(int, str, int, int)
    translation_finished = Signal(int, object)
    translation_failed = Signal(int, str)

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[tuple[int, str, TranslationOptions | None, str]] = []

    def translate(self, text: str, options: TranslationOptions | None = None, *, channel: str = "window") -> int:
        request_id = len(self.requests) + 1
        self.requests.append((request_id, text, options, channel))
        return request_id

    @property
    def last(self) -> tuple[int, str, TranslationOptions | None, str]:
        return self.requests[-1]


class FakeBackend(ShortcutBackend):
    """Registers anything that parses (or answers `answer`); the test calls `press()` for the user."""

    def __init__(self, answer: ShortcutResult | None = None) -> None:
        super().__init__()
        self.answer = answer
        self.registered: list[str] = []
        self.unregistered = 0

    def register(self, sequence: str) -> ShortcutResult:
        keys = parse_keys(sequence)
        if isinstance(keys, ShortcutResult):
            return keys
        self.registered.append(sequence)
        return self.answer or ShortcutResult("ok")

    def unregister(self) -> None:
        self.unregistered += 1

    def press(self) -> None:
        self.activated.emit()


class FakeClock:
    def __init__(self, start: float = 100.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
