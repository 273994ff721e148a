"""Build-time reading of Firefox Translations (Bergamot) models: Marian's containers, the embedded model.yml, the
checked parameter set, the graphs, and the converter behind `qiao model build` / `qiao model import` (convert.py).
Never imported by the app at run time (the frozen app excludes every family's converter/ package).

The registry hands this package out (engine.families.Family.build): `recognises(folder)` says whether a folder is a
Firefox Translations model folder, `model_id(folder)` the id its bundle will have (its name, before converting),
`build_bundle(folder, out_dir, ...)` converts it. All import the converter on first use, so importing this package
stays cheap.
"""

from __future__ import annotations

from pathlib import Path


def recognises(source: Path) -> bool:
    """Whether `source` (or the single folder inside it) is a Firefox Translations model folder (names only)."""
    from engine.families.bergamot.converter.convert import recognises as check

    return check(source)


def model_id(source: Path) -> str | None:
    """engine.families.bergamot.converter.convert.planned_model_id: the id build_bundle gives the folder's bundle."""
    from engine.families.bergamot.converter.convert import planned_model_id

    return planned_model_id(source)


def build_bundle(source: str | Path, out_dir: Path, **options: object) -> dict:
    """engine.families.bergamot.converter.convert.build_bundle: the folder → a verified bundle; returns the manifest."""
    from engine.families.bergamot.converter.convert import build_bundle as build

    return build(source, out_dir, **options)  # type: ignore[arg-type]
