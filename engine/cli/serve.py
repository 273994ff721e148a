"""`qiao serve`: the local translation API (LibreTranslate's, plus Qiao's streaming endpoint), headless.

It prints the URL and serves until Ctrl+C (or SIGTERM), which stop it cleanly with exit status 0: stopping is the
only way a server ends, not a failure or an unfinished job. A refused address or a port in use is one line on
stderr and exit status 1. Requests are logged to stderr without their text unless --log-content is given.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import signal
import sys
import threading
from pathlib import Path

from engine.api import guard
from engine.api.keys import read_key
from engine.cli.io import say
from engine.config import EngineConfig
from engine.errors import BundleError, ModelNotFoundError

REQUEST_TIMEOUT_S = 60.0  # engine.api.app.REQUEST_TIMEOUT_S (not imported: the server's modules load only to serve)


def port_number(value: str) -> int:
    """--port: 1 … 65535, or 0 for any free port (the URL printed says which)."""
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {value!r}") from None
    if not 0 <= n <= 65535:
        raise argparse.ArgumentTypeError(f"{n} is out of range: use 1 to 65535 (or 0 for any free port)")
    return n


def seconds(value: str) -> float:
    """--request-timeout: a number of seconds, 1 … 3600."""
    try:
        n = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {value!r}") from None
    if not 1 <= n <= 3600:
        raise argparse.ArgumentTypeError(f"{value} is out of range: use 1 to 3600 seconds")
    return n


def web_origin(value: str) -> str:
    """--allow-origin: one exact web origin, scheme://host[:port]; never "*" or "null" (any page at all)."""
    text = value.strip().rstrip("/")
    scheme, sep, rest = text.partition("://")
    if text in ("*", "null") or not sep or scheme.lower() not in ("http", "https") or not rest or "/" in rest:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not one web origin such as https://example.org or http://localhost:3000"
        )
    return text


def add_serve(sub, add_model_arg, direction, thread_count, precisions, default_precision) -> None:
    """The `serve` sub-command's parser (engine.cli.main passes its shared argument types)."""
    sv = sub.add_parser(
        "serve",
        help="run the local translation API (LibreTranslate-compatible) on 127.0.0.1",
        description="Serve Qiao's translator over HTTP on this machine only: the LibreTranslate API (/translate, "
        "/languages, /detect, /translate_file, /frontend/settings) and /qiao/stream (server-sent events). Prints "
        "the URL; Ctrl+C stops it (exit status 0). Requests from web pages (an Origin header) are refused unless "
        "allowed with --allow-origin; tools without an Origin and browser extensions are served.",
    )
    sv.add_argument("--host", default=guard.DEFAULT_HOST, help="address to listen on (default 127.0.0.1)")
    sv.add_argument("--port", type=port_number, default=guard.DEFAULT_PORT, help=f"port (default {guard.DEFAULT_PORT})")
    sv.add_argument("--api-key-file", type=Path, metavar="FILE", help="require the key this file holds")
    sv.add_argument(
        "--allow-origin",
        type=web_origin,
        action="append",
        default=[],
        metavar="ORIGIN",
        help="serve requests from this web page origin too, e.g. https://example.org (repeatable)",
    )
    sv.add_argument(
        "--allow-remote", action="store_true", help="allow --host to be an address other machines can reach"
    )
    sv.add_argument("--log-content", action="store_true", help="log the text of requests (off: only their size)")
    sv.add_argument(
        "--request-timeout",
        type=seconds,
        default=REQUEST_TIMEOUT_S,
        metavar="SECONDS",
        help=f"time limit for one request, waiting included; past it the engine stops and the answer is 504 "
        f"(default {REQUEST_TIMEOUT_S:g})",
    )
    add_model_arg(sv)
    sv.add_argument("--direction", type=direction, metavar="PAIR", help="pair to load first, e.g. zh-en")
    sv.add_argument("--precision", choices=precisions, default=default_precision)
    sv.add_argument("--threads", type=thread_count, help="intra-op threads, 1 … CPUs (default or 0: automatic)")


def serve_command(args: argparse.Namespace) -> int:
    """Run the server until Ctrl+C / SIGTERM (0); 1 when it cannot start."""
    # The server's modules (waitress, the body readers' email parser: ~35 ms) load only when serving, not each
    # time `qiao`'s parser is built.
    from engine.api.app import ApiApp
    from engine.api.server import check_bind, make_server
    from engine.api.service import EngineService

    host = check_bind(args.host, args.allow_remote)
    key = None
    if args.api_key_file is not None:
        key, warning = read_key(args.api_key_file)
        if warning:
            say(f"qiao: warning: {warning}")
    model = getattr(args, "model", None)
    service = EngineService(model, EngineConfig(precision=args.precision, threads=args.threads or None).validate())
    try:
        pairs = [p.key for p in service.languages()]
        if not pairs:
            from engine.store.locate import bundle_search_paths

            _raise_damaged(model, args.direction)
            raise ModelNotFoundError("no model bundle found", [str(p) for p in bundle_search_paths(model)])
        first = args.direction or ("en-zh" if "en-zh" in pairs else pairs[0])
        if first not in pairs:
            raise ModelNotFoundError(f"no {first} model installed (installed: {', '.join(pairs)})", pair=first)
        service.preload(first, timeout=600)  # a broken bundle is said now, and the first request is fast
        access = guard.Access(host=args.host, port=args.port, api_key=key, allow_origins=tuple(args.allow_origin))
        app = ApiApp(service, access, log_content=args.log_content, timeout_s=args.request_timeout)
        server = make_server(app, host, args.port)
        port = int(server.effective_port)
        app.access = dataclasses.replace(access, port=port)  # --port 0: the port the system chose
        return _run(server, host, port, pairs, key is not None)
    finally:
        service.close()


def _raise_damaged(model: str | None, direction: str | None) -> None:
    """No usable model, but an installed bundle that fails its checks (a damaged manifest.json, a missing file):
    that bundle and what is wrong with it, as a BundleError (the CLI adds how to repair it, as `qiao translate`
    does), rather than "no model bundle found". Returns when no bundle is installed at all."""
    from engine.store.installed import installed_models

    broken = [m for m in installed_models(model) if m.problem is not None]
    for fits in (lambda m: m.pair_key == direction, lambda m: m.pair_key is None, lambda m: True):
        named = [m for m in broken if direction is None or fits(m)]
        if named:
            raise BundleError(str(named[0].path), [named[0].problem or "it cannot be used"])


def _run(server, host: str, port: int, pairs: list[str], keyed: bool) -> int:
    from engine.api.server import bound_address

    _log_to_stderr()
    shown = f"[{host}]" if ":" in host else host
    bound, _ = bound_address(server)
    print(f"Qiao's translation API: http://{shown}:{port}/ (LibreTranslate API; Ctrl+C stops it)", flush=True)
    note = ", API key required" if keyed else ""
    say(f"qiao: listening on {bound}:{port}, models: {', '.join(pairs)}{note}")
    _stop_once()
    try:
        server.run()  # returns on Ctrl+C: waitress catches the KeyboardInterrupt and closes its threads
    except KeyboardInterrupt:  # raised again by waitress, or one that arrived before its loop
        pass
    finally:
        _ignore_interrupts()
        # A second Ctrl+C can cut waitress's own wait for its request threads short: wait again, or one still
        # finishing a request writes to the socket trigger that close() has just shut (EBADF traceback).
        server.task_dispatcher.shutdown(cancel_pending=True, timeout=10)
        server.close()
    say("qiao: stopped")
    return 0


def _ignore_interrupts() -> None:
    """From the first Ctrl+C / SIGTERM on, more of them are ignored: the server is already stopping, and one
    arriving while the engine is released (or the interpreter finalises) would end it with a traceback."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if hasattr(signal, "SIGTERM"):
            signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _stop_once() -> None:
    """Ctrl+C and SIGTERM (a service manager, `kill`) stop the server, once: the handler ignores both before it
    raises, so a second one arriving at once cannot interrupt the stop (with Python's own handler, a second Ctrl+C
    that came before `_ignore_interrupts` ran ended the process with status 130). They stay ignored afterwards
    (`_ignore_interrupts`)."""
    if threading.current_thread() is not threading.main_thread():
        return

    def handler(signum, frame) -> None:
        _ignore_interrupts()
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, handler)
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, handler)


def _log_to_stderr() -> None:
    # Requests waiting for a waitress thread are expected (they then wait in the engine's FIFO queue): waitress's
    # "Task queue depth is N" warning, once per queued request under load, would flood the terminal.
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)
    logger = logging.getLogger("qiao.api")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("qiao serve: %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False


__all__ = ["add_serve", "serve_command"]
