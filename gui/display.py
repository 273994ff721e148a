"""Can the window open at all? Checked before QApplication exists, because Qt's own answer is an abort.

With no display Qt prints "This application failed to start because no Qt platform plugin could be initialized.
Reinstalling the application may fix this problem" and aborts; with a display but without the X libraries its xcb
plugin needs, it blames `xcb-cursor0` whatever is missing. Both send users the wrong way, so `qiao` says what is
wrong in one line first. Standard library only: packaging/system_deps.py reads XCB_LIBRARIES from here too.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Callable, Mapping

# The shared libraries Qt's X11 platform plugin (libqxcb.so, libQt6XcbQpa.so.6) links, and the Debian/Ubuntu package
# of each. readelf -d on PySide6 6.11's plugins; minimal installs and containers often lack the xcb-util ones.
XCB_LIBRARIES: dict[str, str] = {
    "libxcb.so.1": "libxcb1",
    "libX11.so.6": "libx11-6",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
}

NO_DISPLAY = (
    "qiao: no display found (DISPLAY/WAYLAND_DISPLAY unset); the window needs one — `qiao translate …` works without it"
)


def _loads(soname: str) -> bool:
    """Whether the dynamic loader finds `soname` (and what it needs), exactly as it will when Qt loads its plugin."""
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def missing_xcb_libraries(loads: Callable[[str], bool] = _loads) -> list[str]:
    """The X11 libraries (sonames) the loader cannot find, in XCB_LIBRARIES order."""
    return [soname for soname in XCB_LIBRARIES if not loads(soname)]


def display_problem(
    env: Mapping[str, str] | None = None,
    platform: str | None = None,
    frozen: bool | None = None,
    loads: Callable[[str], bool] = _loads,
) -> str | None:
    """The one-line reason the window cannot open here, or None when Qt should be left to try.

    Only on Linux/BSD and only when the user has not chosen a Qt platform (QT_QPA_PLATFORM=offscreen, wayland, …
    are theirs to pick). The X libraries are checked only when Qt will use X11 (DISPLAY without WAYLAND_DISPLAY) and
    not in the frozen app, which bundles the xcb-util libraries and checks the rest when it is built.
    """
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    frozen = bool(getattr(sys, "frozen", False)) if frozen is None else frozen
    if not (platform.startswith("linux") or "bsd" in platform) or env.get("QT_QPA_PLATFORM"):
        return None
    if not env.get("DISPLAY") and not env.get("WAYLAND_DISPLAY"):
        return NO_DISPLAY
    if env.get("WAYLAND_DISPLAY") or frozen:
        return None
    missing = missing_xcb_libraries(loads)
    if not missing:
        return None
    packages = " ".join(XCB_LIBRARIES[soname] for soname in missing)
    return (
        f"qiao: the window cannot open on X11, these libraries are missing: {' '.join(missing)} "
        f"(Debian/Ubuntu: sudo apt-get install {packages})"
    )
