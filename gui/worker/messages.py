"""The worker's words on its signals: what a failure message says, for the window (or the API) to word."""

from __future__ import annotations

NO_MODEL = "no-model"  # translation_failed's message when no model is loaded (the window words it)
INTERNAL = "internal-error: "  # prefix of translation_failed's message for an unexpected exception (raw detail after)
STOPPED = "stopped"  # ordered_failed's message for a request dropped because the worker stopped
CANCELLED = "cancelled"  # ordered_failed's (and review_failed's) message for a request cancelled by its caller
DOC_DIRECTION = "direction-changed: "  # document_failed's message prefix; the document's pair key follows
# document_failed's message prefix for a document in another language: "missing:zh-en" (the pair that would read it
# is not installed) or "unsupported:ja" (a language Qiao does not translate)
DOC_LANGUAGE = "document-language: "
FRAME_S = 1 / 60  # coalesce streamed text to about one UI update per frame


def internal(exc: BaseException) -> str:
    """The message of a bug (not the user's doing): the window words it and keeps the detail aside."""
    return f"{INTERNAL}{type(exc).__name__}: {exc}"
