"""engine.atomic_write: the two writers' policies (a user's file versus Qiao's own state) stay apart."""

from __future__ import annotations

import os
import stat

import pytest

from engine.atomic_write import remove_stale_temps, state_temp_path, write_state_file, write_user_file

posix_only = pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


@posix_only
def test_a_users_file_gets_the_umask_mode_and_a_state_file_stays_private(tmp_path, umask_022):
    user, state = tmp_path / "result.txt", tmp_path / "source.txt"
    write_user_file(user, b"translated")
    write_state_file(state, b"typed")
    assert user.read_bytes() == b"translated" and state.read_bytes() == b"typed"
    assert stat.S_IMODE(os.stat(user).st_mode) == 0o644
    assert stat.S_IMODE(os.stat(state).st_mode) == 0o600


def test_only_a_state_file_makes_its_folder(tmp_path):
    write_state_file(tmp_path / "state" / "deep" / "source.txt", b"typed")
    assert (tmp_path / "state" / "deep" / "source.txt").read_bytes() == b"typed"
    with pytest.raises(FileNotFoundError):  # the user chose the folder: a missing one is an error, not made up
        write_user_file(tmp_path / "gone" / "result.txt", b"translated")
    assert not (tmp_path / "gone").exists()


def test_a_users_file_is_staged_under_a_unique_name_a_state_file_under_a_predictable_one(tmp_path, monkeypatch):
    staged = []
    real_replace = os.replace

    def spy(src, dst):
        staged.append(os.path.basename(src))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    for _ in range(2):
        write_user_file(tmp_path / "result.txt", b"x")
        write_state_file(tmp_path / "source.txt", b"y")
    user_names, state_names = staged[0::2], staged[1::2]
    assert user_names[0] != user_names[1] and all(n.startswith(".result.txt.") for n in user_names)
    assert state_names == [state_temp_path(tmp_path / "source.txt").name] * 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.txt", "source.txt"]


def test_both_leave_the_old_file_and_no_temporary_one_when_the_write_fails(tmp_path, monkeypatch):
    user, state = tmp_path / "result.txt", tmp_path / "source.txt"
    write_user_file(user, b"old")
    write_state_file(state, b"old")

    def full_disk(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    for write, path in ((write_user_file, user), (write_state_file, state)):
        with pytest.raises(OSError):
            write(path, b"new")
        assert path.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.txt", "source.txt"]
    assert remove_stale_temps(state) == []
