"""The frozen Linux app, end to end (marker `packaging`; `make test` runs it after the fast tier).

One module-scoped run of packaging/smoke_test.py --build: freeze with the fixture models (en→zh, and zh→en once
its fixture is committed), then check the folder, run `qiao --self-test` (every embedded bundle) with no network and
no Python, run the tiny Bergamot (Firefox Translations) bundles from outside the app (`--extra-model`: self-test and
`translate --json`, same isolation), start the GUI under Xvfb, and measure. The tests below assert on its report
(build/smoke/report.json), one concern each, so a failure names what broke.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.cli.main import main as qiao

from .conftest import ROOT, SCRIPTS, BuildFailed, BuildOnce

pytestmark = [
    pytest.mark.packaging,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the smoke test is Linux-only (namespaces, Xvfb)"),
]
OUT = ROOT / "build" / "smoke"
ZH_EN_FIXTURE = ROOT / "tests" / "fixtures" / "tiny_marian_zh_en" / "bundle"


BERGAMOT_FIXTURES = ("bergamot_bundle_dir", "bergamot_zh_en_bundle_dir")  # tests/conftest.py, built per session


def _smoke_report(extra_models: list[Path]) -> dict:
    cmd = [sys.executable, str(SCRIPTS / "smoke_test.py"), "--build", "--out", str(OUT)]
    cmd += [arg for bundle in extra_models for arg in ("--extra-model", str(bundle))]
    env = {**os.environ, "PYTHON": sys.executable}
    env.pop("QT_QPA_PLATFORM", None)  # the smoke test chooses xcb (Xvfb) itself
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    path = OUT / "report.json"
    log = f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    if not path.exists():
        raise BuildFailed(f"smoke_test.py wrote no report (exit {proc.returncode}):\n{log}")
    data = json.loads(path.read_text(encoding="utf-8"))
    data["_log"] = log
    return data


def _bergamot_bundles(request: pytest.FixtureRequest) -> list[Path]:
    """The session's tiny Bergamot bundles; none where they cannot be built (no onnx/sentencepiece: the build
    extra), and then only the Bergamot tests skip."""
    try:
        return [request.getfixturevalue(name) for name in BERGAMOT_FIXTURES]
    except pytest.skip.Exception:
        return []


@pytest.fixture(scope="module")
def _smoke(request: pytest.FixtureRequest) -> BuildOnce:
    extra = _bergamot_bundles(request)
    return BuildOnce.run("the frozen-app smoke test (smoke_test.py --build)", lambda: _smoke_report(extra))


@pytest.fixture
def report(_smoke: BuildOnce, request: pytest.FixtureRequest) -> dict:
    """The smoke test's report; if it could not run, the first test shows its log and the others one line."""
    return _smoke.get(request)


def test_self_test_passes_offline_without_python(report):
    st = report["self_test"]
    assert st["passed"], st["output"]
    assert "非常感谢。" in st["output"] and "identical tokens" in st["output"]
    assert "opus-mt-en-zh" in st["embedded"] and sorted(st["tested"]) == st["embedded"]
    proof = st["proof"]
    assert st["isolated"], proof["lines"]
    assert proof["network_interfaces"] == ["lo"] and proof["connect"].startswith("refused")
    assert proof["path_python"] == "none" and proof["python_runs"] == []
    assert any("python3" in p for p in proof["hidden"])  # there was a Python on this machine, and it was hidden


def test_self_test_passes_for_the_zh_en_bundle_too(report):
    st = report["self_test"]
    assert st["embedded"] == ["opus-mt-en-zh", "opus-mt-zh-en"], st["output"]
    assert "pair:      zh-en (Chinese → English)" in st["output"] and "result:    zh-en passed" in st["output"]
    assert "result:    en-zh passed" in st["output"]


def test_the_frozen_app_translates_every_document_format(report):
    """Each format module is imported by name, with its own library: one left out of the app would show only
    when a user opens such a file."""
    docs = report["documents"]
    assert docs["exit_code"] == 0, docs["output"]
    assert docs["verdicts"] == dict.fromkeys(docs["verdicts"], "ok") and len(docs["verdicts"]) == 8, docs
    # each result said what the engine from source wrote with the same bundle, and (the fixture) 非常感谢
    assert "error" not in docs and docs["bundle"].endswith("/opus-mt-en-zh") and docs["expected"] == "非常感谢", docs


def test_no_build_only_packages_inside(report):
    check = report["check_dist"]
    assert check["forbidden"] == []
    assert check["dangling_links"] == [] and check["unresolved_libraries"] == []


def test_archive_holds_the_app_and_nothing_build_only(report):
    from check_dist import _forbidden_name, archive_modules

    modules = archive_modules(OUT / "dist" / "qiao" / "qiao")
    assert {
        "qiao.cli",
        "engine.cli.main",
        "engine.cli.selftest",
        "engine.pipeline.translator",
        "gui.app",
        "gui.window.main_window",
        "onnxruntime",
        "engine.documents.formats.docx",
        "engine.documents.formats.markdown",
        "markdown_it",
        "srt",
        "charset_normalizer",
        # both model families' runtimes (loaded by name when a bundle of the family is opened)
        "engine.families.marian.model",
        "engine.families.bergamot",
        "engine.families.bergamot.loading",
        "engine.families.bergamot.model",
        "engine.families.bergamot.shortlist",
        "engine.families.bergamot.tokenizer",
        "engine.families.bergamot.vocabulary",
        "engine.text.unigram",
    } <= modules
    assert [m for m in modules if _forbidden_name(m)] == []
    assert not any(m.startswith("engine.convert") for m in modules)
    assert "engine.bundle.graph_writer" not in modules and "engine.bundle.manifest" in modules  # the converters' own
    assert not any(".converter" in m for m in modules if m.startswith("engine.families."))  # no family's converter


def _self_test_facts(output: str) -> dict[str, str]:
    """A self-test report's pair, sentence, each precision's translation, agreement and verdict, without timings."""
    facts = {}
    for line in output.splitlines():
        key, sep, value = line.partition(":")
        if sep and key in ("pair", "sentence", "int8", "fp32", "agreement"):
            facts[key] = value.split("  (load ")[0].strip()
        elif line.startswith("self-test "):
            facts["self-test"] = line
    return facts


@pytest.mark.parametrize("fixture", BERGAMOT_FIXTURES)
def test_the_frozen_app_runs_a_bergamot_bundle_offline_without_python(report, fixture, request, tmp_path, capsys):
    """A Firefox Translations model converted into a bundle (en→zh with separate vocabularies; zh→en with a shared
    one), run by the frozen app from outside it (`--model DIR`, as a downloaded or imported model): its self-test
    says what it says from source (each precision's translation and the verdict: the tiny zh→en model translates
    the self-test sentence to nothing, and fails, in both), and `translate --json` gives, record for record, the text
    and token ids the engine gives from source."""
    bundle = request.getfixturevalue(fixture)  # skips without the build extra (and then so does the smoke's run)
    run = next((r for r in report["extra_models"] if r["path"] == str(bundle.resolve())), None)
    assert run is not None, f"the smoke test did not run {bundle}: {report['extra_models']}"
    assert run["family"] == "bergamot"
    st = run["self_test"]
    assert st["ran"] and st["isolated"], st["output"]
    assert qiao(["--self-test", "--model", str(bundle)]) == st["exit_code"]
    source_facts = _self_test_facts(capsys.readouterr().out)
    assert {"pair", "int8", "fp32", "agreement", "self-test"} <= source_facts.keys()
    assert _self_test_facts(st["output"]) == source_facts
    frozen = run["translate"]
    assert frozen["exit_code"] == 0 and frozen["isolated"], frozen["stderr_tail"]
    source = tmp_path / "input.txt"
    source.write_text("\n".join(frozen["inputs"]) + "\n", encoding="utf-8")
    assert qiao(["translate", "--json", "--model", str(bundle), "--file", str(source)]) == 0
    expected = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert frozen["records"] == [{"text": r["text"], "tokens": r["tokens"]} for r in expected]
    assert len(expected) == len(frozen["inputs"]) == 3


def test_gui_starts_offline_and_quits_cleanly(report):
    runs = report["gui_runs"]
    assert runs and all("error" not in r for r in runs), [r.get("error") for r in runs]
    assert all(r["exit_code"] == 0 for r in runs)
    assert report["gui_python_outside_app"] == []  # /proc/PID/maps: only the app's own libpython and modules


@pytest.mark.parametrize("name", ["cli", "gui"])
def test_frozen_app_opens_no_network_socket_and_leaves_nothing_in_home(report, name):
    """The frozen `qiao translate --json` and GUI, network present, fresh HOME, telemetry variables "0", 30 s under
    strace after their sessions exist (smoke_test.py watch_network)."""
    watch = report["network_watch"]
    assert "error" not in watch, watch.get("error")
    assert watch["watch_s"] >= 30
    run = watch[name]
    assert run["inet_call_count"] == 0, run["inet_calls"]
    assert run["stray_files"] == [], "files written under HOME outside Qiao's folders"


def test_frozen_cli_translated_while_watched(report):
    cli = report["network_watch"]["cli"]
    assert cli["exit_code"] == 0, cli["stderr_tail"]
    assert cli["alive_while_watched"]  # its sessions were open for the whole watch
    assert cli["records"] == cli["expected_records"] and cli["corpus_matches"] >= cli["records"] // 2
    # record for record what the engine from source says with the bundle the app used (its embedded en→zh one)
    source = cli["source"]
    assert source["matches"] == source["of"] == cli["records"], source
    assert list(source["bundles"]) == ["en-zh"] and source["bundles"]["en-zh"].endswith("/opus-mt-en-zh")
    assert cli["trained_on_corpus"] is True


def test_frozen_gui_loaded_the_model_while_watched(report):
    gui = report["network_watch"]["gui"]
    assert "ready" in gui["marks"] and gui["exit_code"] == 0, gui["output_tail"]
    assert gui["traced_calls"] > 0  # its X11 connection (a Unix socket) was seen: the trace worked
    assert gui["qiao_files"], "the GUI wrote nothing into the fresh HOME: was it the HOME in use?"


def test_screenshot(report):
    shot = report["screenshot"]
    assert shot and 10_000 < shot["bytes"] < 300_000


@pytest.mark.parametrize("budget", ["installed_mb", "compressed_mb", "window_s", "ready_s", "idle_rss_mb"])
def test_budget(report, budget):
    result = report["budget_results"][budget]
    assert result["ok"], f"{budget}: measured {result['measured']}, budget {result['budget']}"


def test_nothing_else_failed(report):
    assert report["failures"] == [], report["_log"]
