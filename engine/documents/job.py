"""Translating one document file: read, translate unit by unit in bounded steps, write the result atomically.

The steps are small so the window's worker can interleave a document with the user's typing: each `steps()` item
is one bounded chunk of work (about STEP_UNITS units or STEP_SENTENCES sentences, one `translate_segments` call
consumed to its end) and comes back before the next is started; nothing holds the model between items.

Each finished step is appended to a progress file beside the result (engine.documents.progress_file), so a
cancelled or crashed run continues where it stopped; the result itself is written only when every unit is done,
through a temporary file in the result's folder renamed over it, never over the input.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import stat
import string
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from engine import __version__
from engine.atomic_write import write_user_file
from engine.documents import progress_file, registry
from engine.documents.inline import distribute, runs_alone
from engine.documents.model import DocumentError, DocumentFormat, Extracted, Unit
from engine.errors import QiaoError
from engine.options import TranslationOptions
from engine.results import SentenceResult, Translation
from engine.text.punctuation import has_words

STEP_UNITS = 64
STEP_SENTENCES = 256
MAX_BYTES = 512 * 2**20  # larger inputs are refused before they are read
MAX_WARNINGS = 20  # unit failures (and units kept in the source language) named one by one; the rest are counted
MAX_TEMPLATE_CHARS = 200  # a result name template; the name it makes must fit MAX_NAME_BYTES
MAX_NAME_BYTES = 255  # a file name's limit on Linux, macOS and Windows file systems (NAME_MAX)
PARTIAL_MARK = ".partial"  # inserted before the extension of a result with units left untranslated
_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)|[。！？]+")


class SegmentTranslator(Protocol):
    """What a job needs of the engine: engine.pipeline.translator.Translator.translate_segments."""

    def translate_segments(
        self, segments: Iterable[str], options: TranslationOptions | None = None, *, cancel: threading.Event | None
    ) -> Iterator[Translation]: ...


@dataclass(frozen=True)
class DocumentOptions:
    """Where and how results are written; travels whole from the window's settings or the CLI."""

    out_dir: Path | None = None  # None: beside the input
    # The result's name; {stem} and {suffix} are the input's ("report", ".docx"), {lang} the target's code.
    name_template: str = "{stem}.{lang}{suffix}"
    format: str = "auto"  # a name from engine.documents.registry.names(), or "auto" (by extension)
    overwrite: bool = False  # replace an existing result (never the input itself)
    resume: bool = True  # continue from the progress file a cancelled or crashed run left beside the result


@dataclass(frozen=True)
class DocumentProgress:
    """Where a job is; sent after every step."""

    source: Path
    units_done: int
    units_total: int
    chars_done: int  # source characters of the finished units: the fair measure of work for an estimate
    chars_total: int
    elapsed_s: float
    eta_s: float | None  # None until there is enough to estimate from


@dataclass(frozen=True)
class DocumentResult:
    """How a job ended. `output` is None unless a result file was written (never the progress file).

    `units` counts the translatable units (those `units_total` counts); `failed_units` of them were left
    untranslated, wholly or in part, each named in `warnings` (which also says when a progress file was not used):
    the ones the engine refused, and the `kept_units` whose translation the model gave empty (the whole unit, or some
    of its sentences), which keep their source text in place (`keep_empty`), so no text is ever lost. A job with
    refused units is not finished: `partial` is True and `output` is the partial result (`partial_name`:
    report.zh.partial.docx, the refused units left as they were), never the result's own name; when no unit could be
    translated at all nothing is written and `error` says why. The progress file stays, so running the job again
    retries only the refused units. Kept units do not make a result partial: the same model gives the same nothing
    again.
    """

    source: Path
    output: Path | None
    format: str
    units: int
    translated: int  # units translated in this run
    resumed: int  # units taken from a previous run's progress file
    seconds: float
    cancelled: bool = False
    error: str | None = None  # a DocumentError's message, for a person
    failed_units: int = 0
    warnings: tuple[str, ...] = ()
    partial: bool = False  # `output` is an incomplete result (see above)
    kept_units: int = 0  # of `failed_units`: units (or some of their sentences) kept as they were (see above)


def keep_empty(source: str, translation: Translation) -> tuple[str, list[str]]:
    """`translation.text` with nothing of `source` lost, and the source texts kept: where the model's translation of
    a sentence with words in it came back empty, that sentence is put back, as it was, where its translation would
    be (its place in the text: `SentenceResult.target_span`); when the whole translation is empty although `source`
    is not, the text is "" and the kept text is all of `source` (the caller keeps the unit as it was).

    A small or damaged model gives "" for some inputs (the tiny zh→en Firefox-family model translates "非常感谢。"
    as nothing); a document then showed an empty paragraph where the text was, and no one was told."""
    text = translation.text
    if not source.strip():
        return text, []
    if not text.strip():
        return "", [source.strip()]
    rows: dict[tuple[int, int], list[SentenceResult]] = {}  # the parts of a very long sentence share its span
    for row in translation.sentences:
        rows.setdefault(row.source_span, []).append(row)
    inserts: list[tuple[int, str]] = []
    for (start, end), parts in rows.items():
        piece = source[start:end].strip()
        if not has_words(piece):
            continue  # punctuation alone: nothing to lose
        if any(text[a:b].strip() for a, b in (part.target_span for part in parts)):
            continue
        inserts.append((min(part.target_span[0] for part in parts), piece))
    for at, piece in sorted(inserts, key=lambda item: item[0], reverse=True):
        text = text[:at] + piece + text[at:]
    return text, [piece for _, piece in sorted(inserts, key=lambda item: item[0])]


def model_key(translator: object) -> str:
    """The `model_key` for a job run with `translator` (an engine.pipeline.translator.Translator): its model, direction
    and precision. The window and the CLI both use this, so a job cancelled in one continues in the other."""
    manifest = translator.manifest  # type: ignore[attr-defined]
    return key_of(manifest.model_id, manifest.pair.key, translator.precision)  # type: ignore[attr-defined]


def key_of(model_id: str, pair: str, precision: str) -> str:
    """`model_key` from its parts (the window's worker knows them without a Translator at hand)."""
    return f"{model_id}:{pair}:{precision}"


def settings_of(options: TranslationOptions) -> dict[str, object]:
    """The translation settings a progress file records, as plain JSON values: the fields that make two option
    values equal, nothing else.

    Fields marked `compare=False` (the translation memory) are live services shared with the window, not settings:
    the window's memory holds a thread lock (its edits are added on the UI thread while the engine reads them), so
    copying it (`dataclasses.asdict` deep-copies every field) failed every document queued from the window. The
    values are sent through JSON once, so a glossary's tuples compare equal to the lists read back from the file
    (with `asdict` they never did, and a document with a glossary always started over).
    """
    values: dict[str, object] = {}
    for f in dataclasses.fields(options):
        if not f.compare:
            continue
        value = getattr(options, f.name)
        # A glossary is a frozen dataclass of strings and flags: safe to copy. Anything else here is a plain value.
        values[f.name] = (
            dataclasses.asdict(value) if dataclasses.is_dataclass(value) and not isinstance(value, type) else value
        )
    return json.loads(json.dumps(values, ensure_ascii=False, default=repr))  # a bad value: the engine says why


def result_name(source: Path, template: str, lang: str) -> str:
    """The result's file name for `source` (DocumentError for a template that does not make a plain name).

    Only the fields {stem}, {lang} and {suffix} are allowed, with no format spec or conversion (`{stem:>9999999999}`
    asked str.format for a 10 GB string), and the name, its partial variant included, must fit a file system's
    MAX_NAME_BYTES."""
    fields = {"stem": source.stem, "lang": lang, "suffix": source.suffix}
    example = "use {stem}, {lang} and {suffix}, e.g. {stem}.{lang}{suffix}"
    if len(template) > MAX_TEMPLATE_CHARS:
        raise DocumentError(
            f"the result name template is {len(template):,} characters long; at most {MAX_TEMPLATE_CHARS}"
        )
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise DocumentError(f"the result name {template!r} is not a valid template ({exc}): {example}") from exc
    pieces = []
    for literal, field, spec, conversion in parts:
        pieces.append(literal)
        if field is None:
            continue
        if field not in fields:
            raise DocumentError(
                f"the result name {template!r} is not a valid template: {{{field}}} is unknown; {example}"
            )
        if spec or conversion:
            raise DocumentError(
                f"the result name {template!r} is not a valid template: a field takes no format (:…) or conversion "
                f"(!…); {example}"
            )
        pieces.append(fields[field])
    name = "".join(pieces)
    if not name or name in (".", "..") or "/" in name or "\\" in name or "\x00" in name:
        raise DocumentError(f"the result name {template!r} gives {name!r}, which is not a file name")
    size = len(partial_name(name).encode("utf-8", "surrogateescape"))
    if size > MAX_NAME_BYTES:
        raise DocumentError(
            f"the result name {template!r} gives a name of {size:,} bytes (with .partial); file names are at most "
            f"{MAX_NAME_BYTES}: choose a shorter template or rename the input"
        )
    return name


def partial_name(name: str) -> str:
    """Where a job that left units untranslated writes its result: `report.zh.docx` → `report.zh.partial.docx`, so
    an incomplete translation never looks finished (and still opens in the program its extension names)."""
    suffix = Path(name).suffix
    stem = name[: len(name) - len(suffix)] if suffix else name
    return f"{stem}{PARTIAL_MARK}{suffix}"


class DocumentJob:
    """One input file → one translated file (see the module docstring)."""

    def __init__(
        self,
        source: Path,
        options: DocumentOptions,
        translation: TranslationOptions,
        *,
        target_lang: str,
        model_key: str = "",  # names the model and settings in the progress file: resume only with the same
    ) -> None:
        """Raises DocumentError at once for a result name the template cannot make; everything about the file
        itself (missing, unreadable, unsupported) is found by the first step and ends up in `result.error`."""
        self.source = Path(source)
        self.options = options
        self.translation = translation
        self.target_lang = target_lang
        self.model_key = model_key
        folder = options.out_dir if options.out_dir is not None else self.source.parent
        self._output = Path(folder) / result_name(self.source, options.name_template, target_lang)
        self._result: DocumentResult | None = None

    @property
    def output(self) -> Path:
        """Where the result will be written (known before any work)."""
        return self._output

    @property
    def progress_path(self) -> Path:
        """The progress file kept while the job is unfinished."""
        return progress_file.path_for(self._output)

    @property
    def result(self) -> DocumentResult | None:
        """Set once the last step has run (or the job failed or was cancelled)."""
        return self._result

    def steps(self, translator: SegmentTranslator, cancel: threading.Event | None = None) -> Iterator[DocumentProgress]:
        """Do the work in bounded chunks, one DocumentProgress per chunk; `result` is set when it ends.

        The first item comes after reading the document (nothing translated yet, or what a progress file gave).
        A DocumentError (or another error about the files) ends the job with `result.error`; closing the
        generator early counts as a cancel."""
        self._result = None  # a job may be run again (after a failure, say): each run has its own result
        run = _Run(self, translator, cancel)
        try:
            yield from run.work()
        except (GeneratorExit, KeyboardInterrupt):
            run.finish(cancelled=True)  # the progress file holds every finished step
            raise
        except DocumentError as exc:
            run.finish(error=str(exc))
        except QiaoError as exc:  # e.g. options the engine refuses
            run.finish(error=str(exc))
        except OSError as exc:
            where = exc.filename or self.source
            run.finish(error=f"{where}: {exc.strerror or exc}")
        finally:
            if self._result is None:  # an unexpected exception: the caller sees it, the job still has an end
                run.finish(error="the job stopped unexpectedly")
        return

    def run(
        self,
        translator: SegmentTranslator,
        cancel: threading.Event | None = None,
        on_progress: Callable[[DocumentProgress], None] | None = None,
    ) -> DocumentResult:
        """All steps at once (the CLI)."""
        for progress in self.steps(translator, cancel):
            if on_progress is not None:
                on_progress(progress)
        assert self._result is not None
        return self._result

    def _set_result(self, result: DocumentResult) -> None:
        self._result = result


class _Run:
    """The state of one `steps()` pass: the document, the run texts done so far, and the figures."""

    def __init__(self, job: DocumentJob, translator: SegmentTranslator, cancel: threading.Event | None) -> None:
        self.job = job
        self.translator = translator
        self.cancel = cancel
        self.start = time.perf_counter()
        self.format_name = job.options.format
        self.units: Sequence[Unit] = ()
        self.todo: list[int] = []  # translatable units not done yet, in order
        self.translations: list[list[str] | None] = []
        self.total_units = 0
        self.total_chars = 0
        self.done_units = 0
        self.done_chars = 0
        self.resumed = 0
        self.translated = 0
        self.failed: list[int] = []
        self.kept: dict[int, str] = {}  # units kept in the source language, wholly ("unit") or in part ("sentences")
        self.first_failure = ""
        self.warnings: list[str] = []
        self.writer: progress_file.Writer | None = None

    # -- the work ---------------------------------------------------------------------------------------------------
    def work(self) -> Iterator[DocumentProgress]:
        extracted = self._prepare()
        yield self._progress(None)
        step_units, step_sentences = STEP_UNITS, STEP_SENTENCES  # read now: a test may make them small
        pace = _Pace(self.total_chars)
        at = 0  # self.todo[at:] is still to do
        while at < len(self.todo):
            if self._cancelled():
                self.finish(cancelled=True)
                return
            batch = _next_step(self.units, self.todo, at, step_units, step_sentences)
            at += len(batch)
            failed_before = len(self.failed)
            chars, finished = self._translate(batch)
            self._record(finished)
            pace.step(chars)
            unfinished = len(batch) - len(finished) - (len(self.failed) - failed_before)
            if unfinished or (self._cancelled() and at < len(self.todo)):  # what was not done stays to do
                self.finish(cancelled=True)
                return
            yield self._progress(pace.eta(self.total_chars - self.done_chars))
        self._write(extracted)

    def _prepare(self) -> Extracted:
        job = self.job
        source, output = job.source, job.output
        fmt = registry.for_path(source, job.options.format)
        self.format_name = fmt.name
        _check_paths(source, output, job.options.overwrite)
        data = _read(source)
        fingerprint_sha = hashlib.sha256(data).hexdigest()
        extracted = _extract(fmt, source, data)
        del data  # the format keeps what it needs to render; the job keeps no second copy
        # What the format kept without translating (a stray line between subtitle cues): said, never silent.
        self.warnings.extend(str(w) for w in getattr(extracted, "warnings", ()))
        self.units = extracted.units
        self.translations = [None] * len(self.units)
        translatable = [i for i, unit in enumerate(self.units) if unit.translatable]
        self.total_units = len(translatable)
        self.total_chars = sum(len(self.units[i].source) for i in translatable)
        fingerprint = {
            "sha256": fingerprint_sha,
            "format": fmt.name,
            "options": settings_of(job.translation),
            "target_lang": job.target_lang,
            "model_key": job.model_key,
            "qiao": __version__,
            "units": len(self.units),
        }
        kept: dict[int, str] = {}
        done = self._resume(fingerprint, kept)
        for index, runs in done.items():
            if self.units[index].translatable:
                if kept.get(index) == "unit":  # left as it was: rendered from the original (formatting intact)
                    self._keep(index, "unit", [])
                else:
                    self.translations[index] = runs
                    if index in kept:
                        self._keep(index, "sentences", [])
                self.done_units += 1
                self.done_chars += len(self.units[index].source)
        self.resumed = self.done_units
        self.todo = [i for i in translatable if self.translations[i] is None and i not in self.kept]
        try:
            output.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DocumentError(f"cannot make the folder {output.parent}: {exc.strerror or exc}") from exc
        if not os.access(output.parent, os.W_OK):  # said now, not after the first step's work
            raise DocumentError(f"cannot write in {output.parent}: permission denied")
        self.writer = progress_file.Writer(job.progress_path, fingerprint, fresh=not done)
        return extracted

    def _resume(self, fingerprint: dict, kept: dict[int, str]) -> dict[int, list[str]]:
        path = self.job.progress_path
        if not path.exists():
            return {}
        if not self.job.options.resume:
            self.warnings.append(f"{path.name}: an earlier run's progress was not used (resume is off); starting over")
            progress_file.remove(path)
            return {}
        try:
            done = progress_file.load(path, fingerprint, self.units, kept)
        except OSError as exc:
            done = None
            self.warnings.append(f"{path.name}: cannot read it ({exc.strerror or exc}); starting over")
        if done is None:
            self.warnings.append(
                f"{path.name} is from another input, format, model or settings (or damaged); starting over"
            )
            progress_file.remove(path)
            return {}
        return done

    def _translate(self, batch: list[int]) -> tuple[int, list[tuple[int, list[str]]]]:
        """Translate the units `batch` in one call; (source characters done, [(index, run texts)] finished)."""
        texts: list[str] = []
        plan: list[tuple[int, int, list[int]]] = []  # (unit index, position of its text, runs translated alone)
        for index in batch:
            unit = self.units[index]
            alone = runs_alone(unit)
            plan.append((index, len(texts), alone))
            texts.append(unit.source)
            texts.extend(unit.runs[r].text for r in alone)
        answers = list(self.translator.translate_segments(texts, self.job.translation, cancel=self.cancel))
        chars = 0
        finished: list[tuple[int, list[str]]] = []
        for index, at, alone in plan:
            mine = answers[at : at + 1 + len(alone)]
            complete = len(mine) == 1 + len(alone)
            if any(t.cancelled for t in mine) or (not complete and self._cancelled()):
                continue  # cancelled before this unit was done: it stays to do
            unit = self.units[index]
            self.done_units += 1
            self.done_chars += len(unit.source)
            chars += len(unit.source)
            error = mine[0].error if mine else "the engine gave no translation for it"
            if error is not None:
                self._failure(index, error)
                continue
            text, kept = keep_empty(unit.source, mine[0])
            if kept and not text:  # the model gave nothing: the unit stays as it was, never an empty paragraph
                self._keep(index, "unit", kept)
                finished.append((index, [run.text for run in unit.runs]))
                continue
            run_texts: list[str | None] = [None] * len(unit.runs)
            for r, answer in zip(alone, mine[1:], strict=False):
                run_texts[r] = answer.text if answer.error is None else None
            runs = distribute(unit, text, run_texts if alone else None)
            self.translations[index] = runs
            self.translated += 1
            if kept:
                self._keep(index, "sentences", kept)
            finished.append((index, runs))
        return chars, finished

    def _record(self, finished: list[tuple[int, list[str]]]) -> None:
        try:
            kept = {index: self.kept[index] for index, _ in finished if index in self.kept}
            if kept:
                self.writer.append(finished, kept)  # type: ignore[union-attr]
            else:
                self.writer.append(finished)  # type: ignore[union-attr]
        except OSError as exc:
            raise DocumentError(
                f"cannot write in {self.job.output.parent}: {exc.strerror or exc} (the result and the progress "
                "file go there)"
            ) from exc

    def _failure(self, index: int, reason: str) -> None:
        if not self.failed:
            self.first_failure = reason
        self.failed.append(index)
        if len(self.failed) <= MAX_WARNINGS:
            excerpt = excerpt_of(self.units[index].source)
            self.warnings.append(f"unit {index + 1} (“{excerpt}”) was left untranslated: {reason}")

    def _keep(self, index: int, kind: str, texts: list[str]) -> None:
        """Unit `index` (wholly: "unit", or some of its sentences: "sentences") was kept in the source language
        because the model gave nothing for it; named in the warnings (`texts`: what was kept, [] when resumed)."""
        self.kept[index] = kind
        if len(self.kept) > MAX_WARNINGS or not texts:
            return
        excerpts = ", ".join(f"“{excerpt_of(text)}”" for text in texts[:3]) + (" …" if len(texts) > 3 else "")
        if kind == "unit":
            self.warnings.append(
                f"unit {index + 1} ({excerpts}) was kept as it was: the model's translation of it was empty"
            )
        else:
            self.warnings.append(
                f"unit {index + 1}: the model's translation of {excerpts} was empty, so that text was kept as it was "
                "in the translation"
            )

    def _write(self, extracted: Extracted) -> None:
        job = self.job
        if len(self.failed) > MAX_WARNINGS:
            self.warnings.append(f"… and {len(self.failed) - MAX_WARNINGS} more units were left untranslated")
        if len(self.kept) > MAX_WARNINGS:
            self.warnings.append(f"… and {len(self.kept) - MAX_WARNINGS} more units were kept as they were in part")
        if (self.failed or self.kept) and not self.translated and not self.resumed:
            # Writing would give a copy of the input under a translation's name (a 5 MB one-paragraph .txt did).
            if self.writer is not None:
                self.writer.remove()
            reason = self.first_failure or "the model's translation of every part of it was empty"
            raise DocumentError(f"nothing in {job.source.name} could be translated ({reason}), so nothing was written")
        target = job.output.with_name(partial_name(job.output.name)) if self.failed else job.output
        try:
            data = extracted.render(self.translations, target=job.target_lang)
        except DocumentError:
            raise
        except Exception as exc:  # a format's bug must not lose the work: the progress file stays
            raise DocumentError(f"{job.source.name}: cannot write the translated document ({exc})") from exc
        if self.failed:  # our own earlier partial result is replaced; the input never
            _check_paths(job.source, target, overwrite=True)
        else:
            _check_paths(job.source, job.output, job.options.overwrite)  # again: it may have appeared since
        try:
            write_user_file(target, data)
        except OSError as exc:
            raise DocumentError(f"cannot write {target}: {exc.strerror or exc}") from exc
        if self.failed:  # the progress file stays: the next run retries only the failed units
            self.warnings.append(
                f"the translation is incomplete ({len(self.failed)} of {self.total_units} units left untranslated), "
                f"so it was written as {target.name}; run it again to retry those units"
            )
            self.finish(output=target, partial=True)
            return
        if self.writer is not None:
            self.writer.remove()
        stale = job.output.with_name(partial_name(job.output.name))
        if stale.is_file() and not stale.is_symlink():  # an earlier run's incomplete result, now superseded
            with contextlib.suppress(OSError):
                stale.unlink()
        self.finish(output=job.output)

    # -- figures and the end --------------------------------------------------------------------------------------
    def _cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()

    def _progress(self, eta: float | None) -> DocumentProgress:
        return DocumentProgress(
            source=self.job.source,
            units_done=self.done_units,
            units_total=self.total_units,
            chars_done=self.done_chars,
            chars_total=self.total_chars,
            elapsed_s=time.perf_counter() - self.start,
            eta_s=eta,
        )

    def finish(
        self, *, output: Path | None = None, cancelled: bool = False, error: str | None = None, partial: bool = False
    ) -> None:
        if self.job.result is not None:
            return
        self.job._set_result(
            DocumentResult(
                source=self.job.source,
                output=output,
                format=self.format_name,
                units=self.total_units,
                translated=self.translated,
                resumed=self.resumed,
                seconds=time.perf_counter() - self.start,
                cancelled=cancelled,
                error=error,
                failed_units=len(self.failed) + len(self.kept),
                warnings=tuple(self.warnings),
                partial=partial,
                kept_units=len(self.kept),
            )
        )


def excerpt_of(text: str) -> str:
    """`text` on one line, cut to 40 characters, for a warning."""
    text = " ".join(text.split())
    return text if len(text) <= 40 else text[:39] + "…"


def _sentences(text: str) -> int:
    """About how many sentences `text` holds (for bounding a step; the engine splits them properly)."""
    return max(1, len(_SENTENCE_END.findall(text)))


def _next_step(units: Sequence[Unit], todo: Sequence[int], at: int, max_units: int, max_sentences: int) -> list[int]:
    """The units to translate in the next call, from `todo[at]` on: up to `max_units` units and about
    `max_sentences` sentences (the unit texts and the runs translated alone); at least one unit, however long."""
    batch: list[int] = []
    sentences = 0
    for k in range(at, len(todo)):
        unit = units[todo[k]]
        cost = _sentences(unit.source) + sum(_sentences(unit.runs[r].text) for r in runs_alone(unit))
        if batch and (len(batch) >= max_units or sentences + cost > max_sentences):
            break
        batch.append(todo[k])
        sentences += cost
    return batch


class _Pace:
    """Seconds left at this run's pace, by source characters. The first step also pays for the engine's warm-up
    (sessions, caches), so once there are two steps it is left out of the rate; before two steps, an estimate
    needs 5% of the characters behind it."""

    def __init__(self, total_chars: int) -> None:
        self.total_chars = total_chars
        self.began = time.perf_counter()
        self.steps = 0
        self.chars = 0
        self.first: tuple[float, int] | None = None  # (when the first step ended, its characters)

    def step(self, chars: int) -> None:
        self.steps += 1
        self.chars += chars
        if self.first is None:
            self.first = (time.perf_counter(), chars)

    def eta(self, remaining_chars: int) -> float | None:
        if remaining_chars <= 0:
            return 0.0
        if self.steps < 2 and self.chars < 0.05 * self.total_chars:
            return None
        since, chars = self.began, self.chars
        if self.steps >= 2 and self.first is not None and self.chars > self.first[1]:
            since, chars = self.first[0], self.chars - self.first[1]
        elapsed = time.perf_counter() - since
        if chars <= 0 or elapsed <= 0:
            return None
        return remaining_chars * elapsed / chars


def _check_paths(source: Path, output: Path, overwrite: bool) -> None:
    """The result is never the input, and replaces an existing file only when asked to."""
    if not source.exists():
        raise DocumentError(f"{source}: no such file")
    if source.is_dir():
        raise DocumentError(f"{source}: not a file")
    if not source.is_file():
        raise DocumentError(f"{source}: not a regular file (a device, a pipe or a socket)")
    same = output.resolve() == source.resolve()
    if not same and output.exists():
        try:
            same = os.path.samefile(output, source)
        except OSError:
            same = False
    if same:
        raise DocumentError(
            f"{output}: the result would replace the input itself; choose another result name or folder"
        )
    if output.exists() and not overwrite:
        raise DocumentError(f"{output} exists already; choose to overwrite it (--overwrite) or another name")
    if output.exists() and not output.is_file():
        raise DocumentError(f"{output} exists and is not a file")


def _read(source: Path) -> bytes:
    """The input's bytes, refused before reading when over MAX_BYTES."""
    limit_mb = MAX_BYTES // 2**20
    try:
        return _read_within(source, limit_mb)
    except OSError as exc:
        raise DocumentError(f"cannot read {source}: {exc.strerror or exc}") from exc


def _read_within(source: Path, limit_mb: int) -> bytes:
    with open(source, "rb", opener=_no_wait) as stream:
        info = os.fstat(stream.fileno())
        if not stat.S_ISREG(info.st_mode):  # replaced by a FIFO or a device since it was checked
            raise DocumentError(f"{source}: not a regular file (a device, a pipe or a socket)")
        size = info.st_size
        if size > MAX_BYTES:
            raise DocumentError(
                f"{source.name} is {size / 2**20:,.0f} MB; Qiao translates documents of up to {limit_mb} MB. "
                "Split it into smaller files"
            )
        # read(n) allocates n bytes up front: ask for the size there is (and one more byte, to see it grew), never
        # for the limit. A file that reports no size (a pipe, /proc) is read in pieces up to the limit.
        data = stream.read(size + 1) if size else _read_pieces(stream)
        if len(data) > size and size and len(data) <= MAX_BYTES:
            data += _read_pieces(stream, MAX_BYTES + 1 - len(data))
    if len(data) > MAX_BYTES:  # it grew while being read
        raise DocumentError(f"{source.name} is over {limit_mb} MB; Qiao translates documents of up to {limit_mb} MB")
    return data


def _no_wait(path: str, flags: int) -> int:
    """Open without blocking: opening a FIFO for reading waits for a writer unless O_NONBLOCK is given."""
    return os.open(path, flags | getattr(os, "O_NONBLOCK", 0))


def _read_pieces(stream, limit: int = MAX_BYTES + 1) -> bytes:
    """At most `limit` bytes of `stream`, read a megabyte at a time."""
    parts = []
    while limit > 0:
        chunk = stream.read(min(limit, 2**20))
        if not chunk:
            break
        parts.append(chunk)
        limit -= len(chunk)
    return b"".join(parts)


def _extract(fmt: DocumentFormat, source: Path, data: bytes) -> Extracted:
    """The format's reading of `data`; a format's unexpected exception becomes a DocumentError, for a person."""
    try:
        return fmt.read(data)
    except DocumentError as exc:
        message = str(exc)
        raise DocumentError(message if source.name in message else f"{source.name}: {message}") from exc
    except Exception as exc:
        raise DocumentError(f"{source.name}: cannot read this {fmt.label} ({type(exc).__name__}: {exc})") from exc
