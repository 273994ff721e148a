"""The API key file (engine.api.keys): read the same way by `qiao serve` and the window, its loose permissions
returned as a warning for the caller to show (issue 28: it lived in engine/cli/serve.py and printed to stderr, so
the window, which imported it from the CLI, never said it)."""

from __future__ import annotations

import os

import pytest

from engine.api.keys import MAX_KEY_FILE_BYTES, KeyFile, read_key
from engine.errors import InputError

posix_only = pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX's")


def key_file(tmp_path, data: bytes, mode: int = 0o600):
    path = tmp_path / "key"
    path.write_bytes(data)
    path.chmod(mode)
    return path


def test_the_first_line_stripped_is_the_key(tmp_path):
    assert read_key(key_file(tmp_path, "  钥匙-k3 \nsecond line\n".encode())) == KeyFile("钥匙-k3", "")


@posix_only
def test_a_file_others_can_read_gives_a_warning_and_prints_nothing(tmp_path, capsys):
    path = key_file(tmp_path, b"k-3f9a2c\n", 0o644)
    assert read_key(path) == KeyFile("k-3f9a2c", f"{path} can be read by other users (chmod 600 {path})")
    assert capsys.readouterr() == ("", ""), "the caller says it, where its user looks"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\n  \n", "is empty"),
        (b"\xff\xfe", "not UTF-8"),
        (b"k" * (MAX_KEY_FILE_BYTES + 1), "not an API key file"),
    ],
)
def test_an_unusable_file_is_refused(tmp_path, data, message):
    with pytest.raises(InputError, match=message):
        read_key(key_file(tmp_path, data))


def test_a_missing_file_is_refused(tmp_path):
    with pytest.raises(InputError, match="cannot read the API key file"):
        read_key(tmp_path / "missing")


@posix_only
def test_qiao_serve_says_the_warning_on_stderr(tmp_path, capsys):
    from engine.cli.main import main

    path = key_file(tmp_path, b"k1\n", 0o644)
    broken = tmp_path / "broken-model"  # a bundle that cannot load: serve stops after reading the key
    broken.mkdir()
    (broken / "manifest.json").write_text("{", encoding="utf-8")
    assert main(["serve", "--api-key-file", str(path), "--model", str(broken)]) == 1
    err = capsys.readouterr().err
    assert f"qiao: warning: {path} can be read by other users" in err and "cannot be used" in err
