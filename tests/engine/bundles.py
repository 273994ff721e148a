"""Helpers for tests that damage or rewrite a copy of the fixture bundle (never the committed one)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from engine.bundle.manifest import dumps, sha256_file


def copy_bundle(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest)
    return dest


def read_raw(bundle: Path) -> dict:
    return json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))


def rewrite(bundle: Path, change: Callable[[dict], object]) -> dict:
    """Apply `change` to the manifest and write it back sealed, as a (mis)behaving builder would."""
    raw = read_raw(bundle)
    change(raw)
    (bundle / "manifest.json").write_text(dumps(raw), encoding="utf-8")
    return raw


def relist(bundle: Path, rel: str) -> None:
    """Record a changed file's new size and sha256 in the manifest (so only the change under test is wrong)."""
    path = bundle / rel

    def update(raw: dict) -> None:
        raw["files"][rel] = {"size": path.stat().st_size, "sha256": sha256_file(path)}

    rewrite(bundle, update)


def flip_byte_keep_stamp(path: Path, index: int) -> None:
    """Bit rot: one byte changes, size and modification time stay (the verified-files cache cannot tell)."""
    st = path.stat()
    data = bytearray(path.read_bytes())
    data[index] ^= 0xFF
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


ROOT = Path(__file__).resolve().parents[2]
TINY_EN_ZH = ROOT / "tests/fixtures/tiny_marian/bundle"
# Built by the zh→en fixture's own task; tests that need it skip until it is there.
TINY_ZH_EN = ROOT / "tests/fixtures/tiny_marian_zh_en/bundle"


def relabel_as_zh_en(bundle: Path) -> dict:
    """Make a copied en→zh bundle say it is zh→en (its manifest's `languages`), so the engine's pair-driven
    conventions can be exercised on the tiny model without a zh→en checkpoint; the outputs are not English."""
    from engine.languages import default_pair

    def change(raw: dict) -> None:
        raw["languages"] = default_pair("zh", "en").as_dict()

    return rewrite(bundle, change)


def zh_en_copy(bundle: Path, dest: Path) -> Path:
    """A copy of the en→zh `bundle` at `dest` whose manifest says zh→en (resealed): a second pair to install, stage
    or self-test; what it writes is still Chinese."""
    shutil.copytree(bundle, dest)
    relabel_as_zh_en(dest)
    return dest
