"""The files a bundle derives instead of shipping (manifest `derived`), kept in the per-user cache folder.

The INT8 output projection's 7-bit copy (`int8/head.bin`, 33 MB of opus-mt-en-zh's 113 MB) is computed from the
bundle's own `int8/embedding.bin` (engine.runtime.derived) the first time the model loads, written to
`<cache>/derived/<manifest seal>/int8/head.bin`, and handed to ONNX Runtime in memory: the decoder graph still
names head.bin, but ORT reads those tensors from the buffer given here, never from the bundle's folder.

Trust: the manifest (sealed) records the derived file's size and sha256; what this module derives is checked
against that hash before it is used or cached, and a cached copy is used only when its size matches and its sha256
was confirmed (the verified-files cache skips re-hashing it while its size, mtime and inode stay the same, as for
the bundle's own files). A missing or damaged copy is derived again silently; a cache folder that cannot be written
(read-only home, full disk) leaves the derived bytes in memory for this process.
"""

from __future__ import annotations

import contextlib
import hashlib
import mmap
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnxruntime as ort

from engine.bundle.manifest import Manifest, sha256_file
from engine.bundle.onnx_external import external_data
from engine.bundle.safe_paths import beside
from engine.bundle.schema import DERIVED_METHODS, SEAL
from engine.bundle.verified_cache import VerifiedFiles
from engine.errors import BundleError, FileProblem
from engine.paths import cache_dir
from engine.runtime.derived import columns_head_file, write_file
from engine.runtime.sessions import create_session, inference_session, session_options

DERIVED_DIR = "derived"
STALE_AFTER_S = 60 * 86400  # an entry no load has used for this long is removed when another is written

# how each `derived[...].method` (engine.bundle.schema.DERIVED_METHODS) computes its file from a precision's table
DERIVERS = dict(zip(DERIVED_METHODS, (columns_head_file,), strict=True))

# ONNX TensorProto.DataType → numpy, for the tensors a derived file holds
_DTYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 6: np.int32, 7: np.int64, 10: np.float16}


def derived_root() -> Path:
    """Where derived files are cached: one folder per bundle manifest (its seal), under the per-user cache."""
    return cache_dir() / DERIVED_DIR


@dataclass
class DerivedFile:
    """One derived file's bytes for a session: a read-only map of the cached copy, or memory when the cache could
    not be written. Kept alive as long as the session that reads it."""

    rel: str  # as the manifest names it, e.g. "int8/head.bin"
    data: np.ndarray  # uint8
    path: Path | None  # the cached copy; None: in memory only
    derived: bool  # computed by this load (False: the cached copy was used)
    values: list = field(default_factory=list)  # the OrtValues over `data` handed to a session

    def drop_pages(self) -> None:
        """After ORT packed its own copy: let the OS drop the map's pages from this process's resident memory (they
        are read back from the file if ORT ever reads them again), as ORT does with its own external-data maps."""
        mapped = getattr(self.data, "_mmap", None)
        advice = getattr(mmap, "MADV_DONTNEED", None)
        if mapped is not None and advice is not None:
            with contextlib.suppress(OSError, ValueError):
                mapped.madvise(advice)


def derived_head(manifest: Manifest, precision: str) -> str | None:
    """The precision's output-projection file when the bundle derives it rather than ships it, else None."""
    head = manifest.precisions[precision].get("head")
    return head if head and head in manifest.raw.get("derived", {}) else None


def entry_dir(manifest: Manifest, root: Path | None = None) -> Path:
    """The cache folder of this bundle's derived files: keyed by its manifest's seal, so a rebuilt or updated
    bundle never meets another's copy."""
    return (root or derived_root()) / manifest.raw[SEAL]


def load(manifest: Manifest, rel: str, root: Path | None = None, verified: VerifiedFiles | None = None) -> DerivedFile:
    """`rel`'s bytes, from the cache when a checked copy is there, else derived now (and cached when possible).

    Raises BundleError when what this machine derives differs from the manifest's sha256 (the table it is derived
    from is damaged, since the bundle was checked)."""
    entry = manifest.raw["derived"][rel]
    folder = entry_dir(manifest, root)
    path = folder / rel
    verified = verified if verified is not None else VerifiedFiles()
    cached = _cached(path, entry, verified)
    if cached is not None:
        with contextlib.suppress(OSError):  # marks the entry used (pruning keeps it); a read-only cache skips it
            os.utime(folder)
        return DerivedFile(rel, cached, path, derived=False)
    data = _derive(manifest, rel, entry)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_file(path, data)
    except OSError:  # a read-only or full cache folder: this process keeps the bytes in memory
        return DerivedFile(rel, np.frombuffer(data, dtype=np.uint8), None, derived=True)
    verified.remember(path, entry["sha256"])
    verified.save()
    _prune(folder)
    return DerivedFile(rel, _map(path), path, derived=True)


def _cached(path: Path, entry: dict, verified: VerifiedFiles) -> np.ndarray | None:
    """The cached copy mapped read-only, when it is whole and its sha256 is the manifest's; else None (a damaged
    copy is removed so that it is written again)."""
    try:
        if path.stat().st_size != entry["size"]:
            raise ValueError("size")
        if not verified.is_verified(path, entry["sha256"]):
            if sha256_file(path) != entry["sha256"]:
                raise ValueError("sha256")
            verified.remember(path, entry["sha256"])
            verified.save()
        return _map(path)
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        verified.forget(path)
        verified.save()
        with contextlib.suppress(OSError):
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
        return None


def discard(seal: str, root: Path | None = None) -> None:
    """Remove the cache entry of the manifest sealed `seal` (the build's staged manifest, which no bundle keeps)."""
    with contextlib.suppress(OSError):
        shutil.rmtree((root or derived_root()) / seal)


def _map(path: Path) -> np.ndarray:
    return np.memmap(path, dtype=np.uint8, mode="r")


def _derive(manifest: Manifest, rel: str, entry: dict) -> bytes:
    source = entry["from"]
    spec = next(
        s["embedding"] for s in manifest.precisions.values() if s["embedding"]["file"] == source
    )  # the schema guarantees one
    data = DERIVERS[entry["method"]](manifest.path(source), spec)
    digest = hashlib.sha256(data).hexdigest()
    if len(data) != entry["size"] or digest != entry["sha256"]:
        detail = (
            f"{rel}, computed from {source}, has sha256 {digest[:16]}… where the manifest records "
            f"{entry['sha256'][:16]}…: {source} is damaged; build or download the model again"
        )
        raise BundleError(str(manifest.bundle_dir), [FileProblem("hash", source, detail)])
    return data


def _prune(keep: Path) -> None:
    """Remove the other entries (one folder per manifest seal) no load has used for STALE_AFTER_S: bundles removed
    or replaced since."""
    now = time.time()
    try:
        entries = list(keep.parent.iterdir())
    except OSError:
        return
    for entry in entries:
        if entry == keep:
            continue
        with contextlib.suppress(OSError):
            if entry.is_dir() and not entry.is_symlink() and now - entry.stat().st_mtime > STALE_AFTER_S:
                shutil.rmtree(entry)


def session_initializers(manifest: Manifest, graph: str, files: list[DerivedFile]) -> tuple[list[str], list]:
    """(names, OrtValues) for `add_external_initializers`: each tensor of the graph `graph` (bundle-relative) whose
    external data lies in one of `files`, read from that file's buffer instead of the bundle's folder."""
    by_rel = {f.rel: f for f in files}
    names: list[str] = []
    values = []
    for ref in external_data(manifest.path(graph)):
        target, problem = beside(graph, ref.location)
        if problem is not None or target not in by_rel:
            continue
        dtype = _DTYPES.get(ref.data_type)
        if dtype is None or ref.length is None:
            detail = f"{graph}: tensor {ref.name} in {target} has a type or length this Qiao cannot hand ORT"
            raise BundleError(str(manifest.bundle_dir), [FileProblem("damaged", graph, detail)])
        buffer = by_rel[target].data[ref.offset : ref.offset + ref.length]
        array = np.asarray(buffer).view(dtype).reshape(ref.dims)
        names.append(ref.name)
        values.append(ort.OrtValue.ortvalue_from_numpy(array))
    return names, values


def decoder_session(
    manifest: Manifest, precision: str, threads: int, providers: list[str] | None = None
) -> tuple[ort.InferenceSession, DerivedFile | None]:
    """The precision's decoder-step session (a spinning one: engine.runtime.sessions), and the derived head it reads
    when the bundle does not ship it (keep it as long as the session)."""
    decoder = manifest.precisions[precision]["decoder"]
    rel = derived_head(manifest, precision)
    if rel is None:
        return create_session(manifest.path(decoder), threads, spinning=True, providers=providers), None
    head = load(manifest, rel)
    options = session_options(threads, spinning=True)
    names, head.values = session_initializers(manifest, decoder, [head])
    options.add_external_initializers(names, head.values)
    session = inference_session(manifest.path(decoder), options, providers)
    head.drop_pages()
    return session, head
