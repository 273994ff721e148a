"""Our engine's own targets from issue #6 that no peer comparison covers, each measured in a fresh process.

    latency: engine load (Translator construction once the process runs and its imports are done) and first token
             (encoder + first decoder step). run.py starts this once with an empty verification cache (every bundle
             file is sha256-hashed) and once with the cache that run filled (files trusted by size, mtime, inode),
             and repeats the pair, because the first construction in a process is what an app start pays.
    soak:    a process that loads the INT8 engine and runs N varied translations through Translator.translate
             (1-3 sentences of 5-40 words, default beams and greedy alternating, fixed seed), reading VmHWM (peak) and
             VmRSS (now) after 20 %, 50 % and 100 % of them: peak memory, and whether it stays flat.

The process imports only the engine and the standard library, so its memory is the engine's. With the random
benchmark model most outputs run to the engine's length limit (engine.pipeline.length_limits: 3 × source tokens + 12 for
en→zh), the worst case for time and memory; the result records how much of that limit the outputs used.

    python bench/engine_checks.py --mode soak --bundle .cache/full-random/bundle --threads 2 --result soak.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo root, for `engine`
from child_result import write_result
from soak_texts import SOAK_CHECKPOINTS, SOAK_SEED, memory_mb, varied_texts
from workloads import SENTENCES

import engine  # noqa: F401 - for its side effect: telemetry off (engine/privacy.py), before any onnxruntime import


def latency(args: argparse.Namespace) -> dict[str, object]:
    """Engine load as an app start pays it (the first Translator in this process), then the first-token time."""
    from engine.pipeline.translator import (
        Translator,  # imports are not part of "process already running → engine ready"
    )

    sources: list[list[int]] = json.loads(Path(args.sources).read_text())
    t0 = time.perf_counter()
    translator = Translator(args.bundle, precision="int8", threads=args.threads)
    load_s = time.perf_counter() - t0

    # Encoder + first decoder step on the 20-token benchmark source: a one-token generation runs exactly that.
    batch = [sources[0]]
    for _ in range(3):
        translator.generate_ids(batch, beams=1, max_new_tokens=1)
    first: list[float] = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        translator.generate_ids(batch, beams=1, max_new_tokens=1)
        first.append((time.perf_counter() - t0) * 1000)

    # What a user sees: translate()'s own first_token_ms (segmentation, tokenization, encoder, first step), greedy,
    # stopped after the first streamed text.
    import threading

    shown: list[float] = []
    for _ in range(max(args.repeats // 3, 3)):
        stop = threading.Event()
        result = translator.translate(SENTENCES[0], beams=1, cancel=stop, on_event=lambda _e, s=stop: s.set())
        if result.stats is not None and result.stats.first_token_ms is not None:
            shown.append(result.stats.first_token_ms)
    return {
        "status": "ok",
        "threads": args.threads,
        "load_s": load_s,
        "first_token_ms": first,
        "translate_first_token_ms": shown,
        "source_tokens": len(batch[0]),
    }


def soak(args: argparse.Namespace) -> dict[str, object]:
    """Many varied translations in one process; memory at the checkpoints."""
    from engine.pipeline.translator import Translator

    translator = Translator(args.bundle, precision="int8", threads=args.threads)
    after_load = memory_mb()
    texts = varied_texts(args.translations, args.seed)
    marks = sorted({max(1, round(f * len(texts))) for f in SOAK_CHECKPOINTS})
    checkpoints = []
    totals = {"source_tokens": 0, "target_tokens": 0, "length_cap_tokens": 0, "sentences": 0}
    t0 = time.perf_counter()
    for i, text in enumerate(texts, 1):
        beams = None if i % 2 else 1  # odd: the bundle's default beams (4), even: greedy
        stats = translator.translate(text, beams=beams).stats
        assert stats is not None
        totals["source_tokens"] += stats.source_tokens
        totals["target_tokens"] += stats.target_tokens
        totals["sentences"] += stats.sentences
        # engine.pipeline.length_limits' en→zh room per sentence (3 × its tokens before eos + 12) and its end token
        totals["length_cap_tokens"] += 3 * (stats.source_tokens - stats.sentences) + 13 * stats.sentences
        if i in marks:
            checkpoints.append({"translations": i, "elapsed_s": time.perf_counter() - t0, **memory_mb()})
    return {
        "status": "ok",
        "threads": args.threads,
        "translations": len(texts),
        "seed": args.seed,
        "texts": "1-3 sentences of 5-40 random everyday English words; odd requests default beams, even greedy",
        "after_load": after_load,
        "checkpoints": checkpoints,
        "totals": totals,
        "length_cap_used": totals["target_tokens"] / max(totals["length_cap_tokens"], 1),
        "sample_texts": texts[:3],
    }


def main(argv: list[str] | None = None) -> int:
    """CLI entry point: writes the result JSON to --result."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mode", choices=("latency", "soak"), required=True)
    p.add_argument("--bundle", required=True)
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--result", required=True)
    p.add_argument("--sources", help="latency: JSON file with the benchmark's source id lists")
    p.add_argument("--repeats", type=int, default=30, help="latency: timed first-token calls")
    p.add_argument("--translations", type=int, default=500, help="soak: how many translations")
    p.add_argument("--seed", type=int, default=SOAK_SEED)
    args = p.parse_args(argv)
    return write_result(args.result, lambda: latency(args) if args.mode == "latency" else soak(args))


if __name__ == "__main__":
    sys.exit(main())
