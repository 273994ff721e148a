"""The Bergamot (Firefox Translations) architecture the graphs are built for: a post-norm transformer encoder and
an SSRU decoder (widths, depths, tying flags as the checked model.yml gives them: the build's reader,
engine.families.bergamot.converter.reader, refuses anything else), the embedding tables the tying flags name, and
Marian's position signal.

Shared by the build (which graphs to write) and the runtime (widths, positions), so numpy only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np


class ArchitectureError(ValueError):
    """Widths or tying flags no Bergamot model can have."""


@dataclass(frozen=True)
class Architecture:
    """Widths, depths and tying flags of one Bergamot model (marian-dev src/models/transformer.h)."""

    dim: int  # dim-emb: the model width
    ffn: int  # transformer-dim-ffn
    heads: int
    encoder_layers: int
    decoder_layers: int
    source_vocab: int
    target_vocab: int
    tied_all: bool = False  # one `Wemb`: source and target embeddings and the output layer
    tied_src: bool = False  # one `Wemb` for source and target embeddings
    tied: bool = False  # the output layer is the target embedding table
    decoder_ffn: int = 0  # transformer-decoder-dim-ffn (0: the encoder's `ffn`)
    alignment_layer: int = 0  # 1-based decoder layer whose cross-attention head 0 is the soft alignment (0: last)

    def __post_init__(self) -> None:
        if self.dim % 2 or self.dim % self.heads:
            raise ArchitectureError(f"dim-emb {self.dim} must be even and a multiple of {self.heads} heads")
        if (self.tied_all or self.tied_src) and self.source_vocab != self.target_vocab:
            raise ArchitectureError("one shared Wemb needs equal source and target vocabulary sizes")
        if not 0 <= self.alignment_layer <= self.decoder_layers:
            raise ArchitectureError(f"alignment layer {self.alignment_layer} of {self.decoder_layers}")

    @property
    def head_dim(self) -> int:
        return self.dim // self.heads

    @property
    def decoder_ffn_dim(self) -> int:
        return self.decoder_ffn or self.ffn

    @property
    def alignment_from(self) -> int:
        """The 1-based decoder layer of the soft alignment (transformer-guided-alignment-layer, default last)."""
        return self.alignment_layer or self.decoder_layers

    # -- Marian's parameter names -----------------------------------------------------------------------------
    @property
    def source_table(self) -> str:
        """The encoder's embedding matrix [Vs, E] (generic.cpp: `Wemb` when tied-all or tied-src)."""
        return "Wemb" if self.tied_all or self.tied_src else "encoder_Wemb"

    @property
    def target_table(self) -> str:
        """The decoder's embedding matrix [Vt, E]."""
        return "Wemb" if self.tied_all or self.tied_src else "decoder_Wemb"

    @property
    def output_table(self) -> str:
        """The output layer's matrix, one row per target id [Vt, E] (transformer.h: tieTransposed of the
        decoder's table when tied or tied-all, else its own `decoder_ff_logit_out_Wt`)."""
        if self.tied or self.tied_all:
            return "Wemb" if self.tied_all or self.tied_src else "decoder_Wemb"
        return "decoder_ff_logit_out_Wt"

    def to_dict(self) -> dict[str, int | bool]:
        """For a manifest (and `from_dict`)."""
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Architecture:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})  # type: ignore[arg-type]


def positions(start: int, count: int, dim: int) -> np.ndarray:
    """Marian's sinusoidal position signal [count, dim] for positions start.. (node_initializers.cpp
    sinusoidalPositionEmbeddings): [sin | cos] halves, not interleaved, with the float32 arithmetic of its C++
    (log(10000)/(E/2 − 1), p·exp(−i·inc)); sin, cos and exp taken in float64 and rounded once, as the correctly
    rounded sinf/cosf/expf are."""
    half = dim // 2
    increment = np.float32(np.float32(math.log(10000.0)) / np.float32(np.float32(dim / 2) - np.float32(1.0)))
    exponent = (np.arange(half, dtype=np.float32) * -increment).astype(np.float32)
    frequency = np.exp(exponent.astype(np.float64)).astype(np.float32)
    p = np.arange(start, start + count, dtype=np.float32)[:, None]
    v = (p * frequency[None, :]).astype(np.float32).astype(np.float64)
    return np.concatenate([np.sin(v), np.cos(v)], axis=1).astype(np.float32)


def embed_scale(dim: int) -> np.float32:
    """√dim in float32 (`std::sqrt((float)dimEmb)`)."""
    return np.float32(math.sqrt(np.float32(dim)))
