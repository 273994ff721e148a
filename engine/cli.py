"""`qiao`: the app with no arguments, and the developer commands (model build/verify, tokenize, translate)."""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path

from engine import __version__
from engine.errors import QiaoError

BUILD_HINT = "qiao model build --from Helsinki-NLP/opus-mt-en-zh --out resources/models/opus-mt-en-zh"


def _add_model_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", metavar="DIR", help="model bundle folder (default: $QIAO_MODEL_DIR, then usual places)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="qiao",
        description="Qiao (桥): offline English→Chinese translator. Without a command, opens the app.",
    )
    parser.add_argument("--version", action="version", version=f"qiao {__version__}")
    parser.add_argument(
        "--self-test", action="store_true", help="translate a fixed sentence in every precision, no display needed"
    )
    _add_model_arg(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    model = sub.add_parser("model", help="build or check a model bundle")
    msub = model.add_subparsers(dest="model_command", metavar="ACTION", required=True)
    build = msub.add_parser("build", help="export a Marian checkpoint to a verified ONNX bundle (needs qiao[build])")
    build.add_argument("--from", dest="source", required=True, help="Hugging Face model id or local checkpoint folder")
    build.add_argument("--out", required=True, type=Path, help="bundle folder to write")
    build.add_argument("--eval", type=Path, help="parallel TSV: Tatoeba format or source<TAB>reference")
    build.add_argument("--eval-limit", type=int, default=500, help="sentences to validate on (default 500)")
    build.add_argument("--bleu-margin", type=float, default=1.0, help="max BLEU INT8 may lose against FP32")
    build.add_argument("--model-id", help="name to record for a local checkpoint")
    build.add_argument("--force", action="store_true", help="replace an existing bundle folder")
    build.add_argument("--quiet", action="store_true")
    verify = msub.add_parser("verify", help="check a bundle against its manifest")
    verify.add_argument("dir", type=Path)
    verify.add_argument("--precision", choices=["int8", "fp32"], help="check only the files one precision needs")

    tok = sub.add_parser("tokenize", help="JSON strings on stdin → source ids (MarianTokenizer's contract)")
    _add_model_arg(tok)
    tok.add_argument("--decode", action="store_true", help="JSON id lists on stdin → decoded strings")

    tr = sub.add_parser("translate", help="translate text from an argument, a file or stdin")
    tr.add_argument("text", nargs="?", help="text to translate (default: stdin)")
    _add_model_arg(tr)
    tr.add_argument("--file", type=Path, help="read the text from this file")
    tr.add_argument("--precision", choices=["int8", "fp32"], default="int8")
    tr.add_argument("--beams", type=int, help="1 = greedy (fastest) … 8; default from the model")
    tr.add_argument("--script", choices=["hans", "hant"], default="hans", help="Simplified or Traditional Chinese")
    tr.add_argument("--threads", type=int, help="intra-op threads (default: physical cores)")
    tr.add_argument("--stream", action="store_true", help="print the translation as it is decoded")
    tr.add_argument("--json", action="store_true", help="one request per input line; one JSON object per request")

    sub.add_parser(
        "bench",
        help="benchmark against the peers on the full-size model (from a source checkout; options: qiao bench --help)",
        add_help=False,
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    if args.command == "bench":
        return _bench(rest)
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    if args.self_test and args.command is not None:
        parser.error("--self-test takes no command")
    try:
        if args.self_test:
            from engine.selftest import run_self_test

            return run_self_test(args.model)
        if args.command is None:
            from gui.app import run  # the GUI is only imported when it is wanted

            return run(args.model)
        if args.command == "model":
            return _model_build(args) if args.model_command == "build" else _model_verify(args)
        if args.command == "tokenize":
            return _tokenize(args)
        if args.command == "translate":
            return _translate(args)
    except QiaoError as exc:
        print(f"qiao: {exc}", file=sys.stderr)
        searched = getattr(exc, "searched", None)
        if searched:
            print("searched:\n  " + "\n  ".join(searched), file=sys.stderr)
            print(f"build one with: {BUILD_HINT}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 2


def _bench(argv: list[str]) -> int:
    """Run bench/run.py: the benchmark lives beside the sources (it needs qiao[bench]), never in the frozen app."""
    import subprocess

    script = Path(__file__).resolve().parent.parent / "bench" / "run.py"
    if getattr(sys, "frozen", False) or not script.is_file():
        hint = "pip install -e '.[bench]' && qiao bench"
        print(f"qiao: the benchmark runs from a source checkout: {hint}", file=sys.stderr)
        return 1
    argv = argv[1:] if argv[:1] == ["--"] else argv
    return subprocess.call([sys.executable, str(script), *argv])


def _model_build(args) -> int:
    try:
        from engine.build.pipeline import build_bundle, bundle_sizes
    except ImportError as exc:
        print(f"qiao: model build needs the build tools ({exc.name}): pip install 'qiao[build]'", file=sys.stderr)
        return 1
    manifest = build_bundle(
        args.source,
        args.out,
        eval_tsv=args.eval,
        model_id=args.model_id,
        bleu_margin=args.bleu_margin,
        eval_limit=args.eval_limit,
        quiet=args.quiet,
        overwrite=args.force,
    )
    sizes = bundle_sizes(args.out, manifest)
    scores = (manifest.get("validation") or {}).get("scores")
    print(f"bundle: {args.out}")
    for precision, size in sizes.items():
        print(f"  {precision}: {size / 2**20:.1f} MiB ({size / 1e6:.1f} MB)")
    if scores:
        print("  " + ", ".join(f"{k} BLEU {v['bleu']} chrF {v['chrf']}" for k, v in scores.items()))
    return 0


def _model_verify(args) -> int:
    from engine.manifest import load_manifest, verify_files

    manifest = load_manifest(args.dir)
    problems = verify_files(manifest, args.precision)
    if problems:
        print(f"{args.dir}: {len(problems)} problem(s)", file=sys.stderr)
        for p in problems:
            print(f"  - {p}", file=sys.stderr)
        return 1
    files = manifest.files_for(args.precision)
    print(f"{args.dir}: OK — {manifest.model_id} ({manifest.raw['model']['revision']}), {len(files)} files verified")
    return 0


def _load_tokenizer(model: str | None):
    from engine.locate import find_bundle
    from engine.manifest import verify_bundle
    from engine.tokenizer import MarianTokenizer

    bundle = find_bundle(model)
    manifest = verify_bundle(bundle, hashes=False)
    return MarianTokenizer(manifest.path(manifest.tokenizer["file"]), manifest.tokenizer)


def _tokenize(args) -> int:
    tok = _load_tokenizer(args.model)
    out = sys.stdout
    for n, line in enumerate(sys.stdin, 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            print(f"qiao: line {n}: not JSON ({exc})", file=sys.stderr)
            return 1
        if args.decode:
            if not isinstance(value, list) or not all(isinstance(i, int) for i in value):
                print(f"qiao: line {n}: expected a JSON list of ids", file=sys.stderr)
                return 1
            out.write(json.dumps(tok.decode(value), ensure_ascii=False) + "\n")
        else:
            if not isinstance(value, str):
                print(f"qiao: line {n}: expected a JSON string", file=sys.stderr)
                return 1
            out.write(json.dumps(tok.encode(value)) + "\n")
        out.flush()
    return 0


def _read_input(args) -> str:
    if args.text is not None and args.file is not None:
        raise QiaoError("give the text or --file, not both")
    if args.text is not None:
        return args.text
    if args.file is not None:
        try:
            return args.file.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise QiaoError(f"cannot read {args.file}: {exc.strerror}") from exc
    data = sys.stdin.buffer.read()
    return data.decode("utf-8", errors="replace")


def _translate(args) -> int:
    from engine.locate import find_bundle
    from engine.results import Translation
    from engine.translator import Translator

    text = _read_input(args)
    translator = Translator(find_bundle(args.model), precision=args.precision, threads=args.threads)
    out = sys.stdout
    cancel = threading.Event()
    if args.json:
        lines = text.splitlines() if (args.text is None) else [text]
        for line in lines:
            result = translator.translate(line, beams=args.beams, script=args.script, cancel=cancel)
            record = {"text": result.text, "tokens": result.tokens, "stats": result.stats.as_dict()}
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            out.flush()
        return 0
    result = None
    try:
        for item in translator.stream(text, beams=args.beams, script=args.script, cancel=cancel):
            if isinstance(item, Translation):
                result = item
            elif args.stream:
                out.write(item.delta)
                out.flush()
    except KeyboardInterrupt:
        cancel.set()
        raise
    assert result is not None
    if not args.stream:
        out.write(result.text)
    out.write("\n")
    s = result.stats
    if s is not None and s.sentences:
        first = f"{s.first_token_ms:.0f} ms" if s.first_token_ms is not None else "–"
        print(
            f"[{s.precision.upper()}, beams {s.beams}: {s.total_ms:.0f} ms total, first token {first}, "
            f"{s.source_tokens}→{s.target_tokens} tokens, {s.tokens_per_s:.0f} tok/s]",
            file=sys.stderr,
        )
    return 0
