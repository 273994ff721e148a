"""The Translator's EngineConfig: given whole or as precision=/threads=, read by sessions and scorer, and changed by
reloading only what changed."""

from __future__ import annotations

import pytest

import engine.pipeline.translator as translator_module
from engine.config import EngineConfig
from engine.errors import InputError
from engine.families import Family
from engine.pipeline.translator import Translator

FP32_1 = EngineConfig(precision="fp32", threads=1)


@pytest.fixture(scope="module")
def tr(bundle_dir):
    return Translator(bundle_dir, FP32_1)


def test_a_config_or_its_shorthands(bundle_dir, tr):
    assert tr.config == FP32_1 and tr.precision == "fp32" and tr.threads == 1
    assert tr._model.threads == 1 and tr._model.config == FP32_1
    same = Translator(bundle_dir, precision="fp32", threads=1)
    assert same.config == FP32_1
    assert Translator(bundle_dir, FP32_1, precision="fp32").config == FP32_1  # agreeing shorthands are fine


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((FP32_1,), {"precision": "int8"}, "contradicts the config's precision"),
        ((FP32_1,), {"threads": 2}, "contradicts the config's threads"),
        (("fp32",), {}, "config must be an EngineConfig"),
        ((EngineConfig(threads=0),), {}, "threads must be a whole number"),
        ((EngineConfig(provider="gpu"),), {}, "provider must be one of cpu"),
        ((), {"precision": "fp16"}, "precision must be one of int8, fp32"),
    ],
)
def test_bad_or_conflicting_configs_are_refused_before_loading(bundle_dir, args, kwargs, message):
    with pytest.raises(InputError, match=message):
        Translator(bundle_dir, *args, **kwargs)


class Loads:
    """Counts model loads and file checks of one translator."""

    def __init__(self, monkeypatch):
        self.models: list[EngineConfig] = []
        self.checks = 0
        real_model, real_verify = Family.load_model, translator_module.verify_files

        def model(family, manifest, config):
            self.models.append(config)
            return real_model(family, manifest, config)

        def verify(*args, **kwargs):
            self.checks += 1
            return real_verify(*args, **kwargs)

        monkeypatch.setattr(Family, "load_model", model)
        monkeypatch.setattr(translator_module, "verify_files", verify)


def test_set_config_reloads_only_what_changed(bundle_dir, monkeypatch):
    tr = Translator(bundle_dir, FP32_1)
    before = tr.translate("Thank you very much.").text
    loads = Loads(monkeypatch)
    tr.set_config(FP32_1)
    assert loads.models == []  # nothing changed: nothing reloaded
    tr.set_threads(2)
    assert loads.models == [FP32_1.replace(threads=2)] and loads.checks == 0  # same files: not re-checked
    assert tr.config.threads == 2 and tr._model.threads == 2
    tr.set_precision("int8")
    assert loads.models[-1] == EngineConfig("int8", 2) and loads.checks == 1  # other files: checked first
    tr.set_config(FP32_1)
    assert tr.config == FP32_1 and tr.translate("Thank you very much.").text == before
    with pytest.raises(InputError, match="EngineConfig"):
        tr.set_config("fp32")  # type: ignore[arg-type]


def test_a_failed_reload_keeps_the_old_config(bundle_dir, monkeypatch):
    tr = Translator(bundle_dir, FP32_1)

    def broken(family, manifest, config):
        raise RuntimeError("no memory")

    monkeypatch.setattr(Family, "load_model", broken)
    with pytest.raises(Exception, match="no memory"):
        tr.set_threads(3)
    assert tr.config == FP32_1 and tr._model.threads == 1


def test_sessions_and_scorer_read_the_config(bundle_dir, monkeypatch):
    import engine.runtime.scorer
    import engine.runtime.sessions

    seen: list[tuple[str, list[str], int]] = []
    real = engine.runtime.sessions.inference_session

    def spy(path, options, providers=None):
        seen.append((path.name, providers, options.intra_op_num_threads))
        return real(path, options, providers)

    monkeypatch.setattr(engine.runtime.sessions, "inference_session", spy)
    monkeypatch.setattr(engine.runtime.scorer, "inference_session", spy)
    Translator(bundle_dir, EngineConfig(precision="fp32", threads=2))
    names = [name for name, _, _ in seen]
    assert "encoder.onnx" in names and "decoder.onnx" in names and "scorer.onnx" in names
    assert all(providers == ["CPUExecutionProvider"] and threads == 2 for _, providers, threads in seen)
