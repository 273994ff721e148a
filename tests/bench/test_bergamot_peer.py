"""bench/bergamot_peer.py's summary: medians over rounds of each round's mean request time, generated tokens,
the identical share against bergamot and Qiao's ratio to it, length-limit stops and opus-mt's time per token."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _request(ms: float, tokens: int, texts: list[str], ended: list[bool], first: float | None = None) -> dict:
    return {"ms": ms, "tokens": tokens, "texts": texts, "ended": ended, "first_ms": first}


def _rounds(times: list[float], texts: list[str], tokens: int, ended: list[bool]) -> list[dict]:
    rows = []
    for ms in times:
        rows.append({
            "sentence": [_request(ms, tokens, [t], [e], ms / 4) for t, e in zip(texts, ended)],
            "paragraph": [_request(3 * ms, 3 * tokens, texts, ended, ms / 2)],
        })  # fmt: skip
    return rows


def test_summary_medians_ratios_and_identical_share(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    sys.modules.pop("bergamot_peer", None)
    peer = importlib.import_module("bergamot_peer")
    run = {
        "systems": {
            "bergamot": {"rounds": _rounds([10.0, 30.0, 20.0], ["a", "b"], 10, [True, True])},
            "qiao": {"rounds": _rounds([8.0, 9.0, 100.0], ["a", "c"], 10, [True, False])},
            "opus": {"rounds": _rounds([50.0, 40.0, 60.0], ["x", "y"], 20, [True, True])},
        }
    }
    summary = peer.summarise(run)
    sentence = summary["sentence"]
    assert sentence["bergamot"]["ms"] == 20.0 and sentence["qiao"]["ms"] == 9.0  # medians: one slow round ignored
    assert sentence["qiao"]["vs_bergamot"] == 9.0 / 20.0
    assert sentence["qiao"]["identical"] == "1/2"
    assert sentence["qiao"]["length_limit_stops"] == 1 and sentence["bergamot"]["length_limit_stops"] == 0
    assert sentence["qiao"]["ms_per_token"] == 0.9 and sentence["qiao"]["first_ms"] == 2.25
    assert sentence["opus"]["per_token_vs_qiao"] == (50.0 / 20) / 0.9
    assert summary["paragraph"]["qiao"]["ms"] == 27.0 and summary["paragraph"]["qiao"]["tokens"] == 30
