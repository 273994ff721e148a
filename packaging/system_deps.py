#!/usr/bin/env python3
"""The system packages `make run` and `make test` need, checked (and installed where the user may) before anything
else, so that a fresh Debian/Ubuntu machine works with the README's two commands alone.

    python3 packaging/system_deps.py run|test|venv|make

Each need is proved by the thing itself (a shared library the loader finds, a command on PATH, a font file), not by
a package name, so it also holds on Ubuntu's renamed `…t64` libraries and on other distributions. What is missing is
installed with apt-get when running as root or with passwordless sudo; otherwise the script stops at once with the
exact `sudo apt-get install …` line (`su -c '…'` where there is no sudo) and exit 1. Without apt-get (other
Linux) it says what is missing and goes on; macOS needs nothing from the system. It runs with the system Python,
before the venv exists: standard library only.
Another package manager at work (an install in another terminal, the automatic updates) holds dpkg's lock: that is
seen before installing (its process, `fuser` on the lock files as root) and in apt-get's own "Could not get lock",
and said as such — wait for it to finish, then run the target again — never as a line to run as root.
The check is cheap (no subprocess when nothing is missing), so the Makefile runs it every time instead of a stamp.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Need:
    """One thing a target needs: the Debian/Ubuntu package that provides it, and how to see that it is there."""

    package: str
    kind: str  # "lib": a soname the dynamic loader finds; "cmd": a command on PATH; "font": a font file name;
    # "file": a file the package installs (LibreOffice's components share one command)
    name: str


def _xcb_libraries() -> dict[str, str]:
    """gui/display.py's table (soname → package): the app names the same libraries when Qt could not open X11."""
    spec = importlib.util.spec_from_file_location("_qiao_display", ROOT / "gui" / "display.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(module.XCB_LIBRARIES)


# Qt (PySide6) loads these even with QT_QPA_PLATFORM=offscreen; its X11 plugin needs the xcb ones; the translation
# pane asks for Noto Sans CJK.
QT_RUNTIME = [
    Need("libegl1", "lib", "libEGL.so.1"),
    Need("libgl1", "lib", "libGL.so.1"),
    Need("libxkbcommon0", "lib", "libxkbcommon.so.0"),
    Need("libfontconfig1", "lib", "libfontconfig.so.1"),
    Need("libdbus-1-3", "lib", "libdbus-1.so.3"),
    Need("libglib2.0-0", "lib", "libglib-2.0.so.0"),
    *(Need(package, "lib", soname) for soname, package in _xcb_libraries().items()),
    Need("fonts-noto-cjk", "font", "NotoSansCJK"),
]
# The frozen-app smoke test (make test's second step): unshare (util-linux), Xvfb, xdotool and ImageMagick's
# `import` (drive the window, screenshot), zstd, binutils (strip, readelf) and a C compiler (trim_icu links the
# trimmed ICU data library), iproute2 (proof that the namespace's loopback is down), strace (the offline trace).
SMOKE_TEST = [
    Need("util-linux", "cmd", "unshare"),
    Need("xvfb", "cmd", "Xvfb"),
    Need("xauth", "cmd", "xauth"),
    Need("xdotool", "cmd", "xdotool"),
    Need("imagemagick", "cmd", "import"),
    Need("zstd", "cmd", "zstd"),
    Need("binutils", "cmd", "strip"),
    Need("binutils", "cmd", "readelf"),
    Need("gcc", "cmd", "gcc"),
    Need("iproute2", "cmd", "ip"),
    Need("strace", "cmd", "strace"),
]
# The producers tier (`pytest -m producers`, make test's third step): documents made by pandoc and LibreOffice
# (Writer, Impress, Calc), translated and opened again by them. ~126 MB to download, ~500 MB on disk; the tier
# itself takes ~20 s.
_LO = "/usr/lib/libreoffice/program"
PRODUCERS = [
    Need("pandoc", "cmd", "pandoc"),
    Need("libreoffice-writer-nogui", "file", f"{_LO}/libswlo.so"),
    Need("libreoffice-impress-nogui", "file", f"{_LO}/libslideshowlo.so"),
    Need("libreoffice-calc-nogui", "file", f"{_LO}/libsclo.so"),
]
TARGETS: dict[str, list[Need]] = {
    "venv": [],  # python3 -m venv alone (see python_needs)
    "run": QT_RUNTIME,
    "test": QT_RUNTIME + SMOKE_TEST + PRODUCERS,
    "make": [Need("make", "cmd", "make")],  # .ci/run: the one thing `make test` cannot install for itself
}
FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts", "~/.local/share/fonts", "~/.fonts")
# dpkg's and apt's locks; what apt-get prints when another process holds one; the programs that take them (a
# process's comm is cut at 15 characters: "unattended-upgr")
LOCK_FILES = (
    "/var/lib/dpkg/lock-frontend",
    "/var/lib/dpkg/lock",
    "/var/lib/apt/lists/lock",
    "/var/cache/apt/archives/lock",
)
LOCK_MESSAGES = ("Could not get lock", "Unable to acquire the dpkg frontend lock", "Unable to lock directory")
PACKAGE_MANAGERS = frozenset({"apt", "apt-get", "aptitude", "dpkg", "unattended-upgr", "synaptic", "apt.systemd.dai"})
LOCK_WAIT_S = 120  # how long apt-get itself waits for a busy lock (DPkg::Lock::Timeout) before giving up


def python_needs(target: str) -> list[Need]:
    """What Debian's own Python lacks: ensurepip (so `python3 -m venv`) without pythonX.Y-venv, and for freezing the
    app (`make test`'s second step) PyInstaller needs the shared libpythonX.Y it does not install by default."""
    if sys.base_prefix != "/usr":
        return []  # a Python built from source, pyenv, conda, Homebrew: not apt's to fix
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    out = [Need(f"python{version}-venv", "module", "ensurepip")]
    if target == "test":
        out.append(Need(f"libpython{version}", "lib", f"libpython{version}.so.1.0"))
    return out


def needs(target: str) -> list[Need]:
    """Everything `target` needs: the venv's Python first, then the target's table."""
    return python_needs(target) + TARGETS[target]


def is_present(need: Need) -> bool:
    """Whether `need` is satisfied on this machine, proved by the library, command or font itself."""
    if need.kind == "lib":
        import ctypes

        try:
            ctypes.CDLL(need.name)
        except OSError:
            return False
        return True
    if need.kind == "cmd":
        path = os.pathsep.join([os.environ.get("PATH", os.defpath), "/usr/sbin", "/sbin"])
        return shutil.which(need.name, path=path) is not None
    if need.kind == "font":
        for folder in map(Path, map(os.path.expanduser, FONT_DIRS)):
            if folder.is_dir() and next(folder.rglob(f"{need.name}*"), None) is not None:
                return True
        return False
    if need.kind == "module":
        return importlib.util.find_spec(need.name) is not None
    if need.kind == "file":
        return Path(need.name).is_file()
    raise ValueError(f"unknown kind of need: {need.kind}")


def missing(wanted: Sequence[Need]) -> list[Need]:
    """The needs not satisfied (is_present), in table order."""
    return [need for need in wanted if not is_present(need)]


def packages_of(needs_: Sequence[Need]) -> list[str]:
    """The packages to install for `needs_`, each once, in table order."""
    return list(dict.fromkeys(need.package for need in needs_))


def _sudo_works() -> bool:
    """Passwordless sudo: `sudo -n true` succeeds without asking."""
    if shutil.which("sudo") is None:
        return False
    return subprocess.run(["sudo", "-n", "true"], capture_output=True).returncode == 0


def apt_prefix() -> list[str] | None:
    """How to run apt-get as root here: directly, through passwordless sudo, or not at all (None)."""
    if os.geteuid() == 0:
        return []
    return ["sudo", "-n"] if _sudo_works() else None


def install_line(packages: Sequence[str]) -> str:
    """The command the user runs when we may not install ourselves: through sudo where there is one, else through
    `su -c` (a minimal Debian has no sudo: a `sudo …` line there would only fail with "command not found")."""
    apt = "apt-get install --no-install-recommends " + " ".join(packages)
    return f"sudo {apt}" if shutil.which("sudo") else f"su -c '{apt}'"


def busy_processes(proc: Path = Path("/proc")) -> list[tuple[int, str]]:
    """(pid, name) of the package managers running now: by name from /proc (readable without root), plus, as root,
    whoever `fuser` says holds a dpkg/apt lock file."""
    found: dict[int, str] = {}
    for comm in proc.glob("[0-9]*/comm"):
        try:
            name = comm.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            continue  # gone, or not ours to read
        if name in PACKAGE_MANAGERS:
            found[int(comm.parent.name)] = name
    if os.geteuid() == 0 and shutil.which("fuser"):
        held = subprocess.run(["fuser", *LOCK_FILES], capture_output=True, text=True).stdout
        for pid in (int(word) for word in held.split() if word.isdigit()):
            if pid != os.getpid() and pid not in found:
                try:
                    found[pid] = (proc / str(pid) / "comm").read_text(encoding="utf-8").strip()
                except OSError:
                    found[pid] = "?"
    return sorted(found.items())


def lock_held(output: str) -> bool:
    """apt-get's output says another process holds the dpkg/apt lock."""
    return any(message in output for message in LOCK_MESSAGES)


def busy_message(what: str, processes: Sequence[tuple[int, str]]) -> str:
    """The package manager is in use: say so, and when to try again (not a command to run as root)."""
    who = ", ".join(f"{name} (pid {pid})" for pid, name in processes) or "another process holds its lock"
    return (
        f"system_deps: the package manager is busy: {who} — another install or the automatic updates. Wait for it "
        f"to finish, then run {what} again."
    )


def _describe(needs_: Sequence[Need]) -> str:
    return ", ".join(f"{n.name} ({n.package})" for n in needs_)


def _apt_install(prefix: list[str], packages: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """apt-get update, then install without recommends; output captured, shown only when the install fails."""
    apt = [
        *prefix,
        "env",
        "DEBIAN_FRONTEND=noninteractive",
        "apt-get",
        "-qq",
        "-o",
        f"DPkg::Lock::Timeout={LOCK_WAIT_S}",
    ]
    subprocess.run([*apt, "update"], capture_output=True, text=True)  # stale or empty lists (fresh images)
    return subprocess.run([*apt, "install", "-y", "--no-install-recommends", *packages], capture_output=True, text=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check and install the system packages a make target needs.")
    parser.add_argument("target", choices=sorted(TARGETS), help="the make target (venv: python3 -m venv only)")
    parser.add_argument("--no-install", action="store_true", help="only check: exit 1 and say what is missing")
    args = parser.parse_args(argv)
    what = f"`make {args.target}`" if args.target != "make" else "`make`"
    if sys.platform == "darwin":
        print(f"system_deps: macOS: nothing to check for {what} (Qt comes in the PySide6 wheel)", file=sys.stderr)
        return 0
    if not sys.platform.startswith("linux"):
        print(f"system_deps: {sys.platform}: cannot check the system packages for {what}; going on", file=sys.stderr)
        return 0
    absent = missing(needs(args.target))
    if not absent:
        return 0
    packages = packages_of(absent)
    if shutil.which("apt-get") is None:
        print(
            f"system_deps: not Debian/Ubuntu (no apt-get), so nothing is installed; {what} may fail without: "
            f"{_describe(absent)} — install your distribution's packages for them. Going on.",
            file=sys.stderr,
        )
        return 0
    prefix = None if args.no_install else apt_prefix()
    busy = busy_processes()
    if prefix is None:
        print(
            f"system_deps: {what} needs system packages that are not installed: {' '.join(packages)}\n"
            f"Install them (needs root), then run {what} again:\n  {install_line(packages)}",
            file=sys.stderr,
        )
        if busy:
            print(busy_message("that line", busy), file=sys.stderr)
        return 1
    if busy:
        print(f"{busy_message(what, busy)} Waiting up to {LOCK_WAIT_S} s for it…", file=sys.stderr)
    how = "apt-get" if not prefix else "sudo apt-get"
    print(f"system_deps: installing for {what} with {how}: {' '.join(packages)}", file=sys.stderr)
    proc = _apt_install(prefix, packages)
    if proc.returncode != 0 and lock_held(proc.stdout + proc.stderr):
        print(busy_message(what, busy_processes()), file=sys.stderr)
        return 1
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        print(
            f"system_deps: apt-get failed (exit {proc.returncode}):\n{tail}\n"
            f"Try it yourself:\n  {install_line(packages)}",
            file=sys.stderr,
        )
        return 1
    return recheck(args.target)


def recheck(target: str) -> int:
    """Check again in a fresh process: this one's dynamic loader may still hold the old library cache."""
    return subprocess.run([sys.executable, str(Path(__file__).resolve()), target, "--no-install"]).returncode


if __name__ == "__main__":
    raise SystemExit(main())
