"""The subset of YAML Marian writes into `special:model.yml` (yaml-cpp's block style): one `key: scalar` per line,
block lists (`key:` then indented `- item` lines), flow lists (`[a, b]`, `[]`), quoted or plain scalars, comments.

Written here so reading a model needs no YAML library; anything outside the subset (nested maps, multi-line
strings, anchors) is refused, since Marian never writes it into a model."""

from __future__ import annotations

import json
import re

Scalar = str | int | float | bool | None
Value = Scalar | list[Scalar]

_INT = re.compile(r"[-+]?[0-9]+")
_FLOAT = re.compile(r"[-+]?([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)([eE][-+]?[0-9]+)?")


class YamlSubsetError(ValueError):
    """The text is not in the YAML subset Marian writes."""


def _strip_comment(line: str) -> str:
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip()
    return line.rstrip()


def scalar(text: str) -> Scalar:
    """One YAML 1.2 core-schema scalar (what yaml-cpp and PyYAML agree on for Marian's values)."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return str(json.loads(text))
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    if text in ("", "~", "null", "Null", "NULL"):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    if text[0] in "[{&*!|>%@`":
        raise YamlSubsetError(f"unsupported YAML value: {text!r}")
    return text


def _flow_list(text: str) -> list[Scalar]:
    inner = text.strip()[1:-1].strip()
    if not inner:
        return []
    if "[" in inner or "{" in inner:
        raise YamlSubsetError(f"nested flow collections are not supported: {text!r}")
    items, current, quote = [], "", ""
    for ch in inner:
        if quote:
            current += ch
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
            current += ch
        elif ch == ",":
            items.append(current)
            current = ""
        else:
            current += ch
    items.append(current)
    return [scalar(item) for item in items]


def _value(text: str) -> Value:
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        return _flow_list(text)
    return scalar(text)


def loads(text: str) -> dict[str, Value]:
    """Parse Marian's model.yml into a flat dict (lists stay lists)."""
    out: dict[str, Value] = {}
    pending: str | None = None  # a key whose value is an indented block below it
    filled: set[str] = set()  # keys whose block had at least one line (a bare `key:` alone is null)
    for number, raw in enumerate(text.splitlines(), 1):
        line = _strip_comment(raw)
        if not line.strip() or line.strip() in ("---", "..."):
            continue
        indented = line[0] in " \t"
        body = line.strip()
        if indented or body.startswith("- "):
            if pending is None:
                raise YamlSubsetError(f"line {number}: indented value without a key: {raw!r}")
            if body == "-" or body.startswith("- "):
                current = out[pending]
                if not isinstance(current, list):
                    raise YamlSubsetError(f"line {number}: list item after a scalar value: {raw!r}")
                current.append(scalar(body[1:]))
                filled.add(pending)
            elif body.startswith("["):
                if out[pending] != []:
                    raise YamlSubsetError(f"line {number}: a flow list after list items: {raw!r}")
                out[pending] = _flow_list(body)
                filled.add(pending)
                pending = None
            else:
                raise YamlSubsetError(f"line {number}: nested mappings are not supported: {raw!r}")
            continue
        key, sep, rest = body.partition(":")
        if not sep or (rest and not rest.startswith((" ", "\t"))):
            raise YamlSubsetError(f"line {number}: expected 'key: value': {raw!r}")
        key = str(scalar(key))
        if key in out:
            raise YamlSubsetError(f"line {number}: duplicate key {key!r}")
        if rest.strip():
            out[key] = _value(rest)
            filled.add(key)
            pending = None
        else:
            out[key] = []  # a block list follows, or an empty value
            pending = key
    return {key: (None if value == [] and key not in filled else value) for key, value in out.items()}


def dumps(config: dict[str, Value]) -> str:
    """Marian-style block YAML for `config` (keys in the given order); `loads(dumps(c)) == c` for Marian's values."""
    lines = []
    for key, value in config.items():
        if isinstance(value, list):
            if not value:
                lines.append(f"{key}:\n  []")
            else:
                lines.append(f"{key}:\n" + "\n".join(f"  - {_scalar_text(v)}" for v in value))
        else:
            lines.append(f"{key}: {_scalar_text(value)}")
    return "\n".join(lines) + "\n"


def _scalar_text(value: Scalar) -> str:
    if value is None:
        return "~"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if value == "" or scalar(value) != value or value != value.strip() or ": " in value or " #" in value:
        return json.dumps(value, ensure_ascii=False)
    return value
