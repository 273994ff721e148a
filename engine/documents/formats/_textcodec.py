"""A text file's bytes ↔ text, so that what is written back is in the file's own encoding, BOM included.

Shared by the text-based formats (txt, Markdown, SRT, WebVTT). Decoding, in order: a BOM (UTF-8, UTF-16 or UTF-32,
little or big endian) decides and is kept on output; else strict UTF-8; else charset-normalizer's best guess
(GB18030, Big5, cp1252, Shift-JIS…). A guess is accepted only when re-encoding the text gives back the very same
bytes, so an untranslated document always round-trips byte for byte. Binary data is refused: a NUL byte in a file
without a UTF-16/32 BOM, or more than a few control characters, or no encoding that decodes the bytes.

Encoding back uses the file's encoding and BOM; where the new text cannot be encoded in it (Chinese into a cp1252
or Latin-1 file), the whole result is written as UTF-8 without a BOM instead — the one encoding every reader of
such files understands and that holds every character; refusing, or writing `?` for each character, would lose
the translation.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from engine.documents.model import DocumentError

# Longest first: the UTF-32 LE BOM begins with the UTF-16 LE one.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# Control characters that mark binary data: all C0 and C1 controls but those a text file may hold — tab, line
# feed, vertical tab, form feed, carriage return, SUB (the DOS end-of-file mark) and ESC (ANSI colours in logs).
_CONTROL = re.compile("[\x00-\x08\x0e-\x19\x1c-\x1f\x7f-\x9f]")
_MAX_CONTROL_RATIO = 0.01
# Single-byte Latin code pages the detector cannot tell apart on English or Western text (a "naïve" in cp1252 reads
# as "naďve" in cp1250 with the same score). Windows-1252 is by far the most common of them, so it wins whenever it
# decodes the bytes.
_LATIN_LOOKALIKES = frozenset(
    ["cp1250", "cp1252", "cp1254", "cp1257", "cp775", "cp850", "cp437", "mac-latin2", "mac-roman", "iso8859-1"]
    + [f"iso8859-{n}" for n in (2, 3, 4, 9, 10, 13, 14, 15, 16)]
)


@dataclass(frozen=True)
class Decoded:
    """A file's text and how it was stored."""

    text: str
    encoding: str  # a Python codec name, BOM excluded ("utf-8", "utf-16-le", "gb18030", "cp1252")
    bom: bytes = b""


def decode(data: bytes, what: str = "file") -> Decoded:
    """The text of `data` (see the module docstring); DocumentError, naming `what`, for binary or undecodable data."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                text = data[len(bom) :].decode(encoding)
            except UnicodeDecodeError as exc:
                raise DocumentError(
                    f"this {what} starts with a {encoding.upper()} byte-order mark but is not valid {encoding.upper()} "
                    f"(damaged or truncated at byte {exc.start + len(bom)})"
                ) from None
            _check_text(text, what)
            return Decoded(text, encoding, bom)
    if b"\x00" in data:
        raise DocumentError(f"this {what} holds binary data (NUL bytes), not text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return _guess(data, what)
    _check_text(text, what)
    return Decoded(text, "utf-8")


def encode(text: str, decoded: Decoded) -> bytes:
    """`text` in `decoded`'s encoding and BOM; UTF-8 without a BOM when it cannot be encoded there."""
    try:
        return decoded.bom + text.encode(decoded.encoding)
    except UnicodeEncodeError:
        pass
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate: no encoding can write it
        raise DocumentError(f"the translated text holds a character that cannot be written ({exc.reason})") from None


def _guess(data: bytes, what: str) -> Decoded:
    """charset-normalizer's candidates, best first; the first that decodes to text and round-trips exactly."""
    from charset_normalizer import from_bytes

    try:
        matches = from_bytes(data)
    except Exception as exc:  # the detector is a third party: any failure is "cannot tell", never a traceback
        raise DocumentError(f"cannot tell this {what}'s text encoding ({exc})") from None
    for match in matches:
        try:
            encoding = codecs.lookup(match.encoding).name
        except LookupError:
            continue
        if encoding in _LATIN_LOOKALIKES and _decodes(data, "cp1252"):
            encoding = "cp1252"
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if text.encode(encoding, errors="replace") != data or _controls(text) > _MAX_CONTROL_RATIO * max(len(text), 1):
            continue
        return Decoded(text, encoding)
    raise DocumentError(
        f"this {what} is not UTF-8 and its text encoding cannot be told (it may be binary); save it as UTF-8 and "
        "try again"
    )


def _decodes(data: bytes, encoding: str) -> bool:
    try:
        data.decode(encoding)
    except UnicodeDecodeError:
        return False
    return True


def _controls(text: str) -> int:
    return len(_CONTROL.findall(text))


def _check_text(text: str, what: str) -> None:
    if "\x00" in text:
        raise DocumentError(f"this {what} holds binary data (NUL characters), not text")
    if _controls(text) > _MAX_CONTROL_RATIO * max(len(text), 1):
        raise DocumentError(f"this {what} holds binary data (control characters), not text")
