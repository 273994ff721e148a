"""Download a catalogue bundle: resumable, cancellable, size- and sha256-checked, then installed atomically.

Bytes go to `<models>/.downloads/<id>-<sha256[:16]><suffix>.part` (named by the hash, so a changed catalogue entry
never resumes another file). A dropped connection is resumed with an HTTP Range request (a few times within one
call, and by the next call from the kept .part); a server that ignores Range sends the whole file again, which
restarts it. Nothing is unpacked before the size and sha256 match the catalogue; then engine.store.installed's import
verifies the bundle itself and renames it into place. On any failure or cancel the models folder is unchanged (a
.part kept for resume aside); downloads happen only when the user asks
(HTTP via engine.store.web: see there why urllib).
"""

from __future__ import annotations

import hashlib
import http.client
import os
import re
import shutil
import threading
import urllib.error
import urllib.parse
from collections.abc import Callable
from pathlib import Path

from engine.errors import QiaoError
from engine.paths import downloads_dir, models_dir
from engine.store.archive import ARCHIVE_SUFFIXES
from engine.store.catalogue import CatalogueEntry
from engine.store.installed import (
    SPACE_MARGIN,
    InstalledModel,
    ModelStoreCancelled,
    ModelStoreError,
    already_installed,
    bundle_name,
    import_bundle,
)
from engine.store.web import OFFLINE, failure, is_offline, open_url, url_problem

READ_TIMEOUT_S = 30.0  # per connect and per read: a stalled server is a dropped connection
RESUMES = 3  # dropped connections resumed within one call before giving up (the .part is kept)
_CHUNK = 1 << 16
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")
_DROPPED = (http.client.IncompleteRead, http.client.HTTPException, ConnectionError, TimeoutError, OSError)


class DownloadError(QiaoError):
    """The download failed; the message says why and what was kept. `resumable`: running it again resumes;
    `offline`: the server could not be reached at all."""

    def __init__(self, message: str, *, resumable: bool = False, offline: bool = False) -> None:
        super().__init__(message)
        self.resumable = resumable
        self.offline = offline


class DownloadCancelled(DownloadError):
    """The caller's cancel event was set: nothing installed, the partial download kept for resume."""


def part_file(entry: CatalogueEntry) -> Path:
    """Where `entry`'s bytes are collected."""
    path = urllib.parse.urlsplit(entry.url).path.lower()
    suffix = next((s for s in sorted(ARCHIVE_SUFFIXES, key=len, reverse=True) if path.endswith(s)), ".zip")
    return downloads_dir() / f"{entry.id}-{entry.sha256[:16]}{suffix}.part"


def download_bundle(
    entry: CatalogueEntry,
    *,
    progress: Callable[[int, int], None] | None = None,
    cancel: threading.Event | None = None,
    replace: bool = False,
    timeout: float = READ_TIMEOUT_S,
) -> InstalledModel:
    """Download, check and install `entry`; returns the installed bundle.

    `progress(done, total)` in bytes of the archive (total = entry.size), from the calling thread. A set `cancel`
    stops it with DownloadCancelled (or ModelStoreCancelled while unpacking), nothing installed. DownloadError for
    the network and the server; ModelStoreError for an installed bundle of that name (unless `replace`) or a bundle
    that fails its own verification.
    """
    problem = url_problem(entry.url, allow_file=entry.url.lower().startswith("file:"))
    if problem is not None:
        raise DownloadError(f"{entry.id}: download refused: {problem}")
    target = models_dir() / bundle_name(entry.model_id)
    if not replace and os.path.lexists(target):
        raise already_installed(target)
    part = part_file(entry)
    _fetch(entry, part, progress, cancel, timeout)
    _check_hash(entry, part, cancel)
    try:
        model = import_bundle(part, replace=replace, cancel=cancel, expect_pair=entry.pair_key)
    except ModelStoreCancelled:
        raise  # the checked archive stays: the next call installs it without downloading again
    except ModelStoreError:
        _unlink(part)  # the catalogue's own file is unusable: downloading it again would not help
        raise
    _unlink(part)
    return model


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError:
        pass  # a later download of the same entry truncates it


def _size_on_disk(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


class _Attempt:
    """One request: where it starts and whether the server honoured the Range."""

    def __init__(self, entry: CatalogueEntry, have: int, timeout: float) -> None:
        headers = {"Range": f"bytes={have}-"} if have else {}
        self.response = open_url(entry.url, timeout=timeout, headers=headers)
        status = getattr(self.response, "status", None)
        self.start = 0
        self.odd_range = False  # a 206 for a range we did not ask for: its bytes belong nowhere in our file
        if status == 206:
            match = _CONTENT_RANGE.fullmatch(self.response.headers.get("Content-Range", "").strip())
            if have and match and int(match.group(1)) == have and match.group(3) in ("*", str(entry.size)):
                self.start = have
            else:
                self.odd_range = True
        # A 200 answer to a Range (the server ignores it) is the whole file: restart from byte 0.
        length = self.response.headers.get("Content-Length")
        self.length = int(length) if length is not None and length.strip().isdigit() else None


def _space_check(entry: CatalogueEntry, have: int) -> None:
    root = models_dir()
    probe = root if root.exists() else next((p for p in root.parents if p.exists()), root)
    try:
        free = shutil.disk_usage(probe).free
    except OSError:
        return
    needed = (entry.size - have) + 2 * entry.size + SPACE_MARGIN  # the archive, then the bundle unpacked beside it
    if needed > free:
        raise DownloadError(
            f"not enough space for {entry.id}: it needs about {needed / 1e6:,.0f} MB, {free / 1e6:,.0f} MB are "
            f"free in {probe}: nothing was changed"
        )


def _fetch(
    entry: CatalogueEntry,
    part: Path,
    progress: Callable[[int, int], None] | None,
    cancel: threading.Event | None,
    timeout: float,
) -> None:
    """Leave `part` holding exactly entry.size bytes from the server (not yet hash-checked)."""
    have = _size_on_disk(part)
    if have > entry.size:
        _unlink(part)
        have = 0
    if have < entry.size:
        _space_check(entry, have)
    drops = odd_ranges = 0
    restarted_416 = False
    while have < entry.size:
        if cancel is not None and cancel.is_set():
            raise _cancelled(have, entry)
        try:
            attempt = _Attempt(entry, have, timeout)
        except urllib.error.HTTPError as exc:
            exc.close()
            if exc.code == 416 and have and not restarted_416:  # our .part is not a prefix the server knows
                restarted_416 = True
                _unlink(part)
                have = 0
                continue
            raise DownloadError(f"{failure(exc, entry.url)}: {_kept(have)}", resumable=have > 0) from None
        except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as exc:
            if drops < RESUMES and not isinstance(exc, urllib.error.URLError):  # e.g. dropped before the headers
                drops += 1
                continue
            message = failure(exc, entry.url)
            offline = is_offline(message)
            if have == 0 and offline:
                detail = message.removeprefix(OFFLINE).strip()
                raise DownloadError(f"{OFFLINE}: nothing was changed {detail}", offline=True) from None
            raise DownloadError(f"{message}: {_kept(have)}", resumable=have > 0, offline=offline) from None
        with attempt.response:
            if attempt.odd_range:
                if have == 0 or odd_ranges:
                    raise DownloadError(f"the server answered a part of {entry.url} that was not asked for: {_kept(0)}")
                odd_ranges += 1
                _unlink(part)
                have = 0
                continue
            expected = entry.size - attempt.start
            if attempt.length is not None and attempt.length != expected:
                _unlink(part)
                raise DownloadError(
                    f"the server's file is {attempt.start + attempt.length:,} bytes, the catalogue says "
                    f"{entry.size:,}: it is not the catalogue's bundle; nothing was changed"
                )
            have = _receive(entry, part, attempt, progress, cancel)
        if have < entry.size:
            drops += 1
            if drops > RESUMES:
                raise DownloadError(
                    f"the connection dropped after {have / 1e6:,.1f} of {entry.size / 1e6:,.1f} MB "
                    f"({entry.url}): {_kept(have)}",
                    resumable=True,
                )


def _receive(entry, part: Path, attempt: _Attempt, progress, cancel) -> int:
    """Append what the server sends to `part` (from attempt.start); the bytes on disk when it stops."""
    part.parent.mkdir(parents=True, exist_ok=True)  # only now: offline, the models folder is not even created
    have = attempt.start
    with open(part, "r+b" if part.exists() else "wb") as out:
        out.seek(have)
        out.truncate()
        while True:
            try:
                chunk = attempt.response.read(_CHUNK)
            except _DROPPED:
                break  # resumed from what is on disk
            if not chunk:
                break
            if have + len(chunk) > entry.size:
                out.close()
                _unlink(part)
                raise DownloadError(
                    f"the server sent more than the catalogue's {entry.size:,} bytes for {entry.id}: it is not the "
                    "catalogue's bundle; the download was deleted, nothing was changed"
                )
            out.write(chunk)
            have += len(chunk)
            if progress is not None:
                progress(have, entry.size)
            if cancel is not None and cancel.is_set():
                out.flush()
                raise _cancelled(have, entry)
    return have


def _kept(have: int) -> str:
    if have:
        return f"the {have / 1e6:,.1f} MB received are kept; run the download again to resume (nothing was installed)"
    return "nothing was changed"


def _cancelled(have: int, entry: CatalogueEntry) -> DownloadCancelled:
    return DownloadCancelled(f"download of {entry.id} cancelled: {_kept(have)}", resumable=have > 0)


def _check_hash(entry: CatalogueEntry, part: Path, cancel: threading.Event | None) -> None:
    digest = hashlib.sha256()
    try:
        with open(part, "rb") as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
                if cancel is not None and cancel.is_set():
                    raise _cancelled(entry.size, entry)
    except OSError as exc:
        raise DownloadError(f"cannot read the download {part}: {exc.strerror or exc}") from None
    got = digest.hexdigest()
    if got != entry.sha256:
        _unlink(part)
        raise DownloadError(
            f"the download of {entry.id} is damaged or not the catalogue's bundle: sha256 {got[:16]}… differs from "
            f"the catalogue's {entry.sha256[:16]}…; the file was deleted, nothing was changed"
        )
