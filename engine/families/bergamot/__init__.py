"""The Bergamot family (Firefox Translations models): a transformer encoder with an SSRU decoder, int8 weights with
activation alphas and a lexical shortlist. Runtime: model.py (ONNX Runtime), shortlist.py, tokenizer.py, loading.py
(a bundle's files → the model); generation.py (Marian's start, end and length rules); under converter/, the converter
(reading Firefox's published folders, writing the graphs and the bundle).

The registry (engine.families) imports this package when it loads a Bergamot bundle; the model and tokenizer modules
are imported on first use, so importing the package (or its `build` subpackage) stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from engine.families.bergamot.generation import generation_spec

if TYPE_CHECKING:
    from engine.bundle.manifest import Manifest
    from engine.config import EngineConfig
    from engine.families.base import Model, Tokenizer

__all__ = ["generation_spec", "load_model", "load_tokenizer"]


def load_model(manifest: Manifest, config: EngineConfig) -> Model:
    """The bundle's two graphs at `config`'s precision, its shortlist applied per batch
    (engine.families.bergamot.model.OnnxBergamot)."""
    from engine.families.bergamot.loading import load_model as load

    return cast("Model", load(manifest, config))


def load_tokenizer(manifest: Manifest) -> Tokenizer:
    """The bundle's SentencePiece vocabularies (engine.families.bergamot.tokenizer.BergamotTokenizer), read now."""
    from engine.families.bergamot.tokenizer import BergamotTokenizer

    return cast("Tokenizer", BergamotTokenizer.from_manifest(manifest))
