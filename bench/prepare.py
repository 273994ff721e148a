"""Build everything the benchmark loads, once, into .cache/full-random/ (git-ignored).

    checkpoint/     random opus-mt-en-zh-shaped MarianMTModel (bench/full_model.py)
    optimum-fp32/   optimum-onnx export: encoder + merged decoder (the unmerged decoders are deleted)
    optimum-int8/   the same, dynamically quantized (per-tensor QInt8, EnableSubgraph so the merged decoder's If
                    branches are quantized too)
    ct2-int8/, ct2-float32/   CTranslate2 conversions of the checkpoint
    bundle/         the project's own bundle, built by `qiao model build` when the engine exists

Each derived folder records which checkpoint it came from (the bundle also which engine sources), so changing
either rebuilds what depends on it.

    python bench/prepare.py [--only ct2-int8,optimum-int8,...] [--tokenizer-from DIR] [--keep-stale]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo root, for `engine`
from full_model import DEFAULT_TOKENIZER_FROM, EOS_ID, GENERATION_CONFIG, PAD_ID, build_full_checkpoint
from systems import CACHE_DIR, REPO_ROOT

import engine  # noqa: F401 - for its side effect: telemetry off (engine/privacy.py), before any onnxruntime import
from engine.families.marian.converter.opus_mt_config import carries_opus_mt_config

STAMP = ".bench-source.json"
ONNX_KEEP = ("encoder_model.onnx", "decoder_model_merged.onnx")


def checkpoint_fingerprint(checkpoint: Path) -> dict[str, object]:
    """Cheap identity of a checkpoint: its config plus the weight file's size and mtime."""
    weights = checkpoint / "model.safetensors"
    st = weights.stat()
    return {
        "config": json.loads((checkpoint / "config.json").read_text()),
        "generation": json.loads((checkpoint / "generation_config.json").read_text()),
        "weights_size": st.st_size,
        "weights_mtime_ns": st.st_mtime_ns,
    }


def engine_fingerprint() -> str:
    """Hash of the engine's Python sources: a bundle built by one engine version may not load in another."""
    digest = hashlib.sha256()
    for path in sorted((REPO_ROOT / "engine").rglob("*.py")):
        digest.update(path.relative_to(REPO_ROOT).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def fingerprint(name: str, checkpoint: Path) -> dict[str, object]:
    """What an artifact depends on: the checkpoint, and for our bundle also the engine that builds and loads it."""
    stamp = checkpoint_fingerprint(checkpoint)
    if name == "bundle":
        stamp["engine"] = engine_fingerprint()
    return json.loads(json.dumps(stamp))


def _stamp_path(out: Path) -> Path:
    # Next to the folder, not inside it: the bundle's layout belongs to the engine.
    return out.parent / f"{out.name}{STAMP}"


def is_current(name: str, out: Path, checkpoint: Path) -> bool:
    """True if `out` exists and was derived from this exact checkpoint (and engine, for the bundle)."""
    stamp = _stamp_path(out)
    if not out.exists() or not stamp.exists():
        return False
    return json.loads(stamp.read_text()) == fingerprint(name, checkpoint)


def _mark(name: str, out: Path, checkpoint: Path) -> None:
    _stamp_path(out).write_text(json.dumps(fingerprint(name, checkpoint)))


def ensure_checkpoint(cache_dir: Path, tokenizer_from: Path, seed: int = 0) -> Path:
    """Build the random full-size checkpoint unless it is already there."""
    ckpt = cache_dir / "checkpoint"
    if (ckpt / "model.safetensors").exists() and (ckpt / "vocab.json").exists():
        if not carries_opus_mt_config(ckpt, PAD_ID, EOS_ID):  # cached before the real config: the weights stay
            (ckpt / "generation_config.json").write_text(json.dumps(GENERATION_CONFIG, indent=2), encoding="utf-8")
        return ckpt
    print(f"[prepare] building random full-size checkpoint in {ckpt} (about a minute)", flush=True)
    return build_full_checkpoint(ckpt, tokenizer_from, seed=seed)


def _export_optimum_fp32(ckpt: Path, out: Path) -> None:
    from optimum.exporters.onnx import main_export

    tmp = out.with_name(out.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    main_export(str(ckpt), tmp, task="text2text-generation-with-past", do_validation=False)
    for name in ("decoder_model.onnx", "decoder_with_past_model.onnx"):
        (tmp / name).unlink(missing_ok=True)  # ORTModelForSeq2SeqLM loads the merged decoder
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)


def _quantize_optimum_int8(fp32: Path, out: Path) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    tmp = out.with_name(out.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for item in fp32.iterdir():
        if item.is_file() and item.suffix != ".onnx":
            shutil.copy2(item, tmp / item.name)
    for name in ONNX_KEEP:
        quantize_dynamic(
            fp32 / name,
            tmp / name,
            weight_type=QuantType.QInt8,
            per_channel=False,
            # Without EnableSubgraph the merged decoder (all its MatMuls live inside If branches) silently stays FP32.
            extra_options={"EnableSubgraph": True},
        )
    # Guard against the known silent failures: nothing quantized, or the output projection left FP32 behind a
    # Transpose of the embedding (what the exporter produces when `accelerate` is installed).
    for name in ONNX_KEEP:
        ratio = (tmp / name).stat().st_size / (fp32 / name).stat().st_size
        if ratio > 0.4:
            raise RuntimeError(f"{name}: INT8 file is {ratio:.0%} of FP32; quantization did not take")
    bad = _unquantized_vocab_uses(onnx.load(str(tmp / "decoder_model_merged.onnx")))
    if bad:
        raise RuntimeError(f"decoder uses the vocabulary table unquantized: {bad} (is accelerate installed?)")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)


def _unquantized_vocab_uses(model: object) -> list[str]:
    """Nodes that consume a 65001×512 table other than as an INT8 lookup or INT8 matmul (all subgraphs too)."""
    import onnx

    def graphs(g: onnx.GraphProto):  # type: ignore[no-untyped-def]
        yield g
        for node in g.node:
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    yield from graphs(attr.g)

    all_graphs = list(graphs(model.graph))  # type: ignore[attr-defined]
    tables = {t.name for g in all_graphs for t in g.initializer if sorted(t.dims) == [512, 65001]}
    ok_ops = {"Gather", "MatMulInteger", "DynamicQuantizeMatMul"}
    return [
        f"{n.op_type}:{n.name}" for g in all_graphs for n in g.node if n.op_type not in ok_ops and tables & set(n.input)
    ]


def _convert_ct2(ckpt: Path, out: Path, quantization: str) -> None:
    from ctranslate2.converters import TransformersConverter

    tmp = out.with_name(out.name + ".partial")
    TransformersConverter(str(ckpt)).convert(str(tmp), quantization=quantization, force=True)
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)


def qiao_command() -> list[str]:
    """How to call the project's CLI: the installed `qiao` script, else its entry point from the repo root."""
    script = Path(sys.executable).parent / ("qiao.exe" if os.name == "nt" else "qiao")
    if script.exists():
        return [str(script)]
    found = shutil.which("qiao")
    if found:
        return [found]
    return [
        sys.executable,
        "-c",
        "import sys; from engine.cli.main import main; sys.argv[0] = 'qiao'; sys.exit(main())",
    ]


def _build_bundle(ckpt: Path, out: Path) -> None:
    shutil.rmtree(out, ignore_errors=True)  # a half-written bundle from an interrupted build
    cmd = [*qiao_command(), "model", "build", "--from", str(ckpt), "--out", str(out)]
    cmd += shlex.split(os.environ.get("QIAO_BENCH_BUNDLE_ARGS", ""))
    print(f"[prepare] {shlex.join(cmd)}", flush=True)
    subprocess.run(cmd, check=True, cwd=REPO_ROOT, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})


def engine_problem() -> str | None:
    """None if the project's engine can be imported, else why not (one line)."""
    proc = subprocess.run(
        [sys.executable, "-c", "import engine.pipeline.translator, engine.cli.main"],
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
    )
    if proc.returncode == 0:
        return None
    lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else f"exit code {proc.returncode}"


# artifact name -> (folder under the cache, builder(checkpoint, out, cache_dir), prerequisite artifact)
ARTIFACTS: dict[str, tuple[str, Callable[[Path, Path, Path], None], str | None]] = {
    "optimum-fp32": ("optimum-fp32", lambda c, o, _: _export_optimum_fp32(c, o), None),
    "optimum-int8": ("optimum-int8", lambda c, o, d: _quantize_optimum_int8(d / "optimum-fp32", o), "optimum-fp32"),
    "ct2-int8": ("ct2-int8", lambda c, o, _: _convert_ct2(c, o, "int8"), None),
    "ct2-float32": ("ct2-float32", lambda c, o, _: _convert_ct2(c, o, "float32"), None),
    "bundle": ("bundle", lambda c, o, _: _build_bundle(c, o), None),
}


def ensure(name: str, cache_dir: Path, checkpoint: Path, keep_stale: bool = False) -> Path:
    """Build one derived artifact (and its prerequisite) unless it is current (or exists, with `keep_stale`)."""
    subdir, builder, needs = ARTIFACTS[name]
    if needs:
        ensure(needs, cache_dir, checkpoint, keep_stale)
    out = cache_dir / subdir
    if is_current(name, out, checkpoint):
        return out
    if keep_stale and out.exists() and _stamp_path(out).exists():
        print(f"[prepare] {name}: keeping {out} although its sources changed (--keep-stale)", flush=True)
        return out
    print(f"[prepare] building {name} in {out}", flush=True)
    builder(checkpoint, out, cache_dir)
    _mark(name, out, checkpoint)
    return out


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache-dir", type=Path, default=CACHE_DIR)
    parser.add_argument("--tokenizer-from", type=Path, default=DEFAULT_TOKENIZER_FROM)
    parser.add_argument("--only", default=",".join(ARTIFACTS), help=f"comma list of: {', '.join(ARTIFACTS)}")
    parser.add_argument(
        "--keep-stale",
        action="store_true",
        help="use a built artifact even if the checkpoint or engine changed since (development; not for results)",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    checkpoint = ensure_checkpoint(args.cache_dir, args.tokenizer_from)
    for name in [n for n in args.only.split(",") if n]:
        if name not in ARTIFACTS:
            parser.error(f"unknown artifact {name!r}")
        try:
            ensure(name, args.cache_dir, checkpoint, args.keep_stale)
        except subprocess.CalledProcessError as exc:
            print(f"[prepare] {name} failed: {shlex.join(exc.cmd)} exited {exc.returncode}", file=sys.stderr)
            return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
