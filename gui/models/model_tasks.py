"""Model management off the UI thread: list, verify, import, remove, read the catalogue, download.

`ModelTasks` lives on its own QThread (never the translation worker's, and it never touches the Translator). The
dialog starts one job at a time with `start(kind, *args)`; the job reports `progress(kind, done, total)` at most
about ten times a second, then `finished(kind, result)`, `cancelled(kind)` or `failed(kind, message)`. `cancel()`
sets the running job's `threading.Event` directly, so a download stops within one chunk; a job that returned
anyway (the cancel came after its last check) is reported finished, as it was done. After a job that changes
what is installed, the fresh list follows as `listed`.

`ModelStore` is the engine's model store seen from here; tests pass a fake with the same methods.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import QCoreApplication, QObject, QThread, Signal, Slot

PROGRESS_S = 0.1  # at most ten progress reports a second
OFFLINE = "offline"  # failed()'s message when the model server could not be reached (the dialog words it)
ALREADY = "already-installed: "  # failed()'s prefix, then the installed bundle's name (the dialog asks to replace)
MUTATING = frozenset({"import", "remove", "download"})
ProgressFn = Callable[[int, int], None]


class ModelStore(Protocol):
    """engine.store.installed, engine.store.catalogue and engine.store.download, as the Models dialog uses them."""

    def installed_models(self, explicit: str | None = None) -> list[Any]: ...
    def verify_installed(
        self, model: Any, cancel: threading.Event | None = None, progress: ProgressFn | None = None
    ) -> list[str]: ...
    def import_bundle(
        self,
        source: Path,
        *,
        progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
        replace: bool = False,
    ) -> Any: ...
    def remove_bundle(self, model: Any) -> None: ...
    def load_catalogue(self, location: str | None = None) -> list[Any]: ...
    def download_bundle(
        self,
        entry: Any,
        *,
        progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
        replace: bool = False,
    ) -> Any: ...


class EngineStore:
    """The real store: the engine's modules, imported on the task thread when first used."""

    def installed_models(self, explicit: str | None = None) -> list[Any]:
        from engine.store.installed import installed_models

        return installed_models(explicit)

    def verify_installed(
        self, model: Any, cancel: threading.Event | None = None, progress: ProgressFn | None = None
    ) -> list[str]:
        from engine.store.installed import verify_installed

        return verify_installed(model, cancel=cancel, progress=progress)

    def import_bundle(
        self,
        source: Path,
        *,
        progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
        replace: bool = False,
    ) -> Any:
        from engine.store.installed import import_bundle

        return import_bundle(source, progress=progress, cancel=cancel, replace=replace)

    def remove_bundle(self, model: Any) -> None:
        from engine.store.installed import remove_bundle

        remove_bundle(model)

    def load_catalogue(self, location: str | None = None) -> list[Any]:
        from engine.store.catalogue import catalogue_location, load_catalogue

        return load_catalogue(location or catalogue_location())  # QIAO_CATALOGUE_URL, else the default

    def download_bundle(
        self,
        entry: Any,
        *,
        progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
        replace: bool = False,
    ) -> Any:
        from engine.store.download import download_bundle

        return download_bundle(entry, progress=progress, cancel=cancel, replace=replace)


def _failure(exc: BaseException) -> str:
    """What `failed` carries: OFFLINE, ALREADY + the installed bundle's name for a bundle that is installed already
    (the dialog offers to replace it, naming that one: the archive or folder imported may be named anything), else
    the engine's message."""
    from engine.store.installed import AlreadyInstalled  # on the task thread, where the engine is loaded anyway

    if is_offline(exc):
        return OFFLINE
    message = str(exc) or type(exc).__name__
    if isinstance(exc, AlreadyInstalled):
        return ALREADY + (Path(exc.target).name or message)
    return message


def is_offline(exc: BaseException) -> bool:
    """Whether `exc` (or what caused it) means the server could not be reached, rather than a bad answer."""
    seen: BaseException | None = exc
    while seen is not None:
        if getattr(seen, "offline", False):
            return True
        if isinstance(seen, ConnectionError | TimeoutError):
            return True
        reason = getattr(seen, "reason", None)  # urllib.error.URLError wraps the socket error
        if isinstance(reason, OSError) and not hasattr(seen, "code"):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


class ModelTasks(QObject):
    """Runs one model-management job at a time on its thread; see the module docstring."""

    started = Signal(str)  # kind
    progress = Signal(str, int, int)  # kind, done, total (bytes or files; total 0 = unknown)
    finished = Signal(str, object)  # kind, result (list of models / catalogue entries, a model, problems, None)
    cancelled = Signal(str)
    failed = Signal(str, str)  # kind, the engine's message (or OFFLINE)
    listed = Signal(object)  # list of installed models, after "list" and after every job that changed them
    _start = Signal(str, object)

    def __init__(self, store: ModelStore | None = None, explicit: str | None = None) -> None:
        super().__init__()
        self.store: ModelStore = store or EngineStore()
        self.explicit = explicit
        self.threads_seen: set[int] = set()  # for tests: where the jobs ran
        self._cancel = threading.Event()
        self._busy = False
        self._lock = threading.Lock()
        self._start.connect(self._run)

    # ---- called from the UI thread -------------------------------------------------------------------------

    def start(self, kind: str, *args: Any) -> bool:
        """Queue a job ("list", "verify", "import", "remove", "catalogue", "download"); False while one runs."""
        with self._lock:
            if self._busy:
                return False
            self._busy = True
            self._cancel = threading.Event()
        self._start.emit(kind, args)
        return True

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def busy(self) -> bool:
        with self._lock:
            return self._busy

    # ---- on the task thread ----------------------------------------------------------------------------------

    @Slot(str, object)
    def _run(self, kind: str, args: tuple) -> None:
        self.threads_seen.add(threading.get_ident())
        cancel = self._cancel
        last = [0.0]

        def progress(done: int, total: int) -> None:
            now = time.monotonic()
            if now - last[0] >= PROGRESS_S or (total and done >= total):
                last[0] = now
                self.progress.emit(kind, int(done), int(total))

        self.started.emit(kind)
        try:
            result = self._job(kind, args, cancel, progress)
        except Exception as exc:  # every failure is reported; the thread and the dialog live on
            self._done()
            if cancel.is_set():
                self.cancelled.emit(kind)
            else:
                self.failed.emit(kind, _failure(exc))
            if kind in MUTATING:
                self._relist()
            return
        self._done()
        # A job that returned did its work: a cancel that came after its last check (the user's click as the bundle
        # moved in) changes nothing, and saying "cancelled" would hide an import or download that replaced a model
        # (the window is told to reload it on `finished`). The store's jobs raise when a cancel stops them.
        self.finished.emit(kind, result)
        if kind == "list":
            self.listed.emit(result)
        elif kind in MUTATING:
            self._relist()

    def _job(self, kind: str, args: tuple, cancel: threading.Event, progress: ProgressFn) -> Any:
        store = self.store
        if kind == "list":
            return list(store.installed_models(self.explicit))
        if kind == "verify":
            return list(store.verify_installed(args[0], cancel=cancel, progress=progress))
        if kind == "import":  # args: (path, replace)
            replace = bool(args[1]) if len(args) > 1 else False
            return store.import_bundle(Path(args[0]), progress=progress, cancel=cancel, replace=replace)
        if kind == "remove":
            return store.remove_bundle(args[0])
        if kind == "catalogue":
            return list(store.load_catalogue(*args))
        if kind == "download":  # args: (entry, replace)
            replace = bool(args[1]) if len(args) > 1 else False
            return store.download_bundle(args[0], progress=progress, cancel=cancel, replace=replace)
        raise ValueError(f"unknown model task {kind!r}")

    def _done(self) -> None:
        with self._lock:
            self._busy = False

    def _relist(self) -> None:
        try:
            models = list(self.store.installed_models(self.explicit))
        except Exception as exc:
            self.failed.emit("list", str(exc))
            return
        self.listed.emit(models)


class ModelTaskThread:
    """A `ModelTasks` on its own started QThread, and a clean way to stop both."""

    def __init__(self, store: ModelStore | None = None, explicit: str | None = None) -> None:
        self.thread = QThread()
        self.thread.setObjectName("qiao-models")
        self.tasks = ModelTasks(store, explicit)
        self.tasks.moveToThread(self.thread)
        self.thread.start()

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """Cancel the running job and stop the thread; True if it ended within the timeout."""
        self.tasks.cancel()
        self.thread.quit()
        ended = self.thread.wait(timeout_ms)
        QCoreApplication.processEvents()  # deliver the last reports while the dialog still listens
        return ended
