"""The searches' own work per decoder step (everything between two decoder calls), old vs new, in one process.

Token scores made greedy's numpy work per step grow (a log-sum-exp over the 65,001-id vocabulary per row). This
measures what a search spends between the end of one decoder step and the start of the next, the decoder (and its
token embedding) excluded, for search implementations taken from git commits and the working tree, alternating
between them round by round so a shared machine's load hits them alike. Same sources, same decoder, same steps.

    python bench/search_overhead.py                                 # full-size INT8 bundle, 2 threads
    python bench/search_overhead.py --bundle tests/fixtures/tiny_marian/bundle --precision fp32
    python bench/search_overhead.py --ref old=973ddec^ --ref main=4a58367 --rounds 9 --beams 1,4

Every row of a batch is kept for `--steps` steps (eos banned until then, then forced): the batch never shrinks,
so each gap is one full-batch step. Reported: the median over rounds of each run's median gap, in milliseconds.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import os
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import numpy as np  # noqa: E402

import engine  # noqa: E402,F401 - telemetry off before onnxruntime loads

DEFAULT_BUNDLE = ROOT / ".cache" / "full-random" / "bundle"
# Commits before the engine was laid out by job (af09fc7) name the modules the searches import by their old flat
# names; those imports are pointed at today's modules (only decoding and its scores come from the commit).
OLD_MODULES = (
    ("from engine.onnx_model import", "from engine.families.marian.model import"),
    ("from engine.repetition import", "from engine.search.repetition import"),
    ("from engine.search_types import", "from engine.search.types import"),
    ("from engine.exp_kernel import", "from engine.runtime.exp_kernel import"),
)


def module_at(commit: str, tag: str) -> types.ModuleType:
    """engine.search.decoding as it was at `commit`, with its own engine.search.scores when it had one."""

    def load(paths: tuple[str, ...], name: str, replace: tuple[tuple[str, str], ...] = ()) -> types.ModuleType | None:
        for path in paths:
            try:
                src = subprocess.run(
                    ["git", "show", f"{commit}:{path}"], cwd=ROOT, check=True, capture_output=True, text=True
                ).stdout
            except subprocess.CalledProcessError:
                continue
            for a, b in (*replace, *OLD_MODULES):
                src = src.replace(a, b)
            mod = types.ModuleType(name)
            mod.__file__ = f"{commit}:{path}"
            sys.modules[name] = mod  # dataclasses look their module up
            exec(compile(src, mod.__file__, "exec"), mod.__dict__)
            return mod
        return None

    scores_name = f"_ref_{tag}_search_scores"
    scores = load(("engine/search/scores.py", "engine/search_scores.py"), scores_name)
    fix = (
        (
            ("from engine.search.scores import", f"from {scores_name} import"),
            ("from engine.search_scores import", f"from {scores_name} import"),
        )
        if scores
        else ()
    )
    mod = load(("engine/search/decoding.py", "engine/decoding.py"), f"_ref_{tag}_decoding", fix)
    if mod is None:
        raise SystemExit(f"no engine/search/decoding.py (or engine/decoding.py) at {commit}")
    return mod


class TimedRun:
    """A DecoderRun whose step() records when it starts and ends."""

    def __init__(self, run, marks: list[tuple[float, float]]) -> None:
        self._run, self._marks = run, marks

    def step(self, tokens):
        t0 = time.perf_counter()
        out = self._run.step(tokens)
        self._marks.append((t0, time.perf_counter()))
        return out

    def __getattr__(self, name):
        return getattr(self._run, name)


class TimedModel:
    def __init__(self, model) -> None:
        self._model = model
        self.marks: list[tuple[float, float]] = []

    def start(self, enc, max_len):
        self.marks = []
        return TimedRun(self._model.start(enc, max_len), self.marks)

    def __getattr__(self, name):
        return getattr(self._model, name)


def gaps(model: TimedModel, search, enc, params, max_lengths) -> tuple[float, float, list]:
    """(median gap between decoder steps, median decoder step, final tokens) of one search, in ms."""
    last = None
    for update in search(model, enc, params, max_lengths):
        last = update
    marks = model.marks
    between = [(b[0] - a[1]) * 1e3 for a, b in itertools.pairwise(marks)]
    steps = [(b - a) * 1e3 for a, b in marks]
    return statistics.median(between), statistics.median(steps), last.tokens


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle", type=Path, default=DEFAULT_BUNDLE)
    ap.add_argument("--precision", default="int8")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ref", action="append", default=[], help="NAME=COMMIT (repeatable); 'new' is the work tree")
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--beams", default="1")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--source-tokens", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args(argv)

    from engine.pipeline.translator import Translator
    from engine.search import decoding

    refs = [r.split("=", 1) for r in (args.ref or ["old=973ddec^", "main=4a58367"])]
    variants = {name: module_at(commit, name) for name, commit in refs}
    variants["new"] = decoding
    tr = Translator(args.bundle, precision=args.precision, threads=args.threads, verify=False)
    model = TimedModel(tr._model)
    vocab = tr._model.vocab_size
    rng = np.random.default_rng(0)
    print(f"bundle {args.bundle} {args.precision} threads {args.threads}; vocab {vocab}; {args.steps} steps")
    print(f"cpu: {_cpu()}; load average at start {os.getloadavg()}")
    results: dict[tuple, dict[str, list[float]]] = {}
    for beams in [int(b) for b in args.beams.split(",")]:
        for batch in [int(b) for b in args.batches.split(",")]:
            ids = rng.integers(100, min(vocab - 1, 8000), size=(batch, args.source_tokens))
            ids[:, -1] = tr.defaults.eos_id
            enc = tr._model.encode(ids.astype(np.int64), np.ones_like(ids, dtype=np.int64))
            base = tr.params(beams=beams, max_length=args.steps + 1, min_new_tokens=args.steps - 1)
            max_lengths = np.full(batch, args.steps + 1, dtype=np.int64)
            row = results.setdefault((beams, batch), {name: [] for name in variants} | {"decoder step": []})
            tokens = {}
            for r in range(args.rounds + 1):  # round 0 warms up
                order = list(variants.items())
                if r % 2:
                    order.reverse()
                for name, mod in order:
                    fields = {f.name for f in dataclasses.fields(mod.GenerationParams)}
                    params = mod.GenerationParams(**{k: v for k, v in dataclasses.asdict(base).items() if k in fields})
                    search = mod.greedy_search if beams == 1 else mod.beam_search
                    gap, step, out = gaps(model, search, enc, params, max_lengths)
                    tokens[name] = out
                    if r:
                        row[name].append(gap)
                        row["decoder step"].append(step)
            same = all(t == tokens["new"] for t in tokens.values())
            cells = "  ".join(f"{n} {statistics.median(v):6.3f}" for n, v in row.items())
            print(f"beams {beams} batch {batch}: ms per step  {cells}  (tokens identical: {same})", flush=True)
    print(f"load average at end {os.getloadavg()}")
    return 0


def _cpu() -> str:
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name"):
                return line.split(":", 1)[1].strip() + f", {os.cpu_count()} CPUs"
    except OSError:
        pass
    return "unknown"


if __name__ == "__main__":
    raise SystemExit(main())
