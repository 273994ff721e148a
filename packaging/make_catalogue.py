"""Zip model bundles for download and write the catalogue that lists them (the release workflow's last model step).

    python packaging/make_catalogue.py BUNDLE... --out DIR --url-base URL

For every bundle folder: verify it, write DIR/qiao-model-<id>.zip whose single top folder is the bundle named by its
id, then DIR/catalogue.json. The id of a Marian (opus-mt) bundle is `opus-mt-<pair>`, from the manifest's pair, as
packaging/stage_model.py names it; any other family's is the folder name its model id installs as
(engine.store.installed.bundle_name: `mozilla/firefox-base-memory-en-zh` → `firefox-base-memory-en-zh`).

    {"format": 1, "bundles": [{"id": "opus-mt-en-zh", "name": "English → Chinese (opus-mt-en-zh)",
      "source": "en", "target": "zh", "model_id": "Helsinki-NLP/opus-mt-en-zh",
      "url": "URL/qiao-model-opus-mt-en-zh.zip", "size": 123, "sha256": "<64 hex>", "license": "CC-BY-4.0",
      "precisions": ["int8", "fp32"], "family": "marian", "installed_size": 456,
      "quality": {"metric": "COMET-22", "test_set": "FLORES devtest", "score": 82.44, "source": "…"},
      "speed": {"tokens_per_s": 410.0, "threads": 2, "precision": "int8", "machine": "…"}}]}

`quality` is the manifest's block, else the published score Qiao knows for the model id (engine.store.quality);
`speed` the manifest's (packaging/measure_speed.py records it). Either is left out when there is none.

which engine/store/catalogue.py reads. The zip holds exactly the files the manifest lists (plus manifest.json), in
sorted
order with fixed timestamps and permissions, so the same bundle always gives the same bytes and the same sha256.
Every file is written to a temporary name and renamed into place: an interrupted run leaves no half-written zip or
catalogue behind.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from stage_model import bundle_id  # noqa: E402

from engine.bundle.manifest import MANIFEST, Manifest, load_manifest, sha256_file, verify_bundle  # noqa: E402
from engine.config import PRECISIONS  # noqa: E402
from engine.errors import QiaoError  # noqa: E402
from engine.store.quality import quality_of, speed_of  # noqa: E402

CATALOGUE_FORMAT = 1
CATALOGUE = "catalogue.json"
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip can record: no build clock in the bytes
FILE_MODE = 0o644 << 16
DIR_MODE = (0o40755 << 16) | 0x10  # a folder (Unix mode and the MS-DOS directory flag)


@dataclass(frozen=True)
class CatalogueEntry:
    """One downloadable bundle, as the catalogue lists it (the field order is the catalogue's)."""

    id: str
    name: str
    source: str
    target: str
    model_id: str
    url: str
    size: int
    sha256: str
    license: str
    precisions: list[str]
    family: str
    installed_size: int
    quality: dict | None = None
    speed: dict | None = None

    def as_dict(self) -> dict:
        """The catalogue's fields in order; quality and speed only when known (the reader refuses a null)."""
        return {k: v for k, v in asdict(self).items() if v is not None}


def catalogue_id(manifest: Manifest) -> str:
    """ "opus-mt-en-zh" for a Marian bundle; another family's installed folder name: the folder stage_model gives
    it in the app (one function, so an embedded model and its catalogue entry are one)."""
    return bundle_id(manifest)


def archive_name(bundle_id: str) -> str:
    return f"qiao-model-{bundle_id}.zip"


def _atomic(dest: Path) -> tuple[int, Path]:
    """A temporary file beside `dest` (same folder, so the final rename is atomic)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    if hasattr(os, "fchmod"):  # Unix: mkstemp's 0600 would make a local mirror of the release unreadable to others
        os.fchmod(fd, 0o644)
    return fd, Path(tmp)


def write_zip(bundle: Path, files: list[str], top: str, dest: Path) -> None:
    """Zip `files` (bundle-relative) under the folder `top`, reproducibly: sorted, fixed times and modes."""
    names = sorted(set(files))
    folders = sorted({top} | {f"{top}/{p}" for f in names for p in _parents(f)})
    fd, tmp = _atomic(dest)
    try:
        with os.fdopen(fd, "wb") as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
            for folder in folders:
                info = zipfile.ZipInfo(folder + "/", ZIP_EPOCH)
                info.external_attr = DIR_MODE
                zf.writestr(info, b"")
            for rel in names:
                info = zipfile.ZipInfo(f"{top}/{rel}", ZIP_EPOCH)
                info.external_attr = FILE_MODE
                info.compress_type = zipfile.ZIP_DEFLATED
                with open(bundle / rel, "rb") as src, zf.open(info, "w", force_zip64=True) as out:
                    while chunk := src.read(1 << 20):
                        out.write(chunk)
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _parents(rel: str) -> list[str]:
    """ "int8/sub/x.onnx" → ["int8", "int8/sub"]: the folders a file sits in, outermost first."""
    parts = rel.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def package_bundle(bundle: Path, out: Path, url_base: str) -> CatalogueEntry:
    """Verify `bundle`, zip it into `out`, and describe the zip as a catalogue entry."""
    manifest = verify_bundle(bundle)  # every file's size and sha256: a damaged bundle is never published
    pair = manifest.pair
    bundle_id = catalogue_id(manifest)
    archive = out / archive_name(bundle_id)
    files = [*manifest.raw["files"], MANIFEST]
    write_zip(bundle, files, bundle_id, archive)
    quality, speed = quality_of(manifest.raw, manifest.model_id), speed_of(manifest.raw)
    return CatalogueEntry(
        id=bundle_id,
        name=f"{pair.source.name} → {pair.target.name} ({bundle_id})",
        source=pair.source.code,
        target=pair.target.code,
        model_id=manifest.model_id,
        url=f"{url_base.rstrip('/')}/{archive.name}",
        size=archive.stat().st_size,
        sha256=sha256_file(archive),
        license=manifest.license,
        precisions=[p for p in PRECISIONS if p in manifest.precisions],
        family=manifest.family,
        installed_size=sum((bundle / rel).stat().st_size for rel in files),
        quality=quality.to_dict() if quality is not None else None,
        speed=speed.to_dict() if speed is not None else None,
    )


def catalogue_text(entries: list[CatalogueEntry]) -> str:
    return (
        json.dumps(
            {"format": CATALOGUE_FORMAT, "bundles": [e.as_dict() for e in entries]}, ensure_ascii=False, indent=1
        )
        + "\n"
    )


def write_catalogue(entries: list[CatalogueEntry], out: Path) -> Path:
    dest = out / CATALOGUE
    fd, tmp = _atomic(dest)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(catalogue_text(entries))
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return dest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="zip model bundles for download and write catalogue.json")
    parser.add_argument("bundles", nargs="+", type=Path, help="bundle folders (each id once)")
    parser.add_argument("--out", required=True, type=Path, help="folder for the zips and catalogue.json")
    parser.add_argument("--url-base", required=True, help="where the zips will be downloadable (a release's URL)")
    args = parser.parse_args(argv)
    if not args.url_base.startswith("https://"):
        print(f"make_catalogue: --url-base must be an https:// address, not {args.url_base!r}", file=sys.stderr)
        return 2
    entries: list[CatalogueEntry] = []
    try:
        ids: dict[str, Path] = {}
        for bundle in args.bundles:  # every bundle present, one per pair, before anything is written
            if not (bundle / MANIFEST).is_file():
                print(f"make_catalogue: no model bundle at {bundle}", file=sys.stderr)
                return 1
            bundle_id = catalogue_id(load_manifest(bundle))
            if bundle_id in ids:
                print(f"make_catalogue: {ids[bundle_id]} and {bundle} are both {bundle_id}", file=sys.stderr)
                return 1
            ids[bundle_id] = bundle
        args.out.mkdir(parents=True, exist_ok=True)
        for bundle in args.bundles:
            entry = package_bundle(bundle, args.out, args.url_base)
            entries.append(entry)
            print(f"make_catalogue: {bundle} → {args.out / archive_name(entry.id)} ({entry.size / 1e6:.1f} MB)")
    except QiaoError as exc:
        print(f"make_catalogue: {exc}", file=sys.stderr)
        return 1
    print(f"make_catalogue: {write_catalogue(entries, args.out)} lists {', '.join(e.id for e in entries)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
