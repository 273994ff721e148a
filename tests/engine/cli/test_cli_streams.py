"""`qiao` as a real process with awkward standard streams: a reader that goes away, a full disk, closed streams,
endless input, a model folder it may not read, a terminal for progress. Each must end in a clear line (or, for a
closed pipe, quietly), never a traceback."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine.pipeline.requests import MAX_CHARS

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX streams and devices")
ROOT = Path(__file__).resolve().parents[3]
QIAO = [sys.executable, "-m", "engine.cli.main"]


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def qiao(args: list[str], **kw) -> subprocess.CompletedProcess:
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    return subprocess.run([*QIAO, *args], cwd=ROOT, env=env(), timeout=60, **kw)


def assert_clean(stderr: bytes) -> None:
    text = stderr.decode()
    assert "Traceback" not in text and "Exception ignored" not in text, text


def test_reader_going_away_ends_quietly(bundle_dir):
    """`qiao translate --json | head -1`: the first record, then status 141 and nothing on stderr."""
    proc = subprocess.Popen(
        [*QIAO, "translate", "--model", str(bundle_dir), "--json", "--beams", "1"],
        cwd=ROOT,
        env=env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdin.write(b"Thank you very much.\n" * 40)
    proc.stdin.close()
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(60) == 141
    assert first.startswith(b'{"text": ') and err == b""


def test_reader_going_away_after_plain_output(bundle_dir):
    proc = subprocess.Popen(
        [*QIAO, "translate", "--model", str(bundle_dir), "Thank you very much."],
        cwd=ROOT,
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()  # gone before anything is written
    err = proc.stderr.read()
    assert proc.wait(60) == 141
    assert_clean(err)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        (["translate", "Thank you very much."], b""),
        (["translate", "--json", "--beams", "1"], b"Thank you very much.\n" * 3),
        (["tokenize"], b'"Hello world."\n'),
    ],
)
def test_full_disk_is_one_clear_line(bundle_dir, args, stdin):
    with open("/dev/full", "wb") as full:
        result = qiao([args[0], "--model", str(bundle_dir), *args[1:]], input=stdin, stdout=full)
    assert result.returncode == 1
    assert result.stderr.decode() == "qiao: cannot write output: No space left on device\n"


@pytest.mark.parametrize(
    ("redirect", "args", "message"),
    [
        ("<&-", ["translate"], "qiao: cannot read input: standard input is closed"),
        ("<&-", ["translate", "--json"], "qiao: cannot read input: standard input is closed"),
        ("<&-", ["tokenize"], "qiao: cannot read input: standard input is closed"),
        (">&-", ["translate", "Hello"], "qiao: cannot write output: standard output is closed"),
        (">&-", ["tokenize"], "qiao: cannot write output: standard output is closed"),
    ],
)
def test_closed_streams_are_named(bundle_dir, redirect, args, message):
    shell = shutil.which("sh")
    if shell is None:
        pytest.skip("needs a POSIX shell")
    argv = [*QIAO, args[0], "--model", str(bundle_dir), *args[1:]]
    result = subprocess.run(
        [shell, "-c", f'"$@" {redirect}', "sh", *argv],
        cwd=ROOT,
        env=env(),
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        timeout=60,
        **({} if redirect == ">&-" else {"stdout": subprocess.PIPE}),
    )
    assert result.returncode == 1
    assert result.stderr.decode().strip() == message


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_endless_stdin_stops_at_the_limit(bundle_dir):
    with open("/dev/zero", "rb") as zero:
        result = qiao(["translate", "--model", str(bundle_dir)], stdin=zero)
    assert result.returncode == 1
    assert f"the input is over {MAX_CHARS * 4:,} bytes" in result.stderr.decode()
    assert_clean(result.stderr)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_endless_line_in_json_mode_is_reported_at_once(bundle_dir):
    """/dev/zero as one line of --json input: its error record comes out while the input goes on."""
    with open("/dev/zero", "rb") as zero:
        proc = subprocess.Popen(
            [*QIAO, "translate", "--model", str(bundle_dir), "--json"],
            cwd=ROOT,
            env=env(),
            stdin=zero,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    try:
        first = proc.stdout.readline()
    finally:
        proc.kill()
        proc.wait(30)
        proc.stdout.close()
        proc.stderr.close()
    assert first.startswith(b'{"error": "line 1 is over 4,000,000 bytes')


# -- a model this user may not read ------------------------------------------------------------------------------


def _unprivileged() -> list[str] | None:
    """A command prefix under which file permissions apply: none needed for a normal user; for root, setpriv
    dropping the capabilities that bypass them (root may then still run the venv's Python)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search"]


@pytest.fixture
def locked_bundle(bundle_dir, tmp_path):
    prefix = _unprivileged()
    if prefix is None:
        pytest.skip("running as root without setpriv: permissions cannot be tested")
    copy = tmp_path / "bundle"
    shutil.copytree(bundle_dir, copy)
    probe = tmp_path / "probe"
    probe.write_text("x")
    probe.chmod(0)
    check = subprocess.run([*prefix, sys.executable, "-c", f"open({str(probe)!r})"], capture_output=True)
    if check.returncode == 0:
        pytest.skip("this user can read a mode-000 file: permissions cannot be tested")
    yield prefix, copy
    for path in [copy, *copy.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)


@pytest.mark.parametrize("locked", [".", "manifest.json", "tokenizer.json", "int8"])
def test_unreadable_model_is_a_clear_error(locked_bundle, locked, tmp_path):
    prefix, bundle = locked_bundle
    (bundle / locked).chmod(0)
    result = subprocess.run(
        [*prefix, *QIAO, "translate", "--model", str(bundle), "Hello"],
        cwd=ROOT,
        env={**env(), "QIAO_CACHE_DIR": str(tmp_path / "cache")},
        capture_output=True,
        timeout=60,
    )
    err = result.stderr.decode()
    assert result.returncode == 1, err
    assert err.startswith("qiao: ") and "Permission denied" in err
    assert_clean(result.stderr)


# -- progress -----------------------------------------------------------------------------------------------------


def test_progress_only_on_a_terminal(bundle_dir):
    pty = pytest.importorskip("pty")
    lines = b"Thank you very much.\n" * 5
    plain = qiao(["translate", "--model", str(bundle_dir), "--json", "--beams", "1"], input=lines)
    assert plain.returncode == 0 and plain.stderr == b""  # a pipe or a log gets no progress
    leader, follower = pty.openpty()
    try:
        tty = qiao(["translate", "--model", str(bundle_dir), "--json", "--beams", "1"], input=lines, stderr=follower)
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the terminal's other side is closed and drained
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(leader)
    assert tty.returncode == 0 and tty.stdout.count(b"\n") == 5
    assert b"5 lines in " in shown and b"lines/s" in shown
