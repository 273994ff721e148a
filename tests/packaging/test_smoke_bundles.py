"""The smoke test freezes every fixture bundle there is and checks that `qiao --self-test` tested each one."""

from __future__ import annotations

import json

import pytest
import smoke_test

REPORT = """qiao 0.1.0 self-test (frozen, Linux x86_64, Python 3.11.7)
bundles:   2 installed, each tested

model:     /opt/qiao/_internal/models/opus-mt-en-zh
pair:      en-zh (English → Chinese)
result:    en-zh passed

model:     /opt/qiao/_internal/models/opus-mt-zh-en
pair:      zh-en (Chinese → English)
result:    zh-en passed
self-test passed
"""


def test_build_uses_the_zh_en_fixture_once_it_exists(monkeypatch, tmp_path):
    monkeypatch.setattr(smoke_test, "ZH_EN_FIXTURE", tmp_path / "bundle")
    assert smoke_test.fixture_models() == ["fixture"]
    (tmp_path / "bundle").mkdir()
    (tmp_path / "bundle" / "manifest.json").write_text("{}", encoding="utf-8")
    assert smoke_test.fixture_models() == ["fixture", "fixture-zh-en"]


def test_embedded_bundles_are_the_folders_with_a_manifest(tmp_path):
    models = tmp_path / "_internal" / "models"
    for name in ("opus-mt-zh-en", "opus-mt-en-zh", "empty"):
        (models / name).mkdir(parents=True)
    for name in ("opus-mt-zh-en", "opus-mt-en-zh"):
        (models / name / "manifest.json").write_text("{}", encoding="utf-8")
    assert smoke_test.embedded_bundles(tmp_path) == ["opus-mt-en-zh", "opus-mt-zh-en"]
    assert smoke_test.embedded_bundles(tmp_path / "none") == []


def test_the_bundles_a_self_test_report_tested():
    assert smoke_test.self_test_bundles(REPORT) == ["opus-mt-en-zh", "opus-mt-zh-en"]
    assert smoke_test.self_test_bundles("self-test FAILED: no model bundle found\n") == []


def _extra_run(**changes) -> dict:
    run = {
        "path": "/m/bundle",
        "family": "bergamot",
        "pair": "en-zh",
        "self_test": {"exit_code": 0, "output": "self-test passed\n", "passed": True, "ran": True, "isolated": True},
        "translate": {
            "exit_code": 0,
            "inputs": ["a", "b"],
            "records": [{"text": "x", "tokens": [[1]]}, {"text": "", "tokens": [[]]}],
            "isolated": True,
        },
    }
    for key, value in changes.items():
        part, _, field = key.partition("__")
        run[part][field] = value
    return run


def test_an_extra_model_that_ran_offline_has_no_failures():
    assert smoke_test.extra_model_failures(_extra_run()) == []  # an empty translation is still a translation
    # a model whose self-test fails on its output (a tiny random one: empty), as it does from source
    assert smoke_test.extra_model_failures(_extra_run(self_test__passed=False, self_test__exit_code=1)) == []


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"self_test__ran": False, "self_test__exit_code": -11}, "self-test did not run to a verdict (exit -11)"),
        ({"translate__exit_code": 1}, "frozen translate --json: exit 1, 2 of 2"),
        ({"translate__records": [{"text": "x", "tokens": [[1]]}]}, "frozen translate --json: exit 0, 1 of 2"),
        ({"translate__records": [{"text": "x", "tokens": [[1]]}, {"unreadable": "Traceback"}]}, "1 of 2"),
        ({"translate__isolated": False}, "did not run fully isolated"),
    ],
)
def test_what_an_extra_model_run_got_wrong_is_named(changes, says):
    failures = smoke_test.extra_model_failures(_extra_run(**changes))
    assert len(failures) == 1 and says in failures[0] and "/m/bundle (bergamot, en-zh)" in failures[0]


def test_extra_model_sentences_follow_the_bundles_source_language(tmp_path):
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    manifest = {
        "format_version": 5,
        "family": "bergamot",
        "model": {"id": "mozilla/firefox-translations-zhen-base"},
        "languages": {"source": {"code": "zh"}, "target": {"code": "en"}},
    }
    (bundle / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    facts = smoke_test.bundle_facts(bundle)
    assert facts == {"family": "bergamot", "model_id": "mozilla/firefox-translations-zhen-base", "pair": "zh-en"}
    assert all(any("\u4e00" <= c <= "\u9fff" for c in s) for s in smoke_test.EXTRA_SENTENCES["zh"])
    del manifest["family"]  # format 4: before families, every bundle was Marian
    (bundle / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert smoke_test.bundle_facts(bundle)["family"] == "marian"
