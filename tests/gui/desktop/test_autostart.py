"""Start with the system: the XDG entry written and removed for real (paths faked), the macOS plist and the Windows
Run value checked by content (the Windows writer against a fake winreg)."""

from __future__ import annotations

import configparser
import os
import plistlib
import shlex
import stat
import sys

import pytest

from engine.atomic_write import state_temp_path
from gui.desktop import autostart

COMMAND = ["/opt/Qiao app/bin/python", "-m", "qiao", "--background"]


def test_the_xdg_entry_is_written_atomically_where_the_session_looks_and_removed(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    entry = autostart.for_platform("linux")
    assert entry.path == tmp_path / "cfg" / "autostart" / "qiao.desktop"
    assert not entry.is_enabled()
    autostart.apply(True, entry, COMMAND)
    assert entry.is_enabled()
    assert not state_temp_path(entry.path).exists()
    assert stat.S_IMODE(os.stat(entry.path).st_mode) == 0o644
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(entry.path, encoding="utf-8")
    section = parser["Desktop Entry"]
    assert section["Type"] == "Application" and section["Name"] == "Qiao"
    assert shlex.split(section["Exec"]) == COMMAND, "the quoted Exec line reads back as the same command"
    autostart.apply(True, entry, ["/usr/bin/qiao", "--background"])  # replaced, not appended
    assert "Exec=/usr/bin/qiao --background\n" in entry.path.read_text()
    autostart.apply(False, entry)
    assert not entry.is_enabled() and not entry.path.exists()
    autostart.apply(False, entry)  # already off: nothing to do, no error


def test_without_xdg_config_home_the_entry_goes_to_dot_config(tmp_path, monkeypatch):
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert autostart.xdg_autostart_file() == tmp_path / ".config" / "autostart" / "qiao.desktop"


def test_exec_quoting_follows_the_desktop_entry_spec():
    line = autostart.desktop_entry(['/a "b"/$HOME`x`', "100%", "plain"]).split("Exec=")[1].splitlines()[0]
    # quotes, $ and ` escaped inside double quotes, and each of those backslashes doubled by the string escape
    assert line == '"/a \\\\"b\\\\"/\\\\$HOME\\\\`x\\\\`" "100%%" plain'


def test_the_macos_launch_agent_runs_qiao_at_login(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    entry = autostart.for_platform("darwin")
    assert entry.path == tmp_path / "Library" / "LaunchAgents" / f"{autostart.APP_ID}.plist"
    autostart.apply(True, entry, COMMAND)
    plist = plistlib.loads(entry.path.read_bytes())
    assert plist == {
        "Label": autostart.APP_ID,
        "ProgramArguments": COMMAND,
        "RunAtLoad": True,
        "ProcessType": "Interactive",
    }
    autostart.apply(False, entry)
    assert not entry.path.exists()


class FakeWinreg:
    """The part of winreg the writer uses, over a dict."""

    HKEY_CURRENT_USER = "HKCU"
    REG_SZ = 1
    KEY_SET_VALUE = 2

    def __init__(self) -> None:
        self.keys: dict[tuple[str, str], dict[str, tuple[int, str]]] = {}

    class _Key:
        def __init__(self, values):
            self.values = values

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    def CreateKey(self, root, path):
        return self._Key(self.keys.setdefault((root, path), {}))

    def OpenKey(self, root, path, reserved=0, access=0):
        if (root, path) not in self.keys:
            raise FileNotFoundError(path)
        return self._Key(self.keys[(root, path)])

    def SetValueEx(self, key, name, reserved, kind, value):
        key.values[name] = (kind, value)

    def QueryValueEx(self, key, name):
        if name not in key.values:
            raise FileNotFoundError(name)
        return key.values[name]

    def DeleteValue(self, key, name):
        if name not in key.values:
            raise FileNotFoundError(name)
        del key.values[name]


def test_the_windows_run_value_is_a_quoted_command_line_under_hkcu():
    reg = FakeWinreg()
    entry = autostart.WindowsAutostart(reg)
    assert not entry.is_enabled()
    entry.disable()  # no key yet: no error
    command = [r"C:\Program Files\Qiao\Qiao.exe", "--background"]
    autostart.apply(True, entry, command)
    assert reg.keys[("HKCU", autostart.RUN_KEY)] == {"Qiao": (1, '"C:\\Program Files\\Qiao\\Qiao.exe" --background')}
    assert entry.is_enabled()
    autostart.apply(False, entry)
    assert not entry.is_enabled() and reg.keys[("HKCU", autostart.RUN_KEY)] == {}
    entry.disable()


def test_the_launch_command_starts_this_qiao_in_the_background(monkeypatch):
    assert autostart.launch_command() == [sys.executable, "-m", "qiao", "--background"]
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert autostart.launch_command() == [sys.executable, "--background"]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_an_unwritable_autostart_folder_is_an_oserror_for_the_caller(tmp_path, monkeypatch):
    if os.geteuid() == 0:
        target = tmp_path / "file-not-folder"
        target.write_text("x")
        monkeypatch.setenv("XDG_CONFIG_HOME", str(target))  # "autostart" cannot be made inside a file
    else:
        (tmp_path / "ro").mkdir(mode=0o500)
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "ro"))
    with pytest.raises(OSError):
        autostart.apply(True, autostart.for_platform("linux"), COMMAND)
