"""The spans of a source sentence that are never translated: placeholders, URLs, e-mail addresses and `code`.

Shared by the glossary's do-not-translate protection (engine.pipeline.glossary_match), the guards' check that such a
span survived (engine.pipeline.guards) and the verbatim rule for text with nothing to translate (engine.text.verbatim).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Placeholders of the common formatting mini-languages: ${x}, {{x}}, {name} / {0} / {} / {x:>8}, printf's %s / %1$d /
# %(name)s / %.2f, Qt's %1. "50% off" is not one (no space flag, a conversion letter must follow at once).
_PLACEHOLDER = re.compile(
    r"\$\{[^{}\s]+\}"
    r"|\{\{[^{}]+\}\}"
    r"|\{(?:[A-Za-z_][\w.\[\]]*|\d*)(?:![rsa])?(?::[^{}\s]*)?\}"
    r"|%(?:\d+\$)?(?:\([A-Za-z_]\w*\))?[-+#0]*(?:\d+|\*)?(?:\.\d+)?(?:hh|h|ll|l|L|z|j|t)?[diouxXeEfFgGcsaprb@]"
    r"|(?<![\w%])%\d+\b"
)
_URL = re.compile(r"(?:(?:https?|ftp)://|www\.)[^\s<>\"'`，。、；：！？（）【】《》「」]+", re.IGNORECASE)
_EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
_CODE = re.compile(r"`([^`\n]+)`")
_TRAILING = ".,;:!?'\")]}"


@dataclass(frozen=True)
class Span:
    """A piece of the source kept or replaced: where it is, what the output must contain, and what to call it."""

    start: int
    end: int
    target: str
    label: str


def protected_spans(source: str) -> list[str]:
    """Placeholders, URLs, e-mail addresses and `code` of `source` (the code without its backticks), in order,
    each once; a placeholder inside a URL is part of the URL."""
    seen: list[str] = []
    for span in protected_matches(source):
        if span.target not in seen:
            seen.append(span.target)
    return seen


def protected_matches(source: str) -> list[Span]:
    """The spans of `protected_spans` with their places in `source`."""
    found: list[Span] = []
    for m in _CODE.finditer(source):
        code = m.group(1).strip()
        if code:
            found.append(Span(m.start(), m.end(), code, code))
    for m in _URL.finditer(source):
        text = _trim_url(m.group())
        if len(text) > 4:
            found.append(Span(m.start(), m.start() + len(text), text, text))
    for m in _EMAIL.finditer(source):
        found.append(Span(m.start(), m.end(), m.group(), m.group()))
    for m in _PLACEHOLDER.finditer(source):
        found.append(Span(m.start(), m.end(), m.group(), m.group()))
    return longest_first(found)


def _trim_url(text: str) -> str:
    """A URL without the sentence punctuation after it; a closing bracket stays when the URL opened one."""
    while text and text[-1] in _TRAILING:
        if text[-1] == ")" and text.count("(") >= text.count(")"):
            break
        text = text[:-1]
    return text


def longest_first(spans: list[Span]) -> list[Span]:
    """Non-overlapping spans, the longest winning an overlap (then the earliest), returned in source order."""
    chosen: list[Span] = []
    for span in sorted(spans, key=lambda s: (-(s.end - s.start), s.start)):
        if all(span.end <= c.start or span.start >= c.end for c in chosen):
            chosen.append(span)
    return sorted(chosen, key=lambda s: s.start)
