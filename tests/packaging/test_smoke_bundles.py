"""The smoke test freezes every fixture bundle there is and checks that `qiao --self-test` tested each one."""

from __future__ import annotations

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
