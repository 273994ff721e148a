"""HTML and XHTML pages: the visible text is translated, everything else is kept byte for byte.

READ finds the text with the standard library's tolerant parser (html.parser copes with any tag soup) and remembers
where each piece sits in the decoded page. A unit is the text of one block (a paragraph, heading, list item, table
cell, title, button…); the inline elements inside it (links, bold, spans…) cut it into runs, so a sentence with a
link in the middle is translated as one sentence and the link's tags stay around the right words. Inline code
(<code>…, and in an EPUB the classes its stylesheets set in a monospace font) and anything marked translate="no" /
class="notranslate" are fixed runs (kept, seen by the model as context); script,
style, pre, textarea, template, comments and declarations are never touched. The attributes people read (alt,
title, placeholder, aria-label, a button's value, the page description) are units of their own.

RENDER splices each changed run's text, escaped, over the bytes it came from and copies all other bytes as they
were, in the page's own encoding (characters it cannot hold become &#N; references). The output escapes are valid
XML too, so the same logic serves EPUB's XHTML content documents.
"""

from __future__ import annotations

import codecs
import html
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from html.parser import HTMLParser

from engine.documents.model import DocumentError, DocumentFormat, Run, Unit

MAX_BYTES = 256 * 1024 * 1024  # a page larger than this is not a web page


def _tags(names: str) -> frozenset[str]:
    return frozenset(names.split())


# Elements that end the unit before them and start a new one (their text is a unit of its own).
BLOCK = _tags(
    "address article aside blockquote body button caption center dd details dialog dir div dl dt fieldset "
    "figcaption figure footer form frameset h1 h2 h3 h4 h5 h6 head header hgroup hr html label legend li main "
    "menu nav noscript ol optgroup option p section select summary table tbody td tfoot th thead title tr ul br "
    "iframe object video audio canvas map"
)
VOID = _tags("area base br col embed hr img input link meta param source track wbr keygen")
# Never touched, and the unit around them is ended (a code listing is not part of a sentence).
SKIP_BLOCK = _tags("pre textarea template xmp listing plaintext")
# Never touched and invisible: the text on either side is in separate runs of the same unit.
SKIP_SILENT = _tags("script style svg")
# Kept verbatim inside a sentence: fixed runs.
FIXED_INLINE = _tags("code kbd samp var tt math")
TEXT_ATTRS = frozenset(("alt", "title", "placeholder", "aria-label"))
# Never code by their class alone (see read's code_classes)
_PAGE = _tags("html body main article section")
META_NAMES = frozenset(("description", "og:title", "og:description", "twitter:title", "twitter:description"))
BUTTON_INPUTS = frozenset(("submit", "button", "reset"))

_SPACE = " \t\n\r\f"  # HTML's whitespace (a no-break space is text)
_SPACES = re.compile(r"[ \t\n\r\f]+")
# A run that is only an address (a link showing its URL or e-mail address) is kept as it is: a fixed run.
_ADDRESS = re.compile(r"(?:(?:https?|ftp)://|www\.|mailto:)\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+", re.IGNORECASE)
_ATTR = re.compile(r"""([^\s/>"'=][^\s/>=]*)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"'][^\s>]*)))?""")
_XML_DECL = re.compile(rb"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._:-]+)""")
_META_CHARSET = re.compile(rb"""<meta\b[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.IGNORECASE)
_AMP_HASH = re.compile("&#")
_GIVEN_UP = re.compile("<[A-Za-z/!?]")
_CHARREF = re.compile("&#(?:[0-9]+|[xX][0-9a-fA-F]+)[^0-9a-fA-F]")  # html.parser's own test
_STATEFUL = frozenset(("utf-7", "hz"))  # encodings whose pieces cannot be written one by one
_AS_WINDOWS_1252 = frozenset(("latin-1", "iso8859-1", "ascii"))
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


@dataclass(frozen=True)
class _Slot:
    """Where one run's text sits in the decoded page; `quote` is set for attribute values ('"', "'", or "" for an
    unquoted one, which gets double quotes when rewritten), whose slot spans the value with its quotes."""

    start: int
    end: int
    quote: str | None = None

    def replacement(self, text: str) -> str:
        if self.quote is None:
            return html.escape(text, quote=False)
        quote = self.quote or '"'
        return f"{quote}{html.escape(text, quote=True)}{quote}"

    def value(self, text: str) -> str:
        """The text this slot holds now (an attribute's value without its quotes, references decoded)."""
        raw = text[self.start : self.end]
        return html.unescape(raw[1:-1] if self.quote else raw)


@dataclass(frozen=True)
class Decoded:
    """A page's text and how to write it back in the same bytes: its encoding and byte order mark."""

    text: str
    encoding: str
    bom: bytes


class HtmlDocument:
    """A read page: its units and where each run came from (engine.documents.model.Extracted)."""

    def __init__(
        self, data: bytes, decoded: Decoded, units: list[Unit], slots: list[list[_Slot | None]], langs: list[_Slot]
    ) -> None:
        self._data = data
        self._decoded = decoded
        self._units = units
        self._slots = slots
        self._langs = langs

    @property
    def units(self) -> Sequence[Unit]:
        return self._units

    def render(self, translations: Sequence[Sequence[str] | None], *, target: str) -> bytes:
        """The page with unit i's runs replaced by translations[i] (None: left as it was) and <html lang> set to
        `target` when anything was translated; byte for byte the input when nothing changed."""
        if len(translations) != len(self._units):
            raise DocumentError(f"{len(translations)} translations for a page of {len(self._units)} units")
        edits: list[tuple[int, int, str]] = []
        translated = False
        for index, (unit, slots, new) in enumerate(zip(self._units, self._slots, translations)):
            if new is None:
                continue
            if len(new) != len(unit.runs):
                raise DocumentError(f"unit {index} has {len(unit.runs)} runs but {len(new)} translations")
            translated = True
            for run, slot, text in zip(unit.runs, slots, new):
                if slot is not None and not run.fixed and text != run.text:
                    edits.append((slot.start, slot.end, slot.replacement(text)))
        if translated:
            for slot in self._langs:
                if slot.value(self._decoded.text) != target:
                    edits.append((slot.start, slot.end, slot.replacement(target)))
        if not edits:
            return self._data
        return splice(self._data, self._decoded, sorted(edits))


def splice(data: bytes, decoded: Decoded, edits: list[tuple[int, int, str]]) -> bytes:
    """`data` with the decoded ranges in `edits` replaced; every other byte copied from `data` itself."""
    text, encoding = decoded.text, decoded.encoding
    out = [decoded.bom]
    byte_pos = len(decoded.bom)
    char_pos = 0
    for start, end, new in edits:
        byte_start = byte_pos + len(text[char_pos:start].encode(encoding))
        out.append(data[byte_pos:byte_start])
        out.append(new.encode(encoding, errors="xmlcharrefreplace"))
        byte_pos = byte_start + len(text[start:end].encode(encoding))
        char_pos = end
    out.append(data[byte_pos:])
    return b"".join(out)


def read(data: bytes, code_classes: frozenset[str] = frozenset()) -> HtmlDocument:
    """The page's units (DocumentError when it is not a readable web page). Elements of a class in `code_classes`
    are code, as <code> and <pre> are (an EPUB whose stylesheet marks code only by a monospace font)."""
    if len(data) > MAX_BYTES:
        raise DocumentError(f"this page is {len(data) // (1024 * 1024)} MB; Qiao reads web pages up to 256 MB")
    decoded = decode(data)
    builder = _Builder(decoded.text, code_classes)
    try:
        for chunk in _chunks(decoded.text):
            builder.feed(chunk)
        builder.close()
    except Exception as exc:  # html.parser is tolerant, but garbage can still trip it: a message, not a traceback
        raise DocumentError(f"this page could not be read as HTML ({exc})") from exc
    units, slots = builder.finish()
    return HtmlDocument(data, decoded, units, slots, builder.langs)


def _chunks(text: str) -> Iterator[str]:
    """The page in pieces that each start at a `&#` that is not a character reference. html.parser stops at such
    a `&#` until more text is fed; fed in one piece, everything after a second one would be parsed at close() in
    its end-of-input mode, where markup can come back as text."""
    start = 0
    for match in _AMP_HASH.finditer(text):
        if not _CHARREF.match(text, match.start()) and match.start() > start:
            yield text[start : match.start()]
            start = match.start()
    yield text[start:]


def decode(data: bytes) -> Decoded:
    """The page's text, by its byte order mark, else its declared charset (XML declaration or <meta>), else UTF-8,
    else (undeclared and not UTF-8) the best guess of charset-normalizer."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return _decode_as(data[len(bom) :], encoding, bom, declared=True)
    head = data[:4096]
    declared = None
    for pattern in (_XML_DECL, _META_CHARSET):
        match = pattern.search(head)
        if match:
            declared = _codec(match.group(1).decode("ascii"))
            if declared:
                break
    if declared in _AS_WINDOWS_1252:
        # Browsers read these labels as windows-1252 (curly quotes, dashes and € in 0x80-0x9F); a page using a
        # byte windows-1252 leaves undefined is read as the label says.
        try:
            return _decode_as(data, "cp1252", b"", declared=True)
        except DocumentError:
            pass
    if declared:
        return _decode_as(data, declared, b"", declared=True)
    try:
        return _decode_as(data, "utf-8", b"", declared=False)
    except DocumentError:
        from charset_normalizer import from_bytes

        best = from_bytes(data[:1_000_000]).best()
        if best is None or best.encoding is None:
            raise DocumentError(
                "this file is not text in any encoding Qiao recognises; if it is a web page, save it as UTF-8"
            ) from None
        return _decode_as(data, best.encoding, b"", declared=True)


def _codec(name: str) -> str | None:
    """Python's name for a declared charset; None when unknown. A UTF-16/32 declaration in a page readable as
    ASCII is wrong by definition (the HTML standard reads it as UTF-8)."""
    try:
        found = codecs.lookup(name).name
    except LookupError:
        return None
    return "utf-8" if found.startswith(("utf-16", "utf-32")) else found


def _decode_as(body: bytes, encoding: str, bom: bytes, *, declared: bool) -> Decoded:
    """`body` decoded, checked to encode back to the same bytes piece by piece (what render relies on)."""
    try:
        encoding = codecs.lookup(encoding).name
    except LookupError as exc:
        raise DocumentError(f"this page's encoding {encoding!r} is not one Qiao knows; re-save it as UTF-8") from exc
    if encoding in ("utf-16", "utf-32"):  # no byte order mark: these would write one before every piece
        encoding += "-le"
    if encoding.startswith("iso2022") or encoding in _STATEFUL:
        raise DocumentError(f"Qiao cannot write pages in the {encoding} encoding; re-save the page as UTF-8")
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as exc:
        where = "its declared encoding" if declared else "UTF-8"
        raise DocumentError(
            f"this page is not valid {encoding} text ({where}) at byte {exc.start + len(bom)}; re-save it as UTF-8"
        ) from exc
    if "\x00" in text:
        raise DocumentError("this file contains binary data (NUL characters); it is not a web page")
    if text.encode(encoding) != body:
        raise DocumentError(f"this page's {encoding} text does not survive being read and written; save it as UTF-8")
    return Decoded(text, encoding, bom)


@dataclass
class _Open:
    tag: str
    quiet: bool = False  # the root of a region that is never translated
    fixed: bool = False  # …whose text is a fixed run of the unit around it


class _Builder(HTMLParser):
    """Walks the parser's events, cutting text into units (at block elements) and runs (at any other markup)."""

    def __init__(self, text: str, code_classes: frozenset[str] = frozenset()) -> None:
        super().__init__(convert_charrefs=False)
        self.text = text
        self.code_classes = code_classes
        self.line_starts = [0, *(m.end() for m in re.finditer("\n", text))]
        self.stack: list[_Open] = []
        self.open: Counter[str] = Counter()  # tag -> how many are open (end tags of tags not open are ignored in O(1))
        self.quiet_at: int | None = None  # stack index of the region being skipped
        self.fixed_text: list[str] = []
        self.pieces: list[tuple[int, int] | str] = []  # (start, end) of a text segment, or a fixed run's text
        self.segment: list[int] | None = None
        self.found: list[tuple[int, Unit, list[_Slot | None]]] = []
        self.langs: list[_Slot] = []
        self.seen_html = False
        self.gave_up = False
        self.closing = False

    def _at(self) -> int:
        line, column = self.getpos()
        return self.line_starts[line - 1] + column

    # -- text -------------------------------------------------------------------------------------------------

    def _text(self, start: int, end: int) -> None:
        if self.gave_up:
            return
        if self.quiet_at is not None:
            if self.stack[self.quiet_at].fixed:
                self.fixed_text.append(self.text[start:end])
            return
        if self.segment is not None and self.segment[1] == start:
            self.segment[1] = end
            return
        self._close_segment()
        self.segment = [start, end]

    def handle_data(self, data: str) -> None:
        start = self._at()
        if self.quiet_at is None and (_GIVEN_UP.search(data) or _GIVEN_UP.match(self.text, start)):
            # Markup the parser gave up on and passed on as text: a malformed tag is left as it is; at the end of
            # the input (a `<!-- …` or `<a href=…` the page never finished, or all that follows a `&#` with no `;`
            # after it) a browser shows none of it, so everything after it is left too.
            self._close_segment()
            self.gave_up = self.gave_up or self.closing
            return
        self._text(start, start + len(data))

    def handle_entityref(self, name: str) -> None:
        self._reference("&" + name)

    def handle_charref(self, name: str) -> None:
        self._reference("&#" + name)

    def _reference(self, raw: str) -> None:
        start = self._at()
        end = start + len(raw)
        if self.text[start:end] != raw:  # not where this parser version says: leave it, and the text beside it
            self._close_segment()
            return
        if self.text[end : end + 1] == ";":
            end += 1
        self._text(start, end)

    def _close_segment(self) -> None:
        if self.segment is not None:
            self.pieces.append((self.segment[0], self.segment[1]))
            self.segment = None

    # -- markup -----------------------------------------------------------------------------------------------

    def handle_comment(self, data: str) -> None:
        self._close_segment()

    def handle_decl(self, decl: str) -> None:
        self._close_segment()

    def handle_pi(self, data: str) -> None:
        self._close_segment()

    def unknown_decl(self, data: str) -> None:
        self._close_segment()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._start(tag, attrs, empty=False)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._start(tag, attrs, empty=True)

    def _start(self, tag: str, attrs: list[tuple[str, str | None]], *, empty: bool) -> None:
        self._close_segment()
        empty = empty or tag in VOID
        if self.quiet_at is not None:
            if not empty:
                self._push(_Open(tag))
            return
        values = {name: value or "" for name, value in attrs}
        classes = values.get("class", "").split()
        off = values.get("translate", "").strip().lower() == "no" or "notranslate" in classes
        # A class set in a monospace font is code (a whole page or section in one is a design, not code)
        code = tag not in _PAGE and not self.code_classes.isdisjoint(classes)
        if not off:
            self._attributes(tag, values)
        if empty:
            if tag in BLOCK:
                self._flush()
            return
        if tag in SKIP_BLOCK or ((off or code) and tag in BLOCK):
            self._flush()
            self._push(_Open(tag, quiet=True))
        elif tag in SKIP_SILENT:
            self._push(_Open(tag, quiet=True))
        elif tag in FIXED_INLINE or off or code:
            self.fixed_text = []
            self._push(_Open(tag, quiet=True, fixed=True))
        else:
            if tag in BLOCK:
                self._flush()
            self._push(_Open(tag))

    def _push(self, element: _Open) -> None:
        if element.quiet:
            self.quiet_at = len(self.stack)
        self.stack.append(element)
        self.open[element.tag] += 1

    def handle_endtag(self, tag: str) -> None:
        self._close_segment()
        if not self.open[tag]:
            if self.quiet_at is None and tag in BLOCK:
                self._flush()  # a stray </p> or </br> still breaks the text as a browser would
            return
        while self.stack:
            element = self.stack.pop()
            self.open[element.tag] -= 1
            if self.quiet_at == len(self.stack):
                self.quiet_at = None
                if element.fixed:
                    self.pieces.append(_collapse(html.unescape("".join(self.fixed_text))))
                    self.fixed_text = []
            if element.tag == tag:
                break
        if self.quiet_at is None and tag in BLOCK:
            self._flush()

    def close(self) -> None:
        self.closing = True
        super().close()
        self._close_segment()
        if self.quiet_at is not None and self.stack[self.quiet_at].fixed:
            self.pieces.append(_collapse(html.unescape("".join(self.fixed_text))))
        self.quiet_at = None
        self._flush()

    # -- units ------------------------------------------------------------------------------------------------

    def _attributes(self, tag: str, values: dict[str, str]) -> None:
        """Units for the attributes people read, and the <html lang> slots."""
        wanted = set(TEXT_ATTRS)
        if tag == "meta" and (values.get("name") or values.get("property") or "").lower() in META_NAMES:
            wanted.add("content")
        if tag == "input" and values.get("type", "").lower() in BUTTON_INPUTS:
            wanted.add("value")
        is_html = tag == "html" and not self.seen_html
        if is_html:
            self.seen_html = True
        if not (wanted & values.keys()) and not is_html:
            return
        raw = self.get_starttag_text() or ""
        base = self._at()
        if self.text[base : base + len(raw)] != raw:
            return
        position = 1 + len(tag)
        for match in _ATTR.finditer(raw, position):
            name = match.group(1).lower()
            group = next((g for g in (2, 3, 4) if match.group(g) is not None), None)
            if group is None:
                continue
            quote = {2: '"', 3: "'", 4: ""}[group]
            start = base + match.start(group) - (1 if quote else 0)
            end = base + match.end(group) + (1 if quote else 0)
            if is_html and name in ("lang", "xml:lang"):
                self.langs.append(_Slot(start, end, quote))
            elif name in wanted:
                wanted.discard(name)  # the first of a repeated attribute is the one that counts
                value = html.unescape(match.group(group))
                unit = Unit((Run(value),))
                if unit.translatable:
                    self.found.append((start, unit, [_Slot(start, end, quote)]))

    def _flush(self) -> None:
        """The collected text, trimmed of its surrounding whitespace, becomes a unit if it has anything to
        translate."""
        self._close_segment()
        pieces, self.pieces = self.pieces, []
        text = self.text
        pieces = [p for p in pieces if not isinstance(p, str) or p.strip()]
        while pieces and not isinstance(pieces[0], str) and not text[pieces[0][0] : pieces[0][1]].strip(_SPACE):
            pieces.pop(0)
        while pieces and not isinstance(pieces[-1], str) and not text[pieces[-1][0] : pieces[-1][1]].strip(_SPACE):
            pieces.pop()
        if not pieces:
            return
        runs: list[Run] = []
        slots: list[_Slot | None] = []
        for index, piece in enumerate(pieces):
            if isinstance(piece, str):
                runs.append(Run(piece, fixed=True))
                slots.append(None)
                continue
            start, end = piece
            raw = text[start:end]
            if index == 0:
                start += len(raw) - len(raw.lstrip(_SPACE))
            if index == len(pieces) - 1:
                end -= len(raw) - len(raw.rstrip(_SPACE))
            value = _collapse(html.unescape(text[start:end]))
            if _ADDRESS.fullmatch(value.strip()):
                runs.append(Run(value, fixed=True))
                slots.append(None)
            else:
                runs.append(Run(value))
                slots.append(_Slot(start, end))
        unit = Unit(tuple(runs))
        if unit.translatable:
            key = next(slot.start for slot in slots if slot is not None)  # translatable: a text run exists
            self.found.append((key, unit, slots))

    def finish(self) -> tuple[list[Unit], list[list[_Slot | None]]]:
        """Units in reading order (an image's alt before the paragraph text after it)."""
        self.found.sort(key=lambda item: item[0])
        return [unit for _, unit, _ in self.found], [slots for _, _, slots in self.found]


def _collapse(text: str) -> str:
    """HTML's whitespace rule: any run of spaces and line breaks reads as one space."""
    return _SPACES.sub(" ", text)


FORMAT = DocumentFormat(name="html", label="Web page", extensions=(".html", ".htm", ".xhtml"), read=read)
