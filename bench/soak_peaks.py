"""Where the memory soak's peak comes from, in one process: RSS after load and while loading, then the peak of each
of the soak texts with the largest decoder caches, one at a time (issue #26 item 1).

The 500-translation soak (engine_checks.py) reports one high-water mark for the whole process. Here the kernel's
high-water mark is reset before each text (writing 5 to /proc/self/clear_refs, Linux), so each text's own peak and
the RSS it leaves are read in minutes instead of the soak's twenty, and a change can be compared text by text.
Which texts: every soak text is planned (the engine's own batching) without decoding — the decoder run is stopped
as it starts — and the `--top` with the most cache positions (rows × capacity of their first batch) are run.

    python bench/soak_peaks.py --bundle .cache/full-random-real/bundle --top 12 --threads 2 [--json out.json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo root, for `engine`
from soak_texts import SOAK_SEED, varied_texts

import engine  # noqa: F401 - for its side effect: telemetry off (engine/privacy.py), before any onnxruntime import


def status_mb(path: str = "/proc/self/status") -> dict[str, float]:
    """VmRSS (now) and VmHWM (peak since start or the last reset), in MB."""
    out: dict[str, float] = {}
    with open(path) as fh:
        for line in fh:
            key = line.split(":", 1)[0]
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(line.split()[1]) / 1024
    return out


def reset_peak() -> None:
    """Start a new high-water mark at the current RSS (Linux 4.0+)."""
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")


class _Planned(Exception):
    """Raised where a decoder run would start: its size is known, nothing is decoded."""


def cache_positions(translator, texts: list[str]) -> list[int]:
    """Rows × cache capacity of each text's first batch, as the soak translates it (odd: default beams, even:
    greedy), found by stopping each translation where its decoder run starts."""
    from engine.families.marian import model as marian

    seen: list[int] = []
    original = marian.OnnxMarian.start

    def start(self, enc, max_len: int, beams: int = 1):
        seen.append(int(enc.mask.shape[0]) * beams * int(max_len))
        raise _Planned

    marian.OnnxMarian.start = start  # type: ignore[method-assign]
    try:
        sizes = []
        for i, text in enumerate(texts, 1):
            seen.clear()
            with contextlib.suppress(_Planned):
                translator.translate(text, beams=None if i % 2 else 1)
            sizes.append(seen[0] if seen else 0)
        return sizes
    finally:
        marian.OnnxMarian.start = original  # type: ignore[method-assign]


def main(argv: list[str] | None = None) -> int:
    """CLI entry point: prints one line per text and the summary; --json writes them."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bundle", type=Path, required=True)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--top", type=int, default=12)
    p.add_argument("--translations", type=int, default=500, help="the soak's texts to choose from")
    p.add_argument("--seed", type=int, default=SOAK_SEED)
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    from engine.pipeline.translator import Translator

    imports = status_mb()
    translator = Translator(args.bundle, precision="int8", threads=args.threads)
    load = status_mb()
    texts = varied_texts(args.translations, args.seed)
    sizes = cache_positions(translator, texts)
    chosen = sorted(range(len(texts)), key=lambda k: -sizes[k])[: args.top]
    rows = []
    for k in chosen:
        translator.clear_cache()
        reset_peak()
        cpu = time.process_time()
        translator.translate(texts[k], beams=None if (k + 1) % 2 else 1)
        cpu = time.process_time() - cpu
        now = status_mb()
        rows.append({"text": k + 1, "cache_positions": sizes[k], "peak_mb": now["VmHWM"], "rss_mb": now["VmRSS"],
                     "cpu_s": cpu})  # fmt: skip
        print(f"text {k + 1:4d}  positions {sizes[k]:5d}  peak {now['VmHWM']:6.1f} MB  after {now['VmRSS']:6.1f} MB")
    result = {
        "imports_mb": imports["VmRSS"],
        "after_load_mb": load["VmRSS"],
        "load_peak_mb": load["VmHWM"],
        "max_peak_mb": max((r["peak_mb"] for r in rows), default=None),
        "texts": rows,
    }
    print(
        f"imports {imports['VmRSS']:.1f} MB, after load {load['VmRSS']:.1f} MB (load peak {load['VmHWM']:.1f}), "
        f"highest text peak {result['max_peak_mb']} MB"
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
