"""The GlobalShortcuts portal backend for real: a private dbus-daemon (no service files, so nothing is activated)
and a fake portal written with jeepney that answers CreateSession / BindShortcuts with Response signals and can
emit Activated. Skipped where dbus-daemon cannot run."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gui.quick.shortcut import Keys
from gui.quick.shortcut_portal import (
    INTERFACE,
    PENDING,
    PORTAL,
    PORTAL_PATH,
    SHORTCUT_ID,
    PortalShortcut,
    portal_trigger,
    session_bus_address,
)

jeepney = pytest.importorskip("jeepney")
from jeepney import DBusAddress, MatchRule, new_error, new_method_return, new_signal  # noqa: E402
from jeepney.bus_messages import message_bus  # noqa: E402
from jeepney.io.threading import DBusRouter, Proxy, open_dbus_connection  # noqa: E402
from jeepney.low_level import HeaderFields  # noqa: E402

_CONNECT = socket.socket.connect  # before the GUI tests' no_network guard patches it


@pytest.fixture(autouse=True)
def unix_sockets_only(no_network, monkeypatch):
    """D-Bus runs over a Unix socket, which is not the network: let AF_UNIX connects through, and only those
    (anything else still fails the test through no_network)."""
    refused = socket.socket.connect

    def connect(sock: socket.socket, address: Any) -> Any:
        return _CONNECT(sock, address) if sock.family == socket.AF_UNIX else refused(sock, address)

    monkeypatch.setattr(socket.socket, "connect", connect)


BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={path}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


@contextlib.contextmanager
def private_bus(folder: Path) -> Iterator[tuple[str, subprocess.Popen]]:
    """A session bus of its own in `folder`: (its address, the dbus-daemon process); skips where it cannot run."""
    daemon = shutil.which("dbus-daemon")
    if daemon is None:
        pytest.skip("dbus-daemon not installed")
    config = folder / "bus.conf"
    config.write_text(BUS_CONFIG.format(path=folder / "bus"))
    try:
        proc = subprocess.Popen(
            [daemon, f"--config-file={config}", "--nofork", "--print-address=1"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
    except OSError as exc:
        pytest.skip(f"dbus-daemon cannot run: {exc}")
    try:
        address = proc.stdout.readline().strip() if proc.stdout else ""
        if not address:
            pytest.skip("dbus-daemon did not start")
        yield address, proc
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture
def bus(tmp_path) -> Iterator[str]:
    """A private session bus's address, torn down after the test."""
    with private_bus(tmp_path) as (address, _proc):
        yield address


class QuietRouter(DBusRouter):
    """The fake's router: a bus killed under it (one test does that) ends its receiver without a traceback."""

    def _receiver(self) -> None:
        with contextlib.suppress(OSError):
            super()._receiver()


class FakePortal:
    """org.freedesktop.portal.Desktop with GlobalShortcuts, on its own connection and thread. `create_code` and
    `bind_code` are the Response codes it answers with; `bind_omits` leaves the shortcut out of the bound list.
    It records every call's body."""

    def __init__(
        self,
        address: str,
        *,
        create_code: int = 0,
        bind_code: int = 0,
        bind_omits: bool = False,
        bind_results: dict | None = None,
    ) -> None:
        self.create_code, self.bind_code, self.bind_omits = create_code, bind_code, bind_omits
        self.bind_results = bind_results  # answered instead of the bound list (a misbehaving portal)
        self.calls: list[tuple[str, tuple]] = []
        self.closed: list[str] = []
        self.sessions: list[str] = []
        self.conn = open_dbus_connection(address)
        self.router = QuietRouter(self.conn)
        assert Proxy(message_bus, self.router, timeout=5).RequestName(PORTAL, 4) == (1,)
        self._filter = self.router.filter(MatchRule(type="method_call"), bufsize=0)
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            msg = self._filter.queue.get()
            if msg is None:
                return
            self._handle(msg)

    def _handle(self, msg: Any) -> None:
        member = msg.header.fields.get(HeaderFields.member)
        interface = msg.header.fields.get(HeaderFields.interface)
        sender = msg.header.fields[HeaderFields.sender].lstrip(":").replace(".", "_")
        self.calls.append((member, msg.body))
        if interface == "org.freedesktop.DBus.Properties" and member == "Get":
            if msg.body == (INTERFACE, "version"):
                self.router.send(new_method_return(msg, "v", (("u", 1),)))
            else:
                self.router.send(new_error(msg, "org.freedesktop.DBus.Error.UnknownProperty"))
        elif interface == INTERFACE and member == "CreateSession":
            token = msg.body[0]["handle_token"][1]
            session = f"{PORTAL_PATH}/session/{sender}/{msg.body[0]['session_handle_token'][1]}"
            request = self._reply_request(msg, sender, token)
            results = {"session_handle": ("s", session)} if self.create_code == 0 else {}
            if self.create_code == 0:
                self.sessions.append(session)
            self._respond(request, self.create_code, results)
        elif interface == INTERFACE and member == "BindShortcuts":
            session, shortcuts, _parent, options = msg.body
            request = self._reply_request(msg, sender, options["handle_token"][1])
            bound = (
                []
                if self.bind_omits
                else [
                    (sid, {"description": props["description"], "trigger_description": ("s", "Ctrl+Alt+T")})
                    for sid, props in shortcuts
                ]
            )
            results = {"shortcuts": ("a(sa{sv})", bound)} if self.bind_code == 0 else {}
            self._respond(request, self.bind_code, results if self.bind_results is None else self.bind_results)
        elif interface == "org.freedesktop.portal.Session" and member == "Close":
            self.closed.append(msg.header.fields[HeaderFields.path])
            self.router.send(new_method_return(msg))
        else:
            self.router.send(new_error(msg, "org.freedesktop.DBus.Error.UnknownMethod"))

    def _reply_request(self, msg: Any, sender: str, token: str) -> str:
        request = f"{PORTAL_PATH}/request/{sender}/{token}"
        self.router.send(new_method_return(msg, "o", (request,)))
        return request

    def _respond(self, request: str, code: int, results: dict) -> None:
        signal = new_signal(
            DBusAddress(request, interface="org.freedesktop.portal.Request"), "Response", "ua{sv}", (code, results)
        )
        self.router.send(signal)

    def activate(self, session: str, shortcut_id: str = SHORTCUT_ID, router: Any = None) -> None:
        signal = new_signal(
            DBusAddress(PORTAL_PATH, interface=INTERFACE), "Activated", "osta{sv}", (session, shortcut_id, 1234, {})
        )
        (router or self.router).send(signal)

    def close(self) -> None:
        self._filter.queue.put(None)
        self._thread.join(5)
        self._filter.close()
        self.router.close()
        self.conn.close()


@pytest.fixture
def portal_factory(bus) -> Iterator[Any]:
    portals: list[FakePortal] = []

    def make(**kwargs: Any) -> FakePortal:
        portals.append(FakePortal(bus, **kwargs))
        return portals[-1]

    yield make
    for p in portals:
        p.close()


@pytest.fixture
def new_backend(bus) -> Iterator[Any]:
    """PortalShortcut on the private bus; each one closed (its thread joined) before the bus goes away."""
    backends: list[PortalShortcut] = []

    def make(**kwargs: Any) -> PortalShortcut:
        backends.append(PortalShortcut(address=bus, **kwargs))
        return backends[-1]

    yield make
    for b in backends:
        assert b.close(), "the portal thread did not end"


def _register(qtbot, backend: PortalShortcut, sequence: str = "Ctrl+Alt+T"):
    with qtbot.waitSignal(backend.result_ready, timeout=5000) as blocker:
        first = backend.register(sequence)
        assert first.status == PENDING and sequence in first.reason
    return blocker.args[0]


def test_trigger_names_follow_the_xdg_shortcuts_spec():
    assert portal_trigger(Keys(frozenset({"ctrl", "alt"}), "T")) == "CTRL+ALT+t"
    assert portal_trigger(Keys(frozenset({"meta", "shift"}), "F5")) == "SHIFT+LOGO+F5"
    assert portal_trigger(Keys(frozenset({"ctrl"}), "PageUp")) == "CTRL+Page_Up"
    assert portal_trigger(Keys(frozenset({"alt"}), "Space")) == "ALT+space"


def test_registered_shortcut_fires_activated(qtbot, bus, portal_factory, new_backend):
    portal = portal_factory()
    backend = new_backend()
    result = _register(qtbot, backend)
    assert result.ok and "Ctrl+Alt+T" in result.reason and backend.sequence == "Ctrl+Alt+T"
    members = [m for m, _ in portal.calls]
    assert members[-2:] == ["CreateSession", "BindShortcuts"]
    session, shortcuts, parent, _options = portal.calls[-1][1]
    assert session == portal.sessions[0] and parent == ""
    assert shortcuts[0][0] == SHORTCUT_ID and shortcuts[0][1]["preferred_trigger"] == ("s", "CTRL+ALT+t")
    assert shortcuts[0][1]["description"][1]

    with qtbot.waitSignal(backend.activated, timeout=3000):
        portal.activate(session)

    fired: list[int] = []
    backend.activated.connect(lambda: fired.append(1))
    portal.activate(session, shortcut_id="someone-else")  # another shortcut of the same session: not ours
    portal.activate(f"{PORTAL_PATH}/session/other/x")  # another app's session
    portal.activate(session)
    qtbot.waitUntil(lambda: fired != [], timeout=3000)
    qtbot.wait(300)  # time for any wrongly accepted activation to arrive too
    assert fired == [1]

    backend.unregister()
    qtbot.waitUntil(lambda: portal.closed == [session], timeout=3000)
    portal.activate(session)
    qtbot.wait(200)
    assert fired == [1] and backend.sequence is None


def test_activated_from_anyone_but_the_portal_is_ignored(qtbot, bus, portal_factory, new_backend):
    portal = portal_factory()
    backend = new_backend()
    assert _register(qtbot, backend).ok
    fired: list[int] = []
    backend.activated.connect(lambda: fired.append(1))
    with DBusRouter(open_dbus_connection(bus)) as spoofer:  # another client on the bus forging the signal
        portal.activate(portal.sessions[0], router=spoofer)
        qtbot.wait(300)
    assert fired == []
    backend.unregister()


def test_cancelled_bind_is_reported_as_a_conflict(qtbot, bus, portal_factory, new_backend):
    portal_factory(bind_code=1)
    backend = new_backend()
    result = _register(qtbot, backend)
    assert result.status == "conflict" and "cancelled" in result.reason and "Ctrl+Alt+T" in result.reason
    assert backend.sequence is None


def test_cancelled_session_and_other_refusals(qtbot, bus, portal_factory, new_backend):
    portal = portal_factory(create_code=1)
    backend = new_backend()
    assert _register(qtbot, backend).status == "conflict"
    portal.create_code = 2
    result = _register(qtbot, backend)
    assert result.status == "unsupported" and "error 2" in result.reason and "qiao popup" in result.reason


def test_shortcut_left_unbound_is_a_conflict(qtbot, bus, portal_factory, new_backend):
    portal_factory(bind_omits=True)
    result = _register(qtbot, new_backend())
    assert result.status == "conflict" and "Ctrl+Alt+T" in result.reason


def test_no_portal_on_the_bus_gives_the_qiao_popup_hint(qtbot, bus, new_backend):
    result = _register(qtbot, new_backend())
    assert result.status == "unsupported" and "qiao popup" in result.reason and "GNOME/KDE" in result.reason


def test_a_newer_registration_voids_the_older_one(qtbot, bus, portal_factory, new_backend):
    portal = portal_factory()
    backend = new_backend()
    results: list[Any] = []
    backend.result_ready.connect(results.append)
    backend.register("Ctrl+Alt+T")
    with qtbot.waitSignal(backend.result_ready, timeout=5000):
        backend.register("Ctrl+Alt+Y")
    qtbot.wait(300)
    assert [r.status for r in results] == ["ok"] and backend.sequence == "Ctrl+Alt+Y"
    binds = [body for member, body in portal.calls if member == "BindShortcuts"]
    assert binds[-1][1][0][1]["preferred_trigger"] == ("s", "CTRL+ALT+y")
    assert backend.close()
    # the older conversation's session, if it got that far, is closed too
    qtbot.waitUntil(lambda: set(portal.closed) == set(portal.sessions), timeout=3000)


def test_no_bus_at_all_is_unsupported_at_once(qtbot, monkeypatch, tmp_path):
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    assert session_bus_address() is None
    start = time.monotonic()
    result = PortalShortcut().register("Ctrl+Alt+T")
    assert time.monotonic() - start < 0.5
    assert result.status == "unsupported" and "qiao popup" in result.reason


def test_a_bus_address_nobody_listens_on_is_unsupported_quickly(qtbot, tmp_path):
    backend = PortalShortcut(address=f"unix:path={tmp_path / 'nobody'}")
    start = time.monotonic()
    with qtbot.waitSignal(backend.result_ready, timeout=2000) as blocker:
        assert backend.register("Ctrl+Alt+T").status == PENDING
    assert time.monotonic() - start < 0.5
    assert blocker.args[0].status == "unsupported" and "qiao popup" in blocker.args[0].reason


def test_invalid_keys_never_reach_the_bus(qtbot, tmp_path):
    assert PortalShortcut(address=f"unix:path={tmp_path / 'nobody'}").register("T").status == "invalid"


def test_xdg_runtime_dir_bus_is_found(monkeypatch, tmp_path):
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    (tmp_path / "bus").touch()
    assert session_bus_address() == f"unix:path={tmp_path / 'bus'}"


def test_register_never_blocks_on_a_silent_portal(qtbot, bus, new_backend):
    """A portal that takes the name but never answers: register() still returns at once, and the answer comes
    when the call times out."""
    conn = open_dbus_connection(bus)
    with DBusRouter(conn) as silent:
        Proxy(message_bus, silent, timeout=5).RequestName(PORTAL, 4)
        backend = new_backend(call_timeout=0.5)
        start = time.monotonic()
        with qtbot.waitSignal(backend.result_ready, timeout=5000) as blocker:
            assert backend.register("Ctrl+Alt+T").status == PENDING
            assert time.monotonic() - start < 0.1
        assert blocker.args[0].status == "unsupported" and "qiao popup" in blocker.args[0].reason
    conn.close()


@pytest.mark.parametrize(
    "results",
    [
        {"shortcuts": ("s", "garbage")},
        {"shortcuts": ("a(sa{sv})", [(SHORTCUT_ID, {"trigger_description": ("u", 7)})])},
        {"shortcuts": ("as", ["quick-translate"])},
    ],
)
def test_a_misbehaving_portal_gets_an_answer_not_a_crash(qtbot, bus, portal_factory, new_backend, results):
    portal_factory(bind_results=results)
    result = _register(qtbot, new_backend())
    assert result.status in {"ok", "unsupported", "conflict"} and isinstance(result.reason, str)
    if result.status == "unsupported":
        assert "qiao popup" in result.reason


def test_the_portal_shortcut_opens_the_quick_popup(qtbot, bus, portal_factory, new_backend, clipboard):
    """End to end through QuickTranslate: the portal's Activated → the clipboard's text to the popup channel."""
    from gui.quick.controller import CHANNEL, QuickSettings, QuickTranslate

    from .fakes import FakePopupWorker

    portal = portal_factory()
    backend = new_backend()
    worker = FakePopupWorker()
    with qtbot.waitSignal(backend.result_ready, timeout=5000) as blocker:
        quick = QuickTranslate(worker, lambda: None, QuickSettings(shortcut="Ctrl+Alt+T"), backend=backend)
    qtbot.addWidget(quick.popup)
    # The controller settles on the portal's final answer (the settings dialog hears it through shortcut_changed).
    assert blocker.args[0].ok
    qtbot.waitUntil(lambda: quick.shortcut_result.ok, timeout=3000)
    clipboard.setText("Thank you very much.")
    portal.activate(portal.sessions[0])
    qtbot.waitUntil(lambda: len(worker.requests) == 1, timeout=3000)
    assert worker.requests[0][1:] == ("Thank you very much.", None, CHANNEL)
    assert quick.popup.isVisible()
    quick.shutdown()
    qtbot.waitUntil(lambda: portal.closed == portal.sessions, timeout=3000)


def test_without_jeepney_the_answer_is_the_hint(qtbot, monkeypatch, tmp_path):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "jeepney" else real(name, *a))
    result = PortalShortcut(address=f"unix:path={tmp_path / 'bus'}").register("Ctrl+Alt+T")
    assert result.status == "unsupported" and "qiao popup" in result.reason


def test_losing_the_bus_under_a_working_shortcut_is_reported(qtbot, tmp_path):
    folder = tmp_path / "gone"
    folder.mkdir()
    with private_bus(folder) as (address, proc):
        portal = FakePortal(address)
        backend = PortalShortcut(address=address)
        assert _register(qtbot, backend).ok
        with qtbot.waitSignal(backend.result_ready, timeout=5000) as blocker:
            proc.kill()
        assert blocker.args[0].status == "unsupported" and "qiao popup" in blocker.args[0].reason
        assert backend.sequence is None
        assert backend.close()
        portal.close()
