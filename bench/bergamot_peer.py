"""Qiao's Bergamot family against bergamot-translator itself (issue 29's Performance section), on the full-shape
synthetic model (tests/fixtures/bergamot/make.py FULL_SHAPE: base-memory dims 384/1536, 8 heads, 6 encoder + 4 SSRU
decoder layers, 32k separate vocabularies, a 50/50 shortlist from a synthetic lexicon, int8 with alphas).

    python bench/bergamot_peer.py [--rounds 7] [--threads 1 2] [--skip-window] [--skip-opus]
                                  [--folder MODEL_FOLDER --bundle ITS_QIAO_BUNDLE]

Workloads, greedy as Firefox runs it (beam 1, max-length-factor 2, paragraph sentence splitting, no cache):
(a) `sentence`: each of bench/workloads.py's 8 SENTENCES as its own request; (b) `paragraph`: the 5 PARAGRAPH
sentences as one text per request (both engines split it and decode its sentences as one batch, one shortlist).

Systems, each in its own process, loaded and warmed once, then measured in rounds with the order rotated every round
(peers alternated, so a neighbour's load falls on all of them alike):
* `bergamot`: the bergamot==0.4.5 wheel (tests/oracles/bergamot.py's venv, native module loaded by path), the
  model folder as published, gemm-precision int8shiftAlphaAll; `threads` = the Service's numWorkers (bergamot's
  only thread setting: Marian's cpu-threads is 0 under the service, and one request's batch runs on one worker);
* `qiao`: the folder converted by `qiao model build`, Translator at INT8, EngineConfig threads, guards and
  punctuation normalisation off (outputs compared with bergamot's), the sentence cache emptied before each request;
* `opus`: Qiao's own full-size random opus-mt-en-zh INT8 bundle (bench/prepare.py, .cache/full-random/bundle) on
  the same texts and settings, for the time per generated token.

Reported per workload and thread count: median over rounds of the time per request, generated tokens (</s>
included), ms per token, Qiao's first streamed delta, the share of sentences whose text is identical to bergamot's,
and each process's peak RSS (VmHWM) and load time; Qiao's bundle load (Translator construction, fresh process);
the window's first delta (`--window`: the real MainWindow offscreen on the converted bundle). The CPU (lscpu) and
load average are recorded. JSON goes to bench/results/bergamot-peer-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
CACHE = ROOT / ".cache" / "bergamot-peer"
OPUS_BUNDLE = ROOT / ".cache" / "full-random" / "bundle"
SYSTEMS = ("bergamot", "qiao", "opus")


def bergamot_options() -> dict[str, object]:
    """Firefox's marian options (tests/oracles/bergamot.py FIREFOX_OPTIONS, research §1.3) with the paragraph split
    as Firefox (not the oracle's one sentence per line) and the int8 model's gemm precision. The oracle module is
    stdlib-only, so the bergamot venv's Python imports it too."""
    sys.path.insert(0, str(ROOT))
    from tests.oracles.bergamot import FIREFOX_OPTIONS

    options = {key: value for key, value in FIREFOX_OPTIONS.items() if key != "ssplit-mode"}
    return {**options, "gemm-precision": "int8shiftAlphaAll"}


def peak_rss_mb() -> dict[str, float]:
    """This process's VmHWM and VmRSS in MB (Linux)."""
    out: dict[str, float] = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(("VmHWM", "VmRSS")):
            out[line.split(":")[0]] = int(line.split()[1]) / 1024
    return out


def texts() -> tuple[list[str], str]:
    sys.path.insert(0, str(HERE))
    from workloads import PARAGRAPH, SENTENCES

    return list(SENTENCES), " ".join(PARAGRAPH)


# --- the servers: one per system and thread count, commands on stdin, one JSON line per answer on stdout ---------


def _serve(do_round, extra: dict[str, object]) -> None:
    """Answer `round` (time every request once) and `stats` until `quit`."""
    out = sys.stdout
    print(json.dumps({"ready": True, **extra}), file=out, flush=True)
    for line in sys.stdin:
        command = line.strip()
        if command == "round":
            print(json.dumps(do_round()), file=out, flush=True)
        elif command == "stats":
            print(json.dumps({"rss": peak_rss_mb(), "cpu_s": sum(os.times()[:2])}), file=out, flush=True)
        elif command == "quit":
            return


def serve_bergamot(folder: str, threads: int, module: str) -> None:
    """Runs under the bergamot venv's Python 3.10 (stdlib only besides the wheel's native module)."""
    import importlib.machinery
    import importlib.util

    loader = importlib.machinery.ExtensionFileLoader("bergamot._bergamot", module)
    spec = importlib.util.spec_from_file_location("bergamot._bergamot", module, loader=loader)
    native = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    loader.exec_module(native)  # type: ignore[union-attr]
    base = Path(folder)
    model = next(base.glob("model.*.intgemm.alphas.bin"))
    lines = [f"models: [{json.dumps(str(model))}]"]
    vocabs = [json.dumps(str(next(base.glob(f"{side}vocab.*")))) for side in ("src", "trg")]
    lines.append(f"vocabs: [{', '.join(vocabs)}]")
    lines.append(f"shortlist: [{json.dumps(str(next(base.glob('lex.*.s2t.bin'))))}, false]")
    for key, value in bergamot_options().items():
        lines.append(f"{key}: {str(value).lower() if isinstance(value, bool) else value}")
    before = peak_rss_mb()
    t0 = time.perf_counter()
    service = native.Service(native.ServiceConfig(numWorkers=threads, cacheSize=0, logLevel="off"))
    loaded = service.modelFromConfig("\n".join(lines) + "\n")
    load_ms = 1e3 * (time.perf_counter() - t0)
    options = native.ResponseOptions(alignment=False, qualityScores=False, HTML=False)
    sentences, paragraph = texts()

    def request(text: str) -> dict[str, object]:
        t0 = time.perf_counter()
        (response,) = service.translate(loaded, native.VectorString([text]), options)
        ms = 1e3 * (time.perf_counter() - t0)
        target = response.target
        words = [[target.word(s, w) for w in range(target.numWords(s))] for s in range(target.numSentences())]
        return {
            "ms": ms,
            "tokens": sum(len(w) for w in words),  # one word per emitted token, </s> as ''
            "texts": ["".join(w).strip() for w in words],
            "ended": [bool(w) and w[-1] == "" for w in words],
        }

    def do_round() -> dict[str, object]:
        return {"sentence": [request(s) for s in sentences], "paragraph": [request(paragraph)]}

    _serve(do_round, {"load_ms": load_ms, "rss_before_load": before})


def serve_qiao(bundle: str, threads: int) -> None:
    sys.path.insert(0, str(ROOT))
    import engine  # noqa: F401 - telemetry off before onnxruntime loads
    from engine.config import EngineConfig
    from engine.options import TranslationOptions
    from engine.pipeline.length_limits import length_limit, reached_limit
    from engine.pipeline.translator import Translator

    before = peak_rss_mb()
    t0 = time.perf_counter()
    translator = Translator(bundle, EngineConfig(precision="int8", threads=threads))
    load_ms = 1e3 * (time.perf_counter() - t0)
    t0 = time.perf_counter()
    Translator(bundle, EngineConfig(precision="int8", threads=threads))  # again: verified files trusted, files cached
    reload_ms = 1e3 * (time.perf_counter() - t0)
    options = TranslationOptions(beams=1, guards=False, normalize_punctuation=False)
    eos = translator.tokenizer.eos_id
    model_max = translator._model.max_positions  # type: ignore[union-attr]

    def limit(source: str) -> int:
        source_ids = translator.tokenizer.encode(source)
        return length_limit(len(source_ids), model_max, translator.pipeline.length_rule)

    sentences, paragraph = texts()

    def request(text: str) -> dict[str, object]:
        translator.clear_cache()
        first: list[float] = []
        t0 = time.perf_counter()

        def seen(event) -> None:
            if event.delta and not first:
                first.append(time.perf_counter())

        result = translator.translate(text, options, on_event=seen)
        ms = 1e3 * (time.perf_counter() - t0)
        ids = [list(row) for row in result.tokens]
        # a row below its length limit ended with </s>, which the search generated too (and Translation omits)
        ended = [not reached_limit(len(row), limit(r.source), False) for row, r in zip(ids, result.sentences)]
        return {
            "ms": ms,
            "first_ms": 1e3 * (first[0] - t0) if first else None,
            "tokens": sum(len(row) for row in ids) + sum(ended),
            "texts": [translator.tokenizer.decode([t for t in row if t != eos]).strip() for row in ids],
            "ended": ended,
        }

    def do_round() -> dict[str, object]:
        return {"sentence": [request(s) for s in sentences], "paragraph": [request(paragraph)]}

    _serve(do_round, {"load_ms": load_ms, "reload_ms": reload_ms, "rss_before_load": before})


# --- preparing the models ---------------------------------------------------------------------------------------


def model_folder() -> Path:
    """The full-shape synthetic model folder as published (built once into .cache/bergamot-fixtures)."""
    sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "bergamot"))
    import make

    return make.cached_folder(make.FULL_SHAPE, "intgemm-alphas", shortlist=True).model.parent


def converted_bundle(folder: Path) -> Path:
    """`qiao model build --from FOLDER` into .cache/bergamot-peer, the build's own checks at their defaults; rebuilt
    when the folder or the engine changed, or when the cached bundle's validation falls short of those defaults (a
    bundle built with a lowered INT8 check is not the one the bench measures)."""
    sys.path.insert(0, str(HERE))
    from prepare import engine_fingerprint, qiao_command

    stamp = {"folder": folder.name, "engine": engine_fingerprint()}
    out = CACHE / "bundle"
    stamp_file = CACHE / "bundle.stamp.json"
    if out.exists() and stamp_file.exists() and json.loads(stamp_file.read_text()) == stamp and default_check(out):
        return out
    CACHE.mkdir(parents=True, exist_ok=True)
    partial = CACHE / "bundle.partial"
    subprocess.run(["rm", "-rf", str(partial), str(out)], check=True)
    print(f"[bergamot-peer] qiao model build --from {folder} (a few minutes: the build validates FP32 and INT8)")
    subprocess.run([*qiao_command(), "model", "build", "--from", str(folder), "--out", str(partial)], check=True)
    partial.rename(out)
    stamp_file.write_text(json.dumps(stamp))
    return out


def default_check(bundle: Path) -> bool:
    """Whether the bundle's validation.json passes the converter's default checks: FP32 identical to the reference
    on every check sentence, INT8 on at least INT8_MIN_AGREEMENT of them."""
    sys.path.insert(0, str(ROOT))
    from engine.families.bergamot.converter.convert import INT8_MIN_AGREEMENT

    try:
        check = json.loads((bundle / "validation.json").read_text(encoding="utf-8"))
        sentences = int(check["sentences"])
        return (
            bool(check["passed"])
            and int(check["fp32_identical_to_reference"]) == sentences
            and int(check["int8_identical_to_reference_int8"]) >= INT8_MIN_AGREEMENT * sentences
        )
    except (OSError, ValueError, KeyError, TypeError):
        return False


def opus_bundle() -> Path | None:
    """Qiao's own random full-size opus-mt INT8 bundle, built by bench/prepare.py unless already there."""
    if not (OPUS_BUNDLE / "manifest.json").exists():
        subprocess.run([sys.executable, str(HERE / "prepare.py"), "--only", "bundle"], check=True, cwd=ROOT)
    return OPUS_BUNDLE if (OPUS_BUNDLE / "manifest.json").exists() else None


# --- measuring ----------------------------------------------------------------------------------------------------


class Peer:
    """One server process: started, loaded and warmed (one untimed round), then asked for rounds."""

    def __init__(self, name: str, cmd: list[str], env: dict[str, str]) -> None:
        self.name = name
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT, bufsize=1
        )
        self.hello = self._read()
        self.ask("round")  # warm-up

    def _read(self) -> dict:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.name} exited ({self.proc.wait()})")
        return json.loads(line)

    def ask(self, command: str) -> dict:
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.write("quit\n")
            self.proc.stdin.flush()
            self.proc.wait(timeout=60)


def _env(tmp: Path) -> dict[str, str]:
    sys.path.insert(0, str(ROOT))
    from engine.privacy import TELEMETRY_OFF

    # a fresh verification cache: the first Translator hashes every file, as on a first start
    return {**os.environ, **TELEMETRY_OFF, "QIAO_CACHE_DIR": str(tmp / "qiao-cache"), "OMP_NUM_THREADS": "1"}


def start_peers(systems: list[str], threads: int, paths: dict[str, Path], tmp: Path) -> dict[str, Peer]:
    me = str(Path(__file__).resolve())
    peers: dict[str, Peer] = {}
    for name in systems:
        if name == "bergamot":
            sys.path.insert(0, str(ROOT))
            from tests.oracles import bergamot as oracle

            python, module = str(oracle.venv_python()), str(oracle.native_module())
            cmd = [python, me, "--serve", "bergamot", "--path", str(paths["folder"]), "--module", module]
        else:
            cmd = [sys.executable, me, "--serve", "qiao", "--path", str(paths[name])]
        peers[name] = Peer(name, [*cmd, "--threads", str(threads)], _env(tmp / f"{name}-{threads}"))
    return peers


def measure(systems: list[str], threads: int, rounds: int, paths: dict[str, Path]) -> dict[str, object]:
    """Every system's server at one thread count, `rounds` rounds with the order rotated each round."""
    with tempfile.TemporaryDirectory(prefix="bergamot-peer-") as scratch:
        peers = start_peers(systems, threads, paths, Path(scratch))
        samples: dict[str, list[dict]] = {name: [] for name in systems}
        loads: list[float] = []
        try:
            for r in range(rounds):
                order = systems[r % len(systems) :] + systems[: r % len(systems)]
                for name in order:
                    samples[name].append(peers[name].ask("round"))
                loads.append(os.getloadavg()[0])
            stats = {name: peer.ask("stats") for name, peer in peers.items()}
        finally:
            for peer in peers.values():
                peer.close()
    return {
        "threads": threads,
        "loadavg_1min": loads,
        "systems": {n: {"hello": peers[n].hello, "rounds": samples[n], "stats": stats[n]} for n in systems},
    }


def summarise(run: dict) -> dict[str, dict[str, dict[str, object]]]:
    """Per workload and system: median ms per request over rounds (a round's mean over its requests), tokens per
    request, ms per token, Qiao's first delta, identical share against bergamot, stops at the length limit."""
    out: dict[str, dict[str, dict[str, object]]] = {}
    systems = run["systems"]
    for workload in ("sentence", "paragraph"):
        rows: dict[str, dict[str, object]] = {}
        for name, data in systems.items():
            rounds = data["rounds"]
            per_round = [statistics.mean(q["ms"] for q in rnd[workload]) for rnd in rounds]
            tokens = statistics.mean(q["tokens"] for q in rounds[0][workload])
            firsts = [q["first_ms"] for rnd in rounds for q in rnd[workload] if q.get("first_ms") is not None]
            ended = [e for q in rounds[0][workload] for e in q["ended"]]
            ms = statistics.median(per_round)
            row: dict[str, object] = {
                "ms": ms,
                "ms_min": min(per_round),
                "tokens": tokens,
                "ms_per_token": ms / tokens if tokens else None,
                "first_ms": statistics.median(firsts) if firsts else None,
                "sentences": len(ended),
                "length_limit_stops": sum(1 for e in ended if e is False),
            }
            rows[name] = row
        if "bergamot" in systems and "qiao" in systems:
            theirs = [t for q in systems["bergamot"]["rounds"][0][workload] for t in q["texts"]]
            ours = [t for q in systems["qiao"]["rounds"][0][workload] for t in q["texts"]]
            same = sum(a == b for a, b in zip(theirs, ours))
            rows["qiao"]["identical"] = f"{same}/{max(len(theirs), len(ours))}"
            rows["qiao"]["vs_bergamot"] = rows["qiao"]["ms"] / rows["bergamot"]["ms"]  # type: ignore[operator]
        if "opus" in rows and "qiao" in rows and rows["qiao"]["ms_per_token"] and rows["opus"]["ms_per_token"]:
            rows["opus"]["per_token_vs_qiao"] = rows["opus"]["ms_per_token"] / rows["qiao"]["ms_per_token"]  # type: ignore[operator]
        out[workload] = rows
    return out


def lscpu() -> dict[str, object]:
    sys.path.insert(0, str(HERE))
    from machine import read_cpu

    text = subprocess.run(["lscpu"], capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"}).stdout
    fields = {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in text.splitlines()) if v}
    return {"model_name": fields.get("Model name"), "cpus": fields.get("CPU(s)"), "identity": read_cpu()}


# --- the window ---------------------------------------------------------------------------------------------------

WINDOW_SCRIPT = r"""
import json, os, sys, tempfile, time
root, bundle, text = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, root)
home = tempfile.mkdtemp(prefix="qiao-window-")
for key, sub in (("QIAO_CONFIG_DIR", "config"), ("QIAO_STATE_DIR", "state"), ("XDG_DATA_HOME", "data"),
                 ("XDG_CONFIG_HOME", "xdg"), ("QIAO_CACHE_DIR", "cache")):
    os.environ[key] = os.path.join(home, sub)
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtWidgets import QApplication
from gui.app import create_app
from gui.settings import Settings
from gui.window.main_window import MainWindow
from gui.worker.engine import local_engine
from pathlib import Path
app = create_app()
t0 = time.perf_counter()
window = MainWindow(Settings(Path(home) / "config" / "qiao.ini"), Path(home) / "state" / "source.txt", bundle,
                    engine=local_engine())
window.show()
def wait(condition, limit=120.0):
    end = time.perf_counter() + limit
    while not condition():
        app.processEvents()
        if time.perf_counter() > end:
            raise SystemExit("timed out")
        time.sleep(0.0005)
wait(lambda: window.model is not None)
ready_ms = 1e3 * (time.perf_counter() - t0)
firsts, finals = [], []
for i in range(int(sys.argv[4])):
    window.target.clear()
    app.processEvents()
    sample = text if i % 2 == 0 else text + " "
    t0 = time.perf_counter()
    window.source.setPlainText(sample)
    window.translate()
    wait(lambda: window.target.toPlainText().strip() != "")
    firsts.append(1e3 * (time.perf_counter() - t0))
    wait(lambda: not window.requests.busy if hasattr(window.requests, "busy") else True)
print(json.dumps({"ready_ms": ready_ms, "first_delta_ms": firsts, "model": str(window.model)}))
window.close()
"""


def window_latency(bundle: Path, text: str, repeats: int = 7) -> dict[str, object]:
    """The real MainWindow offscreen on `bundle`: from the source text being set (and Translate pressed) to the
    first delta in the target pane; also the time to a loaded model."""
    done = subprocess.run(
        [sys.executable, "-c", WINDOW_SCRIPT, str(ROOT), str(bundle), text, str(repeats)],
        capture_output=True,
        text=True,
        timeout=600,
        env=_env(Path(tempfile.gettempdir())),
        cwd=ROOT,
    )
    if done.returncode != 0:
        return {"status": "failed", "stderr": done.stderr[-2000:]}
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["first_delta_median_ms"] = statistics.median(result["first_delta_ms"])
    return result


# --- the report ---------------------------------------------------------------------------------------------------


def report(result: dict) -> str:
    lines = [
        f"CPU: {result['cpu']['model_name']} ({result['cpu']['cpus']} CPUs; "
        f"{' '.join(result['cpu']['identity']['simd'])}); load average at start {result['loadavg_start']}",
        "",
        "| workload | threads | system | ms/request | tokens/request | ms/token | first delta ms | identical | "
        "÷ bergamot | peak RSS MB | load ms |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run in result["runs"]:
        summary = run["summary"]
        for workload, rows in summary.items():
            for name, row in rows.items():
                data = run["systems"][name]
                first = f"{row['first_ms']:.1f}" if row.get("first_ms") else "–"
                ratio = f"{row['vs_bergamot']:.2f}" if "vs_bergamot" in row else "–"
                lines.append(
                    f"| {workload} | {run['threads']} | {name} | {row['ms']:.1f} | {row['tokens']:.1f} | "
                    f"{row['ms_per_token']:.2f} | {first} | {row.get('identical', '–')} | {ratio} | "
                    f"{data['stats']['rss']['VmHWM']:.0f} | {data['hello']['load_ms']:.0f} |"
                )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--serve", choices=["bergamot", "qiao"], help=argparse.SUPPRESS)
    ap.add_argument("--path", help=argparse.SUPPRESS)
    ap.add_argument("--module", help=argparse.SUPPRESS)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--skip-window", action="store_true")
    ap.add_argument("--folder", type=Path, help="the model folder as published (default: the full-shape synthetic)")
    ap.add_argument("--bundle", type=Path, help="Qiao's bundle of that folder (default: converted here, cached)")
    args = ap.parse_args(argv)
    if args.serve == "bergamot":
        serve_bergamot(args.path, args.threads[0], args.module)
        return 0
    if args.serve == "qiao":
        serve_qiao(args.path, args.threads[0])
        return 0
    systems = [s for s in args.systems.split(",") if s]
    paths: dict[str, Path] = {"folder": args.folder or model_folder()}
    if "qiao" in systems:
        paths["qiao"] = args.bundle or converted_bundle(paths["folder"])
    if "opus" in systems:
        opus = opus_bundle()
        if opus is None:
            systems.remove("opus")
        else:
            paths["opus"] = opus
    result: dict[str, object] = {
        "cpu": lscpu(),
        "loadavg_start": os.getloadavg(),
        "rounds": args.rounds,
        "model_folder": str(paths["folder"]),
        "bundles": {k: str(v) for k, v in paths.items()},
        "runs": [],
    }
    for threads in args.threads:
        run = measure(systems, threads, args.rounds, paths)
        run["summary"] = summarise(run)
        result["runs"].append(run)  # type: ignore[attr-defined]
    if not args.skip_window and "qiao" in paths:
        sentences, _ = texts()
        result["window"] = window_latency(paths["qiao"], sentences[0])
    result["loadavg_end"] = os.getloadavg()
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"bergamot-peer-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(result, indent=1, ensure_ascii=False))
    print(report(result))
    if "window" in result:
        print(f"window: {json.dumps({k: v for k, v in result['window'].items() if k != 'first_delta_ms'})}")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
