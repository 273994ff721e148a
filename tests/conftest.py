"""Shared fixtures: the committed tiny models (en→zh and zh→en), and no network for any test."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

# Imported here, before any test module can import onnxruntime, for its side effect: engine/__init__ switches
# onnxruntime's telemetry off (engine/privacy.py), and the subprocesses tests start inherit it. tests/test_offline.py
# proves that nothing reaches the network.
import engine  # noqa: F401

FIXTURE_DIR = Path(__file__).parent / "fixtures" / "tiny_marian"
CHECKPOINT = FIXTURE_DIR / "checkpoint"
BUNDLE = FIXTURE_DIR / "bundle"
# The reverse direction, trained from the same corpus by tiny_marian/make.py --direction zh-en (like opus-mt-zh-en:
# no language tokens, one target).
ZH_EN_FIXTURE_DIR = Path(__file__).parent / "fixtures" / "tiny_marian_zh_en"
ZH_EN_CHECKPOINT = ZH_EN_FIXTURE_DIR / "checkpoint"
ZH_EN_BUNDLE = ZH_EN_FIXTURE_DIR / "bundle"


@pytest.fixture(autouse=True)
def _no_network(monkeypatch):
    """Qiao works offline; a test that tries to reach the network fails loudly."""
    real_connect = socket.socket.connect

    def guarded(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6):
            raise OSError(f"network access attempted in a test: {address!r}")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: guarded(socket.socket(), a[0]))


@pytest.fixture(autouse=True)
def _private_cache(monkeypatch, tmp_path_factory):
    """Tests never write to the user's real cache folder, nor read the user's settings file (qiao.ini holds the
    model chosen per direction, which the engine's store follows)."""
    monkeypatch.setenv("QIAO_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "qiao-cache"))
    monkeypatch.setenv("QIAO_CONFIG_DIR", str(tmp_path_factory.getbasetemp() / "qiao-config"))


@pytest.fixture(scope="session")
def bundle_dir() -> Path:
    return BUNDLE


@pytest.fixture(scope="session")
def checkpoint_dir() -> Path:
    return CHECKPOINT


@pytest.fixture(scope="session")
def zh_en_bundle_dir() -> Path:
    return ZH_EN_BUNDLE


@pytest.fixture(scope="session")
def zh_en_checkpoint_dir() -> Path:
    return ZH_EN_CHECKPOINT


def _bergamot_bundle(tmp_path_factory: pytest.TempPathFactory, name: str, **spec: str) -> Path:
    """A tiny Firefox Translations (Bergamot) model folder (tests/fixtures/bergamot/make.py, cached in .cache), its
    INT8 weights with their alphas and a shortlist, converted into a bundle (FP32 and INT8) once per session."""
    pytest.importorskip("onnx")  # the converter writes the graphs; sentencepiece reads the vocabularies
    pytest.importorskip("sentencepiece")
    from dataclasses import replace

    from engine.families.bergamot.converter.convert import build_bundle
    from tests.fixtures.bergamot import make

    folder = make.cached_folder(replace(make.TINY, **spec), "intgemm-alphas", shortlist=True)
    out = tmp_path_factory.mktemp(name) / "bundle"
    build_bundle(folder.model.parent, out, quiet=True)
    return out


@pytest.fixture(scope="session")
def bergamot_bundle_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """en→zh, separate vocabularies, the target table tied to the output (as Firefox's base-memory enzh)."""
    return _bergamot_bundle(tmp_path_factory, "bergamot-enzh", pair="enzh", vocab="separate", tying="tied")


@pytest.fixture(scope="session")
def bergamot_zh_en_bundle_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """zh→en, one shared vocabulary and every table tied (as Firefox's zhen)."""
    return _bergamot_bundle(tmp_path_factory, "bergamot-zhen", pair="zhen", vocab="shared", tying="tied-all")
