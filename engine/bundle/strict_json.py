"""JSON from untrusted files (a bundle's manifest, a downloaded catalogue): stricter than `json.loads`.

A duplicated key (which `json` silently resolves to its last value, so two readers could disagree on what a file
says) and NaN/Infinity (not JSON) are refused with a ValueError that names them; the callers word it for a person.
"""

from __future__ import annotations

import json
from typing import Any


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key!r} appears twice in one object")
        out[key] = value
    return out


def _not_a_number(name: str) -> float:
    raise ValueError(f"{name} is not a valid JSON number")


def loads(text: str) -> Any:
    """`json.loads` that refuses duplicate keys and NaN/Infinity (ValueError; RecursionError for absurd nesting)."""
    return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_not_a_number)
