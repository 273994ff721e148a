"""Turn a failure while loading a bundle into a BundleError a person can act on.

Damage that keeps a file's size and modification time (bit rot, a restored backup) passes the verified-files cache
by design, and then surfaces as a raw runtime error from ONNX Runtime or `tokenizers`. Each loading step is labelled
with the bundle file it reads (`opening`); when one fails, `diagnose` hashes that precision's files again without
the cache: a file that differs is reported as such ("hash"), otherwise the file that failed is reported as damaged.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from engine.bundle.manifest import Manifest, verify_files
from engine.bundle.verified_cache import VerifiedFiles
from engine.errors import BundleError, FileProblem, QiaoError

FIX = "build or download the model again"


class LoadFailure(Exception):
    """Loading `file` (bundle-relative) raised `cause`."""

    def __init__(self, file: str, cause: BaseException) -> None:
        super().__init__(f"{file}: {cause}")
        self.file = file
        self.cause = cause


@contextmanager
def opening(rel: str) -> Iterator[None]:
    """Label any failure inside the block with the bundle file being loaded."""
    try:
        yield
    except (LoadFailure, QiaoError, MemoryError):  # out of memory is not damage
        raise
    except Exception as exc:
        raise LoadFailure(rel, exc) from exc


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "…"


def diagnose(
    manifest: Manifest, precision: str, failure: Exception, cache: VerifiedFiles | None
) -> BundleError | MemoryError:
    """The BundleError for a load that failed with `failure`: hashes checked again, stale cache entries dropped.
    (A BundleError or MemoryError is returned as it is: it already says what is wrong.)"""
    if isinstance(failure, BundleError | MemoryError):
        return failure
    problems = verify_files(manifest, precision, hashes=True, cache=None)
    file = failure.file if isinstance(failure, LoadFailure) else ""
    cause = failure.cause if isinstance(failure, LoadFailure) else failure
    if cache is not None:
        for rel in {p.file for p in problems} | {file}:
            if rel:
                cache.forget(manifest.path(rel))
        cache.save()
    if problems:
        return BundleError(str(manifest.bundle_dir), problems)
    what = file or f"the {precision.upper()} model"
    detail = f"{what} matches its sha256 but cannot be loaded ({_short(cause)}): the model is damaged; {FIX}"
    return BundleError(str(manifest.bundle_dir), [FileProblem("damaged", file, detail)])
