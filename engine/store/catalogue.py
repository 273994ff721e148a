"""The model catalogue: a JSON list of downloadable bundles with their URLs, sizes and sha256.

    {"format": 1, "bundles": [{"id": "opus-mt-en-zh", "name": "English → Chinese (opus-mt-en-zh)",
      "source": "en", "target": "zh", "model_id": "Helsinki-NLP/opus-mt-en-zh",
      "url": "https://…/qiao-model-opus-mt-en-zh.zip", "size": 123, "sha256": "<64 hex>", "license": "CC-BY-4.0",
      "precisions": ["int8", "fp32"], "family": "marian", "installed_size": 456,
      "quality": {"metric": "COMET-22", "test_set": "FLORES devtest", "score": 82.44, "source": "…"},
      "speed": {"tokens_per_s": 410.0, "threads": 2, "precision": "int8", "machine": "…"}}]}

`family`, `installed_size`, `quality` and `speed` are optional (an older catalogue lacks them: family is then
Marian, quality the published score Qiao knows for the model id, engine.store.quality); when present they are
checked like the rest. Without ids, `qiao model download` takes the best-quality bundle of each direction
(`recommended`).

A catalogue is untrusted input: at most MAX_CATALOGUE_BYTES, no duplicate keys or ids, every known field of the
type and form it needs (a hostile catalogue is a CatalogueError naming the field, never a crash). Keys Qiao does not
know are ignored, so a newer catalogue still serves an older Qiao. A `url` may be relative to the catalogue's own
address (release assets beside catalogue.json); every URL follows engine.store.web's policy.
"""

from __future__ import annotations

import http.client
import os
import re
import urllib.error
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.bundle import strict_json
from engine.errors import QiaoError
from engine.paths import catalogue_url_override
from engine.store.quality import Quality, Speed, parse_quality, parse_speed, quality_of, rank
from engine.store.web import failure, is_offline, open_url, url_problem

# Placeholder for the project's release catalogue (GitHub's "latest release" asset address); the release workflow
# publishes catalogue.json there. $QIAO_CATALOGUE_URL or --catalogue point elsewhere (a mirror, a local file).
DEFAULT_CATALOGUE_URL = "https://github.com/qiao-translator/qiao/releases/latest/download/catalogue.json"
CATALOGUE_FORMAT = 1
MAX_CATALOGUE_BYTES = 1 << 20  # a catalogue of 500 bundles is ~200 kB
MAX_ENTRIES = 500
MAX_BUNDLE_BYTES = 1 << 40
MAX_TEXT = 200
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_CODE = re.compile(r"[a-z][a-z0-9_]{0,15}")
_PRECISION = re.compile(r"[a-z0-9_]{1,16}")
_HEX64 = re.compile(r"[0-9a-fA-F]{64}")


class CatalogueError(QiaoError):
    """The catalogue cannot be read or is not one Qiao accepts; the message says where and why. `offline`: the
    server could not be reached at all (the window says so in its own words)."""

    def __init__(self, message: str, *, offline: bool = False) -> None:
        super().__init__(message)
        self.offline = offline


@dataclass(frozen=True)
class CatalogueEntry:
    """One downloadable bundle."""

    id: str  # the bundle's folder name, e.g. "opus-mt-en-zh"
    name: str  # for people: "English → Chinese (opus-mt-en-zh)"
    source: str  # language codes, as engine.languages writes them
    target: str
    model_id: str  # "Helsinki-NLP/opus-mt-en-zh"
    url: str  # absolute, allowed by engine.store.web's policy
    size: int  # bytes of the archive
    sha256: str  # of the archive, lower-case hex
    license: str
    precisions: tuple[str, ...]
    family: str = "marian"  # the model family that runs it (engine.families)
    quality: Quality | None = None  # published quality; the score Qiao knows for the model id when not listed
    speed: Speed | None = None  # measured when the release built it
    installed_size: int | None = None  # bytes once unpacked, when listed

    @property
    def pair_key(self) -> str:
        return f"{self.source}-{self.target}"


def catalogue_location() -> str:
    """$QIAO_CATALOGUE_URL, else DEFAULT_CATALOGUE_URL."""
    return catalogue_url_override() or DEFAULT_CATALOGUE_URL


def load_catalogue(location: str | os.PathLike[str], *, timeout: float = 10) -> list[CatalogueEntry]:
    """Read and check the catalogue at `location`: an https/http/file URL or a path. CatalogueError on anything
    wrong, worded for a person ("you are offline …" when the server cannot be reached)."""
    location = os.fspath(location)
    base, local = _base(location)
    data = _read(base, location, timeout)
    return parse_catalogue(data, base, local=local, where=location)


def _base(location: str) -> tuple[str, bool]:
    """The catalogue's absolute URL, and whether it is a local file."""
    if "://" not in location:
        path = Path(location).expanduser()
        try:
            return path.resolve().as_uri(), True
        except (OSError, ValueError) as exc:
            raise CatalogueError(f"catalogue {location}: not a usable path ({exc})") from None
    problem = url_problem(location, allow_file=True)
    if problem is not None:
        raise CatalogueError(f"catalogue refused: {problem}")
    return location, urllib.parse.urlsplit(location).scheme.lower() == "file"


def _read(url: str, shown: str, timeout: float) -> bytes:
    try:
        with open_url(url, timeout=timeout) as response:
            data = response.read(MAX_CATALOGUE_BYTES + 1)
    except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as exc:
        message = failure(exc, shown)
        raise CatalogueError(f"cannot read the model catalogue: {message}", offline=is_offline(message)) from None
    if len(data) > MAX_CATALOGUE_BYTES:
        raise CatalogueError(f"catalogue {shown}: larger than {MAX_CATALOGUE_BYTES >> 10} kB, which no catalogue is")
    return data


def parse_catalogue(data: bytes, base: str, *, local: bool = False, where: str = "") -> list[CatalogueEntry]:
    """The entries of catalogue text `data` fetched from `base` (relative URLs resolve against it)."""
    where = where or base
    if len(data) > MAX_CATALOGUE_BYTES:
        raise CatalogueError(f"catalogue {where}: larger than {MAX_CATALOGUE_BYTES >> 10} kB, which no catalogue is")
    try:
        raw = strict_json.loads(data.decode("utf-8-sig"))
    except RecursionError:
        raise CatalogueError(f"catalogue {where} is not JSON Qiao reads (nested too deeply)") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise CatalogueError(f"catalogue {where} is not valid JSON ({exc})") from None
    if not isinstance(raw, dict):
        raise CatalogueError(f"catalogue {where}: expected a JSON object with format and bundles")
    version = raw.get("format")
    if version != CATALOGUE_FORMAT or isinstance(version, bool):
        raise CatalogueError(
            f"catalogue {where} has format {version!r}; this Qiao reads format {CATALOGUE_FORMAT} (update Qiao?)"
        )
    bundles = raw.get("bundles")
    if not isinstance(bundles, list):
        raise CatalogueError(f"catalogue {where}: bundles: expected a list")
    if len(bundles) > MAX_ENTRIES:
        raise CatalogueError(f"catalogue {where}: over {MAX_ENTRIES} bundles, more than Qiao accepts")
    entries = [_entry(item, i, base, local, where) for i, item in enumerate(bundles)]
    seen: set[str] = set()
    for entry in entries:
        if entry.id in seen:
            raise CatalogueError(f"catalogue {where}: the bundle id {entry.id!r} appears twice")
        seen.add(entry.id)
    return entries


def _entry(item: Any, index: int, base: str, local: bool, where: str) -> CatalogueEntry:
    at = f"catalogue {where}: bundles[{index}]"
    if not isinstance(item, dict):
        raise CatalogueError(f"{at}: expected an object")

    def get(key: str, ok, expected: str) -> Any:
        value = item.get(key)
        if not ok(value):
            shown = "nothing" if key not in item else repr(value)[:60]
            raise CatalogueError(f"{at}.{key}: expected {expected}, found {shown}")
        return value

    def text(value: Any) -> bool:
        return isinstance(value, str) and 0 < len(value) <= MAX_TEXT and value.isprintable()

    entry_id = get("id", lambda v: isinstance(v, str) and _ID.fullmatch(v), "a folder name such as opus-mt-en-zh")
    name = get("name", text, "a name of 1 to 200 printable characters")
    source = get("source", lambda v: isinstance(v, str) and _CODE.fullmatch(v), 'a language code such as "en"')
    target = get("target", lambda v: isinstance(v, str) and _CODE.fullmatch(v), 'a language code such as "zh"')
    if source == target:
        raise CatalogueError(f"{at}: source and target are both {source!r}")
    model_id = get("model_id", text, "a model id such as Helsinki-NLP/opus-mt-en-zh")
    size = get(
        "size",
        lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 < v <= MAX_BUNDLE_BYTES,
        "the archive's size in bytes (a positive whole number)",
    )
    sha256 = get("sha256", lambda v: isinstance(v, str) and _HEX64.fullmatch(v), "64 hexadecimal digits").lower()
    license_ = get("license", text, "a licence name such as CC-BY-4.0")
    precisions = get(
        "precisions",
        lambda v: (
            isinstance(v, list)
            and 0 < len(v) <= 8
            and all(isinstance(p, str) and _PRECISION.fullmatch(p) for p in v)
            and len(set(v)) == len(v)
        ),
        'a list of distinct precisions such as ["int8", "fp32"]',
    )
    family = item.get("family", "marian")
    if not (isinstance(family, str) and _CODE.fullmatch(family)):
        raise CatalogueError(f"{at}.family: expected a model family such as marian, found {repr(family)[:60]}")
    installed_size = item.get("installed_size")
    if installed_size is not None and not (
        isinstance(installed_size, int)
        and not isinstance(installed_size, bool)
        and 0 < installed_size <= MAX_BUNDLE_BYTES
    ):
        raise CatalogueError(f"{at}.installed_size: expected a size in bytes, found {repr(installed_size)[:60]}")
    quality, speed = _block(item, "quality", parse_quality, at), _block(item, "speed", parse_speed, at)
    url = get("url", lambda v: isinstance(v, str) and 0 < len(v) <= 2000, "the archive's URL")
    absolute = urllib.parse.urljoin(base, url)
    problem = url_problem(absolute, allow_file=local)
    if problem is not None:
        raise CatalogueError(f"{at}.url refused: {problem}")
    return CatalogueEntry(
        id=entry_id,
        name=name,
        source=source,
        target=target,
        model_id=model_id,
        url=absolute,
        size=size,
        sha256=sha256,
        license=license_,
        precisions=tuple(precisions),
        family=family,
        quality=quality if quality is not None else quality_of({}, model_id, f"{source}-{target}"),
        speed=speed,
        installed_size=installed_size,
    )


def _block(item: dict, key: str, parse: Any, at: str) -> Any:
    """An optional quality or speed block: None when absent, a CatalogueError naming what is wrong."""
    if key not in item:
        return None
    try:
        return parse(item[key])
    except ValueError as exc:
        raise CatalogueError(f"{at}.{key}: {exc}") from None


def recommended(entries: list[CatalogueEntry]) -> list[CatalogueEntry]:
    """The best-quality entry of each direction (the catalogue's order among equals), in the order the directions
    first appear: what a new install downloads when no id is named."""
    best: dict[str, CatalogueEntry] = {}
    for entry in entries:
        held = best.get(entry.pair_key)
        if held is None or rank(entry.quality) > rank(held.quality):
            best[entry.pair_key] = entry
    return list(best.values())
