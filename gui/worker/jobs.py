"""What the scheduler and its job sources share: a job, and the source that hands them out.

Each source owns its queue (a latest-wins slot, a FIFO, a running document); the scheduler asks its sources in
priority order for the next job and runs it on the worker thread. Sources are called with the scheduler's lock
held (take, drop, and their own queueing methods), never while a job runs."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

Report = Callable[[], None]  # a signal owed to a caller, emitted once the scheduler's lock is released


@dataclass(eq=False)
class Job:
    """One unit of work run on the worker thread; while it runs the scheduler holds it, so that a newer request can
    stop it (`cancel`: the engine stops within one decoder step) or keep its answer back (`superseded`)."""

    id: int  # the request id its signals carry (0: a configuration job, which has none)
    channel: str  # "window", "popup", "review", "prepare", "api", "document" or "model"
    work: Callable[[Job], None]
    cancel: threading.Event = field(default_factory=threading.Event)
    superseded: bool = False  # a newer request replaced it: its result is not reported
    # (lock held) queue its request again, to run anew after a precision switch; False when a newer one waits
    restart: Callable[[], bool] | None = None

    def run(self) -> None:
        self.work(self)


class JobSource(Protocol):
    """One kind of work, with its own queue."""

    def take(self) -> Job | None:
        """(Lock held) the next job, out of the queue (or the head of a queue served step by step); None: none."""
        ...

    def drop(self) -> list[Report]:
        """(Lock held) forget everything waiting, the worker stops; what must still be told to the callers."""
        ...


def next_job(sources: tuple[JobSource, ...]) -> Job | None:
    """(Lock held) the first job of the first source that has one: the order of `sources` is the priority."""
    for source in sources:
        job = source.take()
        if job is not None:
            return job
    return None


R = TypeVar("R")


class LatestWins(Generic[R]):
    """A source with one waiting slot: a newer request replaces the waiting one (the user only wants the last)."""

    def __init__(self) -> None:
        self.waiting: R | None = None

    def put(self, request: R | None) -> None:
        self.waiting = request

    def put_back(self, request: R) -> bool:
        """Queue a running request again unless a newer one waits (a precision switch redoes it)."""
        if self.waiting is not None:
            return False
        self.waiting = request
        return True

    def take(self) -> Job | None:
        request, self.waiting = self.waiting, None
        return None if request is None else self.job(request)

    def drop(self) -> list[Report]:
        self.waiting = None
        return []

    def job(self, request: R) -> Job:
        """The job that serves `request`."""
        raise NotImplementedError
