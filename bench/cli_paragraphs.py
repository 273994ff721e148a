"""Pasted paragraphs through `qiao translate --json` with default settings, against CTranslate2 int8 (issue #26).

The app's default workload is beam 4 with the guards on and the model's own generation config (opus-mt's:
renormalised scores, so the guards' subtitle-artefact bans are renormalised multi-token bad words). This runs it the
way a user's script does: one `qiao translate --json` process over N paragraphs of 5 real English sentences, timed
from outside (wall, user and sys CPU; start-up and model load included, as a user waits for them). CTranslate2 int8
decodes the same source ids, one batch per paragraph at beam 4, each batch to ours' mean length (min = max), so both
produce the same number of target tokens. Optional: `--baseline-root DIR` runs ours from another checkout (the
engine before a change) in the same run, so the ratio is measured on one host at one time.

    python bench/cli_paragraphs.py --cache-dir .cache/full-random-real --threads 1,2
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from machine import describe_cpu, read_cpu  # noqa: E402
from workloads import PARAGRAPH, SENTENCES, peer_decoding_length  # noqa: E402

BEAMS = 4


def paragraphs(count: int) -> list[str]:
    """`count` paragraphs of 5 real sentences each, cycling through the bench's sentences."""
    pool = [*PARAGRAPH, *SENTENCES]
    return [" ".join(pool[(5 * i + j) % len(pool)] for j in range(5)) for i in range(count)]


def _children_cpu() -> tuple[float, float]:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime, usage.ru_stime


def run_ours(root: Path, bundle: Path, texts: list[str], threads: int, extra: list[str]) -> dict[str, object]:
    """One `qiao translate --json` process from checkout `root` over every paragraph (one per line)."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
        f.write("\n".join(texts) + "\n")
        path = f.name
    cmd = [sys.executable, "-m", "qiao", "translate", "--json", "--model", str(bundle), "--file", path]
    cmd += ["--threads", str(threads), *extra]
    env = {**os.environ, "PYTHONPATH": str(root), "QIAO_CACHE_DIR": tempfile.mkdtemp(prefix="qiao-bench-cache-")}
    user0, sys0 = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    user1, sys1 = _children_cpu()
    os.unlink(path)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr[-2000:]}")
    records = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    lengths = [[len(s["tokens"]) for s in r["sentences"]] for r in records]
    tokens = sum(map(sum, lengths))
    return {
        "wall_s": wall,
        "user_s": user1 - user0,
        "sys_s": sys1 - sys0,
        "tokens": tokens,
        "ms_per_token": 1000 * wall / max(tokens, 1),
        "lengths": lengths,
        "sources": [[s["source"] for s in r["sentences"]] for r in records],
    }


def ct2_batches(bundle: Path, ct2_dir: Path, sources: list[list[str]]) -> list[list[list[str]]]:
    """Ours' source ids of every sentence (language token and eos included) as CTranslate2 tokens, per paragraph."""
    from engine.pipeline.translator import Translator

    tr = Translator(bundle, precision="int8", threads=1)
    lang = tr.language_token(None)
    lang_ids = [tr.tokenizer.token_to_id(lang)] if lang else []
    vocab: list[str] = json.loads((ct2_dir / "shared_vocabulary.json").read_text(encoding="utf-8"))
    eos = tr.tokenizer.eos_id
    ids = [[[*lang_ids, *tr.tokenizer.encode(s, add_eos=False), eos] for s in para] for para in sources]
    return [[[vocab[i] for i in row] for row in para] for para in ids]


def run_ct2(ct2_dir: Path, batches: list[list[list[str]]], lengths: list[list[int]], threads: int) -> dict:
    """CTranslate2 int8 in a process of its own (beside onnxruntime's thread pools in one process it ran 2× slower
    here), one batch per paragraph at ours' mean length (min = max); load excluded."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as f:
        json.dump({"batches": batches, "lengths": lengths, "threads": threads, "model": str(ct2_dir)}, f)
        path = f.name
    try:
        out = subprocess.run(
            [sys.executable, __file__, "--ct2-child", path], capture_output=True, text=True, check=True
        ).stdout
    finally:
        os.unlink(path)
    return json.loads(out.strip().splitlines()[-1])


def _ct2_child(path: Path) -> None:
    import ctranslate2

    job = json.loads(path.read_text(encoding="utf-8"))
    model = ctranslate2.Translator(
        job["model"], device="cpu", compute_type="int8", intra_threads=job["threads"], inter_threads=1
    )
    tokens = 0
    start = time.perf_counter()
    for batch, lens in zip(job["batches"], job["lengths"]):
        n = peer_decoding_length(lens)
        out = model.translate_batch(batch, beam_size=BEAMS, min_decoding_length=n, max_decoding_length=n)
        tokens += sum(len(r.hypotheses[0]) for r in out)
    took = time.perf_counter() - start
    print(json.dumps({"translate_s": took, "tokens": tokens, "ms_per_token": 1000 * took / max(tokens, 1)}))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cache-dir", type=Path, default=ROOT / ".cache" / "full-random-real")
    p.add_argument("--paragraphs", type=int, default=24)
    p.add_argument("--threads", default="1,2")
    p.add_argument("--baseline-root", type=Path, help="another checkout whose engine runs the same paragraphs")
    p.add_argument("--json-out", type=Path)
    p.add_argument("--ct2-child", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.ct2_child:
        _ct2_child(args.ct2_child)
        return 0
    bundle, ct2_dir = args.cache_dir / "bundle", args.cache_dir / "ct2-int8"
    texts = paragraphs(args.paragraphs)
    cpu = read_cpu()
    print(f"host: {describe_cpu(cpu)}; {args.paragraphs} paragraphs × 5 sentences, beam {BEAMS}, defaults (guards on)")
    report: dict[str, object] = {"cpu": cpu, "paragraphs": args.paragraphs, "runs": {}}
    for threads in [int(t) for t in args.threads.split(",")]:
        rows = {"ours": run_ours(ROOT, bundle, texts, threads, [])}
        rows["ours --no-guards"] = run_ours(ROOT, bundle, texts, threads, ["--no-guards"])
        if args.baseline_root:
            rows["baseline"] = run_ours(args.baseline_root, bundle, texts, threads, [])
        batches = ct2_batches(bundle, ct2_dir, rows["ours"]["sources"])
        ct2 = run_ct2(ct2_dir, batches, rows["ours"]["lengths"], threads)
        print(f"\n{threads} thread(s): CTranslate2 int8 {ct2['translate_s']:.2f} s for {ct2['tokens']} tokens, "
              f"{ct2['ms_per_token']:.2f} ms/token (translate only)")  # fmt: skip
        for name, r in rows.items():
            print(f"  {name:17s} wall {r['wall_s']:6.2f} s (user {r['user_s']:.2f}, sys {r['sys_s']:.2f}), "
                  f"{r['tokens']} tokens: {r['ms_per_token']:.2f} ms/token, "
                  f"÷ CT2 {r['ms_per_token'] / ct2['ms_per_token']:.2f}")  # fmt: skip
            r.pop("sources")
        report["runs"][str(threads)] = {**rows, "ct2-int8": ct2}  # type: ignore[index]
    if args.json_out:
        args.json_out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
