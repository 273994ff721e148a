"""Wayland: applications cannot grab keys; the XDG desktop portal's org.freedesktop.portal.GlobalShortcuts is the
sanctioned way. QtDBus cannot send BindShortcuts' `a(sa{sv})` argument from Python (a list of structs needs a
C++-registered metatype), so the portal is spoken to with jeepney, a pure-Python D-Bus library.

The exchange takes round trips and may wait on a dialog the desktop shows the user, so it runs on a background
thread with its own bus connection: CreateSession → the Request's Response → BindShortcuts → Response, then the
portal's Activated signals for that session. `register()` answers at once — "pending" while the desktop decides,
or unsupported when there is no session bus to ask — and `result_ready` delivers the final answer on the GUI
thread (queued signals). Without a portal the answer is the way that works everywhere: bind `qiao popup` as a
custom shortcut in GNOME/KDE settings.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import os
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, Qt, Signal

from gui.quick.shortcut import (
    Keys,
    ShortcutBackend,
    ShortcutResult,
    conflict,
    parse_keys,
    unsupported,
    wayland_hint,
)

PORTAL = "org.freedesktop.portal.Desktop"
PORTAL_PATH = "/org/freedesktop/portal/desktop"
INTERFACE = "org.freedesktop.portal.GlobalShortcuts"
REQUEST = "org.freedesktop.portal.Request"
SESSION = "org.freedesktop.portal.Session"
SHORTCUT_ID = "quick-translate"
CALL_TIMEOUT_S = 5.0  # a method call to a live portal answers in milliseconds
CREATE_TIMEOUT_S = 10.0  # CreateSession shows no dialog; BindShortcuts may, so its answer is awaited without limit
PENDING = "pending"
# The portal has no GlobalShortcuts (an older xdg-desktop-portal, or a desktop without the backend).
_NO_INTERFACE = {
    "org.freedesktop.DBus.Error.UnknownInterface",
    "org.freedesktop.DBus.Error.UnknownProperty",
    "org.freedesktop.DBus.Error.UnknownMethod",
    "org.freedesktop.DBus.Error.InvalidArgs",
}
# Nobody owns the portal's name and the bus cannot start it.
_NO_PORTAL = {"org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner"}
_MODIFIERS = (("ctrl", "CTRL"), ("alt", "ALT"), ("shift", "SHIFT"), ("meta", "LOGO"))
_KEYSYMS = {"Space": "space", "PageUp": "Page_Up", "PageDown": "Page_Down"}
_tokens = itertools.count(1)


def session_bus_address() -> str | None:
    """The session bus's address: $DBUS_SESSION_BUS_ADDRESS, else systemd's $XDG_RUNTIME_DIR/bus when it exists;
    None when neither (then there is no bus to ask, and that is known without touching a socket)."""
    address = os.environ.get("DBUS_SESSION_BUS_ADDRESS", "").strip()
    if address:
        return address
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.exists(os.path.join(runtime, "bus")):
        return f"unix:path={os.path.join(runtime, 'bus')}"
    return None


def portal_trigger(keys: Keys) -> str:
    """Keys → the XDG shortcuts spec's trigger ("CTRL+ALT+t"): modifier names, then the key's xkb keysym name."""
    key = _KEYSYMS.get(keys.key, keys.key.lower() if len(keys.key) == 1 else keys.key)
    return "+".join([name for mod, name in _MODIFIERS if mod in keys.modifiers] + [key])


def pending(sequence: str) -> ShortcutResult:
    return ShortcutResult(
        PENDING,
        QCoreApplication.translate("QuickShortcut", "Asking the desktop to bind {sequence}…").format(sequence=sequence),
    )


class _Stopped(Exception):
    pass


_DISCONNECTED = object()  # the bus connection ended under the conversation


def _router_class() -> Any:
    """jeepney's threading DBusRouter, but its receiver thread, when the bus goes away, says so in our inbox
    (jeepney's own lets the exception end the thread, and a registration would look alive for ever)."""
    from jeepney.io.threading import DBusRouter

    class Router(DBusRouter):
        def __init__(self, conn: Any, inbox: queue.Queue) -> None:
            self._inbox = inbox  # before the base class starts the receiver thread
            super().__init__(conn)

        def _receiver(self) -> None:
            try:
                super()._receiver()
            except Exception:  # the base class has already failed the calls waiting for replies
                self._inbox.put(_DISCONNECTED)

    return Router


class _PortalError(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _value(variant: Any) -> Any:
    """jeepney gives a variant as (signature, value)."""
    return variant[1] if isinstance(variant, tuple) and len(variant) == 2 else variant


class PortalClient:
    """One registration's conversation with the portal, on its own thread and bus connection. Reports go
    through the callbacks, from that thread: `on_result(ShortcutResult)` once, `on_activated()` per press."""

    def __init__(
        self,
        address: str,
        sequence: str,
        trigger: str,
        description: str,
        on_result: Callable[[ShortcutResult], None],
        on_activated: Callable[[], None],
        *,
        call_timeout: float = CALL_TIMEOUT_S,
        create_timeout: float = CREATE_TIMEOUT_S,
    ) -> None:
        self.address, self.sequence, self.trigger, self.description = address, sequence, trigger, description
        self._on_result, self._on_activated = on_result, on_activated
        self.call_timeout, self.create_timeout = call_timeout, create_timeout
        self._inbox: queue.Queue[Any] = queue.Queue()
        self._router: Any = None
        self._portal_owner = ""
        self.session = ""
        self._thread = threading.Thread(target=self._run, name="qiao-portal-shortcut", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Close the session and the connection, from any thread; does not wait."""
        self._inbox.put(_Stopped)

    def join(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    # -- the background thread ------------------------------------------------------------------------------------

    def _run(self) -> None:
        from jeepney.io.threading import open_dbus_connection

        try:
            try:
                conn = open_dbus_connection(self.address, auth_timeout=self.call_timeout)
            except (OSError, RuntimeError, ValueError, KeyError, StopIteration):
                self._on_result(unsupported(wayland_hint()))  # no bus to talk to
                return
            try:
                with _router_class()(conn, self._inbox) as router:
                    self._router = router
                    self._converse()
            finally:
                self._close_session()
                conn.close()
        except _Stopped:
            pass
        except _PortalError as exc:
            self._on_result(self._answer_for_error(exc.name))
        except Exception as exc:  # a broken bus or a misbehaving portal must never reach the GUI as an exception
            self._on_result(self._failed(type(exc).__name__))

    def _converse(self) -> None:
        from jeepney import MatchRule
        from jeepney.bus_messages import message_bus

        self._call(message_bus.AddMatch(self._rule(type="signal", interface=REQUEST, member="Response")))
        self._call(message_bus.AddMatch(self._rule(type="signal", interface=INTERFACE, member="Activated")))
        self._router.filter(MatchRule(type="signal", interface=REQUEST, member="Response"), queue=self._inbox)
        self._router.filter(
            MatchRule(type="signal", interface=INTERFACE, member="Activated", path=PORTAL_PATH), queue=self._inbox
        )
        # Get first: it starts a D-Bus-activatable portal that is not running yet, and tells whether it has
        # GlobalShortcuts at all; only then has the portal's name an owner whose signals are believed.
        self._call(self._method("org.freedesktop.DBus.Properties", "Get", "ss", (INTERFACE, "version")))
        self._portal_owner = self._call(message_bus.GetNameOwner(PORTAL))[0]

        token = f"qiao{os.getpid()}_{next(_tokens)}"
        options = {"handle_token": ("s", token), "session_handle_token": ("s", token)}
        # The handle the portal will give the session (the spec fixes its form), so that a stop before the answer
        # still closes it.
        sender = self._router.unique_name.lstrip(":").replace(".", "_")
        self.session = f"{PORTAL_PATH}/session/{sender}/{token}"
        request = self._call(self._method(INTERFACE, "CreateSession", "a{sv}", (options,)))[0]
        code, results = self._response(request, self.create_timeout)
        if code != 0:
            self.session = ""  # refused: there is no session to close
            self._on_result(self._refused(code))
            return
        self.session = str(_value(results.get("session_handle", "")))
        if not self.session.startswith("/"):
            self._on_result(self._failed("no session_handle"))
            return

        shortcut = {"description": ("s", self.description), "preferred_trigger": ("s", self.trigger)}
        request = self._call(
            self._method(
                INTERFACE,
                "BindShortcuts",
                "oa(sa{sv})sa{sv}",
                (self.session, [(SHORTCUT_ID, shortcut)], "", {"handle_token": ("s", f"{token}b")}),
            )
        )[0]
        code, results = self._response(request, None)
        if code != 0:
            self._on_result(self._refused(code))
            return
        bound = {sid: props for sid, props in _value(results.get("shortcuts", ("a(sa{sv})", []))) or []}
        if SHORTCUT_ID not in bound:
            self._on_result(
                conflict(
                    QCoreApplication.translate(
                        "QuickShortcut", "The desktop did not bind {sequence} (is it taken by another shortcut?)."
                    ).format(sequence=self.sequence)
                )
            )
            return
        described = str(_value(bound[SHORTCUT_ID].get("trigger_description", "")) or "")
        self._on_result(
            ShortcutResult(
                "ok",
                QCoreApplication.translate("QuickShortcut", "The desktop bound the shortcut to {sequence}.").format(
                    sequence=described
                )
                if described
                else "",
            )
        )
        while True:  # presses, until stopped
            msg = self._next(None)
            if self._is_activation(msg):
                self._on_activated()

    def _rule(self, **fields: str) -> str:
        from jeepney import MatchRule

        return MatchRule(sender=PORTAL, **fields).serialise()

    def _method(self, interface: str, member: str, signature: str, body: tuple) -> Any:
        from jeepney import DBusAddress, new_method_call

        return new_method_call(DBusAddress(PORTAL_PATH, PORTAL, interface), member, signature, body)

    def _call(self, msg: Any) -> tuple:
        from jeepney.low_level import HeaderFields, MessageType

        reply = self._router.send_and_get_reply(msg, timeout=self.call_timeout)
        if reply.header.message_type == MessageType.error:
            raise _PortalError(str(reply.header.fields.get(HeaderFields.error_name, "error")))
        return reply.body

    def _next(self, timeout: float | None) -> Any:
        try:
            item = self._inbox.get(timeout=timeout)
        except queue.Empty:
            raise _PortalError("timeout") from None
        if item is _Stopped:
            raise _Stopped
        if item is _DISCONNECTED:
            raise _PortalError("disconnected")
        return item

    def _from_portal(self, msg: Any) -> bool:
        from jeepney.low_level import HeaderFields

        return msg.header.fields.get(HeaderFields.sender) == self._portal_owner

    def _response(self, request: str, timeout: float | None) -> tuple[int, dict]:
        """The Response signal of this Request object (other signals that arrive meanwhile are not for it)."""
        from jeepney.low_level import HeaderFields

        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            msg = self._next(left)
            if (
                msg.header.fields.get(HeaderFields.member) == "Response"
                and msg.header.fields.get(HeaderFields.path) == request
                and self._from_portal(msg)
                and len(msg.body) == 2
            ):
                code, results = msg.body
                return int(code), results if isinstance(results, dict) else {}

    def _is_activation(self, msg: Any) -> bool:
        from jeepney.low_level import HeaderFields

        return (
            msg.header.fields.get(HeaderFields.member) == "Activated"
            and self._from_portal(msg)
            and len(msg.body) >= 2
            and msg.body[0] == self.session
            and msg.body[1] == SHORTCUT_ID
        )

    def _close_session(self) -> None:
        if self.session and self._router is not None:
            from jeepney import DBusAddress, new_method_call

            with contextlib.suppress(Exception):  # the bus is gone; so is the session
                self._router.send(new_method_call(DBusAddress(self.session, PORTAL, SESSION), "Close"))
        self.session = ""

    # -- answers ---------------------------------------------------------------------------------------------------

    def _answer_for_error(self, name: str) -> ShortcutResult:
        if name in _NO_PORTAL or name in _NO_INTERFACE:
            return unsupported(wayland_hint())
        return self._failed(name)

    def _refused(self, code: int) -> ShortcutResult:
        if code == 1:
            return conflict(
                QCoreApplication.translate(
                    "QuickShortcut", "The desktop's shortcut dialog was cancelled, so {sequence} is not bound."
                ).format(sequence=self.sequence)
            )
        return unsupported(
            QCoreApplication.translate(
                "QuickShortcut",
                "The desktop refused {sequence} (error {code}); bind `qiao popup` as a custom shortcut in GNOME/KDE "
                "settings instead.",
            ).format(sequence=self.sequence, code=code)
        )

    def _failed(self, name: str) -> ShortcutResult:
        return unsupported(
            QCoreApplication.translate(
                "QuickShortcut",
                "The desktop portal failed ({name}); bind `qiao popup` as a custom shortcut in GNOME/KDE settings "
                "instead.",
            ).format(name=name)
        )


class _Bridge(QObject):
    """Signals emitted on the portal thread and delivered, queued, on the GUI thread."""

    result = Signal(int, object)  # generation, ShortcutResult
    activated = Signal(int)  # generation


class PortalShortcut(ShortcutBackend):
    """The GlobalShortcuts portal as a ShortcutBackend. `register()` returns "pending" (or a final answer it knows
    without asking the bus); `result_ready` then carries the final ShortcutResult — and once more, unsupported,
    should the bus go away under a working shortcut. A newer register() or unregister() makes the older
    conversation's reports void."""

    def __init__(
        self,
        parent: QObject | None = None,
        *,
        address: str | None = None,
        call_timeout: float = CALL_TIMEOUT_S,
        create_timeout: float = CREATE_TIMEOUT_S,
    ) -> None:
        super().__init__(parent=parent)
        self._address = address
        self._timeouts = {"call_timeout": call_timeout, "create_timeout": create_timeout}
        self._generation = 0
        self._client: PortalClient | None = None
        self._stopped: list[PortalClient] = []  # stopped, maybe still closing
        holder: list[PortalClient | None] = [None]  # not self: the conversation ends when this object is destroyed
        self._holder = holder
        self.destroyed.connect(lambda *_: holder[0] is not None and holder[0].stop())
        self._pending_sequence = ""
        self.result: ShortcutResult | None = None
        self._bridge = _Bridge()
        self._bridge.result.connect(self._settled, Qt.ConnectionType.QueuedConnection)
        self._bridge.activated.connect(self._pressed, Qt.ConnectionType.QueuedConnection)

    def register(self, sequence: str) -> ShortcutResult:
        self.unregister()
        keys = parse_keys(sequence)
        if isinstance(keys, ShortcutResult):
            return keys
        address = self._address or session_bus_address()
        if importlib.util.find_spec("jeepney") is None:  # looked up, not imported: register() stays quick
            address = None
        if address is None:
            self.result = unsupported(wayland_hint())
            return self.result
        generation = self._generation
        bridge = self._bridge
        self._pending_sequence = sequence
        self._client = PortalClient(
            address,
            sequence,
            portal_trigger(keys),
            QCoreApplication.translate(
                "QuickShortcut", "Quick translate: the selection or the clipboard in Qiao's popup"
            ),
            lambda result: bridge.result.emit(generation, result),
            lambda: bridge.activated.emit(generation),
            **self._timeouts,
        )
        self._client.start()
        self._holder[0] = self._client
        self.result = pending(sequence)
        return self.result

    def unregister(self) -> None:
        self._generation += 1
        self._stop_client()
        self.result = None
        super().unregister()

    def close(self, timeout: float = 2.0) -> bool:
        """unregister(), then wait (up to `timeout` in all) for the portal threads to close their connections:
        for an orderly exit, and for tests that take the bus away afterwards. True when all have ended."""
        self.unregister()
        deadline = time.monotonic() + timeout
        self._stopped = [c for c in self._stopped if not c.join(max(0.0, deadline - time.monotonic()))]
        return not self._stopped

    def _stop_client(self) -> None:
        if self._client is not None:
            self._client.stop()
            self._stopped = [c for c in self._stopped if c.join(0) is False] + [self._client]
            self._client = None

    def _settled(self, generation: int, result: ShortcutResult) -> None:
        if generation != self._generation:
            return
        self.result = result
        if result.ok:
            self.sequence = self._pending_sequence
        else:  # refused, or a registration that was working lost its bus: no shortcut now
            self.sequence = None
            self._stop_client()
        self.result_ready.emit(result)

    def _pressed(self, generation: int) -> None:
        if generation == self._generation and self.sequence:
            self.activated.emit()
