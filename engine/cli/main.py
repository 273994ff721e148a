"""The engine's commands of `qiao` (model list/import/remove/download/build/verify, tokenize, translate,
translate-file, serve, bench, --self-test).

The command line itself, and the window it opens without a command, belong to the composition root `qiao.cli`:
the engine never imports the GUI. `python -m engine.cli.main` runs the commands alone.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from engine import __version__
from engine.cli.io import (
    GuardedStdout,
    Output,
    OutputClosed,
    OutputError,
    iter_lines,
    json_line,
    reserve_closed_std_fds,
    say,
    silence_stdout,
    stdin_bytes,
)
from engine.cli.models import add_model_actions, run_model_action
from engine.config import DEFAULT_PRECISION, MAX_BEAMS, MIN_BEAMS, PRECISIONS
from engine.errors import BundleError, InputError, QiaoError


def build_hint(pair: str | None = None) -> str:
    """The command that builds the Helsinki-NLP model for `pair` (None: the default en→zh) into the checkout."""
    name = f"opus-mt-{pair or 'en-zh'}"
    return f"qiao model build --from Helsinki-NLP/{name} --out resources/models/{name}"


EXIT_BROKEN_PIPE = 141  # what a shell reports for a Unix tool killed by SIGPIPE (`… | head -1`)
TOKENIZE_MAX_LINE_BYTES = 16 * 2**20  # one JSON line for `qiao tokenize`; a longer one is an error, not a hang
_BENCH_HELP = "benchmark against the peers on the full-size model (from a source checkout; options: qiao bench --help)"


def _add_model_arg(p: argparse.ArgumentParser, top: bool = False) -> None:
    # A command's own --model defaults to SUPPRESS: when not given there, the top-level `qiao --model DIR` stays.
    p.add_argument(
        "--model",
        metavar="DIR|NAME",
        default=None if top else argparse.SUPPRESS,
        help="model bundle folder, or an installed model's name as `qiao model list` shows it (default: qiao --model, "
        "$QIAO_MODEL_DIR, then the model chosen for the direction, else the best installed one)",
    )


def _whole_number(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None


def _thread_count(value: str) -> int:
    """--threads: 0 is automatic; more threads than CPUs only adds contention (999 took 12 s for one sentence)."""
    n = _whole_number(value)
    top = os.cpu_count() or 64
    if n != 0 and not 1 <= n <= top:
        raise argparse.ArgumentTypeError(f"{n} is out of range: use 1 to {top} (the CPUs here), or 0 for automatic")
    return n


def _beam_count(value: str) -> int:
    n = _whole_number(value)
    if not MIN_BEAMS <= n <= MAX_BEAMS:
        raise argparse.ArgumentTypeError(f"{n} is out of range: use {MIN_BEAMS} (greedy, fastest) to {MAX_BEAMS}")
    return n


def _alternative_count(value: str) -> int:
    n = _whole_number(value)
    if not 0 <= n <= MAX_BEAMS - 1:
        raise argparse.ArgumentTypeError(f"{n} is out of range: use 0 (none) to {MAX_BEAMS - 1}")
    return n


def _direction(value: str) -> str:
    from engine.store.installed import ModelStoreError, normalise_pair

    try:
        return normalise_pair(value)
    except ModelStoreError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _direction_or_auto(value: str) -> str:
    """--direction of translate / translate-file: a pair, or "auto" (each text in the installed direction that reads
    it, engine.cli.direction)."""
    return "auto" if value.strip().lower() == "auto" else _direction(value)


ENGINE_DESCRIPTION = "Qiao (桥): the offline English→Chinese translator's engine commands (the app opens from qiao)."


def build_parser(description: str = ENGINE_DESCRIPTION) -> argparse.ArgumentParser:
    """The whole `qiao` command line; the composition root gives it the product's description."""
    parser = argparse.ArgumentParser(prog="qiao", description=description)
    parser.add_argument("--version", action="version", version=f"qiao {__version__}")
    parser.add_argument(
        "--self-test", action="store_true", help="translate a fixed sentence in every precision, no display needed"
    )
    _add_model_arg(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    model = sub.add_parser("model", help="list, import, download, remove, build or check model bundles")
    msub = model.add_subparsers(dest="model_command", metavar="ACTION", required=True)
    build = msub.add_parser(
        "build",
        help="export a Marian checkpoint or convert a Firefox Translations model folder to a verified ONNX bundle "
        "(needs qiao[build])",
    )
    build.add_argument(
        "--from",
        dest="source",
        required=True,
        help="Hugging Face model id, local checkpoint folder, or Firefox Translations model folder",
    )
    build.add_argument("--out", required=True, type=Path, help="bundle folder to write")
    build.add_argument("--eval", type=Path, help="parallel TSV: Tatoeba format or source<TAB>reference")
    build.add_argument("--eval-limit", type=int, default=500, help="sentences to validate on (default 500)")
    build.add_argument("--bleu-margin", type=float, default=1.0, help="max BLEU INT8 may lose against FP32")
    build.add_argument("--model-id", help="name to record for a local checkpoint")
    build.add_argument("--source", dest="source_lang", help="source language (en, zh), if not the checkpoint's own")
    build.add_argument("--target", dest="target_lang", help="target language (en, zh), if not the checkpoint's own")
    build.add_argument(
        "--int8-head",
        choices=("columns", "blocks"),
        default="columns",
        help="INT8 output projection: 7-bit per token (default; fast at many rows) or 8-bit blocks (33 MB smaller)",
    )
    build.add_argument("--force", action="store_true", help="replace an existing bundle folder")
    build.add_argument("--quiet", action="store_true")
    verify = msub.add_parser("verify", help="check a bundle against its manifest")
    verify.add_argument("dir", type=Path, metavar="DIR", help="bundle folder, or the name `qiao model list` shows")
    verify.add_argument("--precision", choices=PRECISIONS, help="check only the files one precision needs")
    add_model_actions(msub)

    tok = sub.add_parser(
        "tokenize",
        help="JSON strings on stdin → source ids (MarianTokenizer's contract)",
        description="One JSON value per input line (split on \\n only; blank lines skipped) → one JSON line out. "
        "Input that is not UTF-8, not JSON or not the expected type stops the run: the line is named on stderr, "
        "exit status 1.",
    )
    _add_model_arg(tok)
    tok.add_argument("--decode", action="store_true", help="JSON id lists on stdin → decoded strings")

    tr = sub.add_parser(
        "translate",
        help="translate text from an argument, a file or stdin",
        description="--json: one request per input line (split on \\n or \\r\\n only) and exactly one JSON "
        "object per line, in order, written as each is done. A line Qiao refuses (over its size limit) gets "
        '{"error": …, "line": N} and the run goes on; the exit status is then 1. Each record has "text", '
        '"tokens", "stats", "scores" (one per sentence) and "sentences" (per sentence: source, text, score, '
        "tokens with their text and log-probability, flags, alternatives, origin, unmet glossary terms). "
        "Without --json, a sentence the guards flag gets a note on stderr.",
    )
    tr.add_argument("text", nargs="?", help="text to translate (default: stdin)")
    _add_model_arg(tr)
    tr.add_argument("--file", type=Path, help="read the text from this file")
    tr.add_argument("--precision", choices=PRECISIONS, default=DEFAULT_PRECISION)
    tr.add_argument("--beams", type=_beam_count, help="1 = greedy (fastest) … 8; default from the model")
    tr.add_argument(
        "--variant", metavar="KEY", help="target variant the model offers, e.g. hans or hant (default: the model's)"
    )
    tr.add_argument("--script", dest="variant", help=argparse.SUPPRESS)  # the old name of --variant
    tr.add_argument("--from", dest="source_lang", metavar="LANG", help="source language, e.g. en (with --to)")
    tr.add_argument("--to", dest="target_lang", metavar="LANG", help="target language, e.g. zh (with --from)")
    tr.add_argument(
        "--direction",
        type=_direction_or_auto,
        metavar="PAIR",
        help="language pair, e.g. zh-en, or auto (the default): each text in the installed direction that reads its "
        "language (the choice is in --json's records)",
    )
    tr.add_argument("--threads", type=_thread_count, help="intra-op threads, 1 … CPUs (default or 0: automatic)")
    tr.add_argument("--no-join-lines", action="store_true", help="translate hard-wrapped lines one by one")
    tr.add_argument("--raw-punctuation", action="store_true", help="keep the model's half-width ! ? , : ;")
    tr.add_argument("--stream", action="store_true", help="print the translation as it is decoded")
    tr.add_argument("--json", action="store_true", help="one request per input line; one JSON object per line")
    tr.add_argument(
        "--alternatives",
        type=_alternative_count,
        default=0,
        metavar="K",
        help=f"up to K other whole-sentence translations per sentence from the beam, 0 … {MAX_BEAMS - 1} (the beam "
        "is raised to at least K+1): in the --json records, else as notes on stderr",
    )
    tr.add_argument(
        "--prefix",
        metavar="TEXT",
        help="force the translation to start with TEXT (it may end inside a word), then decode the rest; "
        "the input must be one sentence",
    )
    tr.add_argument(
        "--glossary",
        type=Path,
        metavar="FILE",
        help="CSV/TSV of source term, target term[, case, whole_word]: the terms the translation must use "
        "(an empty target: keep the source term as it is)",
    )
    tr.add_argument(
        "--no-guards",
        action="store_true",
        help="no checks for known model failures (length, numbers, repetition, subtitle artefacts like (掌声))",
    )

    _add_translate_file(sub)
    from engine.cli.history import add_history_parser

    add_history_parser(sub)

    from engine.cli.serve import add_serve

    add_serve(sub, _add_model_arg, _direction, _thread_count, PRECISIONS, DEFAULT_PRECISION)

    # The frozen app has no benchmark: `qiao bench` there only says where it runs, and --help does not list it
    # (a sub-parser added without help= is left out of the command list).
    if getattr(sys, "frozen", False):
        sub.add_parser("bench", add_help=False)
    else:
        sub.add_parser("bench", add_help=False, help=_BENCH_HELP)
    return parser


def _add_translate_file(sub) -> None:
    """`qiao translate-file`: documents in, translated documents beside them (engine.cli.documents)."""
    from engine.documents import registry

    tf = sub.add_parser(
        "translate-file",
        help="translate documents (text, Markdown, HTML, subtitles, Word, …) keeping their layout",
        description="Each document is written translated, beside it (or in --out) as NAME.LANG.EXT, only its text "
        "changed. One line per file on stdout. Ctrl+C stops cleanly: the finished part is kept and the same "
        "command continues from it. Exit status 1 when a file failed or some of its text was left untranslated, "
        "130 when cancelled.",
    )
    tf.add_argument("inputs", nargs="+", type=Path, metavar="IN", help="document files or folders (searched)")
    _add_model_arg(tf)
    tf.add_argument("--out", type=Path, metavar="DIR", help="folder for the results (default: beside each input)")
    tf.add_argument(
        "--format", choices=("auto", *registry.names()), default="auto", help="read every input as this format"
    )
    tf.add_argument(
        "--name",
        metavar="TEMPLATE",
        default="{stem}.{lang}{suffix}",
        help="result name from {stem}, {lang} and {suffix} (default: {stem}.{lang}{suffix})",
    )
    tf.add_argument("--overwrite", action="store_true", help="replace existing results (never an input)")
    tf.add_argument("--no-resume", action="store_true", help="start over even where an earlier run left progress")
    tf.add_argument("--precision", choices=PRECISIONS, default=DEFAULT_PRECISION)
    tf.add_argument("--beams", type=_beam_count, help="1 = greedy (fastest) … 8; default from the model")
    tf.add_argument("--variant", metavar="KEY", help="target variant the model offers, e.g. hans or hant")
    tf.add_argument("--from", dest="source_lang", metavar="LANG", help="source language, e.g. en (with --to)")
    tf.add_argument("--to", dest="target_lang", metavar="LANG", help="target language, e.g. zh (with --from)")
    tf.add_argument(
        "--direction",
        type=_direction_or_auto,
        metavar="PAIR",
        help="language pair, e.g. zh-en, or auto (the default): each document in the direction that reads it",
    )
    tf.add_argument("--threads", type=_thread_count, help="intra-op threads, 1 … CPUs (default or 0: automatic)")
    tf.add_argument("--no-join-lines", action="store_true", help="translate hard-wrapped lines one by one")
    tf.add_argument("--raw-punctuation", action="store_true", help="keep the model's half-width ! ? , : ;")


def main(argv: list[str] | None = None) -> int:
    """The engine's commands alone (`python -m engine.cli.main`): without a command there is no window to open here."""
    return run_guarded(lambda: _engine_only(argv))


def _engine_only(argv: list[str] | None) -> int:
    args = parse_args(argv)
    if not is_command(args):
        build_parser().error(
            "no command: this is the engine's command line; the app opens from `python -m qiao` "
            "(a `qiao` script that lands here is stale: pip install -e .)"
        )
    return run_command(args)


def run_guarded(body: Callable[[], int]) -> int:
    """Run one `qiao` invocation. What a user can get wrong ends in one clear line on stderr, never a traceback."""
    reserve_closed_std_fds()
    stdout = sys.stdout
    try:
        if stdout is not None:
            sys.stdout = GuardedStdout(stdout)
        code = _reported(body)
        if stdout is not None:
            Output(stdout).flush()  # here, not at exit, so a full disk is reported like any other error
        return code
    except OutputClosed:
        silence_stdout()
        return EXIT_BROKEN_PIPE
    except OutputError as exc:
        say(f"qiao: {exc}")
        silence_stdout()
        return 1
    finally:
        if isinstance(sys.stdout, GuardedStdout):
            sys.stdout = stdout


def parse_args(argv: list[str] | None, description: str = ENGINE_DESCRIPTION) -> argparse.Namespace:
    """Parse and check a `qiao` command line (argparse exits 2 on a mistake); `bench`'s own options go in `.rest`."""
    parser = build_parser(description)
    args, rest = parser.parse_known_args(argv)
    args.rest = rest
    if args.command == "bench":
        return args
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    if args.self_test and args.command is not None:
        parser.error("--self-test takes no command")
    if args.command in ("translate", "translate-file"):
        _check_direction(parser, args)
    return args


def _check_direction(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """--from/--to together, or --direction; either becomes `args.direction` ("en-zh") or stays None."""
    source, target = args.source_lang, args.target_lang
    if (source is None) != (target is None):
        parser.error("--from and --to go together (or use --direction, e.g. --direction zh-en)")
    if source is not None:
        if args.direction is not None:
            parser.error("give --from/--to or --direction, not both")
        args.direction = _direction_or_exit(parser, f"{source}-{target}")


def _direction_or_exit(parser: argparse.ArgumentParser, value: str) -> str:
    try:
        return _direction(value)
    except argparse.ArgumentTypeError as exc:
        parser.error(f"--from/--to: {exc}")
        raise


def is_command(args: argparse.Namespace) -> bool:
    """Whether the parsed line asks the engine for something (a command or --self-test), not for the app."""
    return args.self_test or args.command is not None


def run_command(args: argparse.Namespace) -> int:
    """Run the engine command `args` names: --self-test, model, tokenize, translate, translate-file, serve or bench."""
    if args.command == "bench":
        return _bench(args.rest)
    if args.self_test:
        from engine.cli.selftest import run_self_test

        return run_self_test(args.model)
    if args.command == "model":
        with _terminate_as_interrupt():
            if args.model_command == "build":
                return _model_build(args)
            if args.model_command == "verify":
                return _model_verify(args)
            return run_model_action(args)
    if args.command == "tokenize":
        return _tokenize(args)
    if args.command == "translate":
        from engine.cli.translate import translate_command

        return translate_command(args)
    if args.command == "translate-file":
        from engine.cli.documents import translate_file_command

        return translate_file_command(args)
    if args.command == "history":
        from engine.cli.history import run_history

        return run_history(args)
    if args.command == "serve":
        from engine.cli.serve import serve_command

        return serve_command(args)
    return 2


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM (kill, `timeout`, a service manager) handled as Ctrl+C while a model command runs: its cleanup runs
    (a build's staging folder, an import's work folder) and it exits 130, instead of dying with them left behind."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGTERM"):
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _reported(body: Callable[[], int]) -> int:
    """A failure the user can act on (no model, an unreadable folder, Ctrl+C) as one line and an exit status."""
    try:
        return body()
    except (OutputError, OutputClosed):
        raise
    except OSError as exc:  # e.g. a model folder this user may not read
        where = f"{exc.filename}: " if exc.filename else ""
        say(f"qiao: {where}{exc.strerror or exc}")
        return 1
    except QiaoError as exc:
        say(f"qiao: {exc}")
        if isinstance(exc, BundleError):
            say(repair_hint(exc.bundle_dir))
            other = intact_precision_hint(exc.bundle_dir)
            if other is not None:
                say(other)
            return 1
        searched = getattr(exc, "searched", None)
        if searched:
            say("searched:\n  " + "\n  ".join(searched))
            to_convert = _model_to_convert(searched)
            if to_convert is not None:
                say(to_convert)
                return 1
            hint = build_hint(getattr(exc, "pair", None))
            say(f"get one with: qiao model download (or qiao model import PATH); build one with: {hint}")
        return 1
    except KeyboardInterrupt:
        return 130


def repair_hint(bundle_dir: str, verified: bool = False) -> str:
    """What to do about a bundle whose files fail their check: the commands that check it, repair it or avoid it
    (the message alone named the damaged files and left the user there)."""
    name = Path(bundle_dir).name
    check = "" if verified else f"check every file with: qiao model verify {name}\n"
    return (
        f"{check}repair it by importing it again (qiao model import PATH --force) or downloading it again "
        "(qiao model download ID --force), or use another installed model (qiao model list; "
        "qiao translate --model NAME)"
    )


def intact_precision_hint(bundle_dir: str) -> str | None:
    """When the damaged files belong to one precision and another precision's files all pass their check: that the
    other one translates now (the window offers "Use FP32 instead"; the command line named the file and stopped).
    None when every precision fails, or the bundle has only one."""
    from engine.bundle.manifest import load_manifest, verify_bundle

    try:
        listed = list(load_manifest(bundle_dir).precisions)
    except (QiaoError, OSError):
        return None
    intact, broken = [], []
    for precision in listed:
        try:
            verify_bundle(bundle_dir, precision)
        except (QiaoError, OSError):
            broken.append(precision)
        else:
            intact.append(precision)
    if not intact or not broken:
        return None
    works, fails = intact[0], "/".join(broken)
    return (
        f"the {works} files pass their check: translate with --precision {works} until the {fails} files are repaired"
    )


def _model_to_convert(searched: list[str]) -> str | None:
    """When the one folder searched for a bundle is a model as its makers publish it (a Firefox Translations
    folder, given to --model or `model verify`), how to convert it; else None."""
    if len(searched) != 1:
        return None
    folder = Path(searched[0])
    try:
        from engine import families

        family = families.converter_for(folder) if folder.is_dir() else None
    except OSError:
        return None
    if family is None:
        return None
    return (
        f"{folder} is a model folder as its makers publish it (family {family.name}), not a Qiao bundle: "
        f"`qiao model import {folder}` converts and installs it (or `qiao model build --from {folder} --out DIR`)"
    )


def _bench(argv: list[str]) -> int:
    """Run bench/run.py: the benchmark lives beside the sources (it needs qiao[bench]), never in the frozen app."""
    import subprocess

    script = Path(__file__).resolve().parents[2] / "bench" / "run.py"
    if getattr(sys, "frozen", False) or not script.is_file():
        hint = "pip install -e '.[bench]' && qiao bench"
        say(f"qiao: the benchmark runs from a source checkout: {hint}")
        return 1
    argv = argv[1:] if argv[:1] == ["--"] else argv
    return subprocess.call([sys.executable, str(script), *argv])


def _model_build(args) -> int:
    from engine import families

    source = Path(args.source).expanduser()
    if source.is_dir() and not any(source.iterdir()):  # an unreadable folder: OSError, reported by _reported
        raise InputError(
            f"{source} is empty: --from takes a Firefox Translations model folder, a Marian checkpoint folder or "
            "a Hugging Face model id"
        )
    if source.is_file():
        _refuse_a_file(source)
    if (source / "manifest.json").is_file():
        raise InputError(
            f"{source} is a Qiao bundle already: nothing to build; `qiao model import {source}` installs it"
        )
    family = families.converter_for(source) if source.is_dir() else None
    if family is not None:  # a model folder as its makers publish it (Firefox Translations): its family converts it
        return _family_build(family, args)
    try:
        from engine.convert.pipeline import build_bundle, bundle_sizes
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
        source_lang=args.source_lang,
        target_lang=args.target_lang,
        int8_head=args.int8_head,
    )
    sizes = bundle_sizes(args.out, manifest)
    scores = (manifest.get("validation") or {}).get("scores")
    languages = manifest["languages"]
    print(f"bundle: {args.out} ({languages['source']['name']} → {languages['target']['name']})")
    for precision, size in sizes.items():
        print(f"  {precision}: {size / 2**20:.1f} MiB ({size / 1e6:.1f} MB)")
    if scores:
        print("  " + ", ".join(f"{k} BLEU {v['bleu']} chrF {v['chrf']}" for k, v in scores.items()))
    return 0


def _refuse_a_file(source: Path) -> None:
    """`model build --from FILE`: an archive is for `model import`; a file of a model folder means its folder."""
    from engine import families
    from engine.store.archive import TAR_SUFFIXES

    if source.name.lower().endswith((".zip", *TAR_SUFFIXES)):
        raise InputError(
            f"{source} is an archive: `qiao model import {source}` unpacks it (and converts a model in it), or unpack "
            "it and give its folder to --from"
        )
    if families.converter_for(source.parent) is not None:
        raise InputError(f"{source} is one file of a model folder: give the folder, --from {source.parent}")


def _family_build(family, args) -> int:
    """`qiao model build` of a folder a family's converter reads (engine.families.converter_for)."""
    try:
        manifest = family.build().build_bundle(
            Path(args.source).expanduser(),
            args.out,
            model_id=args.model_id,
            source_lang=args.source_lang,
            target_lang=args.target_lang,
            quiet=args.quiet,
            overwrite=args.force,
        )
    except ImportError as exc:
        print(f"qiao: model build needs the build tools ({exc.name}): pip install 'qiao[build]'", file=sys.stderr)
        return 1
    from engine.convert.pipeline import bundle_sizes

    languages = manifest["languages"]
    print(f"bundle: {args.out} ({languages['source']['name']} → {languages['target']['name']}, {family.name})")
    for precision, size in bundle_sizes(args.out, manifest).items():
        print(f"  {precision}: {size / 2**20:.1f} MiB ({size / 1e6:.1f} MB)")
    return 0


def _model_verify(args) -> int:
    """Every sha256, never the verified-files cache; the manifest's seal and schema first."""
    from engine.bundle.manifest import verify_bundle

    if not args.dir.exists() and len(args.dir.parts) == 1:  # a name, not a path
        from engine.store.installed import installed_models

        named = [m.path for m in installed_models(args.model) if m.name == args.dir.name]
        args.dir = named[0] if named else args.dir
    try:
        manifest = verify_bundle(args.dir, args.precision)
    except BundleError as exc:
        print(f"{args.dir}: {len(exc.problems)} problem(s)", file=sys.stderr)
        for p in exc.problems:
            print(f"  - {p}", file=sys.stderr)
        print(repair_hint(str(args.dir), verified=True), file=sys.stderr)
        return 1
    files = manifest.files_for(args.precision)
    print(f"{args.dir}: OK — {manifest.model_id} ({manifest.raw['model']['revision']}), {len(files)} files verified")
    return 0


def _load_tokenizer(model: str | None):
    from engine import families
    from engine.bundle.manifest import verify_bundle
    from engine.store.installed import find_bundle

    bundle = find_bundle(model)
    manifest = verify_bundle(bundle, hashes=False)
    return families.of(manifest).load_tokenizer(manifest)


def _tokenize(args) -> int:
    """Stops at the first line that is not what the contract expects: a tokenizer test wants every id or none."""
    out = Output(sys.stdout)
    source = stdin_bytes()
    tok = _load_tokenizer(args.model)
    for line in iter_lines(source, TOKENIZE_MAX_LINE_BYTES):
        if line.data is None:
            raise InputError(f"line {line.number}: over {TOKENIZE_MAX_LINE_BYTES:,} bytes, longer than any JSON line")
        if not line.data.strip(b" \t\r"):
            continue
        value = _json_value(line)
        if args.decode:
            if not isinstance(value, list) or not all(_is_id(i, tok.vocab_size) for i in value):
                raise InputError(f"line {line.number}: expected a JSON list of ids (0 … {tok.vocab_size - 1})")
            out.write(json_line(tok.decode(value)), flush=True)
        else:
            if not isinstance(value, str):
                raise InputError(f"line {line.number}: expected a JSON string")
            _check_unicode(value, line.number)
            out.write(json_line(tok.encode(value)), flush=True)
    return 0


def _json_value(line) -> object:
    try:
        text = line.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        byte = line.data[exc.start]
        raise InputError(f"line {line.number}: not UTF-8 text (byte 0x{byte:02x} at offset {exc.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"line {line.number}: not JSON ({exc})") from None
    except RecursionError:
        raise InputError(f"line {line.number}: not JSON Qiao reads (nested too deeply)") from None


def _is_id(value: object, vocab_size: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < vocab_size


def _check_unicode(value: str, number: int) -> None:
    """A JSON "\\ud800" is a lone surrogate: not a character, so no tokenizer can take it."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(value[exc.start])
        raise InputError(f"line {number}: the string holds a lone surrogate (\\u{code:04x}), not text") from None


if __name__ == "__main__":
    sys.exit(main())
