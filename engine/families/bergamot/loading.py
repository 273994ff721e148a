"""A Bergamot bundle's files → its model at one precision: the architecture from the manifest, the precision's two
graphs, the lexical shortlist (when the bundle has one) and whether the vocabulary is shared (Marian then adds the
source ids to each batch's shortlist). Every file was verified against the manifest before (engine.bundle), so the
shortlist's own checksum is not recomputed; its bounds are still checked."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.bundle.load_guard import LoadFailure, opening
from engine.errors import QiaoError
from engine.families.bergamot import shortlist as shortlist_io
from engine.families.bergamot.architecture import Architecture
from engine.families.bergamot.model import DEFAULT_MAX_POSITIONS, OnnxBergamot

if TYPE_CHECKING:
    from engine.bundle.manifest import Manifest
    from engine.config import EngineConfig


def architecture(manifest: Manifest) -> Architecture:
    """The widths, depths and tying flags the bundle's graphs were built for."""
    return Architecture.from_dict(manifest.raw["architecture"])


def load_shortlist(manifest: Manifest, arch: Architecture) -> shortlist_io.Shortlist | None:
    """The bundle's shortlist (None without one); a file out of bounds for the model is refused while loading."""
    entry = manifest.raw.get("shortlist")
    if entry is None:
        return None
    rel = entry["file"]
    with opening(rel):
        short = shortlist_io.parse(manifest.path(rel).read_bytes(), target_vocab_size=arch.target_vocab, trusted=True)
        if short.source_vocab_size != arch.source_vocab:
            raise shortlist_io.ShortlistError(
                f"the shortlist covers {short.source_vocab_size} source ids, the model has {arch.source_vocab}"
            )
    return short


def load_model(manifest: Manifest, config: EngineConfig) -> OnnxBergamot:
    """The model at `config`'s precision, threads and provider."""
    arch = architecture(manifest)
    spec = manifest.precisions[config.precision]
    short = load_shortlist(manifest, arch)
    positions = int(manifest.config.get("max_position_embeddings", DEFAULT_MAX_POSITIONS))
    encoder, decoder = manifest.path(spec["encoder"]), manifest.path(spec["decoder"])
    try:
        return OnnxBergamot(
            encoder,
            decoder,
            arch,
            config.precision,
            shortlist=short,
            shared_vocab=bool(manifest.tokenizer["shared"]),
            threads=config.threads,
            providers=config.ort_providers,
            max_positions=positions,
        )
    except (QiaoError, MemoryError):
        raise
    except Exception as exc:  # ONNX Runtime names the file it failed to load; the decoder is created second
        raise LoadFailure(spec["encoder"] if str(encoder) in str(exc) else spec["decoder"], exc) from exc
