"""bench/bergamot_peer.py's summary: medians over rounds of each round's mean request time, generated tokens,
the identical share against bergamot and Qiao's ratio to it, length-limit stops and opus-mt's time per token."""

from __future__ import annotations

import importlib
import json
import shutil
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


def _validation(bundle: Path, int8: int, fp32: int = 40, sentences: int = 40) -> None:
    bundle.mkdir(parents=True, exist_ok=True)
    check = {
        "sentences": sentences,
        "fp32_identical_to_reference": fp32,
        "int8_identical_to_reference_int8": int8,
        "passed": True,  # what a bundle built with a lowered INT8 bar also says
    }
    (bundle / "validation.json").write_text(json.dumps(check), encoding="utf-8")


def test_a_cached_bundle_below_the_default_int8_check_is_built_again(monkeypatch, tmp_path):
    """The bench measures the bundle `qiao model build` makes with its default checks: a cached one whose
    validation falls short of them (built with a lowered bar: 32 of 40) is rebuilt, one that meets them reused."""
    monkeypatch.syspath_prepend(str(BENCH))
    sys.modules.pop("bergamot_peer", None)
    peer = importlib.import_module("bergamot_peer")
    import prepare

    monkeypatch.setattr(peer, "CACHE", tmp_path)
    monkeypatch.setattr(prepare, "engine_fingerprint", lambda: "engine")
    builds: list[list[str]] = []

    def fake_run(cmd: list[str], check: bool) -> None:
        if "build" in cmd:
            builds.append(cmd)
            _validation(Path(cmd[cmd.index("--out") + 1]), int8=40)
        else:  # rm -rf
            for path in cmd[2:]:
                shutil.rmtree(path, ignore_errors=True)

    monkeypatch.setattr(peer.subprocess, "run", fake_run)
    folder = tmp_path / "0123456789abcdef"
    (tmp_path / "bundle.stamp.json").write_text(json.dumps({"folder": folder.name, "engine": "engine"}))
    _validation(tmp_path / "bundle", int8=32)
    assert not peer.default_check(tmp_path / "bundle")
    assert peer.converted_bundle(folder) == tmp_path / "bundle"
    assert len(builds) == 1 and builds[0][builds[0].index("--from") + 1] == str(folder)
    assert json.loads((tmp_path / "bundle" / "validation.json").read_text())["int8_identical_to_reference_int8"] == 40
    assert peer.default_check(tmp_path / "bundle")
    peer.converted_bundle(folder)
    assert len(builds) == 1  # reused
    _validation(tmp_path / "bundle", int8=40, fp32=39)
    assert not peer.default_check(tmp_path / "bundle")
