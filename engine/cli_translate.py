"""`qiao translate`: the text of an argument, a file or stdin as one request, or `--json`: one request per line,
batched across lines by `Translator.translate_batch`, each record written as soon as it is done."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import threading
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from engine.cli_io import LineFeed, Output, Progress, json_line, read_bounded, say, stdin_bytes
from engine.config import MAX_BEAMS, EngineConfig
from engine.errors import InputError, QiaoError


def _open_input(file: Path | None) -> BinaryIO:
    if file is None:
        return stdin_bytes()
    try:
        return open(file, "rb")  # closed by the caller
    except OSError as exc:
        raise QiaoError(f"cannot read {file}: {exc.strerror or exc}") from exc


def _read_text(source: BinaryIO, name: str, max_chars: int) -> str:
    """The whole input as one request; reading stops past max_chars × 4 bytes (`--file /dev/zero` has no end)."""
    try:
        data = read_bounded(source, max_chars * 4)
    except OSError as exc:
        raise QiaoError(f"cannot read {name}: {exc.strerror or exc}") from exc
    if data is None:
        raise InputError(
            f"{name} is over {max_chars * 4:,} bytes; Qiao translates at most {max_chars:,} characters per request. "
            "Split it into smaller parts (or use --json: one request per line)."
        )
    return data.decode("utf-8", errors="replace").removeprefix("\ufeff")


def _options(args):
    from engine.options import TranslationOptions

    return TranslationOptions(
        beams=args.beams,
        variant=args.variant,
        join_wrapped_lines=not args.no_join_lines,
        normalize_punctuation=not args.raw_punctuation,
    )


def _check_variant(pair, variant: str | None) -> None:
    """An explicit --variant for a model without variants is a mistake on the command line (the window keeps one
    saved choice for both directions instead, which TranslationOptions.validate allows)."""
    if variant is not None and not pair.variants:
        raise InputError(f"--variant {variant}: the {pair.key} model has no target variants")


def translate_command(args: argparse.Namespace) -> int:
    """`qiao translate`: one request from an argument, a file or stdin, or (`--json`) one per input line."""
    from engine.locate import find_bundle
    from engine.translator import MAX_CHARS, Translator

    if args.text is not None and args.file is not None:
        raise QiaoError("give the text or --file, not both")
    out = Output(sys.stdout)
    source = None if args.text is not None else _open_input(args.file)
    try:
        name = str(args.file) if args.file is not None else "the input"
        text = args.text
        if text is None and not args.json:
            text = _read_text(source, name, MAX_CHARS)
        options = _options(args)
        bundle = find_bundle(args.model, pair=args.direction)
        translator = Translator(bundle, EngineConfig(precision=args.precision, threads=args.threads or None))
        _check_variant(translator.manifest.pair, options.variant)
        options.validate(translator.manifest.pair.variant_keys, MAX_BEAMS)  # the request's errors once, first
        if args.json and text is None:
            return _translate_lines(translator, source, options, MAX_CHARS, out)
        if args.json:
            result = translator.translate(text, options)
            out.write(json_line(_record(result)), flush=True)
            return 0
        return _translate_text(translator, text, options, args.stream, out)
    finally:
        if source is not None and args.file is not None:
            source.close()


def _record(result) -> dict:
    # The stats' fields are flat figures: a shallow copy, not as_dict()'s deep one (half the CLI's time per line).
    stats = {f.name: getattr(result.stats, f.name) for f in dataclasses.fields(result.stats)}
    return {"text": result.text, "tokens": result.tokens, "stats": stats}


def _translate_text(translator, text: str, options, stream: bool, out: Output) -> int:
    from engine.results import Translation

    cancel = threading.Event()
    result = None
    try:
        for item in translator.stream(text, options, cancel=cancel):
            if isinstance(item, Translation):
                result = item
            elif stream:
                out.write(item.delta, flush=True)
    except KeyboardInterrupt:
        cancel.set()
        raise
    assert result is not None
    out.write(("" if stream else result.text) + "\n", flush=True)
    s = result.stats
    if s is not None and s.sentences:
        first = f"{s.first_token_ms:.0f} ms" if s.first_token_ms is not None else "–"
        say(
            f"[{s.precision.upper()}, beams {s.beams}: {s.total_ms:.0f} ms total, first token {first}, "
            f"{s.source_tokens}→{s.target_tokens} tokens, {s.tokens_per_s:.0f} tok/s]"
        )
    return 0


def _translate_lines(translator, source: BinaryIO, options, max_chars: int, out: Output) -> int:
    """`--json` on a stream: one record per "\n"-line, in order, each written as soon as it is done."""
    feed = LineFeed(source, max_bytes=max_chars * 4)
    progress = Progress(sys.stderr)
    cancel = threading.Event()
    refused = 0
    try:
        for group in feed.groups():
            for line, answer in _answers(translator, group, options, cancel, max_chars):
                if isinstance(answer, str):
                    refused += 1
                    record = {"error": answer, "line": line.number}
                else:
                    record = _record(answer)
                out.write(json_line(record), flush=True)
                progress.tick()
    except KeyboardInterrupt:
        cancel.set()
        raise
    finally:
        progress.close()
    if refused:
        say(f'qiao: {refused:,} of {progress.done:,} lines not translated (their records have "error")')
        return 1
    return 0


def _line_text(line, max_chars: int) -> tuple[str, str | None]:
    """The text of a line, or why it is not translated."""
    too_long = f"Qiao translates at most {max_chars:,} characters per request; split the line"
    if line.data is None:
        return "", f"line {line.number} is over {max_chars * 4:,} bytes; {too_long}"
    text = line.data.decode("utf-8", errors="replace")
    if line.number == 1:
        text = text.removeprefix("\ufeff")
    if len(text) > max_chars:
        return "", f"line {line.number} has {len(text):,} characters; {too_long}"
    return text, None


def _answers(translator, lines: Iterator, options, cancel: threading.Event, max_chars: int) -> Iterator[tuple]:
    """(line, Translation or error text) for every line, in input order.

    Lines the CLI refuses never reach the engine; the rest stream through `translate_batch` (batched across
    lines). A text the engine refuses comes back with `error` set. Should an engine raise InputError for one text
    instead (ending its generator), the texts it had taken without answering are redone one by one, each with its
    own answer, and batching resumes with the next line.
    """
    pending: deque[tuple] = deque()  # (line, text, error) in input order, not yet answered

    def texts() -> Iterator[str]:
        for line in lines:
            text, error = _line_text(line, max_chars)
            pending.append((line, text, error))
            if error is None:
                yield text

    def refused_first() -> Iterator[tuple]:
        while pending and pending[0][2] is not None:
            line, _, error = pending.popleft()
            yield line, error

    while True:
        try:
            for result in translator.translate_batch(texts(), options, cancel=cancel):
                yield from refused_first()
                line, _, _ = pending.popleft()
                yield line, result.error or result
        except InputError:
            if not pending:
                raise  # about the request itself, not one text
            while pending:
                line, text, error = pending.popleft()
                if error is not None:
                    yield line, error
                    continue
                try:
                    yield line, translator.translate(text, options, cancel=cancel)
                except InputError as exc:
                    yield line, str(exc)
            continue
        yield from refused_first()
        return
