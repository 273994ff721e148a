"""Model families: which ones this Qiao runs, and the one object each gives the rest of the engine.

A family is one folder, engine/families/<name>/: its package (__init__.py) offers `load_model`, `load_tokenizer`
and `generation_spec` (engine.families.base.FamilyRuntime), and its `build` subpackage the converter behind
`qiao model build` (build time only: the frozen app leaves every `build` out). Adding a family means adding its
folder and one line to `_PACKAGES`.

This module imports no family: a bundle's manifest names its family (`family`, format 5; format-4 bundles are
Marian), and the family's package is imported by name when a bundle of it is loaded, as engine.documents.registry
does with document formats. engine.bundle asks `names()` which families a manifest may name.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, cast

from engine.families.base import FamilyRuntime, GenerationSpec, Model, Tokenizer

if TYPE_CHECKING:
    from engine.bundle.manifest import Manifest
    from engine.config import EngineConfig

MARIAN = "marian"
BERGAMOT = "bergamot"

# family name (the manifest's `family`) -> its package
_PACKAGES: dict[str, str] = {
    MARIAN: "engine.families.marian",
    BERGAMOT: "engine.families.bergamot",
}


def names() -> tuple[str, ...]:
    """Every family this Qiao runs (cheap: imports nothing)."""
    return tuple(_PACKAGES)


@dataclass(frozen=True)
class Family:
    """One family: loads a bundle's model, tokenizer and generation spec; its converter on request."""

    name: str
    package: str

    def runtime(self) -> FamilyRuntime:
        """The family's package (imported now: the model's libraries load with it)."""
        return cast(FamilyRuntime, importlib.import_module(self.package))

    def load_model(self, manifest: Manifest, config: EngineConfig) -> Model:
        """The bundle's model at `config`'s precision, sessions created."""
        return self.runtime().load_model(manifest, config)

    def load_tokenizer(self, manifest: Manifest) -> Tokenizer:
        return self.runtime().load_tokenizer(manifest)

    def generation_spec(self, manifest: Manifest) -> GenerationSpec:
        return self.runtime().generation_spec(manifest)

    def build(self) -> ModuleType:
        """The family's converter package (`qiao model build`; needs the build extra)."""
        return importlib.import_module(f"{self.package}.converter")


def get(name: str) -> Family:
    """The family called `name`; KeyError (naming the known ones) when this Qiao has none of that name."""
    package = _PACKAGES.get(name)
    if package is None:
        raise KeyError(f"unknown model family {name!r}; this Qiao runs {', '.join(_PACKAGES)}")
    return Family(name, package)


def converter_for(source: Path) -> Family | None:
    """The family whose converter reads `source`, a model folder as its makers publish it (a Firefox Translations
    folder, or a folder holding one), or None. Each family's `build` package answers through its `recognises`
    (names only, nothing decoded); a family without one, or a Qiao without the build packages (the frozen app),
    recognises nothing."""
    for name, package in _PACKAGES.items():
        family = Family(name, package)
        try:
            build = family.build()
        except ImportError:
            continue
        recognises = getattr(build, "recognises", None)
        if recognises is not None and recognises(Path(source)):
            return family
    return None


def of(manifest: Manifest) -> Family:
    """The family of a loaded bundle (its manifest was checked: the name is a known one)."""
    return get(manifest.family)
