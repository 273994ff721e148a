"""What the API refuses, each with the HTTP status it answers with and a message a person (or a tool) can act on."""

from __future__ import annotations

from engine.errors import QiaoError


class ApiError(QiaoError):
    """A refusal the client caused or can retry; the app answers `{"error": message}` with `status`."""

    status = 400

    def __init__(self, message: str, status: int | None = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        if status is not None:
            self.status = status
        self.headers = dict(headers or {})


class UnsupportedLanguage(ApiError):
    """A language or pair with no installed model (LibreTranslate's wording: "xx is not supported")."""


class Busy(ApiError):
    """The queue is full, or a request waited longer than its timeout: try again shortly."""

    status = 503

    def __init__(self, message: str, retry_after_s: int = 2) -> None:
        super().__init__(message, headers={"Retry-After": str(retry_after_s)})


class TimedOut(ApiError):
    """A request that was being translated ran past its time limit; the engine was told to stop (504: retrying
    the same request would only time out again)."""

    status = 504


class ClientGone(ApiError):
    """The client closed its connection before its answer was ready; its request was stopped (logged as 499, nginx's
    status for it: nobody reads the answer)."""

    status = 499
