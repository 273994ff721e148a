"""Line-oriented modes (`translate --json`, `tokenize`): lines end at "\\n" only, one record per line, in order,
and bad input is an error naming the line, never a traceback."""

from __future__ import annotations

import io
import json
import os
import random
import select
import sys
import threading
import time

import pytest

from engine.cli.io import iter_lines, json_line
from engine.cli.main import main
from engine.languages import default_pair
from engine.pipeline.requests import MAX_CHARS
from tests.engine.cli_fakes import BatchingTranslator, EchoTranslator, ErrorFieldTranslator, install

# Every character str.splitlines() breaks on besides "\n", then the rest of C0 and C1, DEL and the BOM.
SPLITLINES_BREAKS = "\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
CONTROLS = "".join(chr(c) for c in [*range(0x20), 0x7F, *range(0x80, 0xA0)] if c != 0x0A)
ODD = SPLITLINES_BREAKS + CONTROLS + "\ufeff\u200b"


def run(monkeypatch, capsys, argv, data: bytes):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def expected_lines(data: bytes) -> list[str]:
    """What `"\\n"`-separated lines the input has ("\\r\\n" ends a line too; a last line without "\\n" counts)."""
    parts = data.split(b"\n")
    if parts[-1] == b"":
        parts.pop()
    return [p.removesuffix(b"\r").decode("utf-8", "replace") for p in parts]


def records(out: str) -> list[dict]:
    # splitlines on purpose: the output must have no line break of any kind inside a record.
    return [json.loads(line) for line in out.splitlines()]


@pytest.fixture
def echo(monkeypatch):
    return install(monkeypatch, EchoTranslator)


def test_each_odd_character_stays_inside_its_line(monkeypatch, capsys, bundle_dir, echo):
    lines = [f"before{ch}after" for ch in ODD] + [ODD]
    data = "\n".join(lines).encode("utf-8") + b"\n"
    code, out, _ = run(monkeypatch, capsys, ["translate", "--model", str(bundle_dir), "--json"], data)
    assert code == 0
    got = records(out)
    assert [r["text"] for r in got] == lines  # one record per line, each exactly its own line's text
    assert out.count("\n") == len(lines)


def test_random_binary_gives_one_record_per_line(monkeypatch, capsys, bundle_dir, echo):
    rng = random.Random(11)
    raw = [bytes(rng.randrange(256) for _ in range(rng.randrange(60))).replace(b"\n", b"") for _ in range(1000)]
    data = b"\n".join(raw)  # no final "\n": the last line still counts
    code, out, _ = run(monkeypatch, capsys, ["translate", "--model", str(bundle_dir), "--json"], data)
    assert code == 0
    want = expected_lines(data)
    assert len(want) == 1000
    assert [r["text"] for r in records(out)] == want


def test_crlf_and_empty_lines(monkeypatch, capsys, bundle_dir, echo):
    code, out, _ = run(monkeypatch, capsys, ["translate", "--model", str(bundle_dir), "--json"], b"a\r\n\r\nb\n\nc")
    assert code == 0
    assert [r["text"] for r in records(out)] == ["a", "", "b", "", "c"]


def test_real_engine_one_record_per_line(monkeypatch, capsys, bundle_dir):
    """The committed model on odd characters, random bytes and empty lines: still exactly one record per line."""
    rng = random.Random(5)
    lines = [f"The weather is nice today.{ch}Thank you very much." for ch in SPLITLINES_BREAKS + "\x00\x1b\x9b"]
    lines += ["", "   ", CONTROLS, "Good morning, everyone!"]
    data = "\n".join(lines).encode("utf-8") + b"\n"
    data += b"\n".join(bytes(rng.randrange(256) for _ in range(30)).replace(b"\n", b"") for _ in range(20))
    code, out, _ = run(monkeypatch, capsys, ["translate", "--model", str(bundle_dir), "--json", "--beams", "1"], data)
    assert code == 0
    got = records(out)
    assert len(got) == len(expected_lines(data)) == len(lines) + 20
    assert got[lines.index("Good morning, everyone!")]["text"]  # a normal line among them is translated
    assert got[lines.index("")]["text"] == "" and got[lines.index("")]["tokens"] == []


def test_over_long_lines_get_their_own_error_record(monkeypatch, capsys, bundle_dir):
    data = b"".join(
        [
            b"Thank you very much.\n",
            b"a" * (MAX_CHARS + 1) + b"\n",  # too many characters
            b"The weather is nice today.\n",
            b"b" * (MAX_CHARS * 4 + 10) + b"\r\n",  # too many bytes: never decoded
            b"Good morning, everyone!",
        ]
    )
    code, out, err = run(monkeypatch, capsys, ["translate", "--model", str(bundle_dir), "--json", "--beams", "1"], data)
    got = records(out)
    assert len(got) == 5
    assert [("error" in r) for r in got] == [False, True, False, True, False]
    assert got[1]["line"] == 2 and f"{MAX_CHARS + 1:,} characters" in got[1]["error"]
    assert got[3]["line"] == 4 and "bytes" in got[3]["error"]
    assert all(r["text"] for r in got if "error" not in r)
    assert code == 1 and "2 of 5 lines not translated" in err


@pytest.mark.parametrize("engine", [BatchingTranslator, ErrorFieldTranslator])
def test_order_is_kept_when_the_engine_refuses_or_batches_ahead(monkeypatch, capsys, bundle_dir, engine):
    """Lines the CLI refuses are never given to the engine, yet keep their place. A text the engine refuses gets
    its own error record, whether the engine says so in the result (`error`) or raises mid-batch (then the rest
    of that batch is answered one by one, not lost)."""
    install(monkeypatch, engine)
    lines = [f"line {i}" for i in range(12)]
    lines[3] = "x" * (MAX_CHARS + 1)
    lines[6] = "REFUSE me"
    data = "\n".join(lines).encode() + b"\n"
    code, out, _ = run(monkeypatch, capsys, ["translate", "--model", str(bundle_dir), "--json"], data)
    got = records(out)
    assert len(got) == 12 and code == 1
    for i, rec in enumerate(got):
        if i == 3:
            assert rec["line"] == 4 and "characters" in rec["error"]
        elif i == 6:
            assert rec["line"] == 7 and "refused: REFUSE me" in rec["error"]
        else:
            assert rec["text"] == lines[i]
    assert lines[3] not in engine.instances[0].seen


def test_request_errors_stop_before_reading(monkeypatch, capsys, bundle_dir, echo):
    class OneVariant(EchoTranslator):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            self.manifest.pair = default_pair("en", "zh", (">>cmn_Hans<<",))

    monkeypatch.setattr("engine.pipeline.translator.Translator", OneVariant)
    code, out, err = run(
        monkeypatch, capsys, ["translate", "--model", str(bundle_dir), "--json", "--variant", "latn"], b"a\nb\n"
    )
    assert code == 1 and out == "" and "unknown variant 'latn'; this model offers hans, hant" in err


def test_a_record_is_written_while_input_is_still_open(monkeypatch, bundle_dir):
    """A co-process writes one line and waits for its answer: a batching engine must not wait for more lines."""
    monkeypatch.setattr("engine.pipeline.translator.Translator", BatchingTranslator)
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    stdin = os.fdopen(in_r, "r", encoding="utf-8")
    stdout = os.fdopen(out_w, "w", encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", stdin)
    monkeypatch.setattr(sys, "stdout", stdout)
    codes: list[int] = []
    worker = threading.Thread(target=lambda: codes.append(main(["translate", "--model", str(bundle_dir), "--json"])))
    worker.start()
    try:
        os.write(in_w, b"first\n")
        ready, _, _ = select.select([out_r], [], [], 10)
        assert ready, "no record while the input stayed open"
        first = json.loads(os.read(out_r, 65536).decode().splitlines()[0])
        assert first["text"] == "first"
        os.write(in_w, b"second\n")
    finally:
        os.close(in_w)
        worker.join(20)
    stdout.close()
    rest = b""
    while chunk := os.read(out_r, 65536):
        rest += chunk
    os.close(out_r)
    stdin.close()
    assert codes == [0]
    assert [json.loads(x)["text"] for x in rest.decode().splitlines()] == ["second"]


# -- the reader itself ------------------------------------------------------------------------------------------


class Trickle(io.RawIOBase):
    """A stream that hands out a few bytes per read, so line ends (and "\\r\\n") fall across reads."""

    def __init__(self, data: bytes, step: int) -> None:
        self.data, self.pos, self.step = data, 0, step

    def readable(self) -> bool:
        return True

    def read1(self, n: int = -1) -> bytes:
        chunk = self.data[self.pos : self.pos + min(n, self.step)]
        self.pos += len(chunk)
        return chunk


class Endless(io.RawIOBase):
    """/dev/zero without a file: any read returns zeros; counts what was read."""

    def __init__(self) -> None:
        self.read_bytes = 0

    def readable(self) -> bool:
        return True

    def read1(self, n: int = -1) -> bytes:
        self.read_bytes += n
        return bytes(n)


@pytest.mark.parametrize("step", [1, 2, 3, 7, 4096])
def test_lines_split_across_reads(step):
    data = b"one\r\ntwo\n\nthree\x85\xe2\x80\xa8four\rfive\r\n" + b"z" * 25 + b"\nlast"
    lines = list(iter_lines(Trickle(data, step), max_bytes=20))
    assert [ln.data for ln in lines] == [b"one", b"two", b"", b"three\x85\xe2\x80\xa8four\rfive", None, b"last"]
    assert [ln.number for ln in lines] == [1, 2, 3, 4, 5, 6]


def test_an_endless_line_is_reported_before_it_ends():
    stream = Endless()
    start = time.perf_counter()
    line = next(iter_lines(stream, max_bytes=1_000_000))
    assert line.number == 1 and line.data is None
    assert stream.read_bytes < 2_000_000 and time.perf_counter() - start < 5


def test_json_line_escapes_every_break():
    text = "a" + SPLITLINES_BREAKS + "b\n"
    encoded = json_line({"text": text})
    assert encoded.endswith("\n") and len(encoded.splitlines()) == 1
    assert json.loads(encoded) == {"text": text}


# -- tokenize ---------------------------------------------------------------------------------------------------


def test_tokenize_keeps_odd_characters_inside_one_line(monkeypatch, capsys, bundle_dir):
    values = [f"x{ch}y" for ch in ODD if ch not in "\r"]
    data = b"\n".join(json.dumps(v, ensure_ascii=False).encode() for v in values) + b"\n"
    code, out, _ = run(monkeypatch, capsys, ["tokenize", "--model", str(bundle_dir)], data)
    assert code == 0
    ids = records(out)
    assert len(ids) == len(values) and all(isinstance(row, list) and row[-1] == 0 for row in ids)


@pytest.mark.parametrize(
    ("data", "decode", "message"),
    [
        (b'"fine"\n"\xff\xfe"\n', False, "line 2: not UTF-8 text (byte 0xff"),
        (b'"\\ud800 half a pair"\n', False, "line 1: the string holds a lone surrogate (\\ud800)"),
        (b"[" * 10_000 + b"\n", False, "line 1: not JSON Qiao reads (nested too deeply)"),
        (b"[" * 10_000 + b"\n", True, "line 1: not JSON Qiao reads (nested too deeply)"),
        (b"[1, true]\n", True, "line 1: expected a JSON list of ids"),
        (b"[1, 99999999999999999999]\n", True, "line 1: expected a JSON list of ids"),
        (b"[-1]\n", True, "line 1: expected a JSON list of ids"),
        (b'"ok"\n{"a": 1}\n', False, "line 2: expected a JSON string"),
    ],
)
def test_tokenize_bad_input_is_a_clear_error(monkeypatch, capsys, bundle_dir, data, decode, message):
    argv = ["tokenize", "--model", str(bundle_dir), *(["--decode"] if decode else [])]
    code, out, err = run(monkeypatch, capsys, argv, data)
    assert code == 1 and message in err
    assert len(out.splitlines()) == data.count(b"\n") - 1  # the lines before the bad one were answered


def test_tokenize_random_binary_is_a_clear_error(monkeypatch, capsys, bundle_dir):
    rng = random.Random(3)
    data = bytes(rng.randrange(256) for _ in range(20_000))
    code, _, err = run(monkeypatch, capsys, ["tokenize", "--model", str(bundle_dir)], data)
    assert code == 1 and err.startswith("qiao: line ") and "Traceback" not in err
