"""Wording of the status bar, kept apart from the widgets so it is easy to test and to translate."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from engine.results import ORIGIN_CACHE, ORIGIN_MEMORY, Translation


def precision_label(precision: str) -> str:
    return precision.upper()


def duration(ms: float) -> str:
    """412 ms, 1.42 s, 12.3 s: milliseconds only while they are the natural unit."""
    if ms < 1000:
        return QCoreApplication.translate("Status", "{n} ms").format(n=round(ms))
    if ms < 10_000:
        return QCoreApplication.translate("Status", "{n} s").format(n=f"{ms / 1000:.2f}")
    return QCoreApplication.translate("Status", "{n} s").format(n=f"{ms / 1000:.1f}")


def translation_summary(result: Translation) -> str:
    """After a request: precision · total latency · first-token latency · tokens · tokens/s (of the sentences
    decoded; a request that decoded none says its text was reused instead of "0 tokens/s")."""
    stats = result.stats
    if stats is None:
        return QCoreApplication.translate("Status", "Done.")
    parts = [
        precision_label(stats.precision),
        QCoreApplication.translate("Status", "total {t}").format(t=duration(stats.total_ms)),
    ]
    if stats.first_token_ms is not None:
        parts.append(QCoreApplication.translate("Status", "first token {t}").format(t=duration(stats.first_token_ms)))
    tokens = stats.target_tokens
    parts.append(
        (
            QCoreApplication.translate("Status", "{n} token")
            if tokens == 1
            else QCoreApplication.translate("Status", "{n} tokens")
        ).format(n=tokens)
    )
    total = len(result.sentences) or stats.sentences
    reused = _reused(result)
    if stats.tokens_per_s > 0:
        parts.append(QCoreApplication.translate("Status", "{n} tokens/s").format(n=f"{stats.tokens_per_s:.0f}"))
        if reused:  # the speed is of the decoded sentences only
            parts.append(
                QCoreApplication.translate("Status", "{done} of {total} sentences reused").format(
                    done=reused, total=total
                )
            )
    elif total:  # nothing was decoded: every sentence came from the cache or the user's kept versions
        parts.append(QCoreApplication.translate("Status", "reused, nothing decoded"))
    return " · ".join(parts)


def _reused(result: Translation) -> int:
    """Sentences not decoded by this request: from the sentence cache or the translation memory."""
    if result.sentences:
        return sum(1 for s in result.sentences if s.origin in (ORIGIN_CACHE, ORIGIN_MEMORY))
    return result.stats.sentences_reused if result.stats is not None else 0


def cancelled_summary(result: Translation, done: int, total: int) -> str:
    if total > 1:
        head = QCoreApplication.translate(
            "Status", "Cancelled after {done} of {total} sentences; the part already translated is kept."
        )
        head = head.format(done=done, total=total)
    else:
        head = QCoreApplication.translate("Status", "Cancelled; the part already translated is kept.")
    return head if result.stats is None else f"{head} ({translation_summary(result)})"


def loading(kind: str, precision: str) -> str:
    if kind == "switch":
        return QCoreApplication.translate("Status", "Switching to {p}…").format(p=precision_label(precision))
    return QCoreApplication.translate("Status", "Loading the translation model ({p})…").format(
        p=precision_label(precision)
    )


def loaded(model_id: str, precision: str, seconds: float, switched: bool) -> str:
    if switched:
        return QCoreApplication.translate("Status", "Switched to {p} in {t}.").format(
            p=precision_label(precision), t=duration(seconds * 1000)
        )
    return QCoreApplication.translate("Status", "Model {m} ({p}) loaded in {t}.").format(
        m=model_id or "opus-mt-en-zh", p=precision_label(precision), t=duration(seconds * 1000)
    )
