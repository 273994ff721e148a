"""Cells of the CSV/TSV files Qiao exports, made safe to open in a spreadsheet (CSV formula injection).

A spreadsheet runs a cell that begins with `=`, `+`, `-` or `@` as a formula (a tab or a carriage return in front
of one is skipped by some of them), so a translated text such as `=HYPERLINK("http://…")` would become a live link
or a command. The standard defence (OWASP, "CSV Injection") is to put a single quote in front of such a cell: the
spreadsheet then shows it as text. Qiao's JSON exports are never changed.

So that a file Qiao wrote can be read back exactly (the glossary's import), a cell that already begins with quotes
followed by one of those characters (`'=x`) gets one quote more too; `restore` takes exactly one quote off a cell
that begins with one or more quotes and then one of those characters. Only files Qiao marks as written this way
are restored (engine.glossary_io's header comment), so a quote a person typed in their own file stays.
"""

from __future__ import annotations

TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def _quoted_trigger(cell: str) -> bool:
    """Whether `cell` is quotes (at least one) and then a trigger character."""
    rest = cell.lstrip("'")
    return len(rest) < len(cell) and rest.startswith(TRIGGERS)


def neutralise(cell: object) -> object:
    """`cell` as a spreadsheet shows it as text: a string starting with a trigger (or quotes then one) gets a
    leading `'`; anything else (numbers, None, ordinary text) is returned as it is."""
    if isinstance(cell, str) and (cell.startswith(TRIGGERS) or _quoted_trigger(cell)):
        return "'" + cell
    return cell


def restore(cell: str) -> str:
    """The text `neutralise` was given: one leading quote off a cell of quotes and then a trigger character."""
    return cell[1:] if _quoted_trigger(cell) else cell
