"""The family registry and the manifest's `family`: a bundle names the family whose code runs it (format 5), a
format-4 bundle is Marian, and a family this Qiao lacks is refused with a clear BundleError before anything loads."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from engine import families
from engine.bundle.manifest import FORMAT_VERSION, MARIAN_ONLY_FORMAT, dumps, load_manifest, verify_bundle
from engine.errors import BundleError
from engine.families.base import GenerationSpec
from engine.pipeline.translator import Translator


def _rewrite(bundle: Path, change) -> None:
    """Change the bundle's manifest in place and seal it again (as a builder that wrote it so would have)."""
    path = bundle / "manifest.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    change(raw)
    path.write_text(dumps(raw), encoding="utf-8")


@pytest.fixture
def bundle_copy(bundle_dir, tmp_path) -> Path:
    dst = tmp_path / "bundle"
    shutil.copytree(bundle_dir, dst)
    return dst


def _as_format_5(family: str | None):
    def change(raw: dict) -> None:
        raw["format_version"] = FORMAT_VERSION
        if family is not None:
            raw["family"] = family

    return change


def test_marian_is_registered_and_a_family_is_one_package():
    assert "marian" in families.names()
    family = families.get("marian")
    assert (family.name, family.package) == ("marian", "engine.families.marian")
    runtime = family.runtime()
    assert all(callable(getattr(runtime, name)) for name in ("load_model", "load_tokenizer", "generation_spec"))


def test_the_converter_is_reached_through_the_family_only_when_asked(monkeypatch):
    import sys

    monkeypatch.delitem(sys.modules, "engine.families.marian.converter", raising=False)
    family = families.get("marian")
    assert "engine.families.marian.converter" not in sys.modules  # the registry imports no converter
    assert family.build().__name__ == "engine.families.marian.converter"


def test_an_unknown_family_name_says_which_ones_exist():
    with pytest.raises(KeyError, match=r"unknown model family 'nllb'; this Qiao runs marian"):
        families.get("nllb")


def test_the_family_loads_a_working_model_and_tokenizer(bundle_dir):
    manifest = verify_bundle(bundle_dir)
    family = families.of(manifest)
    tokenizer = family.load_tokenizer(manifest)
    model = family.load_model(manifest, _config("fp32"))
    ids = tokenizer.encode("Thank you very much.")
    assert ids[-1] == tokenizer.eos_id
    enc = model.encode(np.array([ids], dtype=np.int64), np.ones((1, len(ids)), dtype=np.int64))
    assert enc.mask.shape == (1, len(ids))
    run = model.start(enc, 8)
    logits = run.step(np.array([family.generation_spec(manifest).decoder_start_id], dtype=np.int64))
    assert logits.shape == (1, model.vocab_size)


def test_encoder_state_take_keeps_the_rows_asked_for(bundle_dir):
    manifest = verify_bundle(bundle_dir)
    model = families.of(manifest).load_model(manifest, _config("fp32"))
    ids = np.array([[5, 6, 0], [7, 0, 1], [8, 9, 0]], dtype=np.int64)
    mask = np.array([[1, 1, 1], [1, 1, 0], [1, 1, 1]], dtype=np.int64)
    enc = model.encode(ids, mask)
    taken = enc.take((2, 0))  # a tuple too: rows, not dimensions
    assert np.array_equal(taken.mask, mask[[2, 0]])
    assert all(np.array_equal(t, c[[2, 0]]) for t, c in zip(taken.cross, enc.cross))  # type: ignore[attr-defined]


def test_a_format_4_bundle_is_read_as_marian(bundle_dir):
    manifest = load_manifest(bundle_dir)
    assert manifest.raw["format_version"] == MARIAN_ONLY_FORMAT and "family" not in manifest.raw
    assert manifest.family == "marian" and families.of(manifest).name == "marian"


def test_a_format_5_marian_bundle_translates_as_its_format_4_twin(bundle_dir, bundle_copy):
    _rewrite(bundle_copy, _as_format_5("marian"))
    manifest = verify_bundle(bundle_copy)
    assert (manifest.raw["format_version"], manifest.family) == (5, "marian")
    text = "Thank you very much."
    assert Translator(bundle_copy, precision="fp32").translate(text).text == (
        Translator(bundle_dir, precision="fp32").translate(text).text
    )


def test_an_unknown_family_is_refused_before_any_other_file(bundle_copy):
    _rewrite(bundle_copy, _as_format_5("bergamot-next"))
    (bundle_copy / "fp32" / "decoder.onnx").unlink()  # never looked at: the family is refused first
    with pytest.raises(BundleError) as err:
        verify_bundle(bundle_copy)
    assert [p.kind for p in err.value.issues] == ["format"]
    (problem,) = err.value.problems
    assert "model family 'bergamot-next' is not one this Qiao runs (it runs marian, bergamot)" in problem
    assert "update Qiao" in problem


def test_format_5_must_name_its_family(bundle_copy):
    _rewrite(bundle_copy, _as_format_5(None))
    with pytest.raises(BundleError, match="family: expected the name of a model family, found nothing"):
        load_manifest(bundle_copy)
    _rewrite(bundle_copy, _as_format_5(""))
    with pytest.raises(BundleError, match="family: expected the name of a model family"):
        load_manifest(bundle_copy)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda raw: raw.update(family="marian"), "family: expected nothing (a format-4 bundle is Marian"),
        (
            lambda raw: raw["config"].update(source_vocab_size=raw["config"]["vocab_size"]),
            "config.source_vocab_size: expected nothing in a format-4 bundle (separate vocabularies need format 5)",
        ),
    ],
)
def test_format_4_has_one_meaning(bundle_copy, change, message):
    """Format 4 is Marian with one shared vocabulary: a family or a source vocabulary there is a malformed bundle."""
    _rewrite(bundle_copy, change)
    with pytest.raises(BundleError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_manifest(bundle_copy)


def test_a_spec_the_pipeline_cannot_follow_is_refused_at_load(bundle_dir, monkeypatch):
    """A family whose target language is chosen by a forced first target token: the pipeline does not do that yet,
    so the translator says so instead of translating into the wrong language."""
    real = families.Family.generation_spec

    def forced(family, manifest) -> GenerationSpec:
        spec = real(family, manifest)
        return GenerationSpec(spec.decoder_start_id, spec.end_ids, spec.pad_id, target_language="forced-first-token")

    monkeypatch.setattr(families.Family, "generation_spec", forced)
    with pytest.raises(BundleError, match="forces its first target token"):
        Translator(bundle_dir, precision="fp32")


def _config(precision: str):
    from engine.config import EngineConfig

    return EngineConfig(precision=precision, threads=1)


def test_bergamot_is_registered_and_loading_it_imports_no_converter():
    """The runtime package (load_model, load_tokenizer, generation_spec) stays apart from its converter/ package and
    from onnx, which the frozen app does not ship."""
    import subprocess
    import sys

    assert "bergamot" in families.names()
    code = (
        "import sys; from engine import families; r = families.get('bergamot').runtime(); "
        "print(all(callable(getattr(r, n)) for n in ('load_model', 'load_tokenizer', 'generation_spec')), "
        "'engine.families.bergamot.converter' in sys.modules, 'onnx' in sys.modules)"
    )
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    assert done.stdout.split() == ["True", "False", "False"]
