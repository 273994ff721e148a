"""The smoke test hides every Python only inside its own mount namespace. Found on a fresh Debian chroot where
`unshare` was refused: run as root, it mounted empty folders over the venv and /dev/null over /usr/bin/python3 in
the caller's own namespace, and the pytest process running it could no longer import PyInstaller."""

from __future__ import annotations

import smoke_test


def _env(monkeypatch, tmp_path, prefix: list[str]) -> dict[str, str]:
    monkeypatch.setattr(smoke_test, "namespace_prefix", lambda: (prefix, "test"))
    iso = smoke_test.Isolated(tmp_path)
    assert iso.hide  # there is a Python on this machine to hide (at least the one running this test)
    cmd, env, _proof, _stamp = iso.command(["app"], "tag")
    assert cmd[: len(prefix)] == prefix
    return env


def test_pythons_are_hidden_inside_the_namespace(monkeypatch, tmp_path):
    env = _env(monkeypatch, tmp_path, ["unshare", "--net", "--mount"])
    assert env["HIDE"].split() == smoke_test.python_installations()


def test_without_a_namespace_nothing_is_hidden(monkeypatch, tmp_path):
    assert _env(monkeypatch, tmp_path, [])["HIDE"] == ""
