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
    """Tests never write to the user's real cache folder."""
    monkeypatch.setenv("QIAO_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "qiao-cache"))


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
