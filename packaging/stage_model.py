"""Stage the model bundles the frozen app embeds: verify each, copy it, and optionally keep INT8 only.

    python packaging/stage_model.py STAGE [--model DIR|fixture|fixture-zh-en]... [--int8-only]
    python packaging/stage_model.py STAGE --catalogue DIR/catalogue.json [--int8-only]

writes STAGE/<name>/ for every bundle, which qiao.spec puts at `_internal/models/<name>` (where
engine/store/locate.py and the self-test look beside a frozen executable). <name> is the bundle's catalogue id,
from its own manifest (`bundle_id`): `opus-mt-<source>-<target>` for a Marian bundle, the installed folder name of
its model id for another family (`firefox-translations-enzh-base-memory`), so an embedded model and the same
model downloaded from the catalogue are one. One bundle per pair: two of the same pair are refused rather than one
silently shadowing the other.

`--model` (default: resources/models/opus-mt-en-zh, plus opus-mt-zh-en beside it when it was built) names the
bundles. `--catalogue` takes a release's catalogue.json with its zips beside it (packaging/make_catalogue.py) and
embeds, for each direction it lists, the best-quality bundle, chosen as a new install chooses
(engine.store.catalogue.recommended: the best published score on the reference benchmark, engine.store.quality;
the catalogue's order among equals): Mozilla's Firefox models where the release has them, opus-mt otherwise. Each
zip must have the catalogue's size and sha256, is unpacked with the app's own safe unpacker and must hold the
bundle the catalogue says (model id, pair, id), so the installer embeds byte for byte what the catalogue offers.

Each source is checked against its manifest first (every sha256), so a damaged bundle never ships. `--int8-only`
drops fp32/ and rewrites the manifest consistently (its "precisions" and "files" then describe INT8 only, and its
seal is recomputed), so `qiao model verify`, the self-test and the Translator all accept the result; it is verified
again after staging.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.bundle.manifest import MANIFEST, Manifest, dumps, load_manifest, sha256_file, verify_bundle  # noqa: E402
from engine.errors import QiaoError  # noqa: E402
from engine.families import MARIAN  # noqa: E402
from engine.languages import LanguagePair  # noqa: E402
from engine.store.archive import extract, kind_of  # noqa: E402
from engine.store.catalogue import CatalogueEntry, load_catalogue, recommended  # noqa: E402
from engine.store.installed import bundle_name as installed_name  # noqa: E402
from engine.store.installed import bundle_root  # noqa: E402

FIXTURES = {
    "fixture": ROOT / "tests" / "fixtures" / "tiny_marian" / "bundle",
    "fixture-zh-en": ROOT / "tests" / "fixtures" / "tiny_marian_zh_en" / "bundle",
}
FIXTURE = FIXTURES["fixture"]
MODELS = ROOT / "resources" / "models"
DEFAULT = MODELS / "opus-mt-en-zh"  # what `make run` / `make model` build; required when no --model is given
OPTIONAL = (MODELS / "opus-mt-zh-en",)  # embedded by default when built (`make run` builds it too)


def bundle_name(pair: LanguagePair) -> str:
    """The folder a bundle of `pair` gets in the app (and its catalogue id): opus-mt-en-zh, opus-mt-zh-en."""
    return f"opus-mt-{pair.key}"


def bundle_id(manifest: Manifest) -> str:
    """The folder a bundle gets in the app, and its catalogue id (packaging/make_catalogue.py): opus-mt-<pair> for a
    Marian bundle; another family's installed folder name (`mozilla/firefox-translations-enzh-base-memory` →
    `firefox-translations-enzh-base-memory`), as `qiao model download` and `qiao model import` name it."""
    if manifest.family == MARIAN:
        return bundle_name(manifest.pair)
    return installed_name(manifest.model_id)


def resolve_source(source: str | None) -> Path:
    """The bundle folder for one --model: a path, a fixture's name, or the default location."""
    if source in (None, ""):
        return DEFAULT
    return FIXTURES.get(source, Path(source))


def default_sources() -> list[Path]:
    """Without --model: the en→zh bundle, and every optional one that has been built."""
    return [DEFAULT, *(p for p in OPTIONAL if (p / MANIFEST).is_file())]


def int8_only_manifest(raw: dict) -> dict:
    """The manifest of the same bundle without its FP32 model (files under fp32/ and the fp32 precision)."""
    if "int8" not in raw["precisions"]:
        raise SystemExit("stage_model: --int8-only, but the bundle has no INT8 model")
    out = dict(raw)
    out["precisions"] = {k: v for k, v in raw["precisions"].items() if k == "int8"}
    dropped = [p for p in raw["precisions"] if p != "int8"]
    out["files"] = {f: v for f, v in raw["files"].items() if not any(f.startswith(f"{p}/") for p in dropped)}
    return out


def stage(source: Path, stage_dir: Path, int8_only: bool = False) -> Path:
    """Copy a verified bundle to stage_dir/<bundle_name> (INT8 only if asked); returns that folder."""
    manifest = verify_bundle(source)  # every file's size and sha256
    dest = stage_dir / bundle_id(manifest)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    raw = int8_only_manifest(manifest.raw) if int8_only else manifest.raw
    for rel in raw["files"]:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / rel, dest / rel)
    (dest / MANIFEST).write_text(dumps(raw), encoding="utf-8")  # resealed: --int8-only changed its content
    verify_bundle(dest)
    return dest


def stage_all(sources: list[Path], stage_dir: Path, int8_only: bool = False) -> list[Path]:
    """Stage every bundle of `sources`, after checking that no two of them are for the same pair."""
    pairs: dict[str, Path] = {}
    for source in sources:
        pair = load_manifest(source).pair.key
        if pair in pairs:
            raise SystemExit(f"stage_model: {pairs[pair]} and {source} both translate {pair}: embed one per pair")
        pairs[pair] = source
    return [stage(source, stage_dir, int8_only) for source in sources]


# -- from a release's catalogue ------------------------------------------------------------------------------------


def best_in_catalogue(catalogue: Path) -> list[CatalogueEntry]:
    """The catalogue's best-quality bundle of each direction, as a new install chooses it (recommended)."""
    return recommended(load_catalogue(catalogue))


def archive_of(entry: CatalogueEntry, catalogue: Path) -> Path:
    """The entry's zip in the catalogue's folder (make_catalogue writes both there; the URL names the file)."""
    name = Path(urllib.parse.unquote(urllib.parse.urlsplit(entry.url).path)).name
    return catalogue.parent / name


def unpack_entry(entry: CatalogueEntry, catalogue: Path, work: Path) -> Path:
    """The entry's bundle, unpacked under `work` from its zip beside the catalogue: the zip must have the listed
    size and sha256, and the bundle inside must be the one listed (id, model id, pair). SystemExit says what not."""
    archive = archive_of(entry, catalogue)
    if not archive.is_file():
        raise SystemExit(f"stage_model: {entry.id}: {archive.name} is not beside {catalogue}")
    if archive.stat().st_size != entry.size or sha256_file(archive) != entry.sha256:
        raise SystemExit(f"stage_model: {archive} is not the archive {catalogue.name} lists (size or sha256 differs)")
    dest = work / entry.id
    dest.mkdir(parents=True)
    extract(archive, kind_of(archive) or "zip", dest)
    root = bundle_root(dest)
    manifest = load_manifest(root)
    found = (bundle_id(manifest), manifest.model_id, manifest.pair.key)
    if found != (entry.id, entry.model_id, entry.pair_key):
        raise SystemExit(
            f"stage_model: {archive.name} holds {found[0]} ({found[1]}, {found[2]}), but {catalogue.name} lists "
            f"{entry.id} ({entry.model_id}, {entry.pair_key})"
        )
    return root


def stage_catalogue(catalogue: Path, stage_dir: Path, int8_only: bool = False) -> list[tuple[CatalogueEntry, Path]]:
    """Stage the best-quality bundle of each direction of a release's catalogue; returns (entry, staged folder)."""
    best = best_in_catalogue(catalogue)
    if not best:
        raise SystemExit(f"stage_model: {catalogue} lists no bundle")
    stage_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".unpack-", dir=stage_dir) as tmp:
        sources = [unpack_entry(entry, catalogue, Path(tmp)) for entry in best]
        staged = stage_all(sources, stage_dir, int8_only)
    return list(zip(best, staged))


def _missing(source: Path) -> str:
    return (
        f"stage_model: no model bundle at {source}\n"
        "  build it: qiao model build --from Helsinki-NLP/opus-mt-en-zh --out resources/models/opus-mt-en-zh\n"
        "  (zh→en: --from Helsinki-NLP/opus-mt-zh-en --out resources/models/opus-mt-zh-en)\n"
        "  or freeze with the test model: packaging/build.sh --model fixture"
    )


def _report(source: object, dest: Path) -> None:
    size = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
    precisions = ", ".join(json.loads((dest / MANIFEST).read_text(encoding="utf-8"))["precisions"])
    print(f"stage_model: {source} → {dest} ({precisions}; {size / 1e6:.1f} MB), verified")


def _why(entry: CatalogueEntry) -> str:
    quality = entry.quality.describe() if entry.quality is not None else "no published quality"
    return f"{entry.id} for {entry.pair_key}: {quality}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="verify and stage the model bundles to embed in the frozen app")
    parser.add_argument("stage", type=Path, help="staging folder (gets one folder per bundle, named by its id)")
    parser.add_argument(
        "--model",
        dest="sources",
        action="append",
        help=f"bundle folder, or {' / '.join(FIXTURES)} (repeat for several; default: {DEFAULT}, and "
        f"{', '.join(str(p) for p in OPTIONAL)} when built)",
    )
    parser.add_argument(
        "--catalogue",
        type=Path,
        help="a release's catalogue.json, its zips beside it: embed the best-quality bundle of each direction",
    )
    parser.add_argument("--int8-only", action="store_true", help="leave the FP32 models out")
    args = parser.parse_args(argv)
    if args.catalogue is not None:
        if args.sources:
            parser.error("--catalogue chooses the bundles itself: give it or --model, not both")
        try:
            for entry, dest in stage_catalogue(args.catalogue, args.stage, args.int8_only):
                print(f"stage_model: best of {args.catalogue.name}: {_why(entry)}")
                _report(archive_of(entry, args.catalogue), dest)
        except QiaoError as exc:
            print(f"stage_model: {exc}", file=sys.stderr)
            return 1
        return 0
    sources = [resolve_source(s) for s in args.sources] if args.sources else default_sources()
    for source in sources:
        if not (source / MANIFEST).is_file():
            print(_missing(source), file=sys.stderr)
            return 1
    try:
        staged = stage_all(sources, args.stage, args.int8_only)
    except QiaoError as exc:
        print(f"stage_model: {exc}", file=sys.stderr)
        return 1
    for source, dest in zip(sources, staged):
        _report(source, dest)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
