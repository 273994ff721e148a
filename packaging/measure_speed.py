"""Measure a bundle's translation speed and record it in its manifest (the release's catalogue and the app show it).

    python packaging/measure_speed.py BUNDLE... [--threads 2] [--precision int8] [--machine TEXT]

Translates the build's built-in check sentences of the bundle's source language (engine/convert/data), one request
each, with the model's own default decoding (greedy for a Bergamot model, its beams for opus-mt), after one warm-up
request; the speed is the target tokens of all of them over their total time. It is written into the manifest as

    "speed": {"tokens_per_s": 410.0, "threads": 2, "precision": "int8", "machine": "AMD EPYC 7763 (x86_64)"}

and the manifest is resealed (engine.bundle.manifest.dumps): no other file changes, so the bundle still verifies.
A measurement is one machine's: the catalogue names the machine, and the app shows it beside the figure.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.bundle.manifest import MANIFEST, dumps, verify_bundle  # noqa: E402
from engine.errors import QiaoError  # noqa: E402

SENTENCES = {
    "en": ROOT / "engine" / "convert" / "data" / "builtin_sentences.txt",
    "zh": ROOT / "engine" / "convert" / "data" / "builtin_sentences_zh.txt",
}


def machine() -> str:
    """The CPU's model name where the OS says it, with the architecture."""
    name = ""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    name = name or platform.processor() or "unknown CPU"
    return f"{name} ({platform.machine() or '?'})"[:300]


def sentences_for(language: str) -> list[str]:
    path = SENTENCES.get(language)
    if path is None:
        raise QiaoError(f"no check sentences for source language {language!r}")
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def measure(bundle: Path, threads: int = 2, precision: str = "int8", where: str | None = None) -> dict:
    """The speed block for `bundle` on this machine."""
    from engine.config import EngineConfig
    from engine.pipeline.translator import Translator

    translator = Translator(bundle, EngineConfig(precision=precision, threads=threads))
    texts = sentences_for(translator.manifest.pair.source.code)
    translator.translate(texts[0])  # warm-up: the first request pays for lazy set-up
    tokens, seconds = 0, 0.0
    for text in texts:
        start = time.perf_counter()
        result = translator.translate(text)
        seconds += time.perf_counter() - start
        tokens += result.stats.target_tokens if result.stats is not None else 0
    if tokens <= 0 or seconds <= 0:
        raise QiaoError(f"{bundle}: nothing was translated, so no speed can be measured")
    return {
        "tokens_per_s": round(tokens / seconds, 1),
        "threads": threads,
        "precision": precision,
        "machine": where or machine(),
    }


def record(bundle: Path, speed: dict) -> None:
    """Write `speed` into the bundle's manifest, resealed; the bundle is verified before and after."""
    manifest = verify_bundle(bundle)
    raw = {**manifest.raw, "speed": speed}
    (bundle / MANIFEST).write_text(dumps(raw), encoding="utf-8")
    verify_bundle(bundle)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="measure bundles' translation speed and record it in their manifests")
    parser.add_argument("bundles", nargs="+", type=Path, help="bundle folders")
    parser.add_argument("--threads", type=int, default=2, help="threads to measure with (default 2)")
    parser.add_argument("--precision", default="int8", help="precision to measure (default int8)")
    parser.add_argument("--machine", help="how to name this machine (default: its CPU model)")
    args = parser.parse_args(argv)
    try:
        for bundle in args.bundles:
            speed = measure(bundle, args.threads, args.precision, args.machine)
            record(bundle, speed)
            print(f"measure_speed: {bundle}: {json.dumps(speed, ensure_ascii=False)}")
    except QiaoError as exc:
        print(f"measure_speed: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
