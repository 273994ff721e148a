"""`make run` / `make test` set up the system packages themselves (packaging/system_deps.py): one table of needs,
checked by the library/command/font itself; installed with apt-get as root or with passwordless sudo; otherwise a
stop at once with the exact `sudo apt-get install …` line. The machine is mocked here: what is present, who we are,
what apt-get does."""

from __future__ import annotations

import subprocess
import sys

import pytest
import system_deps
from system_deps import Need, is_present, missing, needs, packages_of

from gui.display import XCB_LIBRARIES

from .conftest import ROOT


class Machine:
    """A mocked Debian box: which needs are satisfied, root or not, sudo or not, and the commands run."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, absent: set[str], *, root: bool, sudo: bool = False) -> None:
        self.absent = set(absent)  # Need.name values not present
        self.commands: list[list[str]] = []
        self.installs = True  # apt-get install makes the packages present
        self.busy: list[tuple[int, str]] = []  # package managers running (pid, name)
        monkeypatch.setattr(system_deps, "busy_processes", lambda: list(self.busy))
        monkeypatch.setattr(system_deps, "is_present", lambda need: need.name not in self.absent)
        monkeypatch.setattr(system_deps, "python_needs", lambda target: [])
        monkeypatch.setattr(system_deps.os, "geteuid", lambda: 0 if root else 1000)
        monkeypatch.setattr(system_deps, "_sudo_works", lambda: sudo)
        monkeypatch.setattr(system_deps.shutil, "which", lambda name, path=None: f"/usr/bin/{name}")
        monkeypatch.setattr(system_deps.sys, "platform", "linux")
        monkeypatch.setattr(system_deps.subprocess, "run", self.run)
        monkeypatch.setattr(system_deps, "recheck", lambda target: system_deps.main([target, "--no-install"]))

    def run(self, cmd, *args, **kwargs):
        self.commands.append(list(cmd))
        if "install" in cmd and self.installs:
            installed = set(cmd[cmd.index("--no-install-recommends") + 1 :])
            self.absent -= {need.name for need in system_deps.needs("test") if need.package in installed}
        return subprocess.CompletedProcess(cmd, 0, "", "")


def test_the_table_covers_what_each_target_needs():
    run, test = packages_of(needs("run")), packages_of(needs("test"))
    assert set(run) <= set(test)
    assert {"libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1", "libegl1", "fonts-noto-cjk"} <= set(run)
    assert set(XCB_LIBRARIES.values()) <= set(run)  # the app's own hint names the same packages
    assert {"xvfb", "xdotool", "imagemagick", "zstd", "binutils", "gcc", "iproute2", "util-linux", "strace"} <= set(
        test
    )
    assert "strace" not in run and len(test) == len(set(test))


def test_the_package_list_lives_only_in_the_script():
    """.ci/run runs the README's `make test` and names no package; the Makefile hands the target to the script."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "make test" in ci and "QT_QPA_PLATFORM=offscreen" in ci
    for text in (ci, make):
        assert "libxcb" not in text and "apt-get install" not in text
    assert "packaging/system_deps.py $(SYSTEM_DEPS)" in make and "test smoke package: SYSTEM_DEPS = test" in make


def test_nothing_missing_runs_nothing(monkeypatch, capsys):
    machine = Machine(monkeypatch, set(), root=False)
    assert system_deps.main(["test"]) == 0
    assert machine.commands == [] and capsys.readouterr().err == ""


def test_without_root_or_sudo_it_stops_at_once_with_the_exact_line(monkeypatch, capsys):
    machine = Machine(monkeypatch, {"libxcb-icccm.so.4", "libxcb-keysyms.so.1"}, root=False, sudo=False)
    assert system_deps.main(["test"]) == 1
    err = capsys.readouterr().err
    assert "  sudo apt-get install --no-install-recommends libxcb-icccm4 libxcb-keysyms1\n" in err
    assert "`make test`" in err
    assert machine.commands == []  # no apt-get, no sudo prompt


def test_without_sudo_installed_the_line_goes_through_su(monkeypatch, capsys):
    """A minimal Debian has no sudo at all: the printed line must be one that runs there."""
    machine = Machine(monkeypatch, {"libxcb-icccm.so.4"}, root=False, sudo=False)
    real_which = system_deps.shutil.which
    monkeypatch.setattr(system_deps.shutil, "which", lambda name: None if name == "sudo" else real_which(name))
    assert system_deps.main(["run"]) == 1
    err = capsys.readouterr().err
    assert "  su -c 'apt-get install --no-install-recommends libxcb-icccm4'\n" in err and "sudo" not in err
    assert machine.commands == []


def test_as_root_it_updates_and_installs_only_what_is_missing(monkeypatch, capsys):
    machine = Machine(monkeypatch, {"libxcb-icccm.so.4", "strace", "readelf", "strip"}, root=True)
    assert system_deps.main(["test"]) == 0
    update, install = machine.commands
    assert update[:3] == ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get"] and update[-1] == "update"
    assert install[-4:] == ["--no-install-recommends", "libxcb-icccm4", "binutils", "strace"]  # binutils once
    assert "installing for `make test` with apt-get" in capsys.readouterr().err


def test_with_passwordless_sudo_it_installs_through_sudo(monkeypatch):
    machine = Machine(monkeypatch, {"libxcb-cursor.so.0"}, root=False, sudo=True)
    assert system_deps.main(["run"]) == 0
    assert all(cmd[:2] == ["sudo", "-n"] for cmd in machine.commands) and len(machine.commands) == 2


def test_a_package_still_missing_after_apt_get_is_an_error(monkeypatch, capsys):
    machine = Machine(monkeypatch, {"libxcb-cursor.so.0"}, root=True)
    machine.installs = False
    assert system_deps.main(["run"]) == 1
    assert "sudo apt-get install --no-install-recommends libxcb-cursor0" in capsys.readouterr().err


def test_other_linux_says_what_is_missing_and_goes_on(monkeypatch, capsys):
    machine = Machine(monkeypatch, {"libxcb-cursor.so.0"}, root=True)
    monkeypatch.setattr(system_deps.shutil, "which", lambda name, path=None: None)  # no apt-get
    assert system_deps.main(["run"]) == 0
    err = capsys.readouterr().err
    assert "no apt-get" in err and "libxcb-cursor.so.0 (libxcb-cursor0)" in err and "Going on" in err
    assert machine.commands == []


def test_macos_needs_nothing(monkeypatch, capsys):
    machine = Machine(monkeypatch, {"libxcb-cursor.so.0"}, root=False)
    monkeypatch.setattr(system_deps.sys, "platform", "darwin")
    assert system_deps.main(["test"]) == 0
    assert "macOS" in capsys.readouterr().err and machine.commands == []


def test_debian_python_needs_its_venv_and_libpython_packages(monkeypatch):
    """Found on a fresh Debian: no `python3 -m venv` without python3.X-venv, and PyInstaller stops with
    "Python shared library ('libpython3.11.so.1.0') was not found" without libpython3.X."""
    monkeypatch.setattr(system_deps.sys, "base_prefix", "/usr")
    v = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert packages_of(needs("venv")) == [f"python{v}-venv"]
    assert packages_of(needs("run"))[0] == f"python{v}-venv"
    assert packages_of(needs("test"))[:2] == [f"python{v}-venv", f"libpython{v}"]
    assert Need(f"libpython{v}", "lib", f"libpython{v}.so.1.0") in needs("test")
    monkeypatch.setattr(system_deps.sys, "base_prefix", "/opt/python")  # not apt's Python: nothing to add
    assert needs("venv") == [] and needs("test") == system_deps.TARGETS["test"]


def test_the_real_probes(tmp_path, monkeypatch):
    if sys.platform.startswith("linux"):
        assert is_present(Need("libc6", "lib", "libc.so.6"))
    assert not is_present(Need("nothing", "lib", "libqiao-no-such.so.7"))
    assert is_present(Need("coreutils", "cmd", "ls"))
    assert not is_present(Need("nothing", "cmd", "qiao-no-such-command"))
    fonts = tmp_path / "fonts" / "opentype" / "noto"
    fonts.mkdir(parents=True)
    monkeypatch.setattr(system_deps, "FONT_DIRS", (str(tmp_path / "fonts"),))
    assert not is_present(Need("fonts-noto-cjk", "font", "NotoSansCJK"))
    (fonts / "NotoSansCJK-Regular.ttc").write_bytes(b"")
    assert is_present(Need("fonts-noto-cjk", "font", "NotoSansCJK"))
    assert missing([Need("a", "cmd", "ls"), Need("b", "cmd", "qiao-no-such-command")]) == [
        Need("b", "cmd", "qiao-no-such-command")
    ]


def test_an_apt_get_failure_shows_its_output_and_the_line(monkeypatch, capsys):
    machine = Machine(monkeypatch, {"libxcb-cursor.so.0"}, root=True)
    monkeypatch.setattr(
        system_deps.subprocess,
        "run",
        lambda cmd, *a, **k: machine.commands.append(cmd) or subprocess.CompletedProcess(cmd, 100, "", "E: no lock"),
    )
    assert system_deps.main(["run"]) == 1
    err = capsys.readouterr().err
    assert "apt-get failed (exit 100)" in err and "E: no lock" in err
    assert err.rstrip().endswith("sudo apt-get install --no-install-recommends libxcb-cursor0")


LOCKED = (
    "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt-get)\n"
    "E: Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), is another process using it?"
)


def test_a_busy_package_manager_is_said_as_such_not_as_a_line_to_run_as_root(monkeypatch, capsys):
    machine = Machine(monkeypatch, {"libxcb-cursor.so.0"}, root=True)
    machine.busy = [(4242, "apt-get")]
    real_which = system_deps.shutil.which
    monkeypatch.setattr(
        system_deps.shutil, "which", lambda name, path=None: None if name == "sudo" else real_which(name)
    )
    monkeypatch.setattr(
        system_deps.subprocess,
        "run",
        lambda cmd, *a, **k: machine.commands.append(cmd) or subprocess.CompletedProcess(cmd, 100, "", LOCKED),
    )
    assert system_deps.main(["run"]) == 1
    err = capsys.readouterr().err
    assert "Waiting up to 120 s" in err, "apt-get is told to wait for the lock first"
    assert any("DPkg::Lock::Timeout=120" in cmd for cmd in machine.commands[-1])
    assert err.rstrip().endswith(
        "the package manager is busy: apt-get (pid 4242) — another install or the automatic updates. Wait for it to "
        "finish, then run `make run` again."
    )
    assert "su -c" not in err and "Try it yourself" not in err


def test_without_root_a_busy_package_manager_is_mentioned_beside_the_line(monkeypatch, capsys):
    machine = Machine(monkeypatch, {"libxcb-cursor.so.0"}, root=False, sudo=False)
    machine.busy = [(77, "unattended-upgr")]
    assert system_deps.main(["run"]) == 1
    err = capsys.readouterr().err
    assert "sudo apt-get install --no-install-recommends libxcb-cursor0" in err
    assert "the package manager is busy: unattended-upgr (pid 77)" in err and machine.commands == []


def test_apt_get_lock_messages_are_recognised():
    assert system_deps.lock_held(LOCKED)
    assert system_deps.lock_held("E: Could not get lock /var/lib/apt/lists/lock. It is held by process 9 (apt)")
    assert not system_deps.lock_held("E: Unable to locate package libxcb-cursor0")


def test_package_managers_are_found_by_their_process_name(tmp_path, monkeypatch):
    for pid, name in ((123, "apt-get"), (7, "bash"), (4242, "unattended-upgr"), (9, "dpkg")):
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "comm").write_text(name + "\n")
    (tmp_path / "self").mkdir()
    monkeypatch.setattr(system_deps.os, "geteuid", lambda: 1000)  # no fuser without root
    assert system_deps.busy_processes(tmp_path) == [(9, "dpkg"), (123, "apt-get"), (4242, "unattended-upgr")]


def test_a_file_need_is_proved_by_the_file(tmp_path):
    """LibreOffice's components share one command (soffice): each is seen by a library only it installs."""
    there = tmp_path / "libswlo.so"
    there.write_bytes(b"")
    assert is_present(Need("libreoffice-writer-nogui", "file", str(there)))
    assert not is_present(Need("libreoffice-calc-nogui", "file", str(tmp_path / "libsclo.so")))


def test_make_test_gets_the_producers_tier_packages():
    wanted = {n.package for n in needs("test")}
    assert {"pandoc", "libreoffice-writer-nogui", "libreoffice-impress-nogui", "libreoffice-calc-nogui"} <= wanted
    assert not {"pandoc"} & {n.package for n in needs("run")}  # the app itself never needs them
