"""The MarianMT family (opus-mt): runtime model, tokenizer and generation spec; under converter/, the converter.

The registry (engine.families) imports this package when it loads a Marian bundle; the model and tokenizer
modules are imported on first use, so importing the package (or its `build` subpackage) stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from engine.families.marian.generation import generation_spec

if TYPE_CHECKING:
    from engine.bundle.manifest import Manifest
    from engine.config import EngineConfig
    from engine.families.base import Model, Tokenizer

__all__ = ["generation_spec", "load_model", "load_tokenizer"]


def load_model(manifest: Manifest, config: EngineConfig) -> Model:
    """The bundle's ONNX graphs at `config`'s precision (engine.families.marian.model.OnnxMarian)."""
    from engine.families.marian.model import OnnxMarian

    # its start() takes the EncoderState its own encode() made: the searches never mix two models' states
    return cast("Model", OnnxMarian(manifest, config))


def load_tokenizer(manifest: Manifest) -> Tokenizer:
    """The bundle's tokenizer (engine.families.marian.tokenizer.MarianTokenizer), files not read yet."""
    from engine.families.marian.tokenizer import MarianTokenizer

    return MarianTokenizer.from_manifest(manifest)
