"""A stand-in for `engine.pipeline.translator.Translator` with exactly its API, for tests that need control over timing.

It "translates" word by word through a small dictionary, one StreamEvent per word from `stream()` (what the worker
iterates), honours `cancel` between words, and records which thread did the work. `FakeManifest` carries a pair
(en→zh by default; `ZH_EN` for the reverse direction). `FakeFactory` builds it the way the worker's factory is called.
`FakeWorker` stands in for `gui.worker.scheduler.TranslationWorker` where a test drives the worker's signals by hand.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from engine.errors import BundleError, FileProblem, ModelNotFoundError
from engine.languages import LanguagePair, default_pair
from engine.options import TranslationOptions
from engine.results import (
    FLAG_NUMBERS,
    ORIGIN_MEMORY,
    Flag,
    SentenceResult,
    StreamEvent,
    Translation,
    TranslationStats,
)

WORDS = {
    "hello": ("你好", "你好"),
    "world": ("世界", "世界"),
    "the": ("这", "這"),
    "language": ("语言", "語言"),
    "model": ("模型", "模型"),
    "bridge": ("桥", "橋"),
    "good": ("好", "好"),
    "morning": ("早上", "早上"),
}


def fake_translate_text(text: str, script: str = "hans", precision: str = "int8") -> str:
    """What FakeTranslator returns for `text`, for assertions."""
    return "".join(_deltas(text, script, precision))


def _word(word: str, script: str, precision: str) -> str:
    key = word.strip(".,!?;:").lower()
    hans, hant = WORDS.get(key, ("词", "詞"))
    out = hant if script == "hant" else hans
    if word.endswith((".", "!", "?")):
        out += "。"
    return out


_ENGLISH = {hans: english for english, (hans, _) in WORDS.items()}


def _chinese_words(line: str) -> list[str]:
    """zh→en: each dictionary word found in the line (longest first) as its English word and a space."""
    out, i = [], 0
    while i < len(line):
        match = next((w for w in sorted(_ENGLISH, key=len, reverse=True) if line.startswith(w, i)), None)
        if match is None:
            i += 1
            continue
        out.append(_ENGLISH[match] + " ")
        i += len(match)
    return out


def _deltas(text: str, script: str, precision: str, reverse: bool = False) -> list[str]:
    """One delta per word; line breaks are kept as their own deltas, as the engine keeps structure."""
    out: list[str] = []
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if reverse:
            out.extend(_chinese_words(line))
        else:
            out.extend(_word(w, script, precision) for w in line.split())
        if i < len(lines) - 1:
            out.append("\n")
    return out


# The fake's made-up token scores: a dictionary word is sure, an unknown one ("词") is not, so the window's
# confidence underline has something to show; the full stop has its own token.
SURE_LOGPROB = math.log(0.92)
UNSURE_LOGPROB = math.log(0.2)
STOP_LOGPROB = math.log(0.97)
STOP_TOKEN = 2
UNKNOWN_TOKEN = 5
_TOKEN_IDS = {english: 10 + i for i, english in enumerate(WORDS)}


@dataclass(frozen=True)
class PlannedSentence:
    """One sentence of the fake's output: its deltas (one per word, or one for a memory hit) and its result's
    fields but the target span and text (known once it is placed in the output)."""

    deltas: list[str]
    fields: dict
    length: int  # characters of output

    @property
    def source_start(self) -> int:
        return self.fields["source_span"][0]

    def result(self, start: int, text: str) -> SentenceResult:
        return SentenceResult(**self.fields, target_span=(start, start + len(text)), text=text)


_SENTENCE = re.compile(
    r"[.!?](?=\s|$)|\S(?:[^\n]*?(?:[.!?](?=\s|$)|\S(?=\s*$)))?"
)  # up to a word ending in . ! ?, or the line's end


def _en_sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) per sentence of `text`: its words up to one ending in . ! ?, or to its line's end."""
    out: list[tuple[int, int]] = []
    offset = 0
    for line in text.split("\n"):
        out.extend((offset + m.start(), offset + m.end()) for m in _SENTENCE.finditer(line))
        offset += len(line) + 1
    return out


@lru_cache(maxsize=4096)
def _decode_sentence(source: str, script: str, precision: str, reverse: bool) -> tuple[list[str], dict]:
    """One sentence's deltas and token fields; kept per sentence, as the engine's sentence cache does, so a long
    repetitive text costs what its distinct sentences do."""
    deltas: list[str] = []
    tokens: list[int] = []
    logprobs: list[float] = []
    spans: list[tuple[int, int]] = []
    at = 0
    if reverse:
        for english in _chinese_words(source):
            word = english.strip()
            deltas.append(english)
            tokens.append(_TOKEN_IDS.get(word, UNKNOWN_TOKEN))
            logprobs.append(SURE_LOGPROB)
            spans.append((at, at + len(word)))
            at += len(english)
        numbers = []
    else:
        for word in source.split():
            delta = _word(word, script, precision)
            deltas.append(delta)
            body = delta.removesuffix("。")
            key = word.strip(".,!?;:").lower()
            tokens.append(_TOKEN_IDS.get(key, UNKNOWN_TOKEN))
            logprobs.append(SURE_LOGPROB if key in WORDS else UNSURE_LOGPROB)
            spans.append((at, at + len(body)))
            if body != delta:
                tokens.append(STOP_TOKEN)
                logprobs.append(STOP_LOGPROB)
                spans.append((at + len(body), at + len(delta)))
            at += len(delta)
        numbers = re.findall(r"\d+", source)
    fields = {
        "tokens": tuple(tokens),
        "logprobs": tuple(logprobs),
        "token_spans": tuple(spans),
        "score": sum(logprobs) / len(logprobs) if logprobs else None,
        "flags": tuple(Flag(FLAG_NUMBERS, f"“{n}” is missing from the translation") for n in numbers),
    }
    return deltas, fields


def plan_sentences(
    text: str, script: str = "hans", precision: str = "int8", *, reverse: bool = False, memory=None
) -> list[PlannedSentence]:
    """The fake's output sentence by sentence, with the fields engine.results.SentenceResult promises: spans in
    both texts, one token per word (and one per full stop) with its log-probability and its span, flags for a
    number the fake cannot carry over, and the user's text for a sentence `memory` knows (ORIGIN_MEMORY, no
    scores). Line breaks between sentences are kept as their own deltas by the caller."""
    planned: list[PlannedSentence] = []
    if reverse:
        offset = 0
        units = []
        for line in text.split("\n"):
            stripped = line.strip()
            if stripped:
                start = offset + line.index(stripped)
                units.append((start, start + len(stripped)))
            offset += len(line) + 1
    else:
        units = _en_sentences(text)
    for index, (start, end) in enumerate(units):
        source = text[start:end]
        remembered = memory.lookup(source) if memory is not None else None
        if remembered is not None:
            fields = {"index": index, "source": source, "source_span": (start, end), "origin": ORIGIN_MEMORY}
            planned.append(PlannedSentence([remembered], fields, len(remembered)))
            continue
        deltas, decoded = _decode_sentence(source, script, precision, reverse)
        fields = {"index": index, "source": source, "source_span": (start, end), **decoded}
        at = sum(map(len, deltas))
        planned.append(PlannedSentence(deltas, fields, at))
    return planned


def _stream_units(planned: list[PlannedSentence], text: str) -> list[tuple[str, PlannedSentence | None]]:
    """The deltas in output order, line breaks included; each sentence's last delta carries its sentence."""
    units: list[tuple[str, PlannedSentence | None]] = []
    queue = deque(planned)
    offset = 0
    lines = text.split("\n")
    for i, line in enumerate(lines):
        end = offset + len(line)
        while queue and queue[0].source_start <= end:
            sentence = queue.popleft()
            for j, delta in enumerate(sentence.deltas):
                units.append((delta, sentence if j == len(sentence.deltas) - 1 else None))
            if not sentence.deltas:
                units.append(("", sentence))
        if i < len(lines) - 1:
            units.append(("\n", None))
        offset = end + 1
    return units


EN_ZH = default_pair("en", "zh", [">>cmn_Hans<<", ">>cmn_Hant<<"])
EN_ZH_HANS_ONLY = default_pair("en", "zh", [">>cmn_Hans<<"])
ZH_EN = default_pair("zh", "en")


@dataclass
class FakeManifest:
    model_id: str = "Helsinki-NLP/opus-mt-en-zh (fake)"
    license: str = "CC-BY-4.0"
    attribution: str = "OPUS-MT by Helsinki-NLP (Tiedemann & Thottingal, 2020), CC-BY-4.0"
    languages: list[str] = field(default_factory=lambda: [">>cmn_Hans<<", ">>cmn_Hant<<"])
    generation: dict = field(default_factory=lambda: {"num_beams": 4})
    pair: LanguagePair = EN_ZH


class FakeTranslator:
    """Same constructor, properties and methods as the engine's Translator."""

    def __init__(
        self,
        bundle_dir: str | Path,
        precision: str = "int8",
        threads: int | None = None,
        *,
        token_delay: float = 0.0,
        gate: threading.Event | None = None,
    ) -> None:
        self.bundle_dir = Path(bundle_dir)
        self._precision = precision
        self.threads = threads
        self.available_precisions = ("int8", "fp32")
        self.manifest = FakeManifest()
        self.token_delay = token_delay
        self.gate = gate
        self.calls: list[dict] = []
        self.threads_seen: set[int] = {threading.get_ident()}
        self.precision_switches: list[str] = []
        self.fail_for: dict[str, Exception] = {}

    @property
    def precision(self) -> str:
        return self._precision

    def set_precision(self, precision: str) -> None:
        if precision not in self.available_precisions:
            raise ValueError(f"unknown precision {precision!r}")
        if precision in self.fail_for:
            raise self.fail_for[precision]
        self.threads_seen.add(threading.get_ident())
        self.precision_switches.append(precision)
        self._precision = precision

    def set_threads(self, threads: int | None) -> None:
        self.threads_seen.add(threading.get_ident())
        self.threads = threads

    def translate(
        self,
        text: str,
        options: TranslationOptions | None = None,
        *,
        cancel: threading.Event | None = None,
        on_event: Callable[[StreamEvent], None] | None = None,
    ) -> Translation:
        """As the engine's: `stream()` drained, its events passed to `on_event`."""
        result = None
        for item in self.stream(text, options, cancel=cancel):
            if isinstance(item, Translation):
                result = item
            elif on_event is not None:
                on_event(item)
        assert result is not None
        return result

    def stream(
        self, text: str, options: TranslationOptions | None = None, *, cancel: threading.Event | None = None
    ) -> Iterator[StreamEvent | Translation]:
        self.threads_seen.add(threading.get_ident())
        options = options or TranslationOptions()
        beams = options.beams
        pair = self.manifest.pair
        script = options.variant if options.variant in pair.variant_keys else pair.default_variant  # as the engine
        self.calls.append(
            {"text": text, "beams": beams, "script": script, "precision": self._precision, "options": options}
        )
        start = time.perf_counter()
        if not text.strip():
            yield Translation(text="", stats=self._stats(start, None, 0, 0, beams))
            return
        if self.gate is not None:
            while not self.gate.wait(0.005):
                if cancel is not None and cancel.is_set():
                    yield Translation(text="", cancelled=True, stats=self._stats(start, None, 0, 0, beams))
                    return
        reverse = self.manifest.pair.source.code == "zh"
        units = _stream_units(
            plan_sentences(text, script, self._precision, reverse=reverse, memory=options.memory), text
        )
        total = max(1, sum(1 for line in text.split("\n") if line.strip()))
        done_text: list[str] = []
        written = 0  # characters of output so far
        sentence_text: list[str] = []  # the deltas since the last sentence ended
        placed: list[tuple[PlannedSentence, int, str]] = []  # each finished sentence, where it starts, its text
        first: float | None = None
        done = 0
        for delta, finished in units:
            if cancel is not None and cancel.is_set():
                yield Translation(
                    text="".join(done_text),
                    cancelled=True,
                    stats=self._stats(start, first, len(done_text), done, beams),
                    sentences=[p.result(a, out) for p, a, out in placed],
                )
                return
            if self.token_delay:
                time.sleep(self.token_delay)
            if first is None:
                first = (time.perf_counter() - start) * 1000
            if delta == "\n":
                done += 1
            done_text.append(delta)
            sentence_text.append(delta)
            written += len(delta)
            if finished is not None:  # the sentence's last delta: it now has its place in the output
                out = "".join(sentence_text)[-finished.length :] if finished.length else ""
                placed.append((finished, written - len(out), out))
                sentence_text.clear()
            yield StreamEvent(delta, min(done, total), total)
        yield StreamEvent("", total, total)
        yield Translation(
            text="".join(done_text),
            stats=self._stats(start, first, len(done_text), total, beams),
            sentences=[p.result(a, out) for p, a, out in placed],
        )

    def _stats(self, start: float, first: float | None, tokens: int, sentences: int, beams: int | None):
        total_ms = (time.perf_counter() - start) * 1000
        return TranslationStats(
            total_ms=total_ms,
            first_token_ms=first,
            source_tokens=tokens,
            target_tokens=tokens,
            tokens_per_s=tokens / (total_ms / 1000) if total_ms > 0 else 0.0,
            precision=self._precision,
            beams=beams or 4,
            sentences=sentences,
        )


class FakeFactory:
    """The worker's translator factory: `factory(bundle_dir, precision, threads)`; remembers what it built."""

    def __init__(
        self,
        *,
        token_delay: float = 0.0,
        load_delay: float = 0.0,
        gate: threading.Event | None = None,
        fail: Exception | None = None,
        fail_for: dict[str, Exception] | None = None,
        manifest: object | None = None,
    ) -> None:
        self.token_delay = token_delay
        self.load_delay = load_delay
        self.gate = gate
        self.fail = fail
        self.fail_for = dict(fail_for or {})  # precision -> what loading (or verifying) it raises
        self.manifest = manifest
        self.built: list[FakeTranslator] = []
        self.load_threads: list[int] = []
        self.verified: list[str] = []

    def __call__(self, bundle_dir: Path, precision: str, threads: int | None) -> FakeTranslator:
        self.load_threads.append(threading.get_ident())
        if self.load_delay:
            time.sleep(self.load_delay)
        if self.fail is not None:
            raise self.fail
        if precision in self.fail_for:
            raise self.fail_for[precision]
        tr = FakeTranslator(bundle_dir, precision, threads, token_delay=self.token_delay, gate=self.gate)
        tr.fail_for = self.fail_for
        if self.manifest is not None:
            tr.manifest = self.manifest
        self.built.append(tr)
        return tr

    def verify(self, bundle_dir: Path, precision: str) -> None:
        """The worker's verifier: as engine.bundle.manifest.verify_bundle, raises for a precision that is not intact."""
        self.verified.append(precision)
        if self.fail is not None:
            raise self.fail
        if precision in self.fail_for:
            raise self.fail_for[precision]

    @property
    def translator(self) -> FakeTranslator:
        return self.built[-1]


def fixed_locator(path: str | Path) -> Callable[[str | None, str | None], Path]:
    """A locator that always finds `path` (explicit --model wins, as in engine.store.locate), whatever the pair."""

    def locate(explicit: str | None, pair: str | None = None) -> Path:
        return Path(explicit) if explicit else Path(path)

    return locate


def missing_locator(searched: list[str]) -> Callable[[str | None, str | None], Path]:
    def locate(explicit: str | None, pair: str | None = None) -> Path:
        raise ModelNotFoundError("no model bundle found", searched)

    return locate


class PairLocator:
    """Finds `root/<pair key>` for the pairs in `installed` (and records every pair it was asked for)."""

    def __init__(self, root: str | Path, installed: tuple[str, ...] = ("en-zh", "zh-en")) -> None:
        self.root = Path(root)
        self.installed = installed
        self.asked: list[str | None] = []

    def __call__(self, explicit: str | None, pair: str | None = None) -> Path:
        self.asked.append(pair)
        if pair not in self.installed:
            raise ModelNotFoundError(f"no model bundle for {pair}", [str(self.root / str(pair))])
        return self.root / pair

    def pairs(self, explicit: str | None) -> tuple[str, ...]:
        """The worker's pair lister."""
        return self.installed


class PairFactory(FakeFactory):
    """Builds translators whose manifest's pair is the folder's name ("…/zh-en" → zh→en), as bundles would."""

    def __call__(self, bundle_dir: Path, precision: str, threads: int | None) -> FakeTranslator:
        tr = super().__call__(bundle_dir, precision, threads)
        tr.manifest = FakeManifest(pair=ZH_EN if Path(bundle_dir).name == "zh-en" else EN_ZH)
        return tr


def bundle_error(bundle_dir: str, problems: list[str | FileProblem]) -> BundleError:
    return BundleError(bundle_dir, problems)


class BrokenManifest:
    """A manifest whose fields raise as a malformed manifest.json does (`model` a string, or no `id`)."""

    def __init__(self, exc: Exception) -> None:
        self._exc = exc

    def __getattr__(self, name: str) -> object:
        raise self._exc


class FakeWorker(QObject):
    """The signals and request methods of `TranslationWorker`, on the test's thread and without a translator: it
    records what it was asked, and the test emits the reports (in any order, for any id) itself."""

    model_loading = Signal(str, str)
    model_ready = Signal(object)
    model_failed = Signal(object)
    error = Signal(str)
    switch_failed = Signal(str, object)
    translation_started = Signal(int)
    translation_progress = Signal(int, str, int, int)
    translation_finished = Signal(int, object)
    translation_failed = Signal(int, str)

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple] = []  # ("translate", id, text, options, precision), ("cancel",), ...
        self._next_id = 0

    def load(self, model_dir: str | None, precision: str, threads: int | None, pair: str | None = None) -> None:
        self.calls.append(("load", model_dir, precision, threads, pair))

    def set_precision(self, precision: str) -> None:
        self.calls.append(("set_precision", precision))

    def set_threads(self, threads: int | None) -> None:
        self.calls.append(("set_threads", threads))

    def translate(self, text: str, options: TranslationOptions | None = None, *, precision: str | None = None) -> int:
        self._next_id += 1
        self.calls.append(("translate", self._next_id, text, options, precision))
        return self._next_id

    def cancel(self) -> None:
        self.calls.append(("cancel",))

    def of(self, name: str) -> list[tuple]:
        return [c[1:] for c in self.calls if c[0] == name]


@dataclass(frozen=True)
class FakeModel:
    """engine.store.installed.InstalledModel's fields."""

    path: Path
    name: str
    pair: LanguagePair | None
    model_id: str = "Helsinki-NLP/opus-mt-en-zh"
    license: str = "CC-BY-4.0"
    precisions: tuple[str, ...] = ("int8", "fp32")
    size_bytes: int = 12_300_000
    location: str = "user"
    removable: bool = True
    problem: str | None = None
    family: str = "marian"
    quality: Any = None  # engine.store.quality.Quality
    speed: Any = None  # engine.store.quality.Speed

    @property
    def pair_key(self) -> str | None:
        return self.pair.key if self.pair is not None else None


@dataclass(frozen=True)
class FakeEntry:
    """engine.store.catalogue.CatalogueEntry's fields."""

    id: str
    name: str
    source: str
    target: str
    model_id: str = "Helsinki-NLP/opus-mt-zh-en"
    url: str = "http://127.0.0.1:9/zh-en.tar.gz"
    size: int = 4_000_000
    sha256: str = "0" * 64
    license: str = "CC-BY-4.0"
    precisions: tuple[str, ...] = ("int8",)
    family: str = "marian"
    quality: Any = None
    speed: Any = None
    installed_size: int | None = None

    @property
    def pair_key(self) -> str:
        return f"{self.source}-{self.target}"


class FakeOffline(Exception):
    """What the engine raises when the model server cannot be reached (its `offline` flag)."""

    offline = True


class FakeStore:
    """The Models dialog's store (gui.models.model_tasks.ModelStore) in memory; records calls and the threads they ran
    on.

    A download sends `chunks` progress reports of `size / chunks` bytes, each after `gate` opens (when given), and
    raises as the engine does when cancelled."""

    def __init__(
        self,
        models: list[FakeModel] | None = None,
        entries: list[FakeEntry] | None = None,
        *,
        import_error: Exception | None = None,
        offline: bool = False,
        gate: threading.Event | None = None,
        chunks: int = 4,
    ) -> None:
        self.models = list(models or [])
        self.entries = list(entries or [])
        self.import_error = import_error
        self.offline = offline
        self.gate = gate
        self.chunks = chunks
        self.damaged: dict[str, list[str]] = {}
        self.calls: list[str] = []
        self.threads: set[int] = set()

    def _call(self, name: str) -> None:
        self.calls.append(name)
        self.threads.add(threading.get_ident())

    def installed_models(self, explicit: str | None = None) -> list[FakeModel]:
        self._call("installed_models")
        return list(self.models)

    def verify_installed(self, model: FakeModel, cancel=None, progress=None) -> list[str]:
        self._call("verify_installed")
        return list(self.damaged.get(str(model.path), []))

    def import_bundle(self, source: Path, *, progress=None, cancel=None, replace: bool = False) -> FakeModel:
        self._call("import_bundle")
        if self.import_error is not None:
            raise self.import_error
        key = Path(source).name.split(".")[0]  # "…/zh-en.tar.gz" imports a zh-en bundle
        model = FakeModel(Path("/models") / key, f"opus-mt-{key}", ZH_EN if key == "zh-en" else EN_ZH)
        self.models.append(model)
        return model

    def remove_bundle(self, model: FakeModel) -> None:
        self._call("remove_bundle")
        self.models = [m for m in self.models if m.path != model.path]

    def load_catalogue(self, location: str | None = None) -> list[FakeEntry]:
        self._call("load_catalogue")
        if self.offline:
            raise FakeOffline("could not reach 127.0.0.1:9")
        return list(self.entries)

    def download_bundle(self, entry: FakeEntry, *, progress=None, cancel=None, replace: bool = False) -> FakeModel:
        self._call("download_bundle")
        if self.offline:
            raise FakeOffline("could not reach 127.0.0.1:9")
        step = entry.size // self.chunks
        for i in range(1, self.chunks + 1):
            while self.gate is not None and not self.gate.wait(0.005):
                if cancel is not None and cancel.is_set():
                    raise RuntimeError("download cancelled")
            if cancel is not None and cancel.is_set():
                raise RuntimeError("download cancelled")
            if progress is not None:
                progress(step * i, entry.size)
        pair = ZH_EN if entry.pair_key == "zh-en" else EN_ZH
        model = FakeModel(Path("/models") / entry.pair_key, entry.name, pair, model_id=entry.model_id)
        self.models.append(model)
        return model
