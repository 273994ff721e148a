"""The release workflow parses, builds both bundles once, and publishes them with catalogue.json next to the
installers (the workflow itself only runs on GitHub; this catches a broken file or a dropped step before a tag)."""

from __future__ import annotations

import re

import pytest

from .conftest import ROOT

yaml = pytest.importorskip("yaml", reason="PyYAML (installed with the build extras) reads the workflow")
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"


@pytest.fixture(scope="module")
def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def scripts(job: dict) -> str:
    return "\n".join(step.get("run", "") for step in job["steps"])


def test_the_models_job_builds_checks_zips_and_catalogues_both_pairs(workflow):
    env, job = workflow["env"], workflow["jobs"]["models"]
    run = scripts(job)
    for pair, var in (("en-zh", "MODEL_DIR"), ("zh-en", "MODEL_DIR_ZH_EN")):
        assert env[var] == f"resources/models/opus-mt-{pair}"
        assert f'qiao model build --from Helsinki-NLP/opus-mt-{pair} --out "${var}"' in run
    assert "qiao model verify" in run and 'qiao --self-test --model "$bundle"' in run
    assert re.search(
        r'packaging/make_catalogue.py "\$MODEL_DIR" "\$MODEL_DIR_ZH_EN" "\$FIREFOX_OUT"/\*/ --out "\$MODELS_OUT"', run
    )
    assert run.index("measure_speed.py") < run.index("make_catalogue.py"), "the speed is in the manifests first"
    upload = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["with"]["name"] == "qiao-models" and upload["with"]["if-no-files-found"] == "error"
    assert "qiao-model-*.zip" in upload["with"]["path"] and "catalogue.json" in upload["with"]["path"]


def test_the_installers_embed_the_best_published_bundle_of_each_direction(workflow):
    """Issue 29: new installs get the best-quality model per direction: the freeze stages from the release's own
    catalogue and zips (stage_model.py --catalogue: the app's ranking, tested in test_stage_catalogue.py), on every
    OS; the opus-mt bundles still run in the frozen app from outside it."""
    job = workflow["jobs"]["build"]
    assert job["needs"] == "models"
    download = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/download-artifact"))
    assert download["with"]["name"] == "qiao-models" and download["with"]["path"] == "${{ env.MODELS_OUT }}"
    run = scripts(job)
    assert "python -m zipfile -e" in run and "model build" not in run  # built once, by the models job
    assert 'packaging/build.sh --catalogue "$MODELS_OUT/catalogue.json"' in run
    assert 'Catalogue = "$env:MODELS_OUT/catalogue.json"' in run  # build.ps1 -Catalogue
    assert "--model" not in "".join(line for line in run.splitlines() if "build.sh" in line or "buildArgs =" in line)
    assert '--extra-model "$MODEL_DIR" --extra-model "$MODEL_DIR_ZH_EN"' in run  # Linux smoke test
    for bundle in ('"$PWD/$MODEL_DIR"', '"$PWD/$MODEL_DIR_ZH_EN"', "$env:MODEL_DIR", "$env:MODEL_DIR_ZH_EN"):
        assert f"--self-test --model {bundle}" in run  # both opus-mt bundles pass their self-test in the frozen app
    assert run.count("--self-test --model") >= 6  # Linux, macOS, Windows


def test_the_release_publishes_bundles_and_catalogue_next_to_the_installers(workflow):
    release = next(s for s in workflow["jobs"]["publish"]["steps"] if "action-gh-release" in s.get("uses", ""))
    files = release["with"]["files"].split()
    assert "artifacts/qiao-models/qiao-model-*.zip" in files and "artifacts/qiao-models/catalogue.json" in files
    assert "artifacts/*/*-setup.exe" in files and "artifacts/*/*.dmg" in files


def test_every_script_the_workflow_runs_exists(workflow):
    text = "\n".join(scripts(job) for job in workflow["jobs"].values())
    used = set(re.findall(r"packaging[/\\]([\w/\\]+\.(?:py|sh|ps1|iss))", text))
    assert used and all((ROOT / "packaging" / u.replace("\\", "/")).is_file() for u in used), used


def test_the_firefox_job_fetches_checks_converts_and_hands_the_bundles_to_the_catalogue(workflow):
    """Issue 29: Mozilla's en↔zh models, checked against the published hashes (packaging/fetch_firefox_models.py,
    tested offline in test_fetch_firefox_models.py), converted, verified and self-tested, then catalogued."""
    env, jobs = workflow["env"], workflow["jobs"]
    firefox = jobs["firefox-models"]
    run = scripts(firefox)
    assert 'python packaging/fetch_firefox_models.py --out "$FIREFOX_OUT"' in run
    assert "qiao model verify" in run and 'qiao --self-test --model "$bundle"' in run
    upload = next(s for s in firefox["steps"] if s.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["with"]["name"] == "firefox-bundles" and upload["with"]["path"] == "${{ env.FIREFOX_OUT }}"
    assert upload["with"]["if-no-files-found"] == "error"
    models = jobs["models"]
    assert models["needs"] == "firefox-models"
    download = next(s for s in models["steps"] if s.get("uses", "").startswith("actions/download-artifact"))
    assert download["with"]["name"] == "firefox-bundles" and download["with"]["path"] == "${{ env.FIREFOX_OUT }}"
    assert env["FIREFOX_OUT"]
    build = scripts(jobs["build"])
    assert '"$MODELS_OUT"/qiao-model-opus-mt-*.zip' in build, "the installers and tests get the opus-mt bundles only"
