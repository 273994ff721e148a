"""Stage the model bundle the frozen app embeds: verify it, copy it, and optionally keep INT8 only.

    python packaging/stage_model.py STAGE [--model DIR|fixture] [--int8-only]

writes STAGE/opus-mt-en-zh/, which qiao.spec puts at `_internal/models/opus-mt-en-zh` (where engine/locate.py looks
beside a frozen executable). The source is checked against its manifest first (every sha256), so a damaged bundle
never ships. `--int8-only` drops fp32/ and rewrites the manifest consistently (its "precisions" and "files" then
describe INT8 only, and its seal is recomputed), so `qiao model verify`, the self-test and the Translator all accept
the result; it is verified again after staging.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.errors import QiaoError  # noqa: E402
from engine.manifest import MANIFEST, dumps, verify_bundle  # noqa: E402
from engine.paths import BUNDLE_NAME  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "tiny_marian" / "bundle"
DEFAULT = ROOT / "resources" / "models" / BUNDLE_NAME


def resolve_source(source: str | None) -> Path:
    """The bundle folder for --model: a path, "fixture" (the committed test model), or the default location."""
    if source in (None, ""):
        return DEFAULT
    return FIXTURE if source == "fixture" else Path(source)


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
    """Copy a verified bundle to stage_dir/opus-mt-en-zh (INT8 only if asked); returns that folder."""
    manifest = verify_bundle(source)  # every file's size and sha256
    dest = stage_dir / BUNDLE_NAME
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="verify and stage the model bundle to embed in the frozen app")
    parser.add_argument("stage", type=Path, help="staging folder (gets opus-mt-en-zh/)")
    parser.add_argument("--model", dest="source", help=f"bundle folder, or 'fixture' (default: {DEFAULT})")
    parser.add_argument("--int8-only", action="store_true", help="leave the FP32 model out")
    args = parser.parse_args(argv)
    source = resolve_source(args.source)
    if not (source / MANIFEST).is_file():
        print(f"stage_model: no model bundle at {source}", file=sys.stderr)
        print(
            "  build it: qiao model build --from Helsinki-NLP/opus-mt-en-zh --out resources/models/opus-mt-en-zh\n"
            "  or freeze with the test model: packaging/build.sh --model fixture",
            file=sys.stderr,
        )
        return 1
    try:
        dest = stage(source, args.stage, args.int8_only)
    except QiaoError as exc:
        print(f"stage_model: {exc}", file=sys.stderr)
        return 1
    size = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
    precisions = ", ".join(json.loads((dest / MANIFEST).read_text(encoding="utf-8"))["precisions"])
    print(f"stage_model: {source} → {dest} ({precisions}; {size / 1e6:.1f} MB), verified")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
