"""engine.store.archive: decompression bombs (a member, or the whole archive, unpacking far more than model files
compress) are refused with one message before they fill the disk; archives of real model files still unpack."""

from __future__ import annotations

import os
import random
import tarfile
import zipfile
from pathlib import Path

import pytest

from engine.store import archive
from engine.store.archive import ArchiveError, extract
from engine.store.installed import ModelStoreError, import_bundle
from tests.conftest import BUNDLE
from tests.engine import model_helpers
from tests.engine.model_helpers import FIXTURE_NAME

store = model_helpers.store

ZEROS = 80 << 20  # past both floors: deflates to ~80 kB (1000x), xz to ~12 kB
BOMB = "decompression \\(zip\\) bomb: nothing was installed"


class _Zeros:
    def __init__(self, size: int) -> None:
        self.left = size

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        self.left -= n
        return bytes(n)


def _bundle_files() -> list[tuple[str, Path]]:
    return [(f"{FIXTURE_NAME}/{p.relative_to(BUNDLE).as_posix()}", p) for p in sorted(BUNDLE.rglob("*")) if p.is_file()]


def _zip(dest: Path, extra: dict[str, int]) -> Path:
    """The fixture bundle zipped, plus members of zeros (name -> size)."""
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, path in _bundle_files():
            zf.write(path, name)
        for name, size in extra.items():
            info = zipfile.ZipInfo(f"{FIXTURE_NAME}/{name}")
            info.compress_type = zipfile.ZIP_DEFLATED
            with zf.open(info, "w", force_zip64=True) as out:
                source = _Zeros(size)
                while chunk := source.read(1 << 20):
                    out.write(chunk)
    return dest


def _tar(dest: Path, mode: str, extra: dict[str, int]) -> Path:
    with tarfile.open(dest, mode) as tf:
        for name, path in _bundle_files():
            tf.add(path, name)
        for name, size in extra.items():
            info = tarfile.TarInfo(f"{FIXTURE_NAME}/{name}")
            info.size = size
            tf.addfile(info, _Zeros(size))  # type: ignore[arg-type]
    return dest


def _make(tmp_path: Path, kind: str, extra: dict[str, int]) -> Path:
    if kind == "zip":
        return _zip(tmp_path / "model.zip", extra)
    return _tar(tmp_path / f"model.{kind}", f"w:{kind.split('.')[-1]}", extra)


@pytest.mark.parametrize("kind", ["zip", "tar.gz", "tar.xz"])
def test_a_member_of_zeros_is_refused_before_a_byte_is_written(store, tmp_path, kind):
    """QA: a 6 MB zip holding one 5 GB member of zeros unpacked to disk and imported (only the 32 GB total and the
    free space were checked). Now the member's ratio refuses it before anything is written."""
    bomb = _make(tmp_path, kind, {"zeros.bin": ZEROS})
    assert bomb.stat().st_size < 3 << 20
    written: list[int] = []
    # the zip names the member (its compressed size is declared); a tar is judged on the compressed bytes left
    member = f": {FIXTURE_NAME}/zeros.bin" if kind == "zip" else "(: [^ ]+)?"
    with pytest.raises(ModelStoreError, match=rf"^{bomb.name}{member} would unpack to .*{BOMB}"):
        import_bundle(bomb, progress=lambda done, total: written.append(done))
    assert not any(written), "bytes were written before the refusal"
    assert store.listing() == [] and [p.name for p in store.models.iterdir()] == []


@pytest.mark.parametrize("kind", ["zip", "tar.gz"])
def test_many_small_members_of_zeros_are_refused_as_a_whole(tmp_path, kind):
    """Each member is under the per-member floor; together they unpack to 40 times the archive's size."""
    bomb = _make(tmp_path, kind, {f"part{i}.bin": 8 << 20 for i in range(10)})
    dest = tmp_path / "out"
    dest.mkdir()
    written: list[int] = []
    with pytest.raises(ArchiveError, match=rf"^{bomb.name} would unpack to .* over 20 times its size.*{BOMB}"):
        extract(bomb, archive.kind_of(bomb) or "", dest, progress=lambda done, total: written.append(done))
    assert not any(written)


def test_the_bytes_written_are_bounded_while_unpacking(tmp_path, monkeypatch):
    """Should the sizes judged before unpacking be wrong, the count of bytes written stops it (as it is written)."""
    bomb = _zip(tmp_path / "model.zip", {"zeros.bin": ZEROS})
    monkeypatch.setattr(archive._Members, "_ratio_check", lambda self: None)
    monkeypatch.setattr(archive, "MEMBER_RATIO_FLOOR", 1 << 40)
    dest = tmp_path / "out"
    dest.mkdir()
    with pytest.raises(ArchiveError, match=rf"^model.zip would unpack to .*{BOMB}"):
        extract(bomb, "zip", dest)
    on_disk = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
    assert on_disk <= archive.TOTAL_RATIO_FLOOR


@pytest.mark.parametrize("kind", ["zip", "tar.gz", "tar.xz", "tar.bz2"])
def test_model_files_that_compress_a_few_times_still_unpack(tmp_path, kind, monkeypatch):
    """Weights (random: ~1x) and a vocabulary-like member (~2-4x), judged with no floors, unpack whole."""
    monkeypatch.setattr(archive, "MEMBER_RATIO_FLOOR", 0)
    monkeypatch.setattr(archive, "TOTAL_RATIO_FLOOR", 0)
    rng = random.Random(7)
    weights = rng.randbytes(3 << 20)
    vocab = bytes(rng.choice(b"abcdefghijklmnop \n") for _ in range(3 << 20))
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model.bin").write_bytes(weights)
    (folder / "vocab.spm").write_bytes(vocab)
    path = tmp_path / f"model.{kind}"
    if kind == "zip":
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            for name in ("model.bin", "vocab.spm"):
                zf.write(folder / name, f"model/{name}")
    else:
        with tarfile.open(path, f"w:{kind.split('.')[-1]}") as tf:
            tf.add(folder, "model")
    dest = tmp_path / "out"
    dest.mkdir()
    assert extract(path, archive.kind_of(path) or "", dest) == len(weights) + len(vocab)
    assert (dest / "model" / "vocab.spm").read_bytes() == vocab
    assert os.path.getsize(dest / "model" / "model.bin") == len(weights)
