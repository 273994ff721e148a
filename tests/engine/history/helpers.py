"""Entries for the history tests."""

from __future__ import annotations

from engine.history.records import HistoryEntry, SentenceRecord


def entry(
    source: str = "I like the bridge. Hello world.", output: str = "我喜欢这座桥。你好世界。", **kw
) -> HistoryEntry:
    """An en→zh entry; its sentences are the source and output split after each full stop."""
    if "sentences" not in kw:
        sources = [s.strip() + "." for s in source.split(".") if s.strip()]
        outputs = [s + "。" for s in output.split("。") if s]
        kw["sentences"] = tuple(SentenceRecord(s, o) for s, o in zip(sources, outputs, strict=False))
    kw.setdefault("pair", "en-zh")
    kw.setdefault("model", "Helsinki-NLP/opus-mt-en-zh")
    kw.setdefault("precision", "int8")
    return HistoryEntry(source=source, output=output, **kw)
