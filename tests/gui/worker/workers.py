"""Real WorkerThreads over fake engines, started per test and shut down after it (the worker tests' fixture)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from gui.worker.scheduler import WorkerThread
from tests.gui.fakes import fixed_locator


@contextmanager
def started_workers(tmp_path, qtbot, default_factory: Callable, recorder: Callable) -> Iterator[Callable]:
    """`make(factory=None, loaded=True)` -> (thread, recorder, factory): a worker over `factory` (default
    `default_factory()`), its signals recorded by `recorder(worker)`, its model loaded unless `loaded` is False.
    Every worker made is shut down, and must stop, when the block ends."""
    made: list[WorkerThread] = []

    def make(factory=None, loaded=True):
        factory = factory or default_factory()
        wt = WorkerThread(factory, fixed_locator(tmp_path), lambda pair=None: tmp_path, factory.verify)
        made.append(wt)
        rec = recorder(wt.worker)
        if loaded:
            wt.worker.load(None, "int8", None)
            qtbot.waitUntil(lambda: bool(rec.of("model_ready")), timeout=5000)
        return wt, rec, factory

    yield make
    for wt in made:
        assert wt.shutdown(5000)
