"""Start with the system: a per-user autostart entry, written atomically and removed when switched off.

- Linux and other XDG desktops: `$XDG_CONFIG_HOME/autostart/qiao.desktop` (default `~/.config/autostart`).
- Windows: the value "Qiao" under `HKCU\\Software\\Microsoft\\Windows\\CurrentVersion\\Run` (winreg, only there).
- macOS: `~/Library/LaunchAgents/<APP_ID>.plist`, a LaunchAgent with RunAtLoad.

Nothing here needs administrator rights; each entry starts `qiao` with `--background` (the window stays in the
tray when there is one). The entry's text is built by pure functions so every OS's writer is tested by content.
"""

from __future__ import annotations

import os
import plistlib
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from engine.atomic_write import write_state_file

APP_ID = "io.github.qiao"  # the reverse-DNS id of the LaunchAgent
ENTRY_NAME = "Qiao"
RUN_KEY = r"Software\Microsoft\Windows\CurrentVersion\Run"
BACKGROUND = "--background"


def launch_command() -> list[str]:
    """How this Qiao is started again: the frozen executable, or this Python running the `qiao` package."""
    if getattr(sys, "frozen", False):
        return [sys.executable, BACKGROUND]
    return [sys.executable, "-m", "qiao", BACKGROUND]


def _desktop_quote(arg: str) -> str:
    """Quoting of the Exec key (freedesktop Desktop Entry spec): double quotes, with \\ " ` $ escaped; % doubled."""
    arg = arg.replace("%", "%%")
    if arg and all(c.isalnum() or c in "-_./=:+," for c in arg):
        return arg
    escaped = "".join("\\" + c if c in '"`$\\' else c for c in arg)
    return f'"{escaped}"'


def desktop_entry(command: Sequence[str]) -> str:
    """The XDG autostart file's text."""
    # the string-value escape (\\ for a backslash) applies on top of the Exec quoting, so backslashes double again
    exec_line = " ".join(_desktop_quote(a) for a in command).replace("\\", "\\\\")
    return (
        "[Desktop Entry]\n"
        "Type=Application\n"
        f"Name={ENTRY_NAME}\n"
        "Comment=Offline English-Chinese translator\n"
        f"Exec={exec_line}\n"
        "Icon=qiao\n"
        "Terminal=false\n"
        "X-GNOME-Autostart-enabled=true\n"
        "NoDisplay=true\n"
    )


def launch_agent(command: Sequence[str]) -> bytes:
    """The macOS LaunchAgent's plist."""
    return plistlib.dumps(
        {"Label": APP_ID, "ProgramArguments": list(command), "RunAtLoad": True, "ProcessType": "Interactive"}
    )


def windows_run_value(command: Sequence[str]) -> str:
    """The Run key's value: a command line as Windows parses it."""
    return subprocess.list2cmdline(list(command))


class Autostart(Protocol):
    """One OS's autostart entry."""

    def enable(self, command: Sequence[str]) -> None: ...
    def disable(self) -> None: ...
    def is_enabled(self) -> bool: ...


class FileAutostart:
    """An entry that is one file (XDG .desktop, macOS plist)."""

    def __init__(self, path: Path, render) -> None:
        self.path = path
        self._render = render

    def enable(self, command: Sequence[str]) -> None:
        data = self._render(command)
        write_state_file(self.path, data.encode("utf-8") if isinstance(data, str) else data)
        os.chmod(self.path, 0o644)  # read by the session manager, written only by this user

    def disable(self) -> None:
        self.path.unlink(missing_ok=True)

    def is_enabled(self) -> bool:
        return self.path.is_file()


class WindowsAutostart:
    """The HKCU Run value (winreg is imported only when used, so this module loads on every OS)."""

    def __init__(self, registry=None) -> None:
        self._winreg = registry

    def _reg(self):
        if self._winreg is None:
            import winreg  # type: ignore[import-not-found]

            self._winreg = winreg
        return self._winreg

    def enable(self, command: Sequence[str]) -> None:
        reg = self._reg()
        with reg.CreateKey(reg.HKEY_CURRENT_USER, RUN_KEY) as key:
            reg.SetValueEx(key, ENTRY_NAME, 0, reg.REG_SZ, windows_run_value(command))

    def disable(self) -> None:
        reg = self._reg()
        try:
            with reg.OpenKey(reg.HKEY_CURRENT_USER, RUN_KEY, 0, reg.KEY_SET_VALUE) as key:
                reg.DeleteValue(key, ENTRY_NAME)
        except FileNotFoundError:
            pass

    def is_enabled(self) -> bool:
        reg = self._reg()
        try:
            with reg.OpenKey(reg.HKEY_CURRENT_USER, RUN_KEY) as key:
                reg.QueryValueEx(key, ENTRY_NAME)
        except FileNotFoundError:
            return False
        return True


def xdg_autostart_file() -> Path:
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "autostart" / "qiao.desktop"


def launch_agent_file() -> Path:
    return Path.home() / "Library" / "LaunchAgents" / f"{APP_ID}.plist"


def for_platform(platform: str = sys.platform) -> Autostart:
    """This OS's autostart entry."""
    if platform == "win32":
        return WindowsAutostart()
    if platform == "darwin":
        return FileAutostart(launch_agent_file(), launch_agent)
    return FileAutostart(xdg_autostart_file(), desktop_entry)


def apply(enabled: bool, entry: Autostart | None = None, command: Sequence[str] | None = None) -> None:
    """Make the entry match the setting; OSError goes to the caller (the window says what failed)."""
    entry = entry or for_platform()
    if enabled:
        entry.enable(list(command or launch_command()))
    else:
        entry.disable()


def describe(command: Sequence[str]) -> str:
    """The command as a shell would show it (for the settings' tooltip)."""
    return shlex.join(command)
