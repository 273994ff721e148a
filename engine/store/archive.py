"""Unpack a bundle archive (.zip, .tar, .tar.gz/.tgz, .tar.xz, .tar.bz2, .tar.zst where tarfile reads it) safely.

An archive is untrusted input (downloaded, mailed, found on a stick). Every member is checked before a byte of it
is written: a plain relative path (no absolute path, drive, `..` or backslash), a regular file or a folder (no
symlink, hard link, device or FIFO), not encrypted, not twice; at most MAX_MEMBERS members and MAX_TOTAL_BYTES in
all (a decompression bomb stops at the declared sizes, which zipfile and tarfile enforce, and at our own count of
what was written). Tar members also pass tarfile's own `data` filter (Python ≥ 3.10.12). Writing happens only inside
`dest`, which the caller owns and deletes on any failure, so a bad archive changes nothing.

Compression ratio (the zip-bomb defence; engine.documents.formats._zip judges documents the same way, in memory):
model files barely compress (int8 weights ~1.1-1.6x, float weights ~1.1-4x, vocabularies and shortlists ~2-4x), so
a member over MEMBER_RATIO_FLOOR unpacking to more than MEMBER_RATIO times its compressed size, or an archive
unpacking past TOTAL_RATIO_FLOOR to more than TOTAL_RATIO times the archive file's size, is a bomb, not a bundle.
Judged before anything is inflated where the archive tells (a zip's declared sizes; a tar's headers, against the
compressed bytes left in the file), then again while writing (the bytes written against the file's size), so a bomb
stops early and leaves nothing.
"""

from __future__ import annotations

import re
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO

from engine.errors import QiaoError

MAX_MEMBERS = 10_000  # the real bundle has ~20 files
MAX_TOTAL_BYTES = 32 << 30  # the real bundle is ~0.5 GB with both precisions
MEMBER_RATIO = 100  # deflate's limit is ~1030x (a member of zeros); model files compress ~1.1-4x
MEMBER_RATIO_FLOOR = 16 << 20  # smaller members (manifest, JSON) may compress better, and cost nothing
TOTAL_RATIO = 20
TOTAL_RATIO_FLOOR = 64 << 20
# A tar's compressed position is read from the file under the decompressor, which reads ahead (gzip 128 kB, a bz2
# block up to ~900 kB): spans measured there are this much uncertain.
_READ_AHEAD = 2 << 20
_CHUNK = 1 << 20
_DRIVE = re.compile(r"^[A-Za-z]:")
TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".tbz2", ".tar.zst", ".tzst")
ARCHIVE_SUFFIXES = (".zip", *TAR_SUFFIXES)

Progress = Callable[[int, int], None]


class ArchiveError(QiaoError):
    """The archive is unreadable or unsafe; the message names the member and why."""


@dataclass(frozen=True)
class _Member:
    name: str  # the member's path, "/"-separated, without "." parts ("" for the archive's root folder)
    is_dir: bool
    size: int
    handle: object  # ZipInfo or TarInfo
    packed: int | None = None  # its compressed size, where known (a zip's; a tar's is measured while listing)


def kind_of(path: Path) -> str | None:
    """ "zip", "tar" or None, by name first, then by content (a download saved without its suffix)."""
    name = path.name.lower().removesuffix(".part")  # engine.store.download's `<id>-<sha>.zip.part`
    if name.endswith(".zip"):
        return "zip"
    if name.endswith(TAR_SUFFIXES):
        return "tar"
    try:
        if zipfile.is_zipfile(path):
            return "zip"
        if tarfile.is_tarfile(path):
            return "tar"
    except OSError:
        return None
    return None


def zstd_supported() -> bool:
    """Whether this Python's tarfile reads .tar.zst (3.14 and later)."""
    return "zst" in getattr(tarfile.TarFile, "OPEN_METH", {})


def plain_name(name: str) -> tuple[str | None, str | None]:
    """(the member's path without `.` parts, None), or (None, why it is unsafe). "" is the archive's root."""
    if "\0" in name or "\\" in name:
        return None, "has a backslash or NUL in its path"
    if name.startswith("/") or _DRIVE.match(name):
        return None, "is an absolute path"
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        return None, "points outside the archive's folder (`..`)"
    return "/".join(parts), None


def bomb_error(archive: str, member: str | None, unpacked: int, packed: int, ratio: int) -> ArchiveError:
    """The one message for an archive (or one of its members) that unpacks far more than model files compress."""
    what = f"{archive}: {member}" if member else archive
    return ArchiveError(
        f"{what} would unpack to {_mb(unpacked)} from {_mb(packed)} compressed, over {ratio} times its size; model "
        "files compress a few times at most, so this is refused as a decompression (zip) bomb: nothing was installed"
    )


def _mb(size: int) -> str:
    return f"{size / 1e6:,.1f} MB" if size < 100e6 else f"{size / 1e6:,.0f} MB"


def _over(unpacked: int, packed: int, ratio: int, floor: int) -> bool:
    return unpacked > floor and unpacked > ratio * max(packed, 1)


def extract(
    path: Path,
    kind: str,
    dest: Path,
    *,
    progress: Progress | None = None,
    check: Callable[[], None] | None = None,
    before: Callable[[int], None] | None = None,
    listed: Callable[[list[str], int], None] | None = None,
) -> int:
    """Unpack `path` into the existing empty folder `dest`; returns the bytes written.

    `before(total)` sees the declared total once every member passed its checks, before anything is written (a
    space check may raise there); `listed(names, total)` then sees the members' paths too (what the archive holds
    decides how its import's progress is shared). `progress(done, total)` gets bytes written; `check()` is called
    between chunks and may raise to stop (cancel). ArchiveError for anything unreadable or unsafe, naming the member.
    """
    done = 0
    root = dest.resolve()
    with _Members(path, kind) as members:
        budget = _Budget(path.name, members.file_size)
        total = members.total
        if before is not None:
            before(total)
        if listed is not None:
            listed([m.name for m in members], total)
        for member in members:
            if check is not None:
                check()
            target = root / member.name
            if not target.resolve().is_relative_to(root):  # nothing above should allow this; never write there
                raise ArchiveError(f"{path.name}: {member.name} points outside the archive's folder")
            if member.is_dir:
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            done = _write(path, member, members.read(member), target, done, total, progress, check, budget)
    if progress is not None:
        progress(done, total)
    return done


@dataclass(frozen=True)
class _Budget:
    """What an archive of `file_size` bytes may write in all before it is a bomb (checked as it is written)."""

    archive: str
    file_size: int

    def check(self, done: int) -> None:
        if _over(done, self.file_size, TOTAL_RATIO, TOTAL_RATIO_FLOOR):
            raise bomb_error(self.archive, None, done, self.file_size, TOTAL_RATIO)


def _write(
    path, member: _Member, source: BinaryIO, target: Path, done: int, total: int, progress, check, budget: _Budget
) -> int:
    written = 0
    try:
        with source, open(target, "xb") as out:
            while chunk := source.read(_CHUNK):
                written += len(chunk)
                if written > member.size:
                    raise ArchiveError(f"{path.name}: {member.name} holds more than its declared size")
                done += len(chunk)
                budget.check(done)
                out.write(chunk)
                if progress is not None:
                    progress(done, total)
                if check is not None:
                    check()
    except FileExistsError:
        raise ArchiveError(f"{path.name}: {member.name} appears twice in the archive") from None
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error) as exc:
        raise ArchiveError(f"{path.name}: {member.name} is damaged ({exc})") from None
    if written != member.size:
        raise ArchiveError(f"{path.name}: {member.name} is truncated ({written} of {member.size} bytes)")
    return done


class _Members:
    """The checked members of an open archive, and a way to read each (a context manager)."""

    def __init__(self, path: Path, kind: str) -> None:
        if kind not in ("zip", "tar"):
            raise ArchiveError(f"{path.name}: not a .zip or .tar archive")
        self.path, self.kind = path, kind
        self.total = 0
        self.file_size = 0
        self._raw: BinaryIO | None = None
        self._zip: zipfile.ZipFile | None = None
        self._tar: tarfile.TarFile | None = None
        self._members: list[_Member] = []

    def __enter__(self) -> _Members:
        try:
            self.file_size = self.path.stat().st_size
            if self.kind == "zip":
                self._zip = zipfile.ZipFile(self.path)
                infos = self._zip.infolist()
                self._limit(len(infos))
                self._members = [self._zip_member(i) for i in infos]
            else:
                self._tar = self._open_tar()
                self._members = list(self._tar_members())
            self._ratio_check()
        except ArchiveError:
            self.__exit__()
            raise
        except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError, zlib.error) as exc:
            self.__exit__()
            what = "zip" if self.kind == "zip" else "tar"
            detail = getattr(exc, "strerror", None) or exc
            raise ArchiveError(f"{self.path.name} is not a readable {what} archive ({detail})") from None
        self.total = total = sum(m.size for m in self._members)
        if total > MAX_TOTAL_BYTES:
            self.__exit__()
            raise ArchiveError(
                f"{self.path.name} would unpack to {total / 1e9:.1f} GB, more than any model bundle "
                f"({MAX_TOTAL_BYTES / 1e9:.0f} GB at most): refused"
            )
        return self

    def __exit__(self, *_: object) -> None:
        for handle in (self._zip, self._tar, self._raw):
            if handle is not None:
                handle.close()

    def _ratio_check(self) -> None:
        """Every member's compressed size against what it unpacks to, and the whole against the file's size."""
        for member in self._members:
            if member.packed is not None and _over(member.size, member.packed, MEMBER_RATIO, MEMBER_RATIO_FLOOR):
                raise bomb_error(self.path.name, member.name, member.size, member.packed, MEMBER_RATIO)
        total = sum(m.size for m in self._members)
        if _over(total, self.file_size, TOTAL_RATIO, TOTAL_RATIO_FLOOR):
            raise bomb_error(self.path.name, None, total, self.file_size, TOTAL_RATIO)

    def __iter__(self) -> Iterator[_Member]:
        return iter(self._members)

    def _limit(self, count: int) -> None:
        if count > MAX_MEMBERS:
            raise ArchiveError(f"{self.path.name} has over {MAX_MEMBERS:,} members, more than any model bundle")

    def _unsafe(self, name: str, why: str) -> ArchiveError:
        return ArchiveError(f"{self.path.name}: the member {name!r} {why}: refused, nothing was installed")

    def _zip_member(self, info: zipfile.ZipInfo) -> _Member:
        name, problem = plain_name(info.filename)
        if name is None:
            raise self._unsafe(info.filename, problem or "")
        if info.flag_bits & 0x1:
            raise self._unsafe(info.filename, "is encrypted")
        mode = info.external_attr >> 16
        kind = stat.S_IFMT(mode)
        if stat.S_ISLNK(mode):
            raise self._unsafe(info.filename, "is a symbolic link")
        if kind and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            raise self._unsafe(info.filename, "is a device, pipe or socket")
        is_dir = info.is_dir() or not name
        return _Member(name, is_dir, 0 if is_dir else info.file_size, info, None if is_dir else info.compress_size)

    def _open_tar(self) -> tarfile.TarFile:
        name = self.path.name.lower().removesuffix(".part")
        if name.endswith((".tar.zst", ".tzst")) and not zstd_supported():
            raise ArchiveError(
                f"{self.path.name}: this Python cannot read .tar.zst archives; unpack it and import the folder, "
                "or use a .zip or .tar.xz"
            )
        self._raw = raw = open(self.path, "rb")  # noqa: SIM115 (closed in __exit__)
        return tarfile.open(fileobj=raw, mode="r:*")

    def _tar_members(self) -> Iterator[_Member]:
        """The checked members, each with the compressed bytes it spans in the file (measured under the
        decompressor). A member whose header already says it cannot fit the ratios is refused before tarfile inflates
        it to reach the next header: the compressed bytes left in the file bound what it can be packed into."""
        assert self._tar is not None and self._raw is not None
        raw, size = self._raw, self.file_size
        data_filter = getattr(tarfile, "data_filter", None)
        pending: tuple[_Member, int] | None = None  # the last regular member, and where it began in the file
        for count, info in enumerate(self._tar, start=1):
            at = raw.tell()
            if pending is not None:
                member, began = pending
                yield replace(member, packed=max(0, at - began) + _READ_AHEAD)
                pending = None
            self._limit(count)
            name, problem = plain_name(info.name)
            if name is None:
                raise self._unsafe(info.name, problem or "")
            if info.issym() or info.islnk():
                raise self._unsafe(info.name, "is a link")
            if not (info.isreg() or info.isdir()):
                raise self._unsafe(info.name, "is a device, pipe or socket")
            if data_filter is not None:
                try:
                    data_filter(info, ".")
                except tarfile.FilterError as exc:
                    raise self._unsafe(info.name, f"is unsafe ({exc})") from None
            is_dir = info.isdir() or not name
            if is_dir:
                yield _Member(name, True, 0, info)
                continue
            left = size - at + _READ_AHEAD
            if _over(info.size, left, MEMBER_RATIO, MEMBER_RATIO_FLOOR):
                raise bomb_error(self.path.name, name, info.size, left, MEMBER_RATIO)
            if _over(info.offset_data + info.size, size, TOTAL_RATIO, TOTAL_RATIO_FLOOR):
                raise bomb_error(self.path.name, None, info.offset_data + info.size, size, TOTAL_RATIO)
            pending = (_Member(name, False, info.size, info), at)
        if pending is not None:
            member, began = pending
            yield replace(member, packed=max(0, raw.tell() - began) + _READ_AHEAD)

    def read(self, member: _Member) -> BinaryIO:
        if self._zip is not None:
            return self._zip.open(member.handle)  # type: ignore[arg-type,return-value]
        assert self._tar is not None
        stream = self._tar.extractfile(member.handle)  # type: ignore[arg-type]
        if stream is None:
            raise ArchiveError(f"{self.path.name}: {member.name} cannot be read")
        return stream  # type: ignore[return-value]
