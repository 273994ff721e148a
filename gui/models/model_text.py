"""How a model is described to a person when choosing one: the scripts it writes, published quality, size, measured
speed and licence.

Shared by the Models dialog and the window's model indicator (gui.window.model_control), in the "ModelsDialog"
translation context. Each takes an installed model or a catalogue entry (engine.store.installed.InstalledModel,
engine.store.catalogue.CatalogueEntry: `quality` and `speed` may be None, and tests' fakes may lack them).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QCoreApplication

from gui import pair_text

MB = 1_000_000
FAMILIES = {"marian": "Marian (opus-mt)", "bergamot": "Bergamot (Firefox)"}


def megabytes(size: int) -> str:
    return QCoreApplication.translate("ModelsDialog", "{n} MB").format(n=f"{size / MB:.1f}")


def family_text(model: Any) -> str:
    family = getattr(model, "family", "") or ""
    return FAMILIES.get(family, family) or QCoreApplication.translate("ModelsDialog", "Unknown")


def quality_text(model: Any) -> str:
    """ "COMET-22 86.31", or that none is published."""
    quality = getattr(model, "quality", None)
    return quality.short() if quality is not None else QCoreApplication.translate("ModelsDialog", "Not published")


def speed_text(model: Any) -> str:
    """ "410 tokens/s": the measured target tokens a second, or that none was measured."""
    speed = getattr(model, "speed", None)
    if speed is None:
        return QCoreApplication.translate("ModelsDialog", "Not measured")
    return QCoreApplication.translate("ModelsDialog", "{n} tokens/s").format(n=f"{speed.tokens_per_s:,.0f}")


def scripts_text(model: Any) -> str:
    """What an installed model writes: "Simplified, Traditional", "Simplified only"; the language for a target
    without scripts ("English": a zh→en row's Writes cell was blank); "" for a model whose languages are unknown (a
    catalogue entry, a broken bundle)."""
    pair = getattr(model, "pair", None)
    if pair is None:
        return ""
    return pair_text.scripts_text(pair) or pair_text.language_name(pair.target)


def summary(model: Any) -> str:
    """One line: scripts written · quality · size · speed · licence."""
    size = getattr(model, "size_bytes", None) or getattr(model, "size", 0)
    parts = [
        scripts_text(model),
        quality_text(model),
        megabytes(size),
        speed_text(model),
        str(getattr(model, "license", "") or ""),
    ]
    return " · ".join(p for p in parts if p)


def details(model: Any) -> str:
    """Several lines for a tooltip: family, the scripts it writes, quality with its test set and source, speed with
    where it was measured, size and licence."""
    lines = [QCoreApplication.translate("ModelsDialog", "Family: {family}").format(family=family_text(model))]
    scripts = scripts_text(model)
    if scripts:
        lines.append(QCoreApplication.translate("ModelsDialog", "Writes: {scripts}").format(scripts=scripts))
    quality = getattr(model, "quality", None)
    if quality is not None:
        lines.append(
            QCoreApplication.translate("ModelsDialog", "Quality: {score} on {test_set} ({source})").format(
                score=quality.short(), test_set=quality.test_set, source=quality.source
            )
        )
    else:
        lines.append(QCoreApplication.translate("ModelsDialog", "Quality: not published"))
    speed = getattr(model, "speed", None)
    if speed is not None:
        lines.append(
            QCoreApplication.translate(
                "ModelsDialog", "Speed: {n} tokens/s ({precision}, {threads} threads, {machine})"
            ).format(
                n=f"{speed.tokens_per_s:,.0f}",
                precision=speed.precision.upper(),
                threads=speed.threads,
                machine=speed.machine,
            )
        )
    size = getattr(model, "size_bytes", None) or getattr(model, "size", 0)
    lines.append(QCoreApplication.translate("ModelsDialog", "Size: {size}").format(size=megabytes(size)))
    lines.append(
        QCoreApplication.translate("ModelsDialog", "Licence: {licence}").format(
            licence=getattr(model, "license", "") or QCoreApplication.translate("ModelsDialog", "Unknown")
        )
    )
    return "\n".join(lines)
