"""Stand-ins for `engine.pipeline.translator.Translator` in CLI tests: they echo their input, so a test can check
exactly
which text reached the engine for each record, and they can batch ahead or refuse a text like a real engine may."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from types import SimpleNamespace
from typing import ClassVar

from engine.config import EngineConfig
from engine.errors import InputError
from engine.languages import default_pair
from engine.options import TranslationOptions
from engine.results import Translation, TranslationStats


def install(monkeypatch, fake: type[EchoTranslator]) -> type[EchoTranslator]:
    """Make `fake` the Translator the CLI builds, with no instances left from an earlier test."""
    fake.instances.clear()
    monkeypatch.setattr("engine.pipeline.translator.Translator", fake)
    return fake


def _result(text: str) -> Translation:
    stats = TranslationStats(0.0, None, len(text), len(text), 0.0, "int8", 1, 1)
    return Translation(text=text, tokens=[[len(text)]], stats=stats)


class EchoTranslator:
    """Translates every text into itself, one at a time; records what it was built with and asked for."""

    instances: ClassVar[list[EchoTranslator]] = []

    def __init__(
        self,
        bundle_dir,
        config: EngineConfig | None = None,
        *,
        precision: str | None = None,
        threads: int | None = None,
        verify: bool = True,
    ) -> None:
        """The real Translator's signature: an EngineConfig, or precision/threads keywords."""
        config = config or EngineConfig(precision=precision or "int8", threads=threads)
        self.bundle_dir = bundle_dir
        self.precision = config.precision
        self.threads = config.threads
        self.manifest = SimpleNamespace(pair=default_pair("en", "zh", (">>cmn_Hans<<", ">>cmn_Hant<<")))
        self.options: list[TranslationOptions | None] = []
        self.seen: list[str] = []
        EchoTranslator.instances.append(self)

    def _answer(self, text: str) -> Translation:
        if "REFUSE" in text:
            raise InputError(f"refused: {text}")
        return _result(text)

    def translate(self, text: str, options: TranslationOptions | None = None, **_: object) -> Translation:
        self.options.append(options)
        return self._answer(text)

    def stream(self, text: str, options: TranslationOptions | None = None, **_: object) -> Iterator[Translation]:
        self.options.append(options)
        yield self._answer(text)

    def translate_segments(
        self, texts: Iterable[str], options: TranslationOptions | None = None, *, cancel: threading.Event | None = None
    ) -> Iterator[Translation]:
        self.options.append(options)
        for text in texts:
            self.seen.append(text)
            yield self._batch_answer(text)

    def _batch_answer(self, text: str) -> Translation:
        return self._answer(text)


class ErrorFieldTranslator(EchoTranslator):
    """Answers a text it refuses with a Translation whose `error` is set, and goes on (the engine's contract)."""

    def _batch_answer(self, text: str) -> Translation:
        return Translation(text="", error=f"refused: {text}") if "REFUSE" in text else _result(text)


class BatchingTranslator(EchoTranslator):
    """Pulls up to `batch` texts before answering any, like an engine that batches across texts; a text with
    "REFUSE" in it ends the generator with InputError (after the earlier texts of its batch, unanswered)."""

    batch = 4

    def translate_segments(
        self, texts: Iterable[str], options: TranslationOptions | None = None, *, cancel: threading.Event | None = None
    ) -> Iterator[Translation]:
        self.options.append(options)
        it = iter(texts)
        while True:
            chunk = []
            for text in it:
                self.seen.append(text)
                chunk.append(text)
                if len(chunk) == self.batch:
                    break
            if not chunk:
                return
            answers = [self._answer(t) for t in chunk]  # raises before any of the batch is yielded
            yield from answers


class ReviewTranslator(EchoTranslator):
    """Echoes each sentence of a text as one SentenceResult with review data: one token per character (log-probability
    -0.1 each, -2.0 for a "?"), a FLAG_NUMBERS flag when the text has a digit, `options.alternatives` alternatives
    ("TEXT (k)"), and `translate_sentence` with the prefix put in front."""

    def _answer_with(self, text: str, options: TranslationOptions | None) -> Translation:
        from engine.results import FLAG_NUMBERS, Alternative, Flag, SentenceResult

        options = options or TranslationOptions()
        sentences, pos = [], 0
        for index, part in enumerate(p for p in text.split(" ") if p):
            start = text.index(part, pos)
            pos = start + len(part)
            flags = (Flag(FLAG_NUMBERS, f"“{part}” has a number"),) if any(c.isdigit() for c in part) else ()
            alts = tuple(Alternative(f"{part} ({k})", (k,), -1.0 - k) for k in range(1, options.alternatives + 1))
            sentences.append(
                SentenceResult(
                    index=index,
                    source=part,
                    source_span=(start, pos),
                    target_span=(start, pos),
                    tokens=tuple(ord(c) for c in part),
                    logprobs=tuple(-2.0 if c == "?" else -0.1 for c in part),
                    token_spans=tuple((i, i + 1) for i in range(len(part))),
                    score=-0.1,
                    alternatives=alts,
                    flags=flags,
                    text=part,
                )
            )
        stats = TranslationStats(0.0, None, len(text), len(text), 0.0, "int8", 1, len(sentences))
        return Translation(text=text, tokens=[list(s.tokens) for s in sentences], stats=stats, sentences=sentences)

    def translate(self, text: str, options: TranslationOptions | None = None, **_: object) -> Translation:
        self.options.append(options)
        return self._answer_with(text, options)

    def stream(self, text: str, options: TranslationOptions | None = None, **_: object) -> Iterator[Translation]:
        self.options.append(options)
        yield self._answer_with(text, options)

    def translate_segments(
        self, texts: Iterable[str], options: TranslationOptions | None = None, *, cancel: threading.Event | None = None
    ) -> Iterator[Translation]:
        self.options.append(options)
        for text in texts:
            self.seen.append(text)
            yield self._answer_with(text, options)

    def translate_sentence(self, source: str, options: TranslationOptions | None = None, *, prefix=(), cancel=None):
        from engine.results import SentenceResult

        self.options.append(options)
        self.seen.append(source)
        self.prefixes = [*getattr(self, "prefixes", []), prefix]
        text = f"{prefix}{source}"
        return SentenceResult(
            0,
            source,
            (0, len(source)),
            (0, len(text)),
            tokens=tuple(ord(c) for c in text),
            logprobs=(-0.5,) * len(text),
            token_spans=tuple((i, i + 1) for i in range(len(text))),
            score=-0.5,
            text=text,
        )
