"""`qiao translate`: the text of an argument, a file or stdin as one request, or `--json`: one request per line,
batched across lines by `Translator.translate_segments`, each record written as soon as it is done.

Records carry each sentence's review data (engine.results.SentenceResult: token log-probabilities, score, flags,
n-best alternatives, origin); `--prefix` forces the start of a one-sentence input (`Translator.translate_sentence`),
`--glossary` reads the terms the translation must use (engine.glossary_io), `--no-guards` turns the checks off.
Plain output notes flagged sentences on stderr."""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import threading
import unicodedata
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from engine.cli.io import LineFeed, Output, Progress, json_line, read_bounded, say, stdin_bytes
from engine.errors import InputError, QiaoError
from engine.results import FLAG_CUT

if TYPE_CHECKING:
    from engine.cli.direction import Routed  # imported when a command runs: `qiao --help` stays quick


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
        alternatives=getattr(args, "alternatives", 0) or 0,
        glossary=_glossary(getattr(args, "glossary", None)),
        guards=not getattr(args, "no_guards", False),
    )


def _glossary(path: Path | None):
    """--glossary FILE read by engine.glossary_io (a clear error for a missing, unreadable or malformed file)."""
    if path is None:
        return None
    if path.is_dir():
        raise QiaoError(f"--glossary {path}: is a folder, not a CSV/TSV file")
    if not path.exists():
        raise QiaoError(f"--glossary {path}: no such file")
    try:
        from engine.glossary_io import read_glossary
    except ModuleNotFoundError as exc:
        if exc.name != "engine.glossary_io":
            raise
        raise QiaoError(
            "--glossary: this build of Qiao cannot read glossaries (engine.glossary_io is missing)"
        ) from exc
    try:
        return read_glossary(path)
    except InputError as exc:
        raise InputError(f"--glossary {path}: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"--glossary {path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except OSError as exc:
        raise QiaoError(f"--glossary {path}: cannot read it: {exc.strerror or exc}") from exc


def _checked_prefix(prefix: str) -> str:
    """--prefix TEXT: the start of the translation, as plain text on one line."""
    if not prefix.strip():
        raise InputError("--prefix is empty: give the start of the translation, e.g. --prefix 我们")
    bad = next((ch for ch in prefix if unicodedata.category(ch) == "Cc"), None)
    if bad is not None:
        raise InputError(
            f"--prefix has a control character (U+{ord(bad):04X}); give the start of the translation as plain text"
        )
    return prefix


def _one_sentence(pair, text: str, options) -> str:
    """The only sentence of `text` as the model reads it (for --prefix), or a clear error."""
    from engine.text.segment import Segmentation, segment_text

    sentences = [
        s.sentence for s in segment_text(text, options.join_wrapped_lines, Segmentation.of(pair)) if s.translate
    ]
    if len(sentences) != 1:
        found = "no sentence to translate" if not sentences else f"{len(sentences)} sentences"
        raise InputError(f"--prefix forces the start of one sentence, and the input has {found}")
    return sentences[0]


def translate_command(args: argparse.Namespace) -> int:
    """`qiao translate`: one request from an argument, a file or stdin, or (`--json`) one per input line, each in
    the installed direction that reads it (engine.cli.direction)."""
    from engine.cli.direction import Directions
    from engine.pipeline.requests import MAX_CHARS

    if args.text is not None and args.file is not None:
        raise QiaoError("give the text or --file, not both")
    out = Output(sys.stdout)
    source = None if args.text is not None else _open_input(args.file)
    try:
        name = str(args.file) if args.file is not None else "the input"
        text = args.text
        prefix = getattr(args, "prefix", None)
        if prefix is not None:
            prefix = _checked_prefix(prefix)
        if text is None and (not args.json or prefix is not None):
            assert source is not None  # no text argument: a file or stdin
            text = _read_text(source, name, MAX_CHARS)
        options = _options(args)
        directions = Directions(args)
        directions.check_first(options)  # the request's errors once, first
        if args.json and text is None:
            assert source is not None
            return _translate_lines(directions, source, options, MAX_CHARS, out)
        routed = directions.route(text)
        if routed.refusal is not None:
            raise InputError(routed.refusal)
        if routed.note is not None and not args.json:
            say(f"note: {routed.note}")
        translator, options = directions.for_request(routed.pair, options)
        variant = directions.written(routed.pair, options)
        if prefix is not None:
            return _translate_prefixed(translator, text, options, prefix, args.json, out, routed, variant)
        if args.json:
            result = translator.translate(text, options)
            out.write(json_line(_record(result, routed, variant)), flush=True)
            return 0
        return _translate_text(translator, text, options, args.stream, out)
    finally:
        if source is not None and args.file is not None:
            source.close()


def _record(result, routed=None, variant: str | None = None) -> dict:
    """One --json record; `routed` (engine.cli.direction.Routed) adds the direction used, the detected language and
    `variant`: the target variant actually written (None for a target without variants)."""
    # The stats' fields are flat figures: a shallow copy, not as_dict()'s deep one (half the CLI's time per line).
    stats = {f.name: getattr(result.stats, f.name) for f in dataclasses.fields(result.stats)}
    sentences = [_sentence_record(s, result.text) for s in result.sentences]
    record = {
        "text": result.text,
        "tokens": result.tokens,
        "stats": stats,
        "scores": [s["score"] for s in sentences],
        "sentences": sentences,
    }
    return record | _direction_fields(routed, variant)


def _direction_fields(routed, variant: str | None = None) -> dict:
    if routed is None:
        return {}
    direction = routed.pair if routed.refusal is None else None  # a refused text was translated in no direction
    fields = {"direction": direction, "detected": routed.detected_record()}
    if direction is not None:
        fields["variant"] = variant
    if routed.note is not None:
        fields["note"] = routed.note
    return fields


def _number(x: float | None) -> float | None:
    """A score for JSON: None for none (or a non-finite value, which JSON cannot carry)."""
    return x if x is not None and math.isfinite(x) else None


def _sentence_record(s, text: str | None = None) -> dict:
    """One sentence of a record: its text, score, tokens (the text each produced, its log-probability), flags,
    alternatives, origin and unmet glossary terms."""
    shown = s.text or (text[s.target_span[0] : s.target_span[1]] if text is not None else "")
    logprobs = s.logprobs if len(s.logprobs) == len(s.tokens) else [None] * len(s.tokens)
    spans = s.token_spans if len(s.token_spans) == len(s.tokens) else [(0, 0)] * len(s.tokens)
    return {
        "source": s.source,
        "text": shown,
        "score": _number(s.score),
        "tokens": [
            {"id": t, "text": shown[a:b], "logprob": _number(lp)} for t, lp, (a, b) in zip(s.tokens, logprobs, spans)
        ],
        "flags": [{"kind": f.kind, "detail": f.detail} for f in s.flags],
        "cut": any(f.kind == FLAG_CUT for f in s.flags),  # stopped at the length limit: its end may be missing
        "alternatives": [{"text": a.text, "score": _number(a.score)} for a in s.alternatives],
        "origin": s.origin,
        "unmet": list(s.unmet),
    }


def _notes(sentences) -> None:
    """Plain output: each flagged sentence's reasons, and the alternatives asked for, on stderr."""
    for s in sentences:
        for flag in s.flags:
            say(f"note: sentence {s.index + 1}: {flag.detail}")
        for k, alt in enumerate(s.alternatives, 1):
            say(f"note: sentence {s.index + 1}, alternative {k}: {alt.text}")


def _translate_prefixed(
    translator, text: str, options, prefix: str, as_json: bool, out: Output, routed=None, variant: str | None = None
) -> int:
    """--prefix: the one sentence of `text` decoded with its translation forced to start with `prefix`."""
    source = _one_sentence(translator.manifest.pair, text, options)
    result = translator.translate_sentence(source, options, prefix=prefix)
    if not result.text and result.tokens:  # a result without its text: decode it as the pipeline shows it
        from engine.text import punctuation
        from engine.text.token_spans import final_text

        target = translator.manifest.pair.target
        rules = punctuation.rules_for(target.script) if options.normalize_punctuation else None
        result = dataclasses.replace(result, text=final_text(translator.tokenizer, result.tokens, rules))
    record = _sentence_record(result)
    if as_json:
        tokens = [list(result.tokens)]
        full = {"text": record["text"], "tokens": tokens, "stats": None, "scores": [record["score"]]}
        out.write(json_line({**full, "sentences": [record], **_direction_fields(routed, variant)}), flush=True)
        return 0
    out.write(record["text"] + "\n", flush=True)
    _notes([result])
    return 0


def _translate_text(translator, text: str, options, stream: bool, out: Output) -> int:
    from engine.results import Translation

    cancel = threading.Event()
    result = None
    streamed = ""  # the end of what --stream wrote
    try:
        for item in translator.stream(text, options, cancel=cancel):
            if isinstance(item, Translation):
                result = item
            elif stream:
                out.write(item.delta, flush=True)
                streamed = (streamed + item.delta)[-1:]
    except KeyboardInterrupt:
        cancel.set()
        raise
    assert result is not None
    written = streamed if stream else result.text
    if not stream:
        out.write(result.text, flush=True)
    # one line end, not a second one after a text that kept its own (a file or stdin ending in "\n")
    out.write("" if written.endswith("\n") else "\n", flush=True)
    _notes(result.sentences)
    s = result.stats
    if s is not None and s.sentences:
        first = f"{s.first_token_ms:.0f} ms" if s.first_token_ms is not None else "–"
        say(
            f"[{s.precision.upper()}, beams {s.beams}: {s.total_ms:.0f} ms total, first token {first}, "
            f"{s.source_tokens}→{s.target_tokens} tokens, {s.tokens_per_s:.0f} tok/s]"
        )
    return 0


def _translate_lines(directions, source: BinaryIO, options, max_chars: int, out: Output) -> int:
    """`--json` on a stream: one record per "\n"-line, in order, each written as soon as it is done, each with the
    direction it was translated in."""
    feed = LineFeed(source, max_bytes=max_chars * 4)
    progress = Progress(sys.stderr)
    cancel = threading.Event()
    refused = 0
    try:
        for group in feed.groups():
            for line, answer, routed in _routed_answers(directions, group, options, cancel, max_chars):
                if isinstance(answer, str):
                    refused += 1
                    record = {"error": answer, "line": line.number} | _direction_fields(routed)
                else:
                    record = _record(answer, routed, directions.written(routed.pair, options) if routed else None)
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


def _routed_answers(directions, lines: Iterator, options, cancel: threading.Event, max_chars: int) -> Iterator[tuple]:
    """(line, Translation or error text, Routed or None) in input order. Consecutive lines of one direction go
    through `_answers` together (batched across lines); a line clearly in the other language starts a new run; a
    line without a clear language (numbers, a link) stays in the run it is in."""
    lines = iter(lines)
    seen: dict[int, tuple[str, str | None, Routed | None]] = {}  # line number → (text, error, Routed or None)
    held = None
    current: str | None = None

    def look(line, key: str | None) -> tuple[str, str | None, Routed | None]:
        if line.number not in seen:
            text, error = _line_text(line, max_chars)
            routed = None if error is not None else directions.route(text, key)
            if routed is not None and routed.refusal is not None:
                error = routed.refusal
            seen[line.number] = (text, error, routed)
        return seen[line.number]

    def starts_run(line, key: str) -> bool:
        _, error, routed = look(line, key)
        return error is None and routed is not None and routed.detected.clear and routed.pair != key

    def run(first, key: str) -> Iterator:
        nonlocal held
        yield first
        for line in lines:
            if starts_run(line, key):
                held = line
                return
            yield line

    def check(line) -> tuple[str, str | None]:
        text, error, _ = seen[line.number]
        return text, error

    while True:
        first = held if held is not None else next(lines, None)
        held = None
        if first is None:
            return
        routed = look(first, current)[2]
        usable = routed is not None and routed.refusal is None
        current = routed.pair if routed is not None and usable else (current or directions.default)
        translator, run_options = directions.for_request(current, options)
        for line, answer in _answers(translator, run(first, current), run_options, cancel, check):
            yield line, answer, seen.pop(line.number)[2]


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


def _answers(translator, lines: Iterator, options, cancel: threading.Event, check: Callable) -> Iterator[tuple]:
    """(line, Translation or error text) for every line, in input order.

    Lines the CLI refuses never reach the engine; the rest stream through `translate_segments` (batched across
    lines). A text the engine refuses comes back with `error` set. Should an engine raise InputError for one text
    instead (ending its generator), the texts it had taken without answering are redone one by one, each with its
    own answer, and batching resumes with the next line.
    """
    pending: deque[tuple] = deque()  # (line, text, error) in input order, not yet answered

    def texts() -> Iterator[str]:
        for line in lines:
            text, error = check(line)
            pending.append((line, text, error))
            if error is None:
                yield text

    def refused_first() -> Iterator[tuple]:
        while pending and pending[0][2] is not None:
            line, _, error = pending.popleft()
            yield line, error

    while True:
        try:
            for result in translator.translate_segments(texts(), options, cancel=cancel):
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
