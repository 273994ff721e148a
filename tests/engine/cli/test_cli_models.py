"""`qiao model list/import/remove/download` and `qiao translate --direction/--from/--to/--variant`."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.cli.main import main
from engine.store.download import part_file
from tests.conftest import BUNDLE
from tests.engine import model_helpers
from tests.engine.cli_fakes import EchoTranslator, install
from tests.engine.model_helpers import FIXTURE_NAME, catalogue_entry, closed_port_url, write_catalogue, zip_bundle
from tests.engine.store.test_model_store import _copy_as

store = model_helpers.store
server = model_helpers.server
ROOT = Path(__file__).resolve().parents[3]


def run(monkeypatch, capsys, argv, stdin=""):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8"))
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# -- list ---------------------------------------------------------------------------------------------------------


def test_list_with_nothing_installed(store, monkeypatch, capsys):
    code, out, err = run(monkeypatch, capsys, ["model", "list"])
    assert code == 0 and out == "" and "qiao model download" in err
    code, out, _ = run(monkeypatch, capsys, ["model", "list", "--json"])
    assert code == 0 and json.loads(out) == []


def test_list_shows_pair_name_size_precisions_licence_location_and_problems(store, monkeypatch, capsys):
    _copy_as(store.source / "opus-mt-en-zh")
    _copy_as(store.models / "opus-mt-zh-en", pair=("zh", "en"))
    (store.models / "broken").mkdir()
    (store.models / "broken" / "manifest.json").write_text("{", encoding="utf-8")
    code, out, _ = run(monkeypatch, capsys, ["model", "list"])
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == [
        "PAIR",
        "NAME",
        "FAMILY",
        "QUALITY",
        "SPEED",
        "SIZE",
        "PRECISIONS",
        "LICENCE",
        "LOCATION",
    ]
    assert lines[1].split()[:3] == ["*", "en-zh", "opus-mt-en-zh"] and lines[1].split()[-3:] == [
        "int8,fp32",
        "CC-BY-4.0",
        "source",
    ]
    assert any(line.split()[:2] == ["?", "broken"] for line in lines)
    assert any(line.startswith("broken (") and "unusable: manifest.json is unreadable" in line for line in lines)
    code, out, _ = run(monkeypatch, capsys, ["model", "list", "--json"])
    records = {r["name"]: r for r in json.loads(out)}
    assert records["opus-mt-zh-en"]["pair"] == "zh-en" and records["opus-mt-zh-en"]["removable"] is True
    assert records["opus-mt-en-zh"]["location"] == "source" and records["opus-mt-en-zh"]["removable"] is False
    assert records["opus-mt-en-zh"]["precisions"] == ["int8", "fp32"] and records["opus-mt-en-zh"]["size_bytes"] > 0
    assert records["broken"]["pair"] is None and records["broken"]["problem"]
    assert records["broken"]["verified"] is False


# -- import / remove ----------------------------------------------------------------------------------------------


def test_import_then_again_then_force(store, monkeypatch, capsys, tmp_path):
    archive = zip_bundle(tmp_path / "b.zip")
    code, out, _ = run(monkeypatch, capsys, ["model", "import", str(archive)])
    assert code == 0 and out.startswith(f"installed {FIXTURE_NAME} (en-zh,")
    code, out, _ = run(monkeypatch, capsys, ["model", "list", "--json"])
    assert [(r["name"], r["verified"]) for r in json.loads(out)] == [(FIXTURE_NAME, True)]
    code, _, err = run(monkeypatch, capsys, ["model", "import", str(archive)])
    assert code == 1 and "already installed" in err and "--force" in err
    code, _, _ = run(monkeypatch, capsys, ["model", "import", str(archive), "--force"])
    assert code == 0


def test_a_bad_import_lists_its_problems_and_exits_1(store, monkeypatch, capsys, tmp_path):
    source = tmp_path / "src"
    shutil.copytree(BUNDLE, source)
    (source / "int8" / "embedding.bin").write_bytes(b"x")
    code, out, err = run(monkeypatch, capsys, ["model", "import", str(source)])
    assert code == 1 and out == ""
    assert "failed verification: nothing was changed" in err and "  - int8/embedding.bin: size 1 bytes" in err
    assert [p.name for p in store.models.iterdir()] == []


def test_remove_asks_and_refuses_what_it_cannot_remove(store, monkeypatch, capsys, tmp_path):
    _copy_as(store.source / "opus-mt-en-zh")
    run(monkeypatch, capsys, ["model", "import", str(zip_bundle(tmp_path / "b.zip"))])
    code, _, err = run(monkeypatch, capsys, ["model", "remove", FIXTURE_NAME])
    assert code == 1 and "add --yes" in err and (store.models / FIXTURE_NAME).exists()
    code, _, err = run(monkeypatch, capsys, ["model", "remove", "opus-mt-en-zh", "--yes"])
    assert code == 1 and "not in the per-user models folder" in err and (store.source / "opus-mt-en-zh").exists()
    code, _, err = run(monkeypatch, capsys, ["model", "remove", "nothing-here", "--yes"])
    assert code == 1 and "no installed bundle is named 'nothing-here'" in err
    code, out, _ = run(monkeypatch, capsys, ["model", "remove", FIXTURE_NAME, "--yes"])
    assert code == 0 and out == f"removed {FIXTURE_NAME}\n" and not (store.models / FIXTURE_NAME).exists()


def test_remove_asks_on_a_terminal(store, monkeypatch, capsys, tmp_path):
    run(monkeypatch, capsys, ["model", "import", str(zip_bundle(tmp_path / "b.zip"))])

    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stdin", Tty("n\n"))
    assert main(["model", "remove", FIXTURE_NAME]) == 1 and (store.models / FIXTURE_NAME).exists()
    monkeypatch.setattr(sys, "stdin", Tty("y\n"))
    assert main(["model", "remove", FIXTURE_NAME]) == 0 and not (store.models / FIXTURE_NAME).exists()
    assert "[y/N]" in capsys.readouterr().err


def test_verify_takes_an_installed_name(store, monkeypatch, capsys, tmp_path):
    run(monkeypatch, capsys, ["model", "import", str(zip_bundle(tmp_path / "b.zip"))])
    code, out, _ = run(monkeypatch, capsys, ["model", "verify", FIXTURE_NAME])
    assert code == 0 and out.startswith(f"{store.models / FIXTURE_NAME}: OK")
    code, _, err = run(monkeypatch, capsys, ["model", "verify", "no-such-model"])
    assert code == 1 and "no model bundle at no-such-model" in err


# -- download -----------------------------------------------------------------------------------------------------


@pytest.fixture
def catalogue(server, tmp_path):
    """A catalogue served by the local server, listing the fixture zip (served there too)."""
    archive = zip_bundle(tmp_path / "b.zip")
    server.add("/b.zip", archive.read_bytes())
    body = json.dumps({"format": 1, "bundles": [catalogue_entry(archive, "b.zip")]}).encode()
    return server.add("/catalogue.json", body)


def test_download_list_then_download_then_nothing_left(store, monkeypatch, capsys, catalogue):
    code, out, _ = run(monkeypatch, capsys, ["model", "download", "--catalogue", catalogue, "--list"])
    assert code == 0 and out.split()[:2] == [FIXTURE_NAME, "en-zh"] and "(installed)" not in out
    code, out, err = run(monkeypatch, capsys, ["model", "download", FIXTURE_NAME, "--catalogue", catalogue])
    assert code == 0, err
    assert f"downloading {FIXTURE_NAME}" in err and out.startswith(f"installed {FIXTURE_NAME}")
    monkeypatch.setenv("QIAO_CATALOGUE_URL", catalogue)  # the variable serves as --catalogue
    code, out, err = run(monkeypatch, capsys, ["model", "download"])
    assert code == 0 and out == "" and "already installed" in err
    code, out, _ = run(monkeypatch, capsys, ["model", "download", "--list"])
    assert "(installed)" in out
    code, out, err = run(monkeypatch, capsys, ["model", "download", FIXTURE_NAME])
    assert code == 1 and "already installed" in err
    code, out, err = run(monkeypatch, capsys, ["model", "download", FIXTURE_NAME, "--force"])
    assert code == 0 and out.startswith("installed")


def test_download_unknown_id_and_offline(store, monkeypatch, capsys, catalogue, tmp_path):
    code, _, err = run(monkeypatch, capsys, ["model", "download", "nope", "--catalogue", catalogue])
    assert code == 1 and "not in the catalogue: nope" in err and FIXTURE_NAME in err
    code, _, err = run(monkeypatch, capsys, ["model", "download", "--catalogue", closed_port_url("/c.json")])
    assert code == 1 and "you are offline or the server cannot be reached" in err
    archive = zip_bundle(tmp_path / "c.zip")
    local = write_catalogue(tmp_path / "catalogue.json", [catalogue_entry(archive, closed_port_url())])
    code, _, err = run(monkeypatch, capsys, ["model", "download", "--catalogue", str(local)])
    assert code == 1 and "you are offline or the server cannot be reached: nothing was changed" in err
    assert not store.data.exists()


def test_ctrl_c_cancels_a_download_keeping_the_part(store, server, tmp_path):
    archive = zip_bundle(tmp_path / "b.zip")
    body = archive.read_bytes()
    server.add("/b.zip", body, mode="slow", delay=0.05)
    raw = catalogue_entry(archive, server.url + "/b.zip")
    local = write_catalogue(tmp_path / "catalogue.json", [raw])
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QIAO_DATA_DIR": str(store.data)}
    env.pop("QIAO_MODEL_DIR", None)
    cmd = [sys.executable, "-m", "engine.cli.main", "model", "download", "--catalogue", str(local)]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    from engine.store.catalogue import CatalogueEntry

    entry = CatalogueEntry(**{**raw, "precisions": tuple(raw["precisions"])})
    part = store.models / ".downloads" / part_file(entry).name
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (not part.exists() or part.stat().st_size < 8192):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "cancelled" in err and "run the download again to resume" in err
    assert 0 < part.stat().st_size < len(body)
    assert [p.name for p in store.models.iterdir()] == [".downloads"]


# -- translate by direction ---------------------------------------------------------------------------------------


@pytest.fixture
def two_directions(store):
    en_zh = _copy_as(store.models / "opus-mt-en-zh")
    zh_en = _copy_as(store.models / "opus-mt-zh-en", pair=("zh", "en"))
    return en_zh, zh_en


class PairEcho(EchoTranslator):
    """An echo engine that reports the pair of the bundle it was given (from its manifest)."""

    def __init__(self, bundle_dir, *a, **k):
        super().__init__(bundle_dir, *a, **k)
        from engine.bundle.manifest import load_manifest

        self.manifest.pair = load_manifest(bundle_dir).pair


@pytest.mark.parametrize(
    ("flags", "want"),
    [
        ([], 0),
        (["--direction", "zh-en"], 1),
        (["--from", "zh", "--to", "en"], 1),
        (["--from", "eng", "--to", "zho"], 0),
        (["--direction", "EN-ZH"], 0),
    ],
)
def test_translate_chooses_the_bundle_by_direction(monkeypatch, capsys, two_directions, flags, want):
    fake = install(monkeypatch, PairEcho)
    code, out, err = run(monkeypatch, capsys, ["translate", *flags, "Hi"])
    assert code == 0 and out == "Hi\n", err
    assert fake.instances[-1].bundle_dir == two_directions[want]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--from", "zh"], "--from and --to go together"),
        (["--to", "en"], "--from and --to go together"),
        (["--direction", "zh-en", "--from", "zh", "--to", "en"], "not both"),
        (["--direction", "chinese"], "not a language pair"),
        (["--from", "e n", "--to", "zh"], "not a language pair"),
    ],
)
def test_direction_mistakes_are_usage_errors(capsys, flags, message):
    with pytest.raises(SystemExit) as exc:
        main(["translate", *flags, "Hi"])
    assert exc.value.code == 2 and message in capsys.readouterr().err


def test_a_direction_nothing_installed_translates_says_so(store, monkeypatch, capsys):
    _copy_as(store.models / "opus-mt-en-zh")
    install(monkeypatch, PairEcho)
    code, _, err = run(monkeypatch, capsys, ["translate", "--direction", "zh-en", "Hi"])
    assert code == 1 and "no zh-en model installed (installed: en-zh)" in err and "qiao model download" in err
    assert "qiao model build --from Helsinki-NLP/opus-mt-zh-en --out resources/models/opus-mt-zh-en" in err


def test_variant_choices_come_from_the_model(monkeypatch, capsys, two_directions):
    fake = install(monkeypatch, PairEcho)
    code, _, _ = run(monkeypatch, capsys, ["translate", "--variant", "hant", "Hi"])
    assert code == 0 and fake.instances[-1].options[-1].variant == "hant"
    code, _, err = run(monkeypatch, capsys, ["translate", "--variant", "latn", "Hi"])
    assert code == 1 and "unknown variant 'latn'; the installed models offer hans, hant" in err
    code, _, err = run(monkeypatch, capsys, ["translate", "--direction", "zh-en", "--variant", "hant", "Hi"])
    assert code == 1 and "the zh-en model has no target variants" in err
    code, out, _ = run(monkeypatch, capsys, ["translate", "--direction", "zh-en", "Hi"])
    assert code == 0 and out == "Hi\n" and fake.instances[-1].options[-1].variant is None


def test_script_is_a_hidden_alias_of_variant(monkeypatch, capsys, two_directions):
    fake = install(monkeypatch, PairEcho)
    code, _, _ = run(monkeypatch, capsys, ["translate", "--script", "hant", "Hi"])
    assert code == 0 and fake.instances[-1].options[-1].variant == "hant"
    with pytest.raises(SystemExit):
        main(["translate", "--help"])
    help_text = capsys.readouterr().out
    assert "--variant" in help_text and "--script" not in help_text


def test_a_real_translation_by_direction_through_the_engine(store, monkeypatch, capsys):
    shutil.copytree(BUNDLE, store.models / "opus-mt-en-zh")
    code, out, err = run(monkeypatch, capsys, ["translate", "--from", "en", "--to", "zh", "Thank you very much."])
    assert code == 0 and out.strip(), err


# -- several models of one direction -------------------------------------------------------------------------------


@pytest.fixture
def two_en_zh(store, tmp_path, monkeypatch):
    """Two en→zh bundles: opus-mt-en-zh (its published COMET 82.44) and a better one (90.0, with a speed)."""
    from tests.engine.store.direction_models import model_copy

    monkeypatch.setenv("QIAO_CONFIG_DIR", str(tmp_path / "config"))
    opus = model_copy(store.models / "opus-mt-en-zh", "Helsinki-NLP/opus-mt-en-zh")
    better = model_copy(store.models / "tiny-better", "qiao/tiny-better", score=90.0, speed=321.0)
    return opus, better


def test_list_shows_family_quality_speed_and_the_model_each_direction_uses(monkeypatch, capsys, two_en_zh, tmp_path):
    code, out, _ = run(monkeypatch, capsys, ["model", "list"])
    assert code == 0
    rows = {line.split()[2 if line.startswith("*") else 1]: line for line in out.splitlines()[1:3]}
    assert rows.keys() == {"opus-mt-en-zh", "tiny-better"}
    assert rows["tiny-better"].split()[:6] == ["*", "en-zh", "tiny-better", "marian", "COMET-22", "90.00"]
    assert "321 tok/s" in rows["tiny-better"]
    assert rows["opus-mt-en-zh"].split()[:5] == ["en-zh", "opus-mt-en-zh", "marian", "COMET-22", "82.44"]
    assert "quality: COMET-22 on FLORES devtest: Mozilla's evaluation" in out and "comet-results.md" in out
    code, out, _ = run(monkeypatch, capsys, ["model", "list", "--json"])
    records = {r["name"]: r for r in json.loads(out)}
    assert records["tiny-better"]["used"] is True and records["opus-mt-en-zh"]["used"] is False
    assert records["tiny-better"]["family"] == "marian" and records["tiny-better"]["quality"]["score"] == 90.0
    assert records["tiny-better"]["speed"]["tokens_per_s"] == 321.0 and records["opus-mt-en-zh"]["speed"] is None
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "qiao.ini").write_text("[models]\nen-zh=opus-mt-en-zh\n", encoding="utf-8")
    code, out, _ = run(monkeypatch, capsys, ["model", "list", "--json"])
    assert [r["name"] for r in json.loads(out) if r["used"]] == ["opus-mt-en-zh"], "the window's choice is used"


def test_translate_model_name_picks_an_installed_bundle(monkeypatch, capsys, two_en_zh):
    opus, better = two_en_zh
    fake = install(monkeypatch, PairEcho)
    code, out, err = run(monkeypatch, capsys, ["translate", "Hi"])
    assert code == 0 and fake.instances[-1].bundle_dir == better, "no choice: the best quality"
    code, out, err = run(monkeypatch, capsys, ["translate", "--model", "opus-mt-en-zh", "Hi"])
    assert code == 0 and out == "Hi\n" and fake.instances[-1].bundle_dir == opus, err
    code, out, err = run(monkeypatch, capsys, ["translate", "--model", "Helsinki-NLP/opus-mt-en-zh", "Hi"])
    assert code == 0 and fake.instances[-1].bundle_dir == opus, err
    code, out, err = run(monkeypatch, capsys, ["translate", "--model", "opus-mt-zh-xx", "Hi"])
    assert code == 1 and out == ""
    assert "no installed model is named opus-mt-zh-xx (installed: opus-mt-en-zh, tiny-better)" in err


def test_translate_file_model_name_picks_an_installed_bundle(monkeypatch, capsys, two_en_zh, tmp_path):
    from engine.pipeline.translator import Translator

    opus, _ = two_en_zh
    opened: list[Path] = []

    class Recording(Translator):  # the real engine on the fixture's weights, noting which bundle it opened
        def __init__(self, bundle_dir, *a, **k):
            opened.append(Path(bundle_dir))
            super().__init__(bundle_dir, *a, **k)

    monkeypatch.setattr("engine.pipeline.translator.Translator", Recording)
    source = tmp_path / "a.txt"
    source.write_text("Hello.\n", encoding="utf-8")
    code, _, err = run(monkeypatch, capsys, ["translate-file", "--model", "opus-mt-en-zh", str(source)])
    assert code == 0, err
    assert opened == [opus]
    code, _, err = run(monkeypatch, capsys, ["translate-file", "--model", "nope", str(source)])
    assert code == 1 and "no installed model is named nope" in err


def test_download_without_ids_takes_the_best_of_each_direction(store, monkeypatch, capsys, server, tmp_path):
    archive = zip_bundle(tmp_path / "b.zip")
    server.add("/b.zip", archive.read_bytes())
    worse = catalogue_entry(archive, "b.zip", id="worse", quality={**_QUALITY, "score": 50.0})
    best = catalogue_entry(archive, "b.zip", quality={**_QUALITY, "score": 90.0})
    url = server.add("/catalogue.json", json.dumps({"format": 1, "bundles": [worse, best]}).encode())
    code, out, _ = run(monkeypatch, capsys, ["model", "download", "--catalogue", url, "--list"])
    assert code == 0 and "(recommended)" in out.splitlines()[1] and "(recommended)" not in out.splitlines()[0]
    assert "COMET-22 90.00" in out.splitlines()[1]
    code, out, err = run(monkeypatch, capsys, ["model", "download", "--catalogue", url])
    assert code == 0, err
    assert f"downloading {FIXTURE_NAME}" in err and "downloading worse" not in err


_QUALITY = {"metric": "COMET-22", "test_set": "FLORES devtest", "score": 0.0, "source": "test"}


def test_a_chosen_model_that_is_gone_or_damaged_is_said_once_not_replaced_silently(
    monkeypatch, capsys, two_en_zh, tmp_path
):
    opus, better = two_en_zh
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "qiao.ini").write_text("[models]\nen-zh=opus-mt-en-zh\n", encoding="utf-8")
    fake = install(monkeypatch, PairEcho)
    code, out, err = run(monkeypatch, capsys, ["translate", "Hi"])
    assert code == 0 and fake.instances[-1].bundle_dir == opus and "note:" not in err, "the choice is used"

    shutil.move(str(opus), str(tmp_path / "moved-away"))  # the chosen folder moved out of the models folder
    code, out, err = run(monkeypatch, capsys, ["translate", "--json"], stdin="Hi\nHello\n")
    assert code == 0 and fake.instances[-1].bundle_dir == better
    note = "the model chosen for en-zh (opus-mt-en-zh) is not installed any more; using tiny-better"
    assert err.count(note) == 1, err
    code, out, err = run(monkeypatch, capsys, ["model", "list"])
    assert code == 0 and out.splitlines()[1].split()[:3] == ["*", "en-zh", "tiny-better"]
    assert err.count(note) == 1, err
    code, out, err = run(monkeypatch, capsys, ["translate", "--model", "tiny-better", "Hi"])
    assert code == 0 and "note:" not in err, "a model given by name is what was asked for"

    shutil.move(str(tmp_path / "moved-away"), str(opus))
    (opus / "manifest.json").write_text("{ damaged", encoding="utf-8")
    code, out, err = run(monkeypatch, capsys, ["translate", "Hi"])
    assert code == 0 and fake.instances[-1].bundle_dir == better
    assert "the model chosen for en-zh (opus-mt-en-zh) cannot be used (" in err
    assert "qiao model verify opus-mt-en-zh" in err and "using tiny-better" in err


@pytest.mark.parametrize("direction", [[], ["--direction", "en-zh"]])
def test_serve_with_only_a_damaged_bundle_names_it_and_how_to_repair_it(store, monkeypatch, capsys, direction):
    """`qiao serve` said "no model bundle found" for a bundle whose manifest.json is damaged (its languages list only
    usable models); now it says what `qiao translate` says: the bundle, the file, and how to repair it."""
    damaged = store.models / "opus-mt-en-zh"
    shutil.copytree(BUNDLE, damaged)
    (damaged / "manifest.json").write_text("{ damaged", encoding="utf-8")
    code, out, err = run(monkeypatch, capsys, ["serve", "--port", "0", *direction])
    assert code == 1 and out == ""
    assert f"model bundle {damaged} failed verification" in err and "manifest.json is unreadable" in err, err
    assert "qiao model verify opus-mt-en-zh" in err and "qiao model import PATH --force" in err
    assert "no model bundle found" not in err
    shutil.rmtree(damaged)
    code, out, err = run(monkeypatch, capsys, ["serve", "--port", "0", *direction])
    assert code == 1 and "no model bundle found" in err, "nothing installed at all: said as before"


@pytest.mark.parametrize(("damaged", "hint"), [("int8/decoder.onnx", "fp32"), ("tokenizer.json", None)])
def test_translate_with_one_precision_damaged_says_the_other_one_works(store, monkeypatch, capsys, damaged, hint):
    """int8/decoder.onnx truncated, fp32 intact: `qiao translate` named the file but not that --precision fp32 would
    translate (the window offers "Use FP32 instead"). A file every precision needs gets no such hint."""
    bundle = store.models / "opus-mt-en-zh"
    shutil.copytree(BUNDLE, bundle)
    data = (bundle / damaged).read_bytes()
    (bundle / damaged).write_bytes(data[: len(data) // 2])
    code, out, err = run(monkeypatch, capsys, ["translate", "Hello."])
    assert code == 1 and out == "" and damaged in err and "qiao model verify opus-mt-en-zh" in err
    if hint is None:
        assert "--precision" not in err, err
        return
    assert f"the {hint} files pass their check: translate with --precision {hint}" in err, err
    code, out, err = run(monkeypatch, capsys, ["translate", "--precision", hint, "Hello."])
    assert code == 0 and out.strip(), "the hint works"
