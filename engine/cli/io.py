"""The command line's standard streams: bounded reads, lines split on "\\n" only, output errors worded for a person.

Why not `str.splitlines()` or `for line in sys.stdin`: splitlines breaks on \\v \\f \\x1c-\\x1e \\x85 U+2028 U+2029
too, so one input line became several records; a text stream dies on invalid UTF-8; and neither bounds the length
of a line (`/dev/zero` has none). Here input is bytes, lines end at "\\n" (a "\\r" before it is dropped), and a
line longer than the caller's limit is reported, not stored.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO, TextIO, cast

from engine.errors import QiaoError

READ_SIZE = 1 << 16
# Characters a line-splitting reader (Python's splitlines, JavaScript's JSON.parse of old) may take as a line
# break that json.dumps(ensure_ascii=False) leaves raw; written escaped, so one record is always one line.
_RAW_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


class OutputError(QiaoError):
    """Standard output cannot be written (disk full, closed): the CLI says so and exits 1."""


class OutputClosed(Exception):
    """The reader of our output went away (`qiao … | head -1`): stop quietly, like other Unix tools."""


@dataclass(frozen=True)
class Line:
    """One input line: its number (from 1) and bytes without the line end. `data` is None when the line is longer
    than the reader's limit: it is reported as soon as the limit is passed and the rest of it is skipped unread
    into memory."""

    number: int
    data: bytes | None


def _reader(stream: BinaryIO) -> Callable[[int], bytes]:
    """A read function that returns what is available (a line typed or piped arrives at once, no block fill)."""
    if os.name != "nt" or not stream.isatty():  # Windows' console gives UTF-8 only through its Python stream
        try:
            fd = stream.fileno()
            # os.read takes no lock on the Python stream object: a reader thread blocked here never stalls shutdown.
            return lambda n: os.read(fd, n)
        except (OSError, ValueError, AttributeError):
            pass
    read1 = getattr(stream, "read1", None)
    return read1 if read1 is not None else stream.read


def iter_lines(stream: BinaryIO, max_bytes: int) -> Iterator[Line]:
    """Lines of `stream` split on b"\\n" only (b"\\r\\n" too); a last line without "\\n" counts. Memory stays
    within ~`max_bytes` + one read, however long a line is (`/dev/zero` is one endless line)."""
    for lines in line_batches(stream, max_bytes):
        yield from lines


def line_batches(stream: BinaryIO, max_bytes: int) -> Iterator[list[Line]]:
    """The lines each read completes (never an empty list), as `iter_lines` describes them."""
    read = _reader(stream)
    buf = bytearray()
    number = 0
    skipping = False  # inside an over-long line, already reported
    while True:
        try:
            chunk = read(READ_SIZE)
        except OSError as exc:
            raise QiaoError(f"cannot read input: {exc.strerror or exc}") from exc
        if not chunk:
            break
        buf += chunk
        lines: list[Line] = []
        start = 0
        while (end := buf.find(b"\n", start)) >= 0:
            if skipping:
                skipping = False
            else:
                number += 1
                stop = end - 1 if end > start and buf[end - 1] == 0x0D else end
                lines.append(_line(number, buf[start:stop], max_bytes))
            start = end + 1
        del buf[:start]
        if skipping:
            buf.clear()
        elif len(buf) > max_bytes + 1:  # +1: room for the \r of a \r\n split across reads
            number += 1
            lines.append(Line(number, None))
            skipping = True
            buf.clear()
        if lines:
            yield lines
    if buf and not skipping:
        yield [_line(number + 1, buf, max_bytes)]


def _line(number: int, data: bytearray, max_bytes: int) -> Line:
    return Line(number, bytes(data) if len(data) <= max_bytes else None)


class LineFeed:
    """Reads lines on a background thread and hands them out in groups of what has arrived.

    A batching consumer (`Translator.translate_segments`) pulls texts ahead to fill a batch; fed straight from a pipe
    that would block a co-process waiting for the answer to its one line. A group ends only when the input pauses
    (`pause_s`): bulk input is one long group (the consumer bounds its own batches), interactive input gets an
    answer per line.
    """

    def __init__(self, stream: BinaryIO, max_bytes: int, pause_s: float = 0.02, depth: int = 16) -> None:
        # Each queue item is the lines of one read (up to 64 KiB of input), so the hand-over costs little per line.
        self._queue: queue.Queue[list[Line] | BaseException | None] = queue.Queue(depth)
        self._ready: deque[Line] = deque()
        self._pause_s = pause_s
        self._done = False
        self._thread = threading.Thread(target=self._run, args=(stream, max_bytes), name="qiao-stdin", daemon=True)
        self._thread.start()

    def _run(self, stream: BinaryIO, max_bytes: int) -> None:
        try:
            for lines in line_batches(stream, max_bytes):
                self._queue.put(lines)
            self._queue.put(None)
        except BaseException as exc:  # handed to the consumer, which raises it in the main thread
            self._queue.put(exc)

    def _take(self, timeout: float | None) -> Line | None:
        if self._ready:
            return self._ready.popleft()
        if self._done:
            return None
        try:
            item = self._queue.get(timeout=timeout)
        except queue.Empty:
            return None
        if item is None:
            self._done = True
            return None
        if isinstance(item, BaseException):
            self._done = True
            raise item
        self._ready.extend(item)
        return self._ready.popleft()

    def groups(self) -> Iterator[Iterator[Line]]:
        """Each group is consumed fully before the next is asked for."""
        while True:
            first = self._take(None)
            if first is None:
                return
            yield self._group(first)

    def _group(self, first: Line) -> Iterator[Line]:
        line: Line | None = first
        while line is not None:
            yield line
            line = self._take(self._pause_s)


def stdin_bytes() -> BinaryIO:
    """Standard input as bytes, or a clear error when it is closed (`qiao … <&-`)."""
    if sys.stdin is None:
        raise QiaoError("cannot read input: standard input is closed")
    return cast(BinaryIO, getattr(sys.stdin, "buffer", sys.stdin))


def read_bounded(stream: BinaryIO, max_bytes: int) -> bytes | None:
    """All of `stream`, or None as soon as it has more than `max_bytes` (never reads further)."""
    read = _reader(stream)
    parts: list[bytes] = []
    total = 0
    while True:
        chunk = read(min(READ_SIZE, max_bytes + 1 - total))
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        total += len(chunk)
        if total > max_bytes:
            return None


def json_line(value: object) -> str:
    """One JSON value on one line: UTF-8 text kept readable, every character any reader takes as a break escaped."""
    return json.dumps(value, ensure_ascii=False).translate(_RAW_BREAKS) + "\n"


class Output:
    """Standard output as UTF-8 bytes (whatever the locale's encoding), flushed when asked; write failures become
    OutputError / OutputClosed instead of a traceback."""

    def __init__(self, stream: TextIO | None) -> None:
        if stream is None:
            raise OutputError("cannot write output: standard output is closed")
        self._text = stream
        self._bytes = getattr(stream, "buffer", None)

    def write(self, text: str, flush: bool = False) -> None:
        try:
            if self._bytes is not None:
                self._bytes.write(text.encode("utf-8", "replace"))
                if flush:
                    self._bytes.flush()
            else:
                self._text.write(text)
                if flush:
                    self._text.flush()
        except OSError as exc:
            raise output_failure(exc) from exc

    def flush(self) -> None:
        try:
            self._text.flush()  # the text layer (a print() of another command) and the bytes under it
        except OSError as exc:
            raise output_failure(exc) from exc


class GuardedStdout:
    """sys.stdout while a command runs: a plain print() that fails (another command's report to a full disk)
    raises OutputError / OutputClosed like Output does, so it is told apart from, say, an unreadable model file."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise output_failure(exc) from exc

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            raise output_failure(exc) from exc

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


def output_failure(exc: OSError) -> Exception:
    """The exception a failed write of standard output stands for."""
    if isinstance(exc, BrokenPipeError):
        return OutputClosed()
    return OutputError(f"cannot write output: {exc.strerror or exc}")


def silence_stdout() -> None:
    """Point standard output at the null device, so the interpreter's final flush of what is still buffered can
    neither fail again nor print "Exception ignored … BrokenPipeError" at exit."""
    stream = sys.stdout
    if stream is None:
        return
    try:
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError):
        return  # not a real file (a test's capture): nothing is flushed at exit
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def reserve_closed_std_fds() -> None:
    """A closed stdin/stdout/stderr (`qiao … >&-`) would let the next file opened reuse its number, so native
    code writing to "stdout" would write into a model or cache file. Hold those numbers with the null device;
    Python's sys.stdout etc. stay None, so commands still report the stream as closed."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            new = os.open(os.devnull, os.O_RDWR)
            if new != fd:
                os.dup2(new, fd)
                os.close(new)


def say(message: str) -> None:
    """A line for the user on stderr; never raises (stderr may itself be closed or full)."""
    stream = sys.stderr
    if stream is None:
        return
    try:
        stream.write(message + "\n")
        stream.flush()
    except (OSError, ValueError):
        pass


class Progress:
    """Shows "N lines, R lines/s" on one rewritten stderr line, only when stderr is a terminal (never in a log)."""

    def __init__(self, stream: TextIO | None, every_s: float = 0.25) -> None:
        self._stream = stream
        try:
            self.enabled = stream is not None and stream.isatty()
        except (OSError, ValueError, AttributeError):
            self.enabled = False
        self._every_s = every_s
        self._start = time.perf_counter()
        self._last = 0.0
        self.done = 0

    def _line(self, final: bool) -> str:
        elapsed = time.perf_counter() - self._start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        took = f" in {elapsed:.1f} s" if final else ""
        return f"\r{self.done:,} lines{took}, {rate:,.1f} lines/s\x1b[K"

    def _write(self, text: str) -> None:
        try:
            self._stream.write(text)  # type: ignore[union-attr]
            self._stream.flush()  # type: ignore[union-attr]
        except (OSError, ValueError):
            self.enabled = False

    def tick(self) -> None:
        self.done += 1
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self._last >= self._every_s:
            self._last = now
            self._write(self._line(final=False))

    def close(self) -> None:
        if self.enabled and self.done:
            self._write(self._line(final=True) + "\n")
