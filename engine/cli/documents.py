"""`qiao translate-file`: documents in, the same documents translated out, one line per file on stdout.

The model is loaded once for every file. Progress goes to stderr as a bar only when stderr is a terminal (a log
stays clean). The first Ctrl+C cancels cleanly: the running step stops within a decoder step, the finished part
stays in the progress file beside the result, and running the same command again continues from there.

`--variant hant` with a model that writes Simplified only (Firefox's en→zh) translates in Simplified and says so
once on stderr, naming an installed model that writes Traditional (engine.cli.direction.Directions.for_request).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from engine.cli.io import Output, say
from engine.documents import discover, registry
from engine.documents.job import (
    DocumentJob,
    DocumentOptions,
    DocumentProgress,
    DocumentResult,
    model_key,
    result_name,
)
from engine.documents.model import DocumentError
from engine.documents.sample import text_sample

EXIT_CANCELLED = 130


def translate_file_command(args: argparse.Namespace) -> int:
    """Translate every document `args.inputs` names, each in the installed direction that reads it (engine.
    cli_direction); 0 when all were written whole, 1 when any failed, 130 when cancelled."""
    from engine.cli.direction import Directions
    from engine.cli.translate import _options

    discover.check_inputs(args.inputs)  # mistakes on the command line are said before the model loads
    result_name(Path("document.txt"), args.name, "xx")  # a bad template: one error, not one per file
    if args.format != "auto":
        registry.get(args.format)
    options = _options(args)
    directions = Directions(args)
    directions.check_first(options)
    files = _documents(args, directions)
    doc_options = DocumentOptions(
        out_dir=args.out,
        name_template=args.name,
        format=args.format,
        overwrite=args.overwrite,
        resume=not args.no_resume,
    )
    out = Output(sys.stdout)
    cancel = threading.Event()
    failed = 0
    with _ctrl_c_cancels(cancel):
        for file in files:
            routed = directions.route(text_sample(file, args.format))
            if routed.refusal is not None:
                out.write(f"{file} -> failed: {routed.refusal}\n", flush=True)
                failed += 1
                continue
            pair = routed.pair
            if routed.note is not None:
                say(f"qiao: {file}: note: {routed.note}")
            elif pair != directions.default:
                say(f"qiao: {file}: looks {routed.detected.name}, translated {pair}")
            # A variant the model cannot write (Traditional of Firefox's en→zh): said once per run on stderr, and the
            # job runs (and its progress file records) the variant actually written, as the window's jobs do.
            translator, run_options = directions.for_request(pair, options)
            lang = translator.manifest.pair.target.code
            job = DocumentJob(file, doc_options, run_options, target_lang=lang, model_key=model_key(translator))
            result = _run_one(job, translator, cancel)
            out.write(_line(file, result) + "\n", flush=True)
            for warning in result.warnings:
                say(f"qiao: {file}: {warning}")
            if result.cancelled:
                if job.progress_path.exists():
                    kept = f"the finished part is kept in {job.progress_path} — run the same command again to continue"
                else:
                    kept = "nothing was finished yet"
                say(f"qiao: {file}: cancelled; {kept}")
                return EXIT_CANCELLED
            if result.error is not None or result.failed_units:
                failed += 1
    return 1 if failed else 0


def _documents(args: argparse.Namespace, directions) -> list[Path]:
    """The documents to translate; a folder's earlier results (NAME.LANG.EXT for any target language a direction
    here writes) are not inputs."""
    pairs = (directions.default,) if directions.forced else (directions.installed or (directions.default,))
    langs = dict.fromkeys(key.split("-")[-1] for key in pairs)
    found = [discover.expand(args.inputs, lang, args.name, args.format) for lang in langs]
    files = [f for f in found[0] if all(f in other for other in found[1:])]
    if not files:
        where = ", ".join(str(p) for p in args.inputs)
        raise DocumentError(f"no documents to translate in {where}; Qiao reads {', '.join(registry.extensions())}")
    return files


def _run_one(job: DocumentJob, translator, cancel: threading.Event) -> DocumentResult:
    bar = _Bar(job.source.name)
    try:
        return job.run(translator, cancel, bar.update)
    except KeyboardInterrupt:  # a second Ctrl+C: the job recorded itself as cancelled on the way out
        assert job.result is not None
        return job.result
    finally:
        bar.close()


def _line(file: Path, result: DocumentResult) -> str:
    if result.error is not None:
        return f"{file} -> failed: {result.error}"
    if result.cancelled:
        return f"{file} -> cancelled ({result.translated + result.resumed} of {result.units} units done)"
    extra = ""
    if result.resumed:
        extra += f", {result.resumed} from the earlier run"
    if result.failed_units:
        extra += f", {result.failed_units} left untranslated"
    units = "1 unit" if result.units == 1 else f"{result.units} units"
    incomplete = "INCOMPLETE: " if result.partial else ""
    return f"{file} -> {result.output} ({incomplete}{units}{extra}, {result.seconds:.1f} s)"


@contextmanager
def _ctrl_c_cancels(cancel: threading.Event) -> Iterator[None]:
    """The first Ctrl+C sets `cancel` (a clean stop); a second one interrupts at once."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()
        say("qiao: stopping… (Ctrl+C again to stop at once)")

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class _Bar:
    """A tqdm bar of units on stderr, only when stderr is a terminal; our own estimate (by characters) beside it."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._bar: Any = None  # a tqdm bar, made on the first update
        try:
            self._enabled = sys.stderr is not None and sys.stderr.isatty()
        except (OSError, ValueError, AttributeError):
            self._enabled = False

    def update(self, progress: DocumentProgress) -> None:
        if not self._enabled:
            return
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(
                total=progress.units_total,
                initial=progress.units_done,
                desc=self._name,
                file=sys.stderr,
                leave=False,
                bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} units [{elapsed}{postfix}]",
            )
        self._bar.update(progress.units_done - self._bar.n)
        if progress.eta_s is not None:
            self._bar.set_postfix_str(f"about {_duration(progress.eta_s)} left", refresh=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _duration(seconds_left: float) -> str:
    seconds = round(seconds_left)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"
