"""Reading a zip container safely and writing it back with only some members changed (Office, ODF, EPUB).

Reading refuses what a document never is and what would hurt us: not a zip, truncated, password-protected members,
absolute or `..` names, duplicate names, too many members, and decompression bombs. Bombs are judged twice: by the
sizes the archive declares, before anything is inflated, and while a member is inflated (`read`, a megabyte at a
time, never a whole member first): a member that passes RATIO_FLOOR at more than BOMB_RATIO times its compressed
size, or members read that pass READ_LIMIT together, stop the inflating there and then. That bounds memory for any
accepted document: the members a format reads (its XML and HTML parts) hold at most READ_LIMIT (64 MB) inflated,
and the parsed text costs about 11 times the bytes parsed (20 MB of Word paragraphs: 215 MB peak), so reading a zip
document peaks under about 1 GB beside the file's own bytes; members a format does not read (images, fonts) are
copied compressed, never inflated (EPUB's `verify` streams them a megabyte at a time). A format may set its own
member and size caps and its own message for encrypted members (EPUB: DRM).
Writing copies every untouched member byte for byte (local header, data, data descriptor: its compression,
timestamps and extra fields as they were), in the original order; changed and added members are deflated anew, and
the members a container format wants stored (ODF's and EPUB's mimetype) are written uncompressed with no extra field.
"""

from __future__ import annotations

import io
import re
import struct
import zipfile
import zlib
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from engine.documents.model import DocumentError

MAX_MEMBERS = 20_000
MAX_TOTAL_BYTES = 1 << 30  # the sum of the members' declared uncompressed sizes
# A member inflating past BOMB_MIN_BYTES at more than BOMB_RATIO times its compressed size is a bomb, not a document
# (XML compresses about 5-20:1, and rarely past 100:1); judged from the declared sizes for every member.
BOMB_MIN_BYTES = 64 << 20
BOMB_RATIO = 200
# The same ratio for a member being read, judged while it inflates once it passes RATIO_FLOOR (1 MB of repeated XML
# is no document's text part; a 60 MB part of one repeated paragraph deflates to about 60 kB, 1000:1).
RATIO_FLOOR = 1 << 20
READ_LIMIT = 64 << 20  # the members one document's format reads (inflated, each counted once), together
_CHUNK = 1 << 20

_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_LOCAL = struct.Struct("<IHHHHHIIIHH")  # local file header, 30 bytes
_CENTRAL = struct.Struct("<IHHHHHHIIIHHHHHII")  # central directory record, 46 bytes
_END = struct.Struct("<IHHHHIIH")  # end of central directory record, 22 bytes
_LOCAL_SIG = 0x04034B50
_CENTRAL_SIG = 0x02014B50
_END_SIG = 0x06054B50
_ZIP64_EXTRA = 0x0001
_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True)
class _Member:
    info: zipfile.ZipInfo
    raw_start: int  # where its local header starts in the archive's bytes
    raw_end: int  # where the next member's local header (or the central directory) starts
    central: bytes  # its central directory record, as the archive has it


class ZipArchive:
    """A zip read from bytes, checked (see the module docstring). `kind` names the document for messages;
    `max_members` and `max_total_bytes` default to this module's caps; `encrypted`, when given, is the message for a
    member whose zip encryption flag is set (by default: remove the password)."""

    def __init__(
        self,
        data: bytes,
        kind: str = "document",
        *,
        max_members: int | None = None,
        max_total_bytes: int | None = None,
        encrypted: str | None = None,
    ) -> None:
        self.kind = kind
        self._data = data
        self._max_members = MAX_MEMBERS if max_members is None else max_members
        self._max_total = MAX_TOTAL_BYTES if max_total_bytes is None else max_total_bytes
        self._encrypted = encrypted
        if data[:8] == _OLE_MAGIC:
            raise DocumentError(
                f"this {kind} is password-protected (encrypted) or in an old binary Office format; remove the "
                "password or save it in the current format, then translate it again"
            )
        try:
            self._zip = zipfile.ZipFile(io.BytesIO(data))
            infos = self._zip.infolist()
            start_dir = self._zip.start_dir
        except Exception as exc:  # zipfile raises many kinds (struct.error, ValueError, …) for damaged input
            article = "an" if kind[:1].lower() in "aeiou" else "a"
            raise DocumentError(
                f"this {kind} is damaged or not {article} {kind} at all (not a readable zip: {exc})"
            ) from exc
        self._members = self._check(infos, start_dir)
        self._by_name = {member.info.filename: member for member in self._members}
        self._read_sizes: dict[str, int] = {}  # inflated size of each member read so far (READ_LIMIT)

    def _check(self, infos: list[zipfile.ZipInfo], start_dir: int) -> list[_Member]:
        kind, max_members, max_total = self.kind, self._max_members, self._max_total
        if len(infos) > max_members:
            raise DocumentError(f"this {kind} has {len(infos):,} files inside; Qiao reads at most {max_members:,}")
        seen: set[str] = set()
        total = 0
        for info in infos:
            name = info.filename
            parts = re.split(r"[/\\]", name)
            if not name or name.startswith(("/", "\\")) or _DRIVE.match(name) or ".." in parts or "\0" in name:
                raise DocumentError(f"this {kind} is unsafe: it holds a file named {name!r} outside the document")
            if name in seen:
                raise DocumentError(f"this {kind} is damaged: it holds two files named {name!r}")
            seen.add(name)
            if info.flag_bits & 0x1:
                raise DocumentError(
                    self._encrypted
                    or f"this {kind} is password-protected ({name} is encrypted); remove the password and try again"
                )
            total += info.file_size
            if total > max_total:
                raise DocumentError(
                    f"this {kind} would unpack to more than {max_total >> 20:,} MB (it may be a zip bomb); "
                    "Qiao does not open it"
                )
            if info.file_size > BOMB_MIN_BYTES and info.file_size > BOMB_RATIO * max(info.compress_size, 1):
                raise DocumentError(
                    f"this {kind} is a zip bomb ({name} unpacks {info.file_size:,} bytes from "
                    f"{info.compress_size:,}); Qiao does not open it"
                )
        return self._locate(infos, start_dir)

    def _locate(self, infos: list[zipfile.ZipInfo], start_dir: int) -> list[_Member]:
        """Each member's raw byte range and central record, for copying it unchanged."""
        data = self._data
        damaged = DocumentError(f"this {self.kind} is damaged (its zip directory does not match its contents)")
        centrals = []
        pos = start_dir
        for _info in infos:
            if pos + _CENTRAL.size > len(data):
                raise damaged
            fields = _CENTRAL.unpack_from(data, pos)
            if fields[0] != _CENTRAL_SIG:
                raise damaged
            size = _CENTRAL.size + fields[10] + fields[11] + fields[12]
            centrals.append(data[pos : pos + size])
            pos += size
        offsets = sorted({info.header_offset for info in infos} | {start_dir})
        following = {offset: offsets[i + 1] for i, offset in enumerate(offsets[:-1])}
        members = []
        for info, central in zip(infos, centrals, strict=True):
            start = info.header_offset
            end = following.get(start, start_dir)
            if start + _LOCAL.size > len(data) or _LOCAL.unpack_from(data, start)[0] != _LOCAL_SIG:
                raise damaged
            local = _LOCAL.unpack_from(data, start)
            if start + _LOCAL.size + local[9] + local[10] + info.compress_size > end:
                raise damaged
            members.append(_Member(info, start, end, central))
        return members

    @property
    def data(self) -> bytes:
        """The archive's bytes, as read."""
        return self._data

    @property
    def names(self) -> list[str]:
        """Member names in the archive's order."""
        return [member.info.filename for member in self._members]

    def __contains__(self, name: str) -> bool:
        return name in self._by_name

    def info(self, name: str) -> zipfile.ZipInfo:
        return self._by_name[name].info

    def read(self, name: str) -> bytes:
        """A member's bytes, inflated and CRC-checked; DocumentError when it is missing or damaged, or as soon as
        inflating it passes the bomb ratio or READ_LIMIT for all members read (see the module docstring)."""
        if name not in self._by_name:
            raise DocumentError(f"this {self.kind} is incomplete: {name} is missing")
        info = self._by_name[name].info
        room = READ_LIMIT - (sum(self._read_sizes.values()) - self._read_sizes.get(name, 0))
        bomb_at = max(RATIO_FLOOR, BOMB_RATIO * max(info.compress_size, 1))
        data = bytearray()
        try:
            with self._zip.open(info) as stream:
                while chunk := stream.read(_CHUNK):
                    data += chunk
                    if len(data) > bomb_at:
                        raise DocumentError(
                            f"this {self.kind} is a zip bomb ({name} unpacks more than {BOMB_RATIO} times its "
                            f"{info.compress_size:,} bytes); Qiao does not open it"
                        )
                    if len(data) > room:
                        raise DocumentError(
                            f"this {self.kind} holds more than {READ_LIMIT >> 20} MB of text and markup (unpacked); "
                            "Qiao translates documents up to that size: split it into smaller files"
                        )
        except DocumentError:
            raise
        except Exception as exc:  # BadZipFile (CRC), zlib.error, EOFError, NotImplementedError (method), …
            raise DocumentError(f"this {self.kind} is damaged: {name} cannot be unpacked ({exc})") from exc
        self._read_sizes[name] = len(data)
        return bytes(data)

    def verify(self) -> None:
        """Unpack every member once, a megabyte at a time, checking its CRC: a damaged member the format does not
        read itself (an image) then fails the read instead of being copied damaged into the translation."""
        for member in self._members:
            name = member.info.filename
            try:
                with self._zip.open(member.info) as stream:
                    while stream.read(1 << 20):
                        pass
            except Exception as exc:  # as in read()
                raise DocumentError(f"this {self.kind} is damaged: {name} cannot be unpacked ({exc})") from exc

    def rewrite(
        self,
        replacements: Mapping[str, bytes],
        *,
        stored: Collection[str] = (),
        first: str | None = None,
        added: Mapping[str, bytes] | None = None,
    ) -> bytes:
        """The archive with `replacements` (name -> new bytes) deflated in place of those members, every other
        member copied byte for byte, in the original order, then the `added` members (name -> bytes, dated
        1980-01-01). Members named in `stored` are written uncompressed with no extra field and no data descriptor
        (rewritten if they were not, as ODF and EPUB require of their mimetype); `first` is moved to the front."""
        unknown = set(replacements) - set(self._by_name)
        if unknown:
            raise DocumentError(f"cannot replace {', '.join(sorted(unknown))}: not in this {self.kind}")
        added = added or {}
        clash = set(added) & set(self._by_name)
        if clash:
            raise DocumentError(f"cannot add {', '.join(sorted(clash))}: already in this {self.kind}")
        members = [*self._members, *(_blank_member(name) for name in added)]
        if first is not None:
            members.sort(key=lambda member: member.info.filename != first)
        out = io.BytesIO()
        centrals = []
        for member in members:
            name = member.info.filename
            offset = out.tell()
            must_store = name in stored and not self._bare(member)
            if name in replacements or name in added or must_store:
                content = replacements.get(name, added.get(name))
                if content is None:
                    content = self.read(name)
                local, central = _new_member(member, content, store=name in stored, offset=offset)
                out.write(local)
            else:
                out.write(self._data[member.raw_start : member.raw_end])
                central = _central_record(member.central, offset=offset, info=member.info)
            centrals.append(central)
        start_dir = out.tell()
        for central in centrals:
            out.write(central)
        size_dir = out.tell() - start_dir
        comment = self._zip.comment[:0xFFFF]
        if start_dir > 0xFFFFFFFF or len(centrals) > 0xFFFF:
            raise DocumentError(f"the translated {self.kind} would be too large to write")
        out.write(_END.pack(_END_SIG, 0, 0, len(centrals), len(centrals), size_dir, start_dir, len(comment)))
        out.write(comment)
        return out.getvalue()

    def _bare(self, member: _Member) -> bool:
        """Whether `member` is stored uncompressed with no extra field in its local header and no data descriptor
        (what OCF and ODF ask of a mimetype, so its bytes sit at a fixed offset from the start of the file)."""
        if member.raw_end <= member.raw_start:  # an added member
            return False
        extra_len = _LOCAL.unpack_from(self._data, member.raw_start)[10]
        return member.info.compress_type == zipfile.ZIP_STORED and extra_len == 0 and not member.info.flag_bits & 0x8


def _strip_zip64(extra: bytes) -> bytes:
    """`extra` without its zip64 field (we write 32-bit sizes and offsets; the caps keep them small)."""
    out = bytearray()
    pos = 0
    while pos + 4 <= len(extra):
        header, size = struct.unpack_from("<HH", extra, pos)
        if header != _ZIP64_EXTRA:
            out += extra[pos : pos + 4 + size]
        pos += 4 + size
    out += extra[pos:]
    return bytes(out)


def _central_record(
    raw: bytes,
    *,
    offset: int,
    info: zipfile.ZipInfo,
    method: int | None = None,
    flags: int | None = None,
    crc: int | None = None,
    compressed: int | None = None,
    size: int | None = None,
) -> bytes:
    """`raw` (a central directory record) with its offset (and, for a rewritten member, its method, flags, CRC and
    sizes) replaced. A record kept as it was differs from the original only in its offset."""
    fields = list(_CENTRAL.unpack_from(raw, 0))
    name_len, extra_len, comment_len = fields[10], fields[11], fields[12]
    name = raw[_CENTRAL.size : _CENTRAL.size + name_len]
    extra = raw[_CENTRAL.size + name_len : _CENTRAL.size + name_len + extra_len]
    comment = raw[_CENTRAL.size + name_len + extra_len : _CENTRAL.size + name_len + extra_len + comment_len]
    zip64 = 0xFFFFFFFF in (fields[8], fields[9], fields[16]) or fields[13] == 0xFFFF
    if zip64:
        extra = _strip_zip64(extra)
        fields[8], fields[9], fields[13] = info.compress_size, info.file_size, 0
    if method is not None:
        fields[2] = max(fields[2], 20)  # version needed to extract: deflate
        fields[3], fields[4] = flags, method
        fields[7], fields[8], fields[9] = crc, compressed, size
    fields[11] = len(extra)
    fields[16] = offset
    if max(fields[8], fields[9], offset) > 0xFFFFFFFF:
        raise DocumentError("the translated document would be too large to write")
    return _CENTRAL.pack(*fields) + name + extra + comment


def _blank_member(name: str) -> _Member:
    """A member that is not in the archive yet: a central record with the name and 1980-01-01, nothing else."""
    encoded = name.encode()
    flags = 0 if encoded.isascii() else 0x0800
    central = _CENTRAL.pack(_CENTRAL_SIG, 20, 20, flags, 0, 0, 0x21, 0, 0, 0, len(encoded), 0, 0, 0, 0, 0, 0)
    return _Member(zipfile.ZipInfo(name), 0, 0, central + encoded)


def _new_member(member: _Member, content: bytes, *, store: bool, offset: int) -> tuple[bytes, bytes]:
    """A local header + data for `content`, and its central record, keeping the member's name and timestamps."""
    fields = _CENTRAL.unpack_from(member.central, 0)
    name = member.central[_CENTRAL.size : _CENTRAL.size + fields[10]]
    mod_time, mod_date = fields[5], fields[6]
    flags = fields[3] & 0x0800  # keep only "the name is UTF-8"; no data descriptor, no encryption
    if store:
        method, data = zipfile.ZIP_STORED, content
    else:
        compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
        method, data = zipfile.ZIP_DEFLATED, compressor.compress(content) + compressor.flush()
    crc = zlib.crc32(content)
    if max(len(data), len(content)) > 0xFFFFFFFF:
        raise DocumentError("the translated document would be too large to write")
    local = _LOCAL.pack(_LOCAL_SIG, 20, flags, method, mod_time, mod_date, crc, len(data), len(content), len(name), 0)
    central = _central_record(
        member.central,
        offset=offset,
        info=member.info,
        method=method,
        flags=flags,
        crc=crc,
        compressed=len(data),
        size=len(content),
    )
    return local + name + data, central
