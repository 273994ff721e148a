"""The smoke test's translation checks hold for whatever model the app embeds: the frozen app's `translate --json`
records and translate-file results are compared with the engine's from source on the same bundle, and only the
fixture model must also say what it was trained to (CORPUS, 非常感谢). A release embeds real models (Firefox's
Bergamot ones, or opus-mt), which never say the fixture's corpus.

Fast: no app is frozen. A folder laid out as the frozen app's (`_internal/models/<bundle>`) holds the tiny bundles,
and the engine from source, run with `--model` on the embedded bundle, stands in for the frozen app (the real one
must give the same records: tests/packaging/test_frozen_app.py checks that on the frozen fixture build).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import smoke_documents
import smoke_test

LINES = ["Thank you very much.", "Good morning, everyone!", "See you tomorrow."] * 2  # as the watch: each twice


def _dist(tmp_path: Path, **bundles: Path) -> Path:
    """A frozen app's folder holding `bundles` (name → bundle) as qiao.spec embeds them."""
    dist = tmp_path / "dist" / "qiao"
    for name, bundle in bundles.items():
        shutil.copytree(bundle, dist / "_internal" / "models" / name)
    return dist


def _as_frozen_translate(dist: Path, pair: str, lines: list[str], work: Path) -> str:
    """What the frozen `qiao translate --json` prints for `lines` (the engine on the app's bundle for `pair`)."""
    source = work / "frozen-input.txt"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    bundle = smoke_test.embedded_bundle(dist, pair)
    assert bundle is not None
    run = smoke_test.source_engine(["translate", "--json", "--model", str(bundle), "--file", str(source)], work)
    assert run.returncode == 0, run.stderr
    return run.stdout


def _watched(stdout: str, lines: list[str], dist: Path, work: Path) -> dict:
    return {"exit_code": 0, **smoke_test.cli_translations(stdout, lines, dist, work)}


@pytest.fixture
def bergamot_dist(tmp_path: Path, bergamot_bundle_dir: Path, bergamot_zh_en_bundle_dir: Path) -> Path:
    """A release-like app: Firefox Translations bundles, one per direction (tiny random ones)."""
    return _dist(tmp_path, **{"firefox-enzh": bergamot_bundle_dir, "firefox-zhen": bergamot_zh_en_bundle_dir})


@pytest.fixture
def fixture_dist(tmp_path: Path, bundle_dir: Path, zh_en_bundle_dir: Path) -> Path:
    """The test tier's app: the committed Marian fixtures."""
    return _dist(tmp_path, **{"opus-mt-en-zh": bundle_dir, "opus-mt-zh-en": zh_en_bundle_dir})


def test_the_embedded_bundle_of_a_direction(bergamot_dist: Path, tmp_path: Path, bundle_dir: Path):
    assert smoke_test.embedded_bundle(bergamot_dist, "en-zh") == bergamot_dist / "_internal" / "models" / "firefox-enzh"
    assert smoke_test.embedded_bundle(bergamot_dist, "zh-en") == bergamot_dist / "_internal" / "models" / "firefox-zhen"
    assert smoke_test.embedded_bundle(bergamot_dist, "en-de") is None
    shutil.copytree(bundle_dir, bergamot_dist / "_internal" / "models" / "opus-mt-en-zh")
    assert smoke_test.embedded_bundle(bergamot_dist, "en-zh") is None  # two for one direction: not guessed


def test_a_real_model_s_records_pass_when_they_equal_the_engine_from_source(bergamot_dist: Path, tmp_path: Path):
    """The watch's records from a Bergamot bundle: nothing like the fixture's corpus (the old check, "at least half
    translated as trained", failed every release run), yet exactly what the engine from source says."""
    stdout = _as_frozen_translate(bergamot_dist, "en-zh", LINES, tmp_path)
    cli = _watched(stdout, LINES, bergamot_dist, tmp_path / "work")
    assert cli["corpus_matches"] < cli["records"] // 2  # what failed the release's smoke test
    assert cli["trained_on_corpus"] is False
    assert cli["source"]["matches"] == cli["source"]["of"] == len(LINES), cli["source"]
    assert cli["source"]["bundles"] == {"en-zh": str(bergamot_dist / "_internal" / "models" / "firefox-enzh")}
    assert smoke_test.cli_translation_failures(cli) == []


def test_a_record_that_differs_from_the_engine_from_source_fails(bergamot_dist: Path, tmp_path: Path):
    stdout = _as_frozen_translate(bergamot_dist, "en-zh", LINES, tmp_path)
    records = [json.loads(line) for line in stdout.splitlines()]
    records[1]["tokens"][0] = [*records[1]["tokens"][0], 5]  # one token more, the text unchanged
    tampered = "\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n"
    cli = _watched(tampered, LINES, bergamot_dist, tmp_path / "work")
    assert cli["source"]["matches"] == len(LINES) - 1
    assert [d["line"] for d in cli["source"]["differences"]] == [2]
    [failure] = smoke_test.cli_translation_failures(cli)
    assert "1 of 6 records differ from the engine's from source" in failure


def test_a_direction_the_app_does_not_embed_fails(bergamot_dist: Path, tmp_path: Path):
    stdout = _as_frozen_translate(bergamot_dist, "en-zh", LINES, tmp_path)
    shutil.rmtree(bergamot_dist / "_internal" / "models" / "firefox-enzh")
    cli = _watched(stdout, LINES, bergamot_dist, tmp_path / "work")
    [failure] = smoke_test.cli_translation_failures(cli)
    assert "no reference from source" in failure and "en-zh" in failure


def test_the_fixture_model_is_still_held_to_its_corpus(fixture_dist: Path, tmp_path: Path):
    corpus = smoke_test.CORPUS.read_text(encoding="utf-8").splitlines()
    lines = [row.split("\t")[0] for row in corpus[:8]] * 2
    stdout = _as_frozen_translate(fixture_dist, "en-zh", lines, tmp_path)
    cli = _watched(stdout, lines, fixture_dist, tmp_path / "work")
    assert cli["trained_on_corpus"] is True
    assert cli["source"]["matches"] == len(lines) and cli["corpus_matches"] >= len(lines) // 2
    assert smoke_test.cli_translation_failures(cli) == []
    # the same records, had the fixture forgotten its corpus: the source comparison alone would not see it
    assert smoke_test.cli_translation_failures({**cli, "corpus_matches": 0}) == [
        "frozen qiao translate --json: only 0 translations as trained"
    ]
    assert smoke_test.cli_translation_failures({**cli, "corpus_matches": 0, "trained_on_corpus": False}) == []


def _as_frozen_documents(dist: Path, tmp_path: Path) -> tuple[list[str], Path, Path]:
    """The smoke test's documents and what the frozen translate-file writes for them."""
    docs_in, docs_out = tmp_path / "documents", tmp_path / "documents-out"
    names = smoke_documents.make_documents(docs_in)
    bundle = smoke_test.embedded_bundle(dist, "en-zh")
    run = smoke_test.source_engine(
        ["translate-file", str(docs_in), "--model", str(bundle), "--out", str(docs_out)], tmp_path / "frozen"
    )
    assert run.returncode == 0, run.stderr
    return names, docs_in, docs_out


def test_a_real_model_s_documents_pass_when_they_equal_the_engine_from_source(bergamot_dist: Path, tmp_path: Path):
    names, docs_in, docs_out = _as_frozen_documents(bergamot_dist, tmp_path)
    assert smoke_documents.check_results(names, docs_out) != dict.fromkeys(names, "ok")  # the old check: 非常感谢
    checked = smoke_test.document_check(bergamot_dist, names, docs_in, docs_out, tmp_path / "work")
    assert checked["verdicts"] == dict.fromkeys(names, "ok") and len(names) == 8
    assert checked["expected"] is None and "error" not in checked
    assert smoke_test.document_failures({"exit_code": 0, "output": "", **checked}) == []


def test_a_document_that_differs_from_the_engine_from_source_fails(bergamot_dist: Path, tmp_path: Path):
    names, docs_in, docs_out = _as_frozen_documents(bergamot_dist, tmp_path)
    (docs_out / "talk.zh.srt").write_text("1\n00:00:01,000 --> 00:00:03,000\n谢谢。\n", encoding="utf-8")
    (docs_out / "readme.zh.md").unlink()
    (docs_out / "note.zh.txt").write_text("Café menu\n\nThank you very much.\n", encoding="utf-8")
    checked = smoke_test.document_check(bergamot_dist, names, docs_in, docs_out, tmp_path / "work")
    bad = {k: v for k, v in checked["verdicts"].items() if v != "ok"}
    assert bad == {
        "talk.srt": "the result differs from the engine's from source on the same bundle",
        "readme.md": "no result file",
        "note.txt": "the result still says 'Thank you very much.'",
    }
    [failure] = smoke_test.document_failures({"exit_code": 0, "output": "", **checked})
    assert "talk.srt" in failure


def test_the_fixture_model_s_documents_must_still_say_what_it_was_trained_to(fixture_dist: Path, tmp_path: Path):
    names, docs_in, docs_out = _as_frozen_documents(fixture_dist, tmp_path)
    checked = smoke_test.document_check(fixture_dist, names, docs_in, docs_out, tmp_path / "work")
    assert checked["expected"] == smoke_documents.EXPECTED
    assert checked["verdicts"] == dict.fromkeys(names, "ok")
    reference = tmp_path / "work" / "documents-source"
    verdicts = smoke_documents.check_results(names, docs_out, reference=reference, expected="不可能的句子")
    assert set(verdicts.values()) == {"the result does not say 不可能的句子"}


def test_an_app_without_an_english_bundle_has_no_document_reference(tmp_path: Path, zh_en_bundle_dir: Path):
    dist = _dist(tmp_path, **{"opus-mt-zh-en": zh_en_bundle_dir})
    docs_in, docs_out = tmp_path / "documents", tmp_path / "documents-out"
    names = smoke_documents.make_documents(docs_in)
    checked = smoke_test.document_check(dist, names, docs_in, docs_out, tmp_path / "work")
    assert "no single bundle from en" in checked["error"]
    failures = smoke_test.document_failures({"exit_code": 0, "output": "", **checked})
    assert any("no reference from source" in f for f in failures)
