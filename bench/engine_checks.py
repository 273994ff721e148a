"""Our engine's own targets from issue #6 that no peer comparison covers, each measured in a fresh process.

    latency: engine load (Translator construction once the process runs and its imports are done) and first token
             (encoder + first decoder step). run.py starts this once with an empty verification cache (every bundle
             file is sha256-hashed) and once with the cache that run filled (files trusted by size, mtime, inode),
             and repeats the pair, because the first construction in a process is what an app start pays.
    soak:    a process that loads the INT8 engine and runs N varied translations through Translator.translate
             (1-3 sentences of 5-40 words, default beams and greedy alternating, fixed seed), reading VmHWM (peak) and
             VmRSS (now) after 20 %, 50 % and 100 % of them: peak memory, and whether it stays flat.

The process imports only the engine and the standard library, so its memory is the engine's. With the random
benchmark model most outputs run to the engine's length limit (3 × source tokens + 10), the worst case for time and
memory; the result records how much of that limit the outputs used.

    python bench/engine_checks.py --mode soak --bundle .cache/full-random/bundle --threads 2 --result soak.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo root, for `engine`
from child_result import write_result
from workloads import SENTENCES

import engine  # noqa: F401 - for its side effect: telemetry off (engine/privacy.py), before any onnxruntime import

SOAK_CHECKPOINTS = (0.2, 0.5, 1.0)  # of the translations: 100, 250, 500 by default
SOAK_SEED = 6

# Everyday English words for the soak texts: enough variety that tokens, lengths and batch shapes keep changing.
_WORD_LIST = """
the a an this that these those my your our their his her its some every each many few several all no one two three
ten hundred first last next other same new old big small long short early late young good bad great little high low
important different possible public local social national free full strong clear simple hard easy quiet busy warm
cold bright dark green red blue yellow white black time year day week month morning evening night people man woman
child friend family mother father teacher doctor student worker farmer driver city town village country house home
room office school hospital station market shop street road bridge river lake sea mountain forest garden park field
window door table chair book letter paper report story song picture photo computer phone program system problem
question answer idea plan reason result change price cost money bank company business government law rule team game
water food bread rice tea coffee milk fruit train bus car plane ship bicycle weather rain snow wind sun moon star
is was are were has had have will would can could should must may might do does did make makes made take took give
gave find found think thought know knew see saw come came go went get got say said tell told ask asked work worked
call called try tried need needed feel felt leave left keep kept begin began help helped show showed hear heard play
played run ran move moved live lived believe bring brought happen happened write wrote sit sat stand stood lose lost
pay paid meet met include continue learn learned open opened close closed build built read understand spend spent
and or but because while before after when where although if since until so then also only very really quite often
always never sometimes already still again soon together almost perhaps probably of in on at by for with about
from into over under between through during without around near across behind beyond
"""
WORDS = tuple(_WORD_LIST.split())


def varied_texts(count: int, seed: int = SOAK_SEED) -> list[str]:
    """`count` texts of 1-3 sentences, each 5-40 words, from a fixed seed (the same texts every run)."""
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        sentences = []
        for _ in range(rng.randint(1, 3)):
            words = [rng.choice(WORDS) for _ in range(rng.randint(5, 40))]
            if len(words) > 8 and rng.random() < 0.4:
                words[rng.randrange(3, len(words) - 3)] += ","
            if rng.random() < 0.15:
                words.insert(rng.randrange(len(words)), str(rng.randint(2, 2030)))
            words[0] = words[0].capitalize()
            sentences.append(" ".join(words) + rng.choice(".....?!"))
        texts.append(" ".join(sentences))
    return texts


def memory_mb() -> dict[str, float]:
    """VmHWM (peak resident set) and VmRSS (resident now) of this process, in MB (10^6 bytes)."""
    status = Path("/proc/self/status")
    if status.exists():
        fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
        return {k: int(fields[k].split()[0]) * 1024 / 1e6 for k in ("VmHWM", "VmRSS")}
    import psutil  # macOS / Windows: the closest equivalents

    info = psutil.Process().memory_info()
    peak = getattr(info, "peak_wset", None)
    if peak is None:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # bytes on macOS
    return {"VmHWM": peak / 1e6, "VmRSS": info.rss / 1e6}


def latency(args: argparse.Namespace) -> dict[str, object]:
    """Engine load as an app start pays it (the first Translator in this process), then the first-token time."""
    from engine.translator import Translator  # imports are not part of "process already running → engine ready"

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
    from engine.translator import Translator

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
        # engine.translator.length_limit: 3 × source + 10 positions per sentence, the start token included.
        totals["length_cap_tokens"] += 3 * stats.source_tokens + 9 * stats.sentences
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
