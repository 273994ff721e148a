"""The bundle's manifest: what every file must be, and the model facts the engine reads instead of hard-coding.

A bundle is untrusted input. `load_manifest` parses manifest.json defensively (size, nesting, duplicate keys),
checks its seal (a sha256 of its own canonical content, so a flipped byte in the manifest is caught like one in a
weight file) and its schema (engine.bundle.schema), all before any other file is opened. `verify_files` then
checks that every file the engine will open, ONNX external data included, is listed, lies inside the bundle, is a
regular file, and has the recorded size and sha256.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from engine import families
from engine.bundle import strict_json
from engine.bundle.onnx_external import OnnxFormatError, external_data
from engine.bundle.safe_paths import beside, inside
from engine.bundle.schema import MANIFEST, SEAL, embedding_regions, named_loads, validate
from engine.bundle.verified_cache import VerifiedFiles
from engine.errors import BundleError, FileProblem, ModelNotFoundError
from engine.languages import LanguagePair

__all__ = [
    "FORMAT_VERSION",
    "MANIFEST",
    "MARIAN_ONLY_FORMAT",
    "READABLE_FORMATS",
    "Manifest",
    "dumps",
    "load_manifest",
    "seal",
    "sha256_file",
    "verify_bundle",
    "verify_files",
]

# 2: compact source tokenizer (tokenizer.json + source_ids.json)
# 3: manifest_sha256 seals the manifest; every file the engine opens is listed in `files`
# 4: `languages` (engine.languages) replaces `scripts` and `sentence_joiner`: the pair is data
# 5: `family` names the model family (engine.families) whose code runs the bundle. Only format 5 may have separate
#    source/target vocabularies (config.source_vocab_size, tokenizer.source_vocab_size and source_pieces_file,
#    precisions.*.source_embedding): a Qiao that reads format 4 only would look source ids up in the target table.
# Every bundle is written as format 5; a format-4 bundle (every release before it) is read as Marian.
FORMAT_VERSION = 5
MARIAN_ONLY_FORMAT = 4  # no `family`: Marian, one shared vocabulary
READABLE_FORMATS = (MARIAN_ONLY_FORMAT, FORMAT_VERSION)
MAX_MANIFEST_BYTES = 16 << 20  # the real model's manifest is ~10 kB
_CHUNK = 1 << 20


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def canonical_sha256(raw: dict) -> str:
    """sha256 of the manifest's content without its seal: sorted keys, no whitespace, UTF-8 (layout-independent)."""
    content = {k: v for k, v in raw.items() if k != SEAL}
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def seal(raw: dict) -> dict:
    """A copy of `raw` carrying the seal of its current content (whoever writes a manifest calls this last)."""
    return {**{k: v for k, v in raw.items() if k != SEAL}, SEAL: canonical_sha256(raw)}


def dumps(raw: dict) -> str:
    """manifest.json's text for `raw`, sealed (the build pipeline, stage_model and tests write it with this)."""
    return json.dumps(seal(raw), ensure_ascii=False, indent=1) + "\n"


@dataclass
class Manifest:
    """Parsed, schema-checked manifest.json. Fields the engine and GUI use are attributes; the rest stays in `raw`."""

    bundle_dir: Path
    raw: dict = field(repr=False)

    @property
    def model_id(self) -> str:
        return self.raw["model"]["id"]

    @property
    def family(self) -> str:
        """The model family that runs this bundle (engine.families): the manifest's `family`; Marian for format 4."""
        return str(self.raw.get("family", families.MARIAN))

    @property
    def license(self) -> str:
        return self.raw["model"]["license"]

    @property
    def attribution(self) -> str:
        return self.raw["model"]["attribution"]

    @property
    def language_tokens(self) -> list[str]:
        """Every `>>xx<<` token of the vocabulary (not only the pair's variants)."""
        return list(self.raw["tokenizer"].get("language_tokens", []))

    @property
    def pair(self) -> LanguagePair:
        """The bundle's direction, variants and text conventions (manifest `languages`)."""
        return LanguagePair.from_dict(self.raw["languages"])

    @property
    def scripts(self) -> dict[str, str]:
        """{variant key: language token}, e.g. {"hans": ">>cmn_Hans<<", "hant": ">>cmn_Hant<<"}; {} for zh→en."""
        return self.pair.tokens()

    @property
    def generation(self) -> dict:
        return dict(self.raw["generation"])

    @property
    def config(self) -> dict:
        return dict(self.raw["config"])

    @property
    def precisions(self) -> dict[str, dict]:
        return self.raw["precisions"]

    @property
    def graphs(self) -> dict[str, dict]:
        return self.raw["graphs"]

    @property
    def tokenizer(self) -> dict:
        return self.raw["tokenizer"]

    def path(self, relative: str) -> Path:
        return self.bundle_dir / relative

    def loaded_files(self, precision: str | None = None) -> list[str]:
        """Files the engine opens by name for `precision` (all precisions when None); ONNX external data aside."""
        return list(dict.fromkeys(rel for _, rel in named_loads(self.raw, precision)))

    def files_for(self, precision: str | None) -> list[str]:
        """Listed files one precision needs (shared files included); all files when precision is None.

        A file belongs to another precision when that precision loads it or it lies in that precision's folder,
        unless this precision loads it too."""
        files = list(self.raw["files"])
        if precision is None:
            return files
        mine = set(self.loaded_files(precision))
        others = [p for p in self.precisions if p != precision]
        theirs = {rel for o in others for rel in self.loaded_files(o)}
        return [f for f in files if f in mine or not (f in theirs or any(f.startswith(f"{o}/") for o in others))]


def _problem(detail: str, kind: str = "manifest") -> FileProblem:
    return FileProblem(kind, MANIFEST, detail)


def _read_json(bundle: Path) -> dict:
    real, problem = inside(bundle, MANIFEST)
    if problem is not None:
        raise BundleError(str(bundle), [problem])
    assert real is not None
    try:
        with open(real, "rb") as fh:
            data = fh.read(MAX_MANIFEST_BYTES + 1)
    except OSError as exc:
        problem = _problem(f"{MANIFEST} is unreadable: {exc.strerror or exc}", "unreadable")
        raise BundleError(str(bundle), [problem]) from None
    if len(data) > MAX_MANIFEST_BYTES:
        raise BundleError(
            str(bundle),
            [_problem(f"{MANIFEST} is unreadable: larger than {MAX_MANIFEST_BYTES >> 20} MiB, which no manifest is")],
        )
    try:
        raw = strict_json.loads(data.decode("utf-8"))
    except RecursionError:
        raise BundleError(str(bundle), [_problem(f"{MANIFEST} is unreadable: nested too deeply")]) from None
    except (UnicodeDecodeError, ValueError) as exc:  # JSONDecodeError is a ValueError
        raise BundleError(str(bundle), [_problem(f"{MANIFEST} is unreadable: {exc}")]) from None
    if not isinstance(raw, dict):
        raise BundleError(str(bundle), [_problem(f"{MANIFEST} is unreadable: expected a JSON object")])
    return raw


def _format_problem(version: object) -> FileProblem:
    readable = " and ".join(map(str, READABLE_FORMATS))
    message = f"{MANIFEST} has format version {version!r}; this Qiao reads {readable}"
    if isinstance(version, int) and not isinstance(version, bool):
        older = version < min(READABLE_FORMATS)
        message += (
            " (the bundle was made by an older Qiao: build or download the model again)"
            if older
            else " (the bundle was made by a newer Qiao: update Qiao)"
        )
    return _problem(message, "format")


def _family_problem(family: str) -> FileProblem:
    """A family this Qiao has no code for: made by a newer Qiao (a "format" problem, worded for a person)."""
    known = ", ".join(families.names())
    shown = family if len(family) <= 40 else family[:40] + "…"
    message = (
        f"{MANIFEST}: the model family {shown!r} is not one this Qiao runs (it runs {known}); "
        "the bundle was made by a newer Qiao: update Qiao"
    )
    return _problem(message, "format")


def load_manifest(bundle_dir: str | Path) -> Manifest:
    """Read and check a bundle's manifest: a clear error when there is no bundle, or a BundleError listing every
    problem (unreadable, wrong format version, broken seal, schema) before any other file is opened."""
    bundle = Path(bundle_dir)
    try:
        is_dir = bundle.is_dir()
        has_manifest = is_dir and ((bundle / MANIFEST).exists() or (bundle / MANIFEST).is_symlink())
    except OSError as exc:  # e.g. a folder this user may not read
        problem = FileProblem("unreadable", "", f"the model folder cannot be read ({exc.strerror or exc})")
        raise BundleError(str(bundle), [problem]) from None
    if not is_dir:
        raise ModelNotFoundError(f"no model bundle at {bundle}", [str(bundle)])
    if not has_manifest:
        raise ModelNotFoundError(f"{bundle} is not a Qiao model bundle (no {MANIFEST})", [str(bundle)])
    raw = _read_json(bundle)
    version = raw.get("format_version")
    if version not in READABLE_FORMATS or isinstance(version, bool):
        raise BundleError(str(bundle), [_format_problem(version)])
    family = raw.get("family")
    if version != MARIAN_ONLY_FORMAT and isinstance(family, str) and family and family not in families.names():
        raise BundleError(str(bundle), [_family_problem(family)])
    problems: list[FileProblem] = []
    recorded = raw.get(SEAL)
    if not isinstance(recorded, str):
        problems.append(_problem(f"{MANIFEST}: {SEAL}: expected the sha256 of the manifest's content, found nothing"))
    elif recorded != canonical_sha256(raw):
        problems.append(
            _problem(
                f"{MANIFEST} was changed or damaged after it was written (its content no longer "
                f"matches its {SEAL}): build or download the model again"
            )
        )
    problems += validate(raw)
    if problems:
        raise BundleError(str(bundle), problems)
    return Manifest(bundle, raw)


class _Verifier:
    """One pass over a bundle's files; each file is checked at most once."""

    def __init__(self, manifest: Manifest, hashes: bool, cache: VerifiedFiles | None) -> None:
        self.manifest, self.hashes, self.cache = manifest, hashes, cache
        self.problems: list[FileProblem] = []
        self.good: dict[str, Path] = {}  # rel → real path, for files that passed
        self.trusted: set[str] = set()  # passed on the cache's word, not hashed in this pass
        self.seen: set[str] = set()

    def check(self, rel: str) -> Path | None:
        if rel in self.seen:
            return self.good.get(rel)
        self.seen.add(rel)
        expected = self.manifest.raw["files"][rel]
        real, problem = inside(self.manifest.bundle_dir, rel)
        if problem is not None:
            self.problems.append(problem)
            return None
        assert real is not None
        size = real.stat().st_size
        if size != expected["size"]:
            self.problems.append(
                FileProblem(
                    "size", rel, f"{rel}: size {size} bytes, manifest says {expected['size']} (truncated or replaced)"
                )
            )
            return None
        if self.hashes and not self._hash_ok(rel, real, use_cache=True):
            return None
        self.good[rel] = real
        return real

    def _hash_ok(self, rel: str, real: Path, use_cache: bool) -> bool:
        want = self.manifest.raw["files"][rel]["sha256"]
        if use_cache and self.cache is not None and self.cache.is_verified(real, want):
            self.trusted.add(rel)
            return True
        try:
            digest = sha256_file(real)
        except OSError as exc:
            self.problems.append(FileProblem("unreadable", rel, f"{rel}: unreadable ({exc.strerror or exc})"))
            return False
        if digest != want:
            if self.cache is not None:
                self.cache.forget(real)
            self.problems.append(
                FileProblem("hash", rel, f"{rel}: sha256 {digest[:16]}… differs from the manifest's {want[:16]}…")
            )
            return False
        if self.cache is not None:
            self.cache.remember(real, digest)
        return True

    def graph(self, rel: str) -> list[tuple[str, int, int | None]]:
        """Check the external-data files `rel` makes ORT open; returns (file, offset, length) of each reference."""
        real = self.good.get(rel)
        if real is None:
            return []
        try:
            refs = external_data(real)
        except (OSError, OnnxFormatError) as exc:
            if rel in self.trusted and not self._hash_ok(rel, real, use_cache=False):
                return []  # the cache vouched for a file that has since changed in place
            self.problems.append(
                FileProblem(
                    "damaged", rel, f"{rel}: not a readable ONNX graph ({exc}); build or download the model again"
                )
            )
            return []
        files = self.manifest.raw["files"]
        out = []
        for ref in refs:
            target, problem = beside(rel, ref.location)
            if problem is not None:
                if problem not in self.problems:
                    self.problems.append(problem)
                continue
            assert target is not None
            derived = self.manifest.raw.get("derived", {}).get(target)
            if derived is not None:  # computed from a listed file and checked against this entry when loaded
                if ref.offset + (ref.length or 0) > derived["size"]:
                    self.problems.append(
                        FileProblem("damaged", rel, f"{rel}: its weights run past the end of {target}")
                    )
                out.append((target, ref.offset, ref.length))
                continue
            if target not in files:
                if target not in self.seen:
                    self.seen.add(target)
                    self.problems.append(
                        FileProblem(
                            "unlisted", target, f"{target}: weights of {rel}, but not listed in the manifest's files"
                        )
                    )
                continue
            size = files[target]["size"]
            if self.check(target) is not None and ref.offset + (ref.length or 0) > size:
                self.problems.append(FileProblem("damaged", rel, f"{rel}: its weights run past the end of {target}"))
            out.append((target, ref.offset, ref.length))
        return out


def _embedding_matches(manifest: Manifest, precision: str, refs: list[tuple[str, int, int | None]]) -> list[str]:
    """The manifest's embedding table must be where the decoder graph keeps its output projection, unless the
    precision names a `head` file: then that is where the projection lives, and the table is for lookups only."""
    spec = manifest.precisions[precision]
    if spec.get("head"):
        if any(rel == spec["head"] for rel, _, _ in refs):
            return []
        return [
            f"{MANIFEST}: precisions.{precision}.head: {spec['head']} is not where {spec['decoder']} keeps its "
            "output projection"
        ]
    emb = spec["embedding"]
    regions = embedding_regions(emb["dtype"], emb["shape"], emb["offset"], emb["scales_offset"], emb["block_size"])
    known = {(off, length) for rel, off, length in refs if rel == emb["file"]}
    decoder = manifest.precisions[precision]["decoder"]
    return [
        f"{MANIFEST}: precisions.{precision}.embedding.{key}: {start} (+{length} bytes) is not where {decoder} "
        f"keeps its output projection in {emb['file']}"
        for key, start, length in regions
        if (start, length) not in known
    ]


def verify_files(
    manifest: Manifest, precision: str | None = None, hashes: bool = True, cache: VerifiedFiles | None = None
) -> list[FileProblem]:
    """Every problem with the bundle's files, precisely; an empty list means the bundle is intact.

    Covers every listed file of `precision` (all when None) and the ONNX external data its graphs name.
    `hashes=False` checks presence, place and sizes only (catches truncation). With a `cache`, files whose sha256
    was already confirmed, and that have not changed on disk since, are not hashed again.
    """
    v = _Verifier(manifest, hashes, cache)
    for rel in manifest.files_for(precision):
        v.check(rel)
    scorer = manifest.graphs.get("scorer")
    if scorer is not None:
        v.graph(scorer["file"])
    for name, spec in manifest.precisions.items():
        if precision is not None and name != precision:
            continue
        v.graph(spec["encoder"])
        refs = v.graph(spec["decoder"])
        if manifest.family == families.BERGAMOT:  # its weights live inside its graphs: no table to place
            continue
        if spec["decoder"] in v.good and not any(p.kind in ("hash", "damaged") for p in v.problems):
            v.problems += [_problem(m) for m in _embedding_matches(manifest, name, refs)]
    if cache is not None:
        cache.save()
    return v.problems


def verify_bundle(
    bundle_dir: str | Path, precision: str | None = None, hashes: bool = True, cache: VerifiedFiles | None = None
) -> Manifest:
    """Load and check a bundle; raise BundleError listing everything wrong."""
    manifest = load_manifest(bundle_dir)
    if precision is not None and precision not in manifest.precisions:
        available = ", ".join(manifest.precisions)
        raise BundleError(
            str(bundle_dir),
            [FileProblem("precision", "", f"precision {precision} is not in this bundle (it has {available})")],
        )
    problems = verify_files(manifest, precision, hashes=hashes, cache=cache)
    if problems:
        raise BundleError(str(bundle_dir), problems)
    return manifest
