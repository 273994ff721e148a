"""Whole translations, one commit against another: the same bundle, texts and options, timed inside each process.

A restructuring must not cost speed. Each ref runs in its own long-lived process started from its own checkout (a
git worktree under .cache/ab/, or this working tree for `work`), loads the bundle once, and translates the
workload once per round; the parent alternates the processes round by round so a shared machine's load hits them
alike, and reports each ref's median round time, the ratio to the first ref, peak RSS and whether the outputs are
identical. The CPU model is printed: quote figures with it.

    python bench/ab_commits.py --bundle .cache/full-random-real/bundle --ref old=d88fa1c --ref work
    python bench/ab_commits.py --bundle tests/fixtures/tiny_marian/bundle --precision fp32 --rounds 5

Workloads: `paragraph` (bench.workloads.paragraph_text(): 5 real sentences, the app's default options: the
model's own beams, 4 for opus-mt)
and `sentences` (each of bench.workloads.SENTENCES alone, greedy). The translator is imported from wherever the
commit keeps it (engine.pipeline.translator today, engine.translator before the layout commit).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.workloads import SENTENCES, paragraph_text  # noqa: E402

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, ".")
import engine  # telemetry off first
try:
    from engine.pipeline.translator import Translator
except ImportError:
    from engine.translator import Translator
from engine.config import EngineConfig
from engine.options import TranslationOptions

spec = json.loads(sys.argv[1])
translator = Translator(spec["bundle"], EngineConfig(precision=spec["precision"], threads=spec["threads"]))
jobs = [(text, TranslationOptions(beams=beams)) for text, beams in spec["jobs"]]

def once():
    outs, t0 = [], time.perf_counter()
    for text, options in jobs:
        translator.clear_cache()  # every round decodes: the sentence cache would answer repeats at once
        outs.append(translator.translate(text, options).text)
    return time.perf_counter() - t0, outs

once()  # warm-up: sessions, arenas, caches
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    if line.strip() != "go":
        break
    seconds, outs = once()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "outputs": outs, "peak_rss_mb": rss}), flush=True)
"""


def checkout(ref: str) -> Path:
    """The tree a ref runs from: this working tree for `work`, else a detached worktree kept under .cache/ab/."""
    if ref == "work":
        return ROOT
    sha = subprocess.run(["git", "rev-parse", ref], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    tree = ROOT / ".cache" / "ab" / sha.strip()[:12]
    if not (tree / "engine").is_dir():
        tree.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), sha.strip()], cwd=ROOT, check=True)
    return tree


def workload_jobs(name: str) -> list[tuple[str, int | None]]:
    """(text, beams) per translate call; beams None is the model's own default, as the app runs it."""
    if name == "paragraph":
        return [(paragraph_text(), None)]
    if name == "sentences":
        return [(sentence, 1) for sentence in SENTENCES]
    raise SystemExit(f"unknown workload {name!r} (paragraph, sentences)")


def cpu_model() -> str:
    try:
        out = subprocess.run(["lscpu"], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return platform.processor() or "unknown"
    fields = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
    model = fields.get("Model name", "?").strip()
    return f"{model} (family {fields.get('CPU family', '?').strip()}, model {fields.get('Model', '?').strip()})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bundle", type=Path, default=ROOT / ".cache" / "full-random-real" / "bundle")
    parser.add_argument("--precision", default="int8")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--ref", action="append", help="NAME=COMMIT or `work` (default: old=HEAD~1 and work)")
    parser.add_argument("--workload", default="paragraph,sentences")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    refs = []
    for item in args.ref or ["old=HEAD~1", "work"]:
        name, _, commit = item.partition("=")
        refs.append((name, commit or name))
    print(f"cpu: {cpu_model()}, {os.cpu_count()} CPUs; bundle {args.bundle} {args.precision} threads {args.threads}")
    for workload in args.workload.split(","):
        spec = {
            "bundle": str(args.bundle.resolve()),
            "precision": args.precision,
            "threads": args.threads,
            "jobs": workload_jobs(workload),
        }
        procs = {}
        for name, commit in refs:
            proc = subprocess.Popen(
                [sys.executable, "-c", CHILD, json.dumps(spec)],
                cwd=checkout(commit),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            if json.loads(proc.stdout.readline() or "{}").get("ready") is not True:
                raise SystemExit(f"{name} ({commit}) did not start")
            procs[name] = proc
        times: dict[str, list[float]] = {name: [] for name in procs}
        last: dict[str, dict] = {}
        for _ in range(args.rounds):
            for name, proc in procs.items():
                proc.stdin.write("go\n")
                proc.stdin.flush()
                last[name] = json.loads(proc.stdout.readline())
                times[name].append(last[name]["seconds"])
        for proc in procs.values():
            proc.stdin.close()
            proc.wait(timeout=60)
        first = refs[0][0]
        base = statistics.median(times[first])
        outputs = {json.dumps(v["outputs"], ensure_ascii=False) for v in last.values()}
        print(f"{workload}: {args.rounds} rounds, outputs identical across refs: {len(outputs) == 1}")
        for name, _commit in refs:
            med = statistics.median(times[name])
            ratios = [t / b for t, b in zip(times[name], times[first])]
            print(
                f"  {name:>8}: median {med * 1000:8.1f} ms (min {min(times[name]) * 1000:.1f}, max "
                f"{max(times[name]) * 1000:.1f}); ÷ {first} {med / base:.3f} (pairwise median "
                f"{statistics.median(ratios):.3f}); peak RSS {last[name]['peak_rss_mb']:.0f} MB"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
