"""Test stand-ins for the job: a trivial line-per-unit format and translators that record every call.

The "lines" format: each line of a UTF-8 file is one unit; "|" separates its runs (an "align" unit) and a run in
braces, "{like this}", is fixed. Render writes the runs back joined by "|", line ends as they were. It is
registered under engine.documents.registry for one test (monkeypatch) or for a whole process (`install()`, the
subprocess of the kill -9 test).
"""

from __future__ import annotations

import re
import sys
import threading
import time
import types
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from engine.documents import registry
from engine.documents.model import DocumentError, DocumentFormat, Run, Unit
from engine.options import TranslationOptions
from engine.results import Translation

MODULE = "engine.documents.formats.lines_fake"


@dataclass
class LinesDocument:
    lines: list[tuple[str, str]]  # (text, line end)
    units: list[Unit] = field(default_factory=list)
    fail_render: bool = False
    rendered_with: list = field(default_factory=list)

    def render(self, translations: Sequence[Sequence[str] | None], *, target: str) -> bytes:
        self.rendered_with.append(list(translations))
        if self.fail_render:
            raise DocumentError("cannot render this document (a test's failure)")
        out = []
        for (text, end), runs in zip(self.lines, translations, strict=True):
            out.append(("|".join(runs) if runs is not None else text) + end)
        return "".join(out).encode("utf-8")


def read(data: bytes) -> LinesDocument:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DocumentError(f"not UTF-8 text (byte {exc.start})") from exc
    if "CRASH" in text:
        raise ValueError("a format's bug")
    lines = []
    for piece in re.findall(r"[^\n]*\n|[^\n]+$", text):  # lines end at "\n" only
        body = piece.rstrip("\r\n")
        lines.append((body, piece[len(body) :]))
    doc = LinesDocument(lines, fail_render="FAILRENDER" in text)
    doc.units = [Unit(tuple(_run(p) for p in body.split("|"))) for body, _ in lines]
    return doc


def _run(piece: str) -> Run:
    if piece.startswith("{") and piece.endswith("}"):
        return Run(piece, fixed=True)
    return Run(piece)


FORMAT = DocumentFormat(name="lines", label="line file", extensions=(".lines",), read=read)


def install(monkeypatch=None) -> None:
    """Make "lines" the only format the registry knows (so the tests do not depend on the real formats)."""
    module = types.ModuleType(MODULE)
    module.FORMAT = FORMAT
    if monkeypatch is None:
        sys.modules[MODULE] = module
        registry._MODULES.clear()
        registry._MODULES["lines"] = "lines_fake"
        return
    monkeypatch.setitem(sys.modules, MODULE, module)
    monkeypatch.setattr(registry, "_MODULES", {"lines": "lines_fake"})


def translated(text: str) -> str:
    """What the fake translators make of `text`: recognisably translated, each character kept."""
    return f"<{text}>"


class SpyTranslator:
    """Translates `text` into `<text>`; records each call's texts; "REFUSE" texts get Translation.error.

    `on_call(n)` runs at the start of call n (from 1): a test sets a cancel event or checks interleaving there;
    `holding` is True while a call's generator is being consumed (the model would be held).
    """

    def __init__(self, on_call=None, delay_s: float = 0.0) -> None:
        self.calls: list[list[str]] = []
        self.options: list[TranslationOptions | None] = []
        self.on_call = on_call
        self.delay_s = delay_s
        self.holding = False

    def translate_segments(
        self,
        segments: Iterable[str],
        options: TranslationOptions | None = None,
        *,
        cancel: threading.Event | None = None,
    ) -> Iterator[Translation]:
        texts = list(segments)
        self.calls.append(texts)
        self.options.append(options)
        if self.on_call is not None:
            self.on_call(len(self.calls))
        if self.delay_s:
            time.sleep(self.delay_s)
        self.holding = True
        try:
            for text in texts:
                if cancel is not None and cancel.is_set():
                    yield Translation(text="", cancelled=True)
                elif "REFUSE" in text:
                    yield Translation(text="", error=f"refused: {text[:10]}")
                else:
                    yield Translation(text=translated(text))
        finally:
            self.holding = False

    @property
    def texts(self) -> list[str]:
        return [t for call in self.calls for t in call]
