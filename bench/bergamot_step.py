"""Decoder step and encoder time of the Bergamot family's graphs on a full-shape random model (base-memory dims:
384/1536, 8 heads, 6 encoder and 4 SSRU decoder layers, 32k vocabularies, tied output, int8 embedding tables as
published), FP32 and INT8, with a shortlist of ~500 ids, at 1 and 2 threads and 1 and 5 rows, and the peak RSS.
The CPU model is printed: quote figures with it.

    python bench/bergamot_step.py [--steps 200] [--shortlist 504] [--threads 1 2] [--rows 1 5]

Random weights: the timing does not depend on the values; INT8's alphas are calibrated on a few random sentences.
"""

from __future__ import annotations

import argparse
import math
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.families.bergamot.architecture import Architecture  # noqa: E402
from engine.families.bergamot.converter.graphs import Weights, build_decoder, build_encoder, quantize  # noqa: E402
from engine.families.bergamot.model import OnnxBergamot  # noqa: E402

BASE_MEMORY = Architecture(
    dim=384, ffn=1536, heads=8, encoder_layers=6, decoder_layers=4, source_vocab=32000, target_vocab=32000, tied=True
)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def random_weights(arch: Architecture, seed: int = 0) -> Weights:
    rng = np.random.default_rng(seed)
    e, f = arch.dim, arch.ffn
    params: dict[str, np.ndarray] = {}

    def matrix(rows: int, cols: int) -> np.ndarray:
        return (rng.standard_normal((rows, cols), dtype=np.float32) / math.sqrt(rows)).astype(np.float32)

    quantized: dict[str, tuple[np.ndarray, float]] = {}
    for table, vocab in (("encoder_Wemb", arch.source_vocab), ("decoder_Wemb", arch.target_vocab)):
        # stored int8 as a published model's are (intgemm8), read back as q·(1/qm)
        q, qm = quantize(matrix(vocab, e))
        quantized[table] = (q, float(qm))
        params[table] = q.astype(np.float32) * (np.float32(1.0) / qm)
    params["decoder_ff_logit_out_b"] = np.zeros(arch.target_vocab, np.float32)
    layers = [(f"encoder_l{i}", "self") for i in range(1, arch.encoder_layers + 1)]
    layers += [(f"decoder_l{i}", "context") for i in range(1, arch.decoder_layers + 1)]
    for prefix, attention in layers:
        a = f"{prefix}_{attention}"
        for p in "qkvo":
            params[f"{a}_W{p}"] = matrix(e, e)
            params[f"{a}_b{p}"] = np.zeros(e, np.float32)
        params[f"{a}_Wo_ln_scale"], params[f"{a}_Wo_ln_bias"] = np.ones(e, np.float32), np.zeros(e, np.float32)
        params[f"{prefix}_ffn_W1"], params[f"{prefix}_ffn_b1"] = matrix(e, f), np.zeros(f, np.float32)
        params[f"{prefix}_ffn_W2"], params[f"{prefix}_ffn_b2"] = matrix(f, e), np.zeros(e, np.float32)
        params[f"{prefix}_ffn_ffn_ln_scale"] = np.ones(e, np.float32)
        params[f"{prefix}_ffn_ffn_ln_bias"] = np.zeros(e, np.float32)
        if attention == "context":
            params[f"{prefix}_rnn_W"], params[f"{prefix}_rnn_Wf"] = matrix(e, e), matrix(e, e)
            params[f"{prefix}_rnn_bf"] = np.zeros(e, np.float32)
            params[f"{prefix}_rnn_ffn_ln_scale"] = np.ones(e, np.float32)
            params[f"{prefix}_rnn_ffn_ln_bias"] = np.zeros(e, np.float32)
    # activations after a post-norm LayerNorm are ~N(0,1); the FFN's inner ones a little wider
    alphas = {name: 127.0 / (6.0 if name.endswith("W2") else 4.0) for name in params if "_W" in name[-4:]}
    alphas["none"] = 127.0 / 4.0
    return Weights(params, quantized, alphas)


class _Rule:
    def __init__(self, size: int) -> None:
        self.size = size

    def allowed(self, source_ids, target_vocab_size: int, shared: bool) -> np.ndarray:
        rng = np.random.default_rng(int(np.asarray(source_ids).sum()))
        return np.sort(rng.choice(target_vocab_size, self.size, replace=False))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--shortlist", type=int, default=504)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--rows", type=int, nargs="+", default=[1, 5])
    ap.add_argument("--source", type=int, default=30, help="source length (tokens, EOS included)")
    args = ap.parse_args(argv)
    arch = BASE_MEMORY
    weights = random_weights(arch)
    graphs = {}
    for precision in ("fp32", "int8"):
        t0 = time.perf_counter()
        enc = build_encoder(arch, weights, precision)[0].SerializeToString()
        dec = build_decoder(arch, weights, precision)[0].SerializeToString()
        graphs[precision] = (enc, dec)
        print(f"built {precision}: encoder {len(enc) / 1e6:.1f} MB, decoder {len(dec) / 1e6:.1f} MB "
              f"({time.perf_counter() - t0:.1f} s)")  # fmt: skip
    print(f"CPU: {cpu_model()}; shortlist {args.shortlist} ids; source {args.source} tokens; {args.steps} steps")
    print(f"{'precision':9} {'threads':>7} {'rows':>4} {'encoder ms':>10} {'step ms':>8} {'p90':>6}")
    rng = np.random.default_rng(1)
    for precision, (enc, dec) in graphs.items():
        for threads in args.threads:
            model = OnnxBergamot(
                enc, dec, arch, precision, shortlist=_Rule(args.shortlist), shared_vocab=False, threads=threads
            )
            for rows in args.rows:
                ids = rng.integers(2, arch.source_vocab, (rows, args.source))
                ids[:, -1] = 0
                mask = np.ones_like(ids)
                encode = []
                for _ in range(5):
                    t0 = time.perf_counter()
                    state = model.encode(ids, mask)
                    encode.append(time.perf_counter() - t0)
                run = model.start(state, args.steps + 1)
                tokens = np.zeros(rows, np.int64)
                times = []
                for _ in range(args.steps):
                    t0 = time.perf_counter()
                    logits = run.step(tokens)
                    tokens = np.argmax(logits, axis=1)
                    times.append(time.perf_counter() - t0)
                times = times[5:]
                p90 = float(np.percentile(times, 90))
                print(f"{precision:9} {threads:>7} {rows:>4} {1e3 * statistics.median(encode):>10.2f} "
                      f"{1e3 * statistics.median(times):>8.3f} {1e3 * p90:>6.3f}")  # fmt: skip
    for precision, (enc, dec) in graphs.items():
        print(f"{precision}: peak RSS of a process that loads only the graphs and decodes: {rss(enc, dec, precision)}")
    return 0


_CHILD = """
import sys
from pathlib import Path
import numpy as np
sys.path.insert(0, {root!r}); sys.path.insert(0, {bench!r})
from bergamot_step import BASE_MEMORY, _Rule
from engine.families.bergamot.model import OnnxBergamot
def peak():  # VmHWM: ru_maxrss would carry the parent's peak across exec
    line = [l for l in Path("/proc/self/status").read_text().splitlines() if l.startswith("VmHWM")][0]
    return int(line.split()[1])
before = peak()
model = OnnxBergamot(Path({enc!r}), Path({dec!r}), BASE_MEMORY, {precision!r}, shortlist=_Rule(504), threads=1)
ids = np.random.default_rng(0).integers(2, 32000, (5, 30)); ids[:, -1] = 0
run = model.start(model.encode(ids, np.ones_like(ids)), 100)
tokens = np.zeros(5, np.int64)
for _ in range(60):
    tokens = np.argmax(run.step(tokens), axis=1)
after = peak()
print(f"{{after / 1024:.0f}} MB ({{before / 1024:.0f}} MB before loading)")
"""


def rss(encoder: bytes, decoder: bytes, precision: str) -> str:
    """Peak RSS of a fresh process that loads the two graphs from files and decodes 5 rows for 60 steps."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        enc, dec = Path(scratch) / "encoder.onnx", Path(scratch) / "decoder.onnx"
        enc.write_bytes(encoder)
        dec.write_bytes(decoder)
        code = _CHILD.format(root=str(ROOT), bench=str(ROOT / "bench"), enc=str(enc), dec=str(dec), precision=precision)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        return done.stdout.strip()


if __name__ == "__main__":
    raise SystemExit(main())
