"""Smoke-test the frozen Linux app the way a user's machine would run it: offline, with no Python, on a real display.

    python packaging/smoke_test.py [--build] [--dist dist/qiao] [--out build/smoke] [--screenshot FILE]

1. (`--build`) freezes the app with the committed fixture models into OUT/dist/qiao (packaging/build.sh --model
   fixture [--model fixture-zh-en] --dist OUT/dist: the zh→en one once it is committed), leaving dist/ alone.
2. Checks the folder (packaging/check_dist.py): no build-only package inside; installed size without models.
3. Measures the zstd-compressed tarball of the app without models.
4. Runs `qiao --self-test` (which tests every embedded bundle; each must appear in its report) and then
   `qiao translate-file` on one small document per format (packaging/smoke_documents.py; each result must say what
   the engine from this checkout writes with the same embedded bundle) in an isolated environment:
   - network: a new network namespace (`unshare --net`) holding only a loopback interface that is down, so no
     connection can be made at all; the script records /proc/net/dev and a refused TCP connect as proof;
   - no Python: a new mount namespace in which every Python installation found on this machine (interpreters,
     standard libraries, libpython, pyenv, virtual environments) is covered by an empty read-only tmpfs or
     /dev/null, then `env -i` with PATH set to an empty folder and no PYTHON* variables. The proof records that
     no `python*` can be found on PATH or executed at any of the hidden paths.
   With `--extra-model DIR` (repeatable), it also runs bundles the app does not embed, as a user's downloaded or
   imported model (a Bergamot/Firefox bundle, say): `qiao --self-test --model DIR` and `qiao translate --json
   --model DIR --file …` on a few sentences of the bundle's source language, in the same isolation; the report
   keeps the self-test's output and verdict, the inputs and each record's text and token ids, so a test can compare
   them with the engine from source. It fails when the app could not run the bundle (no verdict, a line missing),
   not on the verdict: a tiny random model's self-test may fail from source too.
5. Starts the real GUI in the same isolation under Xvfb, several times (the first run warms the disk cache and is
   not counted), and measures from exec to "window exposed and painted" and to "model loaded, ready to translate"
   (the app's QIAO_STARTUP_PROBE), then the idle RSS with the INT8 engine loaded. It checks from /proc/PID/maps
   that the only Python the process mapped is the app's own. On the last run it types English, translates it
   and takes a screenshot of the window.
6. Watches the network (packaging/offline_trace.py): the frozen `qiao translate --json` and the frozen GUI run side
   by side with the network present (not unshared, so an attempt would show), a fresh empty HOME, no XDG_*
   variables and the telemetry variables set to "0", under `strace -f -e trace=socket,connect,sendto`, for 30 s
   after their ONNX Runtime sessions exist; any inet socket, inet or port-53 address, or file under HOME outside
   Qiao's own folders fails. Afterwards the CLI's records (text, token ids, direction) must equal, record for
   record, what the engine from this checkout says on the same lines with the bundle the app embeds for each
   record's direction.

What the frozen app translates is thus checked against the engine from source on the same bundle, so the checks
hold for whatever model the build embedded: the fixture (`--build`) or a release's best model per direction
(Bergamot or opus-mt, packaging/stage_model.py --catalogue). Only the fixture model must also say what it was trained
to (most of tests/fixtures/tiny_marian/corpus.tsv; 非常感谢 in the documents); a real model never would.

Writes OUT/report.json (what tests/packaging asserts on) and prints a summary. Exit status 0 when every check
passed and every budget held. Needs: unshare (util-linux), Xvfb, xdotool, ImageMagick `import`, zstd, tar, strace,
and the engine's run-time dependencies in the Python that runs it (the reference runs `python -m engine.cli.main`).
"""

from __future__ import annotations

import argparse
import fcntl
import glob
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import check_dist  # noqa: E402
import smoke_documents  # noqa: E402
from offline_trace import OPTED_IN, WATCH_S, audit, strace_problem, traced  # noqa: E402

BUDGETS = {  # Linux release budgets (issue #5)
    "installed_mb": 170.0,  # the app folder without models
    "compressed_mb": 60.0,  # the same as a zstd tarball
    "window_s": 1.0,  # launch → window visible (warm disk cache)
    "ready_s": 1.5,  # launch → model loaded, translation possible
    "idle_rss_mb": 300.0,  # idle, INT8 engine loaded
}
SAMPLE = "Thank you very much. Good morning, everyone!\n\nThe weather is very nice. See you tomorrow."
CORPUS = ROOT / "tests" / "fixtures" / "tiny_marian" / "corpus.tsv"  # what the fixture model (--model fixture) knows
FIXTURE = ROOT / "tests" / "fixtures" / "tiny_marian" / "bundle"  # --model fixture: the model trained on CORPUS
ZH_EN_FIXTURE = ROOT / "tests" / "fixtures" / "tiny_marian_zh_en" / "bundle"  # --model fixture-zh-en
# What --extra-model bundles translate, by their source language (a tiny random model's output is noise; what counts
# is that the frozen app gives the same noise as the engine from source)
EXTRA_SENTENCES = {
    "en": ["Thank you very much.", "Good morning, everyone!", "The weather is very nice. See you tomorrow."],
    "zh": ["非常感谢。", "大家早上好！", "今天天气很好。明天见。"],
}


def fixture_models() -> list[str]:
    """The build.sh --model arguments of `--build`: the en→zh fixture, and the zh→en one where it exists."""
    models = ["fixture"]
    if (ZH_EN_FIXTURE / "manifest.json").is_file():
        models.append("fixture-zh-en")
    return models


def embedded_paths(dist: Path) -> list[Path]:
    """The bundles inside the frozen app (what qiao.spec embedded from the stage), as paths."""
    found = []
    for models in (dist / "_internal" / "models", dist / "models"):
        if models.is_dir():
            found += [p for p in sorted(models.iterdir()) if (p / "manifest.json").is_file()]
    return found


def embedded_bundles(dist: Path) -> list[str]:
    """The bundle folders inside the frozen app, by name."""
    return sorted({p.name for p in embedded_paths(dist)})


def self_test_bundles(output: str) -> list[str]:
    """The folder names of the bundles a `qiao --self-test` report tested (its `model:` lines)."""
    return [Path(ln.split(":", 1)[1].strip()).name for ln in output.splitlines() if ln.startswith("model:")]


# ---- isolation ------------------------------------------------------------------------------------------------------


def python_installations() -> list[str]:
    """Every Python interpreter, standard library and libpython this machine has, as paths to hide."""
    home = Path.home()
    patterns = [
        "/usr/bin/python*",
        "/bin/python*",
        "/usr/local/bin/python*",
        "/usr/lib/python[23]*",
        "/usr/local/lib/python[23]*",
        "/usr/lib/*/libpython*",
        "/usr/lib/libpython*",
        "/usr/local/lib/libpython*",
        "/opt/hostedtoolcache/Python",
        "/opt/conda",
        "/opt/python*",
        f"{home}/.pyenv",
        f"{home}/.local/lib/python*",
        f"{home}/.local/bin/python*",
        str(ROOT / ".venv"),
    ]
    found = {p for pattern in patterns for p in glob.glob(pattern)}
    for folder in os.environ.get("PATH", "").split(os.pathsep):  # anything named python* on the caller's PATH
        found.update(glob.glob(os.path.join(folder, "python*")))
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix}:  # the interpreter running this script
        if prefix not in ("/usr", "/usr/local", "/"):
            found.add(prefix)
    found = {p for p in found if os.path.exists(p)}  # a dangling link runs nothing (and cannot be mounted over)
    # hide outermost paths only (mounting over a path inside an already-hidden tree would fail), files before
    # folders (a link such as libpython3.11.a -> ../python3.11/… dangles once its folder is covered)
    outer = [p for p in found if not any(p != q and p.startswith(q.rstrip("/") + "/") for q in found)]
    return sorted(outer, key=lambda p: (os.path.isdir(p) and not os.path.islink(p), p))


def namespace_prefix() -> tuple[list[str], str]:
    """The unshare command that gives a process no network and its own mounts, and how it was obtained."""
    for cmd, how in (
        (["unshare", "--net", "--mount"], "unshare --net --mount"),
        (["unshare", "--map-root-user", "--net", "--mount"], "unshare --map-root-user --net --mount (user namespace)"),
        (["sudo", "-n", "unshare", "--net", "--mount"], "sudo unshare --net --mount"),
    ):
        if shutil.which(cmd[0]) and subprocess.run([*cmd, "true"], capture_output=True).returncode == 0:
            return cmd, how
    return [], "none: unshare is not permitted here"


# Runs inside the namespaces: hide every Python, prove the isolation, then exec the app in an empty environment.
# $1 = proof file, $2 = exec-time file, $3 = empty PATH folder, $4 = HOME, $5.. = app command; HIDE = paths to hide,
# APP_ENV = extra VAR=value words for the app (display, settings folders).
INNER = r"""
set -u
proof=$1; stamp=$2; empty=$3; home=$4; shift 4
{
  for p in $HIDE; do
    if [ -d "$p" ] && [ ! -L "$p" ]; then mount -t tmpfs -o ro,size=4k,mode=555 qiao-no-python "$p"
    else mount --bind /dev/null "$p"; fi || echo "hide-failed $p"
  done
  echo "net-interfaces: $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\n' ' ')"
  echo "net-lo: $(ip -o link show lo 2>/dev/null | grep -o 'state [A-Z]*' || echo '?')"
  if command -v bash >/dev/null; then
    if bash -c 'exec 3<>/dev/tcp/1.1.1.1/443' 2>/dev/null; then echo "net-connect: CONNECTED"
    else echo "net-connect: refused ($(bash -c 'exec 3<>/dev/tcp/1.1.1.1/443' 2>&1 | tail -n1 | sed 's/.*: //'))"; fi
  fi
  for p in $HIDE; do
    if [ -d "$p" ] && [ ! -L "$p" ]; then echo "hidden-dir $p entries=$(ls -A "$p" | wc -l)"
    elif "$p" -c 'print(1)' >/dev/null 2>&1; then echo "python-runs $p"
    else echo "hidden-file $p"; fi
  done
  echo "path-python: $(PATH=$empty command -v python3 python python3.11 || echo none)"
  echo "path-entries: $(ls -A "$empty" | wc -l)"
} > "$proof" 2>&1
date +%s.%N > "$stamp"
exec env -i PATH="$empty" HOME="$home" LANG=C.UTF-8 $APP_ENV "$@"
"""


class Isolated:
    """Runs the app with no network and no Python (see the module docstring), recording the proof."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.prefix, self.how = namespace_prefix()
        self.hide = python_installations()
        self.empty = work / "empty-path"
        self.empty.mkdir(parents=True, exist_ok=True)
        self.home = work / "home"
        self.home.mkdir(exist_ok=True)

    def command(self, app: list[str], tag: str) -> tuple[list[str], dict[str, str], Path, Path]:
        proof, stamp = self.work / f"{tag}.proof", self.work / f"{tag}.exec"
        inner = ["sh", "-c", INNER, "inner", str(proof), str(stamp), str(self.empty), str(self.home), *app]
        hide = " ".join(self.hide) if self.prefix else ""  # no private mount namespace: never hide the caller's Python
        return [*self.prefix, *inner], {"HIDE": hide}, proof, stamp

    def popen(self, app: list[str], tag: str, app_env: dict[str, str], **kwargs) -> tuple[subprocess.Popen, Path, Path]:
        cmd, env, proof, stamp = self.command(app, tag)
        env = {**os.environ, **env, "APP_ENV": " ".join(f"{k}={v}" for k, v in app_env.items())}
        return subprocess.Popen(cmd, env=env, **kwargs), proof, stamp


def parse_proof(path: Path) -> dict:
    """The isolation proof the inner script wrote, as facts the tests assert on."""
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    interfaces = next((ln.split(":", 1)[1].split() for ln in lines if ln.startswith("net-interfaces:")), None)
    connect = next((ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("net-connect:")), None)
    lo_state = next((ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("net-lo:")), "?")
    return {
        "lines": lines,
        "network_interfaces": interfaces,
        "loopback_state": lo_state,  # "state DOWN" in a fresh namespace; "?" where `ip` is missing
        "connect": connect,
        "python_runs": [ln.split(" ", 1)[1] for ln in lines if ln.startswith("python-runs")],
        "hide_failed": [ln.split(" ", 1)[1] for ln in lines if ln.startswith("hide-failed")],
        "hidden": [ln.split(" ")[1] for ln in lines if ln.startswith(("hidden-dir", "hidden-file"))],
        "nonempty_hidden_dirs": [ln for ln in lines if ln.startswith("hidden-dir") and not ln.endswith("entries=0")],
        "path_python": next((ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("path-python:")), None),
    }


def isolation_ok(proof: dict) -> bool:
    """Only a downed loopback, connections refused, every Python hidden, none findable on PATH."""
    return (
        proof["network_interfaces"] == ["lo"]
        and "UP" not in proof["loopback_state"]
        and (proof["connect"] or "").startswith("refused")
        and not proof["python_runs"]
        and not proof["hide_failed"]
        and not proof["nonempty_hidden_dirs"]
        and proof["path_python"] == "none"
    )


def bundle_facts(bundle: Path) -> dict:
    """What the report says about an --extra-model bundle, from its manifest: family, model id, pair."""
    raw = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    languages = raw["languages"]
    return {
        "family": raw.get("family", "marian"),  # format 4 (before families) is Marian
        "model_id": raw["model"]["id"],
        "pair": f"{languages['source']['code']}-{languages['target']['code']}",
    }


def extra_model_run(iso: Isolated, app: Path, bundle: Path, tag: str) -> dict:
    """The frozen app on a bundle it does not embed, offline and without Python: its self-test, then `translate
    --json` on EXTRA_SENTENCES of the bundle's source language (each record's text and token ids kept)."""
    bundle = bundle.resolve()
    result: dict = {"path": str(bundle), **bundle_facts(bundle)}
    cmd, env, proof_path, _stamp = iso.command([str(app), "--self-test", "--model", str(bundle)], f"{tag}-selftest")
    run = subprocess.run(cmd, env={**os.environ, **env, "APP_ENV": ""}, capture_output=True, text=True, timeout=120)
    result["self_test"] = {
        "exit_code": run.returncode,
        "output": run.stdout + run.stderr,
        "passed": run.returncode == 0 and "self-test passed" in run.stdout,
        # it ran to a verdict on the model's output (a tiny random model may fail its self-test, as from source)
        "ran": run.returncode in (0, 1) and any(ln.startswith("self-test ") for ln in run.stdout.splitlines()),
        "isolated": bool(iso.prefix) and isolation_ok(parse_proof(proof_path)),
    }
    inputs = EXTRA_SENTENCES.get(result["pair"].split("-")[0], EXTRA_SENTENCES["en"])
    source = iso.work / f"{tag}-input.txt"
    source.write_text("\n".join(inputs) + "\n", encoding="utf-8")
    app_cmd = [str(app), "translate", "--json", "--model", str(bundle), "--file", str(source)]
    cmd, env, proof_path, _stamp = iso.command(app_cmd, f"{tag}-translate")
    run = subprocess.run(cmd, env={**os.environ, **env, "APP_ENV": ""}, capture_output=True, text=True, timeout=120)
    result["translate"] = {
        "exit_code": run.returncode,
        "inputs": inputs,
        "records": read_records(run.stdout),
        "stderr_tail": run.stderr[-1000:],
        "isolated": bool(iso.prefix) and isolation_ok(parse_proof(proof_path)),
    }
    return result


def extra_model_failures(run: dict) -> list[str]:
    """What went wrong running one --extra-model bundle (empty when the frozen app ran it: its self-test came to a
    verdict and every line was translated). The verdict itself is the caller's to judge: a tiny random model's
    self-test can fail (an empty translation) exactly as it does from source; a real model's must pass."""
    name = f"--extra-model {run['path']} ({run['family']}, {run['pair']})"
    failures = []
    st, tr = run["self_test"], run["translate"]
    if not st["ran"]:
        failures.append(f"{name}: the frozen self-test did not run to a verdict (exit {st['exit_code']})")
    ok = [r for r in tr["records"] if "text" in r]
    if tr["exit_code"] != 0 or len(ok) != len(tr["inputs"]) or len(tr["records"]) != len(tr["inputs"]):
        failures.append(f"{name}: frozen translate --json: exit {tr['exit_code']}, {len(ok)} of {len(tr['inputs'])}")
    if not (st["isolated"] and tr["isolated"]):
        failures.append(f"{name}: did not run fully isolated")
    return failures


# ---- the reference: the engine from this checkout, on the bundle the frozen app used ---------------------------------
# The frozen app must translate exactly as the engine it was frozen from does on the same bundle, whatever model the
# build embedded: the fixture (the test tier) or the catalogue's best per direction (a release: Bergamot or opus-mt).
# What a model says is checked against its own training data only for the fixture (trained_on_corpus).


def read_records(stdout: str, keys: tuple[str, ...] = ("text", "tokens")) -> list[dict]:
    """`translate --json` output as one dict per line holding `keys` ({"unreadable": …} for a line that is not a
    record)."""
    records = []
    for line in stdout.splitlines():
        try:
            record = json.loads(line)
            records.append({k: record[k] for k in keys})
        except (ValueError, KeyError, TypeError):
            records.append({"unreadable": line[:200]})
    return records


def embedded_bundle(dist: Path, pair: str) -> Path | None:
    """The bundle the frozen app embeds for `pair` ("en-zh"), the one it translates that direction with when the
    user has installed nothing; None when it embeds none, or several (which one the app picks is then the store's
    choice, not something the smoke test should guess)."""
    matching = [p for p in embedded_paths(dist) if bundle_facts(p)["pair"] == pair]
    return matching[0] if len(matching) == 1 else None


def trained_on_corpus(bundle: Path) -> bool:
    """Whether `bundle` is the en→zh fixture model, which memorised CORPUS (a real model says something else)."""
    if not (FIXTURE / "manifest.json").is_file():
        return False
    return bundle_facts(bundle)["model_id"] == bundle_facts(FIXTURE)["model_id"]


def source_engine(args: list[str], work: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    """`qiao ARGS` run by the engine from this checkout (the interpreter running the smoke test), in its own empty
    HOME and Qiao folders under WORK, so no settings, cache or installed model of the machine's user counts."""
    home = work / "source-home"
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("QIAO_")}
    env.update(HOME=str(home), PYTHONPATH=str(ROOT), LANG="C.UTF-8")
    for name in ("CONFIG", "STATE", "CACHE", "DATA"):
        env[f"QIAO_{name}_DIR"] = str(home / name.lower())
    cmd = [sys.executable, "-m", "engine.cli.main", *args]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def source_records(dist: Path, inputs: list[str], directions: list[str | None], work: Path) -> dict:
    """The engine from source on `inputs`, each line with the bundle the frozen app embeds for the direction it
    reported for that line (`translate --json --model`): {"records": [...]} in input order (text, token ids,
    direction), or {"error": why} when there is no such bundle or the run failed."""
    work.mkdir(parents=True, exist_ok=True)
    by_direction: dict[str, list[int]] = {}
    for i, direction in enumerate(directions):
        if direction is None:
            return {"error": f"the frozen record of line {i + 1} names no direction"}
        by_direction.setdefault(direction, []).append(i)
    records: list[dict] = [{}] * len(inputs)
    bundles = {}
    for n, (direction, rows) in enumerate(sorted(by_direction.items())):
        bundle = embedded_bundle(dist, direction)
        if bundle is None:
            return {"error": f"the app does not embed exactly one bundle for {direction}"}
        bundles[direction] = str(bundle)
        source = work / f"source-input-{n}.txt"
        source.write_text("\n".join(inputs[i] for i in rows) + "\n", encoding="utf-8")
        run = source_engine(["translate", "--json", "--model", str(bundle), "--file", str(source)], work)
        got = read_records(run.stdout, ("text", "tokens", "direction"))
        if run.returncode != 0 or len(got) != len(rows):
            why = f"exit {run.returncode}, {len(got)} of {len(rows)} records: {run.stderr[-500:]}"
            return {"error": f"the engine from source on {bundle}: {why}"}
        for i, record in zip(rows, got):
            records[i] = record
    return {"records": records, "bundles": bundles}


def compare_records(frozen: list[dict], reference: list[dict]) -> dict:
    """How many frozen records equal the engine's from source (text, token ids and direction), and the first few
    that do not."""
    longest = max(len(frozen), len(reference))
    differ = [i for i in range(longest) if i >= len(frozen) or i >= len(reference) or frozen[i] != reference[i]]
    at = lambda records, i: records[i] if i < len(records) else None  # noqa: E731
    return {
        "matches": longest - len(differ),
        "of": longest,
        "differences": [{"line": i + 1, "frozen": at(frozen, i), "source": at(reference, i)} for i in differ[:3]],
    }


def cli_translations(stdout: str, lines: list[str], dist: Path, work: Path) -> dict:
    """What the network watch reports of the frozen `translate --json` run on `lines` (its stdout): the records,
    the engine from source on the same lines and bundles, and (the fixture model only) how many say what CORPUS
    taught it."""
    frozen = read_records(stdout, ("text", "tokens", "direction"))
    result: dict = {"records": len(frozen), "expected_records": len(lines)}
    corpus = dict(row.split("\t")[:2] for row in CORPUS.read_text(encoding="utf-8").splitlines() if row.strip())
    nfkc = lambda text: unicodedata.normalize("NFKC", text)  # noqa: E731 - full/half-width agnostic
    texts = [r.get("text", "") for r in frozen]
    result["corpus_matches"] = sum(nfkc(t) == nfkc(corpus.get(e, "")) for e, t in zip(lines, texts))
    if len(frozen) != len(lines) or any("unreadable" in r for r in frozen):
        result["source"] = {"error": "the frozen records are incomplete"}
        return result
    reference = source_records(dist, lines, [r["direction"] for r in frozen], work)
    if "error" in reference:
        result["source"] = reference
        return result
    result["source"] = {"bundles": reference["bundles"], **compare_records(frozen, reference["records"])}
    result["trained_on_corpus"] = all(trained_on_corpus(Path(b)) for b in reference["bundles"].values())
    return result


def cli_translation_failures(cli: dict) -> list[str]:
    """What is wrong with the frozen `translate --json` records (empty when each equals the engine's from source
    and, for the fixture model, at least half say what it was trained to)."""
    if cli.get("exit_code") != 0 or cli.get("records") != cli.get("expected_records"):
        return [f"frozen qiao translate --json: exit {cli.get('exit_code')}, {cli.get('records')} records"]
    source = cli.get("source", {"error": "not compared"})
    if "error" in source:
        return [f"frozen qiao translate --json: no reference from source ({source['error']})"]
    failures = []
    if source["matches"] != source["of"]:
        failures.append(
            f"frozen qiao translate --json: {source['of'] - source['matches']} of {source['of']} records differ from "
            f"the engine's from source on the same bundle ({source['bundles']}): {source['differences']}"
        )
    if cli.get("trained_on_corpus") and cli.get("corpus_matches", 0) < cli["records"] // 2:
        failures.append(f"frozen qiao translate --json: only {cli.get('corpus_matches')} translations as trained")
    return failures


def document_check(dist: Path, names: list[str], docs_in: Path, docs_out: Path, work: Path) -> dict:
    """The frozen translate-file's results against the engine's from source on the same documents with the bundle
    the app embeds for English (smoke_documents.check_results); the fixture's results must also say
    smoke_documents.EXPECTED. {"verdicts", "bundle"} or, without a reference, {"verdicts", "error"}."""
    source = smoke_documents.SOURCE
    pairs = sorted({bundle_facts(p)["pair"] for p in embedded_paths(dist)})
    pair = next((p for p in pairs if p.startswith(f"{source}-")), None)
    bundle = embedded_bundle(dist, pair) if pair else None
    if bundle is None:
        verdicts = smoke_documents.check_results(names, docs_out)
        return {"verdicts": verdicts, "error": f"the app embeds no single bundle from {source} ({pairs})"}
    reference = work / "documents-source"
    run = source_engine(["translate-file", str(docs_in), "--model", str(bundle), "--out", str(reference)], work)
    target = pair.split("-")[1]
    expected = smoke_documents.EXPECTED if trained_on_corpus(bundle) else None
    verdicts = smoke_documents.check_results(names, docs_out, target=target, reference=reference, expected=expected)
    result = {"verdicts": verdicts, "bundle": str(bundle), "expected": expected}
    if run.returncode != 0:
        result["error"] = f"the engine from source: exit {run.returncode}: {run.stderr[-500:]}"
    return result


def document_failures(documents: dict) -> list[str]:
    """What is wrong with the frozen translate-file run (empty when it exited 0 and every result is "ok")."""
    failures = []
    if "error" in documents:
        failures.append(f"frozen translate-file: no reference from source ({documents['error']})")
    verdicts = documents["verdicts"]
    if documents["exit_code"] != 0 or any(v != "ok" for v in verdicts.values()):
        bad = {k: v for k, v in verdicts.items() if v != "ok"}
        failures.append(f"frozen translate-file: exit {documents['exit_code']}, {bad or 'every result ok'}")
    return failures


# ---- measurements ---------------------------------------------------------------------------------------------------


def compressed_size(dist: Path, level: int, work: Path) -> tuple[int, float]:
    """Bytes of `tar | zstd -LEVEL` of the app folder without its models, and the seconds it took."""
    out = work / "qiao.tar.zst"
    start = time.perf_counter()
    tar = subprocess.Popen(
        ["tar", "-C", str(dist.parent), "--exclude", f"{dist.name}/_internal/models", "-cf", "-", dist.name],
        stdout=subprocess.PIPE,
    )
    with open(out, "wb") as fh:
        subprocess.run(["zstd", "-q", f"-{level}", "-T0", "-c"], stdin=tar.stdout, stdout=fh, check=True)
    tar.wait()
    size = out.stat().st_size
    out.unlink()
    return size, time.perf_counter() - start


def rss_bytes(pid: int) -> int:
    """Resident memory of a process and all its descendants."""
    total = 0
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            status = Path(f"/proc/{p}/status").read_text()
            total += int(next(ln.split()[1] for ln in status.splitlines() if ln.startswith("VmRSS:"))) * 1024
            for task in Path(f"/proc/{p}/task").iterdir():
                children = (task / "children").read_text().split()
                todo += [int(c) for c in children]
        except (OSError, StopIteration):
            continue
    return total


def mapped_pythons(pid: int) -> list[str]:
    """Files the process mapped whose name says Python (libpython, CPython extension modules)."""
    try:
        maps = Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return []
    files = {line.split(None, 5)[5] for line in maps.splitlines() if len(line.split(None, 5)) == 6}
    return sorted(f for f in files if "python" in f.rsplit("/", 1)[-1].lower() or "/python3" in f)


def wait_for(predicate: Callable[[], T], timeout: float, step: float = 0.02) -> T | None:
    """Poll `predicate` until it returns something truthy (returned) or `timeout` seconds pass (None)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    return None


def sh(*cmd: str, env: dict | None = None, timeout: float = 30) -> str:
    """Run a helper tool (xdotool, import) and return its output; raises if it fails."""
    return subprocess.run(cmd, check=True, capture_output=True, text=True, env=env, timeout=timeout).stdout.strip()


class Xvfb:
    """A private virtual X display (no TCP)."""

    def __init__(self) -> None:
        self.display = next(f":{n}" for n in range(91, 200) if not Path(f"/tmp/.X11-unix/X{n}").exists())
        self.proc = subprocess.Popen(
            ["Xvfb", self.display, "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if not wait_for(lambda: Path(f"/tmp/.X11-unix/X{self.display[1:]}").exists(), 10):
            raise RuntimeError("Xvfb did not start")

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def gui_run(iso: Isolated, app: Path, xvfb: Xvfb, tag: str, screenshot: Path | None) -> dict:
    """Start the GUI once; returns its timings, idle RSS, mapped Pythons and (optionally) a screenshot."""
    state = iso.work / tag
    shutil.rmtree(state, ignore_errors=True)
    (state / "config").mkdir(parents=True)
    (state / "config" / "qiao.ini").write_text("[interface]\nlanguage=en\ntheme=light\n", encoding="utf-8")
    probe = state / "startup.txt"
    app_env = {
        "DISPLAY": xvfb.display,
        "QT_QPA_PLATFORM": "xcb",
        "QIAO_CONFIG_DIR": str(state / "config"),
        "QIAO_STATE_DIR": str(state / "state"),
        "XDG_DATA_HOME": str(state / "data"),
        "XDG_RUNTIME_DIR": str(state / "runtime"),
        "QIAO_STARTUP_PROBE": str(probe),
    }
    (state / "runtime").mkdir(mode=0o700)
    proc, proof_path, stamp = iso.popen([str(app)], tag, app_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    result: dict = {"tag": tag}
    try:

        def marks() -> dict[str, float]:
            if not probe.exists():
                return {}
            return {k: float(v) for k, v in (ln.split() for ln in probe.read_text().splitlines() if ln.strip())}

        got = wait_for(lambda: marks() if {"window", "ready"} <= marks().keys() or "failed" in marks() else None, 30)
        started = float(stamp.read_text()) if stamp.exists() else None
        if not got or started is None:
            result["error"] = f"no start-up marks within 30 s (probe: {marks()})"
            return result
        if "failed" in got:
            result["error"] = "the app reported that it could not load the model"
            return result
        result["window_s"] = round(got["window"] - started, 3)
        result["ready_s"] = round(got["ready"] - started, 3)
        time.sleep(3.0)  # idle: the engine loaded, nothing happening
        result["idle_rss_mb"] = round(rss_bytes(proc.pid) / 1e6, 1)
        result["mapped_pythons"] = mapped_pythons(proc.pid)
        result["proof"] = parse_proof(proof_path)
        if screenshot is not None:
            result["screenshot"] = take_screenshot(proc.pid, xvfb, screenshot)
            time.sleep(1.0)
            result["rss_after_translation_mb"] = round(rss_bytes(proc.pid) / 1e6, 1)
        quit_window(proc.pid, xvfb)
        result["exit_code"] = proc.wait(15)
        return result
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
        out = proc.stdout.read().decode("utf-8", "replace") if proc.stdout else ""
        result["output_tail"] = out[-2000:]


def quit_window(pid: int, xvfb: Xvfb) -> None:
    """Quit the window of process `pid` as a user would: focus it, press Ctrl+Q (Qt ignores synthetic --window
    events)."""
    env = {**os.environ, "DISPLAY": xvfb.display}
    wid = sh("xdotool", "search", "--onlyvisible", "--pid", str(pid), env=env).split()[0]
    sh("xdotool", "windowfocus", "--sync", wid, env=env)
    sh("xdotool", "key", "ctrl+q", env=env)


def take_screenshot(pid: int, xvfb: Xvfb, path: Path) -> dict:
    """Type English into the window, translate it, and capture the window (PNG)."""
    env = {**os.environ, "DISPLAY": xvfb.display}
    wid = sh("xdotool", "search", "--sync", "--onlyvisible", "--pid", str(pid), env=env).split()[0]
    sh("xdotool", "windowsize", "--sync", wid, "1000", "600", env=env)
    sh("xdotool", "windowfocus", "--sync", wid, env=env)
    time.sleep(0.3)
    for i, line in enumerate(SAMPLE.split("\n")):
        if line:
            sh("xdotool", "type", "--delay", "5", line, env=env)
        if i < SAMPLE.count("\n"):
            sh("xdotool", "key", "Return", env=env)
    sh("xdotool", "key", "ctrl+Return", env=env)
    time.sleep(3.0)  # the fixture model translates these in well under a second
    path.parent.mkdir(parents=True, exist_ok=True)
    sh("import", "-window", wid, "-strip", f"png:{path}", env=env)
    return {"path": str(path), "bytes": path.stat().st_size}


# ---- network watch --------------------------------------------------------------------------------------------------


def watch_network(app: Path, xvfb: Xvfb, work: Path) -> dict:
    """Run the frozen `qiao translate --json` and GUI side by side under strace (see the module docstring, step 6).

    `qiao translate` exits once it has printed, so its stdout is a pipe shrunk to one page that is read only after
    WATCH_S: the CLI blocks in write() with its sessions loaded, as under `qiao translate --json < big.txt | less`.
    """
    problem = strace_problem()
    if problem:
        return {"error": problem}
    homes = {name: work / f"watch-home-{name}" for name in ("cli", "gui")}
    for home in homes.values():
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
    logs = {name: work / f"watch-{name}.strace" for name in homes}
    base = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **OPTED_IN}
    corpus = dict(row.split("\t")[:2] for row in CORPUS.read_text(encoding="utf-8").splitlines() if row.strip())
    lines = list(corpus) * 2  # ~100 KB of JSON records: far more than the pipe and the app's stdout buffer hold
    output = ""
    source = work / "watch-input.txt"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    probe = work / "watch-startup.txt"
    probe.unlink(missing_ok=True)
    gui_env = {**base, "HOME": str(homes["gui"]), "DISPLAY": xvfb.display, "QT_QPA_PLATFORM": "xcb"}
    gui_env["QIAO_STARTUP_PROBE"] = str(probe)
    read_end, write_end = os.pipe()
    fcntl.fcntl(read_end, fcntl.F_SETPIPE_SZ, 4096)
    with os.fdopen(read_end, "rb") as reader, open(source, "rb") as stdin, \
            open(work / "watch-cli.err", "w+b") as cli_err, open(work / "watch-gui.out", "w+b") as gui_out:  # fmt: skip
        cli = subprocess.Popen(
            traced([str(app), "translate", "--json"], logs["cli"]),
            stdin=stdin, stdout=write_end, stderr=cli_err, env={**base, "HOME": str(homes["cli"])}, cwd=homes["cli"],
        )  # fmt: skip
        os.close(write_end)
        gui = subprocess.Popen(
            traced([str(app)], logs["gui"]), stdout=gui_out, stderr=subprocess.STDOUT, env=gui_env, cwd=homes["gui"]
        )
        result: dict = {"watch_s": WATCH_S, "cli": {}, "gui": {}}
        try:

            def marks() -> str:
                return probe.read_text(encoding="utf-8") if probe.exists() else ""

            ready = wait_for(lambda: "ready" in marks() or "failed" in marks(), 60)
            result["gui"]["marks"] = marks()
            if ready:  # (not ready: wait_for already waited 60 s, past the watch)
                time.sleep(WATCH_S)
            result["cli"]["alive_while_watched"] = cli.poll() is None
            output = reader.read().decode("utf-8", "replace")
            result["cli"]["exit_code"] = cli.wait(120)
            app_pid = Path(f"/proc/{gui.pid}/task/{gui.pid}/children").read_text().split()[0]  # strace's tracee
            quit_window(int(app_pid), xvfb)
            result["gui"]["exit_code"] = gui.wait(15)
        except (subprocess.SubprocessError, OSError, ValueError, IndexError) as exc:
            result["error"] = f"{type(exc).__name__}: {exc}"
        finally:
            for proc in (cli, gui):
                if proc.poll() is None:
                    proc.kill()
                    proc.wait(10)
            cli_err.seek(0)
            gui_out.seek(0)
            result["cli"]["stderr_tail"] = cli_err.read().decode("utf-8", "replace")[-1000:]
            result["gui"]["output_tail"] = gui_out.read().decode("utf-8", "replace")[-1000:]
    for name, home in homes.items():
        result[name].update(audit(logs[name], home))
    # after the watch (not under strace): the records against the engine from source on the same bundle
    result["cli"].update(cli_translations(output, lines, app.parent, work))
    return result


def network_watch_failures(watch: dict) -> list[str]:
    """What the network watch found wrong, one line each (empty when the frozen app stayed offline)."""
    if "error" in watch:
        return [f"network watch could not run: {watch['error']}"]
    failures = []
    for name in ("cli", "gui"):
        run = watch[name]
        if run["inet_call_count"]:
            failures.append(f"frozen {name}: {run['inet_call_count']} network system calls: {run['inet_calls'][:3]}")
        if run["stray_files"]:
            failures.append(f"frozen {name}: files under HOME outside Qiao's folders: {run['stray_files'][:5]}")
    cli, gui = watch["cli"], watch["gui"]
    failures += cli_translation_failures(cli)
    if not cli.get("alive_while_watched"):
        failures.append("frozen qiao translate --json exited before the watch ended (the watch saw too little)")
    if "ready" not in gui.get("marks", "") or gui.get("exit_code") != 0:
        failures.append(f"frozen GUI under strace: marks {gui.get('marks')!r}, exit {gui.get('exit_code')}")
    return failures


# ---- main -----------------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="offline, Python-free smoke test of the frozen Linux app")
    parser.add_argument(
        "--build",
        action="store_true",
        help="freeze first, with the fixture model, into OUT/dist/qiao (dist/ is left alone)",
    )
    parser.add_argument("--dist", type=Path, default=ROOT / "dist" / "qiao", help="the app folder to test")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "smoke")
    parser.add_argument("--screenshot", type=Path, help="save the GUI screenshot here (default: OUT/frozen.png)")
    parser.add_argument("--runs", type=int, default=3, help="warm GUI start-ups to measure (after one warm-up)")
    parser.add_argument("--zstd-level", type=int, default=10, help="for the compressed size (release uses 19)")
    parser.add_argument(
        "--extra-model",
        type=Path,
        action="append",
        default=[],
        help="a bundle the app does not embed, run from outside with --model (self-test and translate; repeatable)",
    )
    args = parser.parse_args(argv)
    out = args.out.resolve()
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    dist = (out / "dist" / "qiao") if args.build else args.dist.resolve()
    report: dict = {"budgets": BUDGETS, "failures": []}
    timings: dict[str, float] = {}

    if args.build:
        start = time.perf_counter()
        env = {**os.environ, "PYTHON": os.environ.get("PYTHON", sys.executable)}
        build = [
            str(HERE / "build.sh"),
            *(a for m in fixture_models() for a in ("--model", m)),
            "--dist",
            str(dist.parent),
        ]
        subprocess.run(build, cwd=ROOT, env=env, check=True)
        timings["build_s"] = round(time.perf_counter() - start, 1)
    tools = ("unshare", "Xvfb", "xdotool", "import", "zstd", "tar", "ldd", "strace")
    missing = [t for t in tools if not shutil.which(t)]
    if missing:
        print(
            f"smoke_test: missing tools: {', '.join(missing)} "
            "(Debian/Ubuntu: apt-get install util-linux xvfb xdotool imagemagick zstd strace)",
            file=sys.stderr,
        )
        return 1
    app = dist / "qiao"
    if not app.is_file():
        print(f"smoke_test: no frozen app at {app} (run with --build)", file=sys.stderr)
        return 1

    start = time.perf_counter()
    check = check_dist.check(dist)
    report["check_dist"] = {k: v for k, v in check.items() if k != "size"}
    size = check["size"]
    report["size"] = {
        "installed_mb": round(size["app_without_models_bytes"] / 1e6, 1),
        "models_mb": round(size["models_bytes"] / 1e6, 1),
        "by_component_mb": {k: round(v / 1e6, 1) for k, v in size["by_component"].items()},
    }
    if not check["ok"]:
        report["failures"].append("check_dist failed (forbidden packages, dangling links or unresolved libraries)")
    compressed, seconds = compressed_size(dist, args.zstd_level, out)
    report["size"]["compressed_mb"] = round(compressed / 1e6, 1)
    report["size"]["zstd_level"] = args.zstd_level
    report["size"]["zstd_seconds"] = round(seconds, 1)
    timings["check_and_compress_s"] = round(time.perf_counter() - start, 1)

    iso = Isolated(Path(tempfile.mkdtemp(prefix="qiao-smoke-", dir=out)))
    report["isolation"] = {"namespaces": iso.how, "hidden_pythons": iso.hide}
    if not iso.prefix:
        report["failures"].append("no network namespace available (unshare not permitted)")

    # -- self-test, offline and without Python --
    start = time.perf_counter()
    cmd, env, proof_path, _stamp = iso.command([str(app), "--self-test"], "selftest")
    run = subprocess.run(cmd, env={**os.environ, **env, "APP_ENV": ""}, capture_output=True, text=True, timeout=120)
    proof = parse_proof(proof_path)
    embedded, tested = embedded_bundles(dist), self_test_bundles(run.stdout)
    report["self_test"] = {
        "exit_code": run.returncode,
        "output": run.stdout + run.stderr,
        "passed": run.returncode == 0 and "self-test passed" in run.stdout,
        "embedded": embedded,
        "tested": tested,
        "proof": proof,
        "isolated": bool(iso.prefix) and isolation_ok(proof),
    }
    timings["self_test_s"] = round(time.perf_counter() - start, 1)
    if not report["self_test"]["passed"]:
        report["failures"].append(f"self-test failed (exit {run.returncode})")
    if sorted(set(tested)) != embedded:
        report["failures"].append(f"the self-test tested {tested}, but the app embeds {embedded}")
    if not report["self_test"]["isolated"]:
        report["failures"].append("the self-test did not run fully isolated (see isolation proof)")

    # -- every document format, through the frozen translate-file, offline and without Python --
    start = time.perf_counter()
    docs_in, docs_out = iso.work / "documents", iso.work / "documents-out"
    names = smoke_documents.make_documents(docs_in)
    cmd, env, _proof, _stamp = iso.command(
        [str(app), "translate-file", str(docs_in), "--out", str(docs_out)], "documents"
    )
    run = subprocess.run(cmd, env={**os.environ, **env, "APP_ENV": ""}, capture_output=True, text=True, timeout=120)
    checked = document_check(dist, names, docs_in, docs_out, iso.work)
    report["documents"] = {"exit_code": run.returncode, "output": run.stdout + run.stderr, **checked}
    timings["documents_s"] = round(time.perf_counter() - start, 1)
    report["failures"] += document_failures(report["documents"])

    # -- bundles from outside the app (a downloaded or imported model), offline and without Python --
    start = time.perf_counter()
    report["extra_models"] = [extra_model_run(iso, app, b, f"extra-{i}") for i, b in enumerate(args.extra_model)]
    for extra in report["extra_models"]:
        report["failures"] += extra_model_failures(extra)
    timings["extra_models_s"] = round(time.perf_counter() - start, 1)

    # -- the GUI under Xvfb, offline and without Python --
    start = time.perf_counter()
    screenshot = (args.screenshot or out / "frozen.png").resolve()
    runs: list[dict] = []
    xvfb = Xvfb()
    try:
        warmup = gui_run(iso, app, xvfb, "gui-warmup", None)
        for i in range(args.runs):
            last = i == args.runs - 1
            runs.append(gui_run(iso, app, xvfb, f"gui-{i + 1}", screenshot if last else None))
        timings["gui_s"] = round(time.perf_counter() - start, 1)
        # -- the network watch: the frozen CLI and GUI under strace, network present, fresh HOME --
        start = time.perf_counter()
        report["network_watch"] = watch_network(app, xvfb, iso.work)
        report["failures"] += network_watch_failures(report["network_watch"])
        timings["network_watch_s"] = round(time.perf_counter() - start, 1)
    finally:
        xvfb.close()
    report["gui_runs"] = runs
    report["gui_warmup"] = {k: warmup.get(k) for k in ("window_s", "ready_s", "idle_rss_mb", "error")}
    good = [r for r in runs if "error" not in r]
    if len(good) != len(runs):
        report["failures"] += [f"GUI run {r['tag']}: {r['error']}" for r in runs if "error" in r]
    if good:
        report["startup"] = {
            "window_s": statistics.median(r["window_s"] for r in good),
            "ready_s": statistics.median(r["ready_s"] for r in good),
            "idle_rss_mb": max(r["idle_rss_mb"] for r in good),
            "rss_after_translation_mb": next((r["rss_after_translation_mb"] for r in good if "screenshot" in r), None),
            "window_s_all": [r["window_s"] for r in good],
            "ready_s_all": [r["ready_s"] for r in good],
            "runs": len(good),
        }
        own = str(dist) + "/"
        foreign = sorted({f for r in good for f in r["mapped_pythons"] if not f.startswith(own)})
        report["gui_python_outside_app"] = foreign
        if foreign:
            report["failures"].append(f"the GUI mapped a Python outside the app: {foreign}")
        if not all(isolation_ok(r["proof"]) for r in good):
            report["failures"].append("a GUI run was not fully isolated")
        if any(r.get("exit_code") != 0 for r in good):
            report["failures"].append("the GUI did not exit cleanly on Ctrl+Q")
        shot = good[-1].get("screenshot")
        report["screenshot"] = shot
        if not shot or shot["bytes"] >= 300_000:
            report["failures"].append("no screenshot, or one of 300 KB or more")

    # -- budgets --
    measured = {
        "installed_mb": report["size"]["installed_mb"],
        "compressed_mb": report["size"]["compressed_mb"],
        **{k: report.get("startup", {}).get(k) for k in ("window_s", "ready_s", "idle_rss_mb")},
    }
    report["budget_results"] = {
        k: {"measured": v, "budget": BUDGETS[k], "ok": v is not None and v <= BUDGETS[k]} for k, v in measured.items()
    }
    for k, r in report["budget_results"].items():
        if not r["ok"]:
            report["failures"].append(f"over budget: {k} = {r['measured']} > {r['budget']}")
    report["timings"] = timings
    report["ok"] = not report["failures"]
    (out / "report.json").write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print_summary(report, out / "report.json")
    shutil.rmtree(iso.work, ignore_errors=True)
    return 0 if report["ok"] else 1


def print_summary(report: dict, path: Path) -> None:
    iso = report["isolation"]
    st = report["self_test"]
    print(f"isolation: {iso['namespaces']}; hidden Pythons: {', '.join(iso['hidden_pythons'])}")
    print(
        f"self-test: {'passed' if st['passed'] else 'FAILED'} (isolated: {st['isolated']}; "
        f"bundles embedded: {', '.join(st['embedded']) or 'none'})"
    )
    for line in st["output"].splitlines():
        print(f"  | {line}")
    for k, r in report["budget_results"].items():
        print(f"{k:>14}: {r['measured']} (budget {r['budget']}) {'ok' if r['ok'] else 'OVER'}")
    if report.get("startup"):
        s = report["startup"]
        print(
            f"start-up (median of {s['runs']} warm runs): window {s['window_s_all']} s, ready {s['ready_s_all']} s; "
            f"RSS after a translation {s['rss_after_translation_mb']} MB"
        )
    watch = report.get("network_watch", {})
    for name in ("cli", "gui"):
        if name in watch and "inet_call_count" in watch[name]:
            run = watch[name]
            print(
                f"network watch, frozen {name} ({watch['watch_s']:.0f} s under strace, fresh HOME): "
                f"{run['inet_call_count']} inet calls, {len(run['stray_files'])} stray files; "
                f"Qiao's own: {run['qiao_files']}"
            )
    if report.get("screenshot"):
        print(f"screenshot: {report['screenshot']['path']} ({report['screenshot']['bytes']} bytes)")
    print(f"timings: {report['timings']}")
    print(f"report: {path}")
    for failure in report["failures"]:
        print(f"FAILED: {failure}", file=sys.stderr)
    print("smoke test passed" if report["ok"] else "smoke test FAILED")


if __name__ == "__main__":
    raise SystemExit(main())
