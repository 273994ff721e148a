"""The Documents panel's words: formats and states as people call them, the time left, why a file failed, and where
a result went, in the interface language (context "DocumentsPanel", whichever module words it).
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from engine.documents.job import DocumentResult
from gui import pair_text
from gui.documents.document_queue import Entry, Problem, State
from gui.worker.messages import DOC_DIRECTION, DOC_LANGUAGE, INTERNAL, NO_MODEL

CONTEXT = "DocumentsPanel"

# What people call each format (the registry's labels are English only)
FORMAT_LABELS = {
    "txt": QT_TRANSLATE_NOOP("DocumentsPanel", "Plain text"),
    "markdown": QT_TRANSLATE_NOOP("DocumentsPanel", "Markdown"),
    "html": QT_TRANSLATE_NOOP("DocumentsPanel", "Web page (HTML)"),
    "srt": QT_TRANSLATE_NOOP("DocumentsPanel", "Subtitles (SRT)"),
    "vtt": QT_TRANSLATE_NOOP("DocumentsPanel", "Subtitles (WebVTT)"),
    "docx": QT_TRANSLATE_NOOP("DocumentsPanel", "Word document"),
    "odt": QT_TRANSLATE_NOOP("DocumentsPanel", "OpenDocument text"),
    "pptx": QT_TRANSLATE_NOOP("DocumentsPanel", "PowerPoint presentation"),
    "epub": QT_TRANSLATE_NOOP("DocumentsPanel", "EPUB e-book"),
}

STATE_LABELS = {
    State.QUEUED: QT_TRANSLATE_NOOP("DocumentsPanel", "Waiting"),
    State.TRANSLATING: QT_TRANSLATE_NOOP("DocumentsPanel", "Translating"),
    State.CANCELLING: QT_TRANSLATE_NOOP("DocumentsPanel", "Stopping…"),
    State.DONE: QT_TRANSLATE_NOOP("DocumentsPanel", "Done"),
    State.CANCELLED: QT_TRANSLATE_NOOP("DocumentsPanel", "Cancelled"),
    State.FAILED: QT_TRANSLATE_NOOP("DocumentsPanel", "Failed"),
}


def _tr(text: str) -> str:
    """A string marked with QT_TRANSLATE_NOOP above, in the interface language."""
    return QCoreApplication.translate(CONTEXT, text)


def state_label(state: State) -> str:
    """ "Waiting", "Translating", … in the interface language."""
    return _tr(STATE_LABELS[state])


def format_label(name: str, source: Path) -> str:
    """ "Word document"; for a file Qiao does not read, its extension ("PDF")."""
    if name in FORMAT_LABELS:
        return _tr(FORMAT_LABELS[name])
    return source.suffix.lstrip(".").upper() or QCoreApplication.translate("DocumentsPanel", "Unknown")


def time_left(seconds: float | None) -> str:
    """ "about 3 min left"; rounded up, never "0 s"."""
    if seconds is None:
        return QCoreApplication.translate("DocumentsPanel", "Estimating the time left…")
    if seconds < 60:
        return QCoreApplication.translate("DocumentsPanel", "Less than a minute left")
    minutes = int(seconds // 60 + (1 if seconds % 60 else 0))
    if minutes < 60:
        return QCoreApplication.translate("DocumentsPanel", "About {n} min left").format(n=minutes)
    return QCoreApplication.translate("DocumentsPanel", "About {h} h {m} min left").format(
        h=minutes // 60, m=minutes % 60
    )


def took(seconds: float) -> str:
    if seconds < 60:
        return QCoreApplication.translate("DocumentsPanel", "Took {n} s").format(n=max(1, round(seconds)))
    return QCoreApplication.translate("DocumentsPanel", "Took {n} min").format(n=round(seconds / 60))


def reason(entry: Entry, output_exists: bool = False) -> str:
    """Why a file failed, for a person, in the interface language where Qiao knows the cause. `output_exists`: a
    result of the same name is there and replacing it was not asked for (the job refuses to write over it)."""
    if entry.problem is Problem.MISSING:
        return QCoreApplication.translate("DocumentsPanel", "The file is no longer there.")
    if entry.problem is Problem.FOLDER:
        return QCoreApplication.translate("DocumentsPanel", "This is a folder: add the documents in it instead.")
    if entry.problem is Problem.UNSUPPORTED:
        if entry.source.suffix.lower() == ".pdf":
            return QCoreApplication.translate(
                "DocumentsPanel",
                "PDF is not supported: its layout cannot be rebuilt in another language. Save or export it as a "
                "Word document (.docx) or as text first, then translate that.",
            )
        return (
            QCoreApplication.translate("DocumentsPanel", "Qiao does not translate this kind of file.")
            + " "
            + entry.reason
        )
    message = entry.reason
    if output_exists and not entry.overwrite and entry.output is not None:
        return QCoreApplication.translate(
            "DocumentsPanel",
            "A translation of this file is already there ({name}). Replace it, or choose another name or folder "
            "below and press Try again.",
        ).format(name=entry.output.name)
    if message == NO_MODEL:
        return QCoreApplication.translate("DocumentsPanel", "No translation model is loaded.")
    if message.startswith(DOC_DIRECTION):
        return QCoreApplication.translate(
            "DocumentsPanel",
            "Stopped because the translation direction changed. Switch back to {pair} and press Try again to go on "
            "from where it stopped.",
        ).format(pair=pair_text.arrow(message.removeprefix(DOC_DIRECTION)))
    if message.startswith(DOC_LANGUAGE):
        return language_refusal(message.removeprefix(DOC_LANGUAGE))
    if message.startswith(INTERNAL):
        print(f"qiao: document failed: {message.removeprefix(INTERNAL)}", file=sys.stderr)
        return QCoreApplication.translate(
            "DocumentsPanel", "An unexpected error stopped it. Try again; if it keeps failing, the file may be damaged."
        )
    return message  # the engine's own wording (DocumentError), which names the problem and what to do


_UNSUPPORTED = {
    "ja": QT_TRANSLATE_NOOP("DocumentsPanel", "Japanese"),
    "ko": QT_TRANSLATE_NOOP("DocumentsPanel", "Korean"),
}


def language_refusal(detail: str) -> str:
    """Why a document in another language was not translated (the worker's DOC_LANGUAGE detail: "missing:zh-en" or
    "unsupported:ja")."""
    kind, _, what = detail.partition(":")
    if kind == "missing":
        return QCoreApplication.translate(
            "DocumentsPanel",
            "This document is in {language}, and no {pair} model is installed to translate it. Get opus-mt-{key} in "
            "File → Models…, then press Try again.",
        ).format(language=pair_text.code_name(what.partition("-")[0]), pair=pair_text.arrow(what), key=what)
    name = QCoreApplication.translate("DocumentsPanel", _UNSUPPORTED.get(what, what))
    return QCoreApplication.translate(
        "DocumentsPanel", "This document looks {language}; Qiao translates only English and Chinese."
    ).format(language=name)


def done_detail(output: Path, result: DocumentResult | None) -> str:
    """Where the result went, and what a person should know about it (parts left as they were, a resumed run)."""
    parts = [QCoreApplication.translate("DocumentsPanel", "Saved as {name}").format(name=output.name)]
    failed = getattr(result, "failed_units", 0) or 0  # the runner's count of units the engine could not translate
    if failed:
        parts.append(
            QCoreApplication.translate(
                "DocumentsPanel", "{n} parts could not be translated and were left as they were"
            ).format(n=failed)
        )
    resumed = result.resumed if result is not None else 0
    if resumed:
        parts.append(
            QCoreApplication.translate(
                "DocumentsPanel", "went on from where it stopped ({n} parts done before)"
            ).format(n=resumed)
        )
    return " · ".join(parts)
