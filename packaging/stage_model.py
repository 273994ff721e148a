"""Stage the model bundles the frozen app embeds: verify each, copy it, and optionally keep INT8 only.

    python packaging/stage_model.py STAGE [--model DIR|fixture|fixture-zh-en]... [--int8-only]

writes STAGE/<name>/ for every --model (default: resources/models/opus-mt-en-zh, plus opus-mt-zh-en beside it when
it was built), which qiao.spec puts at `_internal/models/<name>` (where engine/store/locate.py and the self-test look
beside a frozen executable). <name> is `opus-mt-<source>-<target>` from the bundle's own manifest (the catalogue id
of the pair's bundle), so two bundles of the same pair are refused rather than one silently replacing the other.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.bundle.manifest import MANIFEST, dumps, load_manifest, verify_bundle  # noqa: E402
from engine.errors import QiaoError  # noqa: E402
from engine.languages import LanguagePair  # noqa: E402

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
    dest = stage_dir / bundle_name(manifest.pair)
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
    names: dict[str, Path] = {}
    for source in sources:
        name = bundle_name(load_manifest(source).pair)
        if name in names:
            raise SystemExit(f"stage_model: {names[name]} and {source} are both {name}: embed one bundle per pair")
        names[name] = source
    return [stage(source, stage_dir, int8_only) for source in sources]


def _missing(source: Path) -> str:
    return (
        f"stage_model: no model bundle at {source}\n"
        "  build it: qiao model build --from Helsinki-NLP/opus-mt-en-zh --out resources/models/opus-mt-en-zh\n"
        "  (zh→en: --from Helsinki-NLP/opus-mt-zh-en --out resources/models/opus-mt-zh-en)\n"
        "  or freeze with the test model: packaging/build.sh --model fixture"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="verify and stage the model bundles to embed in the frozen app")
    parser.add_argument("stage", type=Path, help="staging folder (gets one opus-mt-<source>-<target>/ per bundle)")
    parser.add_argument(
        "--model",
        dest="sources",
        action="append",
        help=f"bundle folder, or {' / '.join(FIXTURES)} (repeat for several; default: {DEFAULT}, and "
        f"{', '.join(str(p) for p in OPTIONAL)} when built)",
    )
    parser.add_argument("--int8-only", action="store_true", help="leave the FP32 models out")
    args = parser.parse_args(argv)
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
        size = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
        precisions = ", ".join(json.loads((dest / MANIFEST).read_text(encoding="utf-8"))["precisions"])
        print(f"stage_model: {source} → {dest} ({precisions}; {size / 1e6:.1f} MB), verified")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
