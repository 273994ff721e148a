"""One precision of a bundle loaded into ONNX Runtime: encoder, decoder step, and the embedding tables (one shared
table, or with separate vocabularies the encoder's own `source_embedding` beside the decoder's `embedding`)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import onnxruntime as ort

from engine.bundle.load_guard import opening
from engine.bundle.manifest import Manifest
from engine.config import EngineConfig
from engine.families.marian.head_cache import decoder_session
from engine.runtime.embedding import EmbeddingTable
from engine.runtime.scorer import TopKScorer
from engine.runtime.sessions import SHRINK_ARENA, create_session, default_threads


def sinusoidal_positions(n_pos: int, dim: int) -> np.ndarray:
    """Marian's static position table, computed exactly as transformers does (float64, then float32)."""
    pos = np.arange(n_pos, dtype=np.float64)[:, None]
    j = np.arange(dim)
    position_enc = pos / np.power(10000, 2 * (j // 2) / dim)
    out = np.empty((n_pos, dim), dtype=np.float32)
    sentinel = dim // 2 if dim % 2 == 0 else dim // 2 + 1
    out[:, :sentinel] = np.sin(position_enc[:, 0::2])
    out[:, sentinel:] = np.cos(position_enc[:, 1::2])
    return out


@dataclass
class EncoderState:
    """Per-batch encoder results the decoder reads at every step."""

    cross: list[np.ndarray]  # cross_k.0, cross_v.0, ... [B,H,S,Dh]
    mask: np.ndarray  # [B,S] int64

    def repeated(self, n: int) -> EncoderState:
        """Each row n times in a row: one per decoder row of a sentence (beams, candidates)."""
        return EncoderState(cross=[np.repeat(c, n, axis=0) for c in self.cross], mask=np.repeat(self.mask, n, axis=0))

    def take(self, rows: Sequence[int]) -> EncoderState:
        """Only `rows`, in that order (a search that runs some sentences on their own)."""
        index = np.asarray(rows, dtype=np.int64)  # a tuple would index dimensions, not rows
        return EncoderState(cross=[c[index] for c in self.cross], mask=self.mask[index])

    def allowing(self, ids: Iterable[int]) -> EncoderState:
        """The state itself: a Marian decoder scores every target id."""
        return self


class OnnxMarian:
    """Runs the bundle's graphs for one precision. Sessions are created once and kept."""

    def __init__(self, manifest: Manifest, config: EngineConfig | str, threads: int | None = None) -> None:
        """`config`: the engine's (precision, threads, provider); a precision name with `threads` also works (tools
        and tests that load one precision by hand)."""
        if isinstance(config, str):
            config = EngineConfig(precision=config, threads=threads)
        elif threads is not None:
            raise TypeError("give threads in the EngineConfig, not beside it")
        precision = config.precision
        self.config = config
        self.precision = precision
        spec = manifest.precisions[precision]
        cfg = manifest.config
        self.d_model = int(cfg["d_model"])
        self.layers = int(cfg["decoder_layers"])
        self.heads = int(cfg["decoder_attention_heads"])
        self.max_positions = int(cfg["max_position_embeddings"])
        self.embed_scale = float(cfg.get("embed_scale", math.sqrt(self.d_model)))
        self.threads = config.threads or default_threads()
        providers = config.ort_providers
        graphs = manifest.graphs
        emb = spec["embedding"]
        with opening(spec["encoder"]):
            self.encoder = create_session(manifest.path(spec["encoder"]), self.threads, providers=providers)
            _check_io(self.encoder, graphs["encoder"], emb["shape"])
        with opening(spec["decoder"]):
            # the INT8 head may be derived from embedding.bin into the user's cache (engine.families.marian.head_cache)
            self.decoder, self._derived_head = decoder_session(manifest, precision, self.threads, providers)
            _check_io(self.decoder, graphs["decoder"], emb["shape"])
        self._enc_out = list(graphs["encoder"]["outputs"])
        dims = {o.name: o.shape for o in self.encoder.get_outputs()}
        self._enc_dims = [dims[name] for name in self._enc_out]
        self._dec_in = list(graphs["decoder"]["inputs"])
        self._dec_out = list(graphs["decoder"]["outputs"])
        self._past_names = [n for n in self._dec_in if n.startswith("past_") and n != "past_length"]
        self._present_names = [n for n in self._dec_out if n.startswith("present_")]
        self._cross_names = [n for n in self._dec_in if n.startswith("cross_")]
        # bundles built before the decoder folded beams read one cross K/V row per decoder row
        self.beams_share_cross = bool(graphs["decoder"].get("beams_share_cross"))
        with opening(emb["file"]):
            self._table = EmbeddingTable(manifest.path(emb["file"]), emb)
        self._source_table = self._table  # one table for both sides unless the vocabularies are separate
        source = spec.get("source_embedding")
        if source is not None:
            with opening(source["file"]):
                self._source_table = EmbeddingTable(manifest.path(source["file"]), source)
        self.vocab_size = self._table.vocab  # the target's: logits and the scorer
        self.positions = sinusoidal_positions(self.max_positions, self.d_model)
        self._scorers: dict[tuple, TopKScorer] = {}
        self._scorer_spec = graphs.get("scorer")
        self._bundle = manifest.bundle_dir

    def scorer(self, params) -> TopKScorer | None:
        """The bundle's beam scorer, when it computes what these generation settings ask for (else None)."""
        spec = self._scorer_spec
        if spec is None or bool(spec.get("renormalize")) != bool(params.renormalize):
            return None
        banned = tuple(w[0] for w in params.bad_words if len(w) == 1)
        if banned not in self._scorers:
            with opening(spec["file"]):
                path = self._bundle / spec["file"]
                config = self.config.replace(threads=self.threads)
                scorer = TopKScorer(path, self.vocab_size, list(banned), config=config)
                _check_io(scorer._session, spec, [self.vocab_size, self.d_model])
            self._scorers[banned] = scorer
        return self._scorers[banned]

    # -- embeddings -------------------------------------------------------------------------------------------
    def embed(self, ids: np.ndarray, start: int = 0, source: bool = False) -> np.ndarray:
        """Token embeddings × embed_scale + positions [start, start+T), like Marian's embedding layers; `source`:
        the encoder's table (a different one only with separate vocabularies)."""
        rows = (self._source_table if source else self._table).rows(ids.reshape(-1))
        emb = rows.reshape(*ids.shape, self.d_model) * np.float32(self.embed_scale)
        t = ids.shape[-1]
        return emb + self.positions[start : start + t]

    # -- graphs -----------------------------------------------------------------------------------------------
    def encode(self, ids: np.ndarray, mask: np.ndarray) -> EncoderState:
        """The cross K/V of every decoder layer for `ids` [B, S].

        Activations scale with batch × length, so the arena shrinks after every batch's encoder run. The outputs
        are written into arrays of our own (IOBinding): returned by `run`, they were views of ORT's arena, which
        kept the arena's region from being handed back while the batch decoded and left it reserved between
        requests."""
        embeds = self.embed(ids, source=True)
        shapes = [_cross_shape(dims, ids.shape) for dims in self._enc_dims]
        if any(shape is None for shape in shapes):  # a graph whose outputs are not [B, heads, S, head width]
            outputs = self.encoder.run(self._enc_out, {"inputs_embeds": embeds, "attention_mask": mask}, SHRINK_ARENA)
            return EncoderState(cross=outputs, mask=mask)
        io = self.encoder.io_binding()
        io.bind_cpu_input("inputs_embeds", embeds)
        io.bind_cpu_input("attention_mask", mask)
        cross = [np.empty(shape, dtype=np.float32) for shape in shapes if shape is not None]
        for name, array in zip(self._enc_out, cross):
            io.bind_ortvalue_output(name, ort.OrtValue.ortvalue_from_numpy(array))
        self.encoder.run_with_iobinding(io, SHRINK_ARENA)
        return EncoderState(cross=cross, mask=mask)

    def start(self, enc: EncoderState, max_len: int, beams: int = 1) -> DecoderRun:
        """A decoding run of `beams` rows per sentence of `enc` (each sentence's rows consecutive), with a
        self-attention cache for `max_len` positions. The sentence's rows share its encoder state where the
        decoder graph can (`beams_share_cross`); for older bundles it is repeated per row."""
        if beams > 1 and not self.beams_share_cross:
            enc, beams = enc.repeated(beams), 1
        return DecoderRun(self, enc, max_len, beams)


def _cross_shape(dims: list, batch: tuple[int, ...]) -> tuple[int, int, int, int] | None:
    """An encoder output's shape for a batch of `batch` = (B, S) ids, when the graph declares it [B, heads, S,
    width] with fixed heads and width (the converter's cross K/V); else None."""
    if len(dims) != 4 or not isinstance(dims[1], int) or not isinstance(dims[3], int):
        return None
    if isinstance(dims[0], int) or isinstance(dims[2], int):
        return None
    return (batch[0], dims[1], batch[1], dims[3])


def _check_io(session: ort.InferenceSession, io: dict, shape: list[int]) -> None:
    """The graph must have the inputs and outputs the manifest names, and its fixed vocabulary and model widths
    must be the manifest's (a mismatch would otherwise surface as a raw ORT error, or as silently empty output)."""
    vocab, d_model = shape
    inputs = [i.name for i in session.get_inputs()]
    outputs = [o.name for o in session.get_outputs()]
    if sorted(inputs) != sorted(io["inputs"]) or sorted(outputs) != sorted(io["outputs"]):
        raise ValueError(
            f"the graph's inputs/outputs ({', '.join(inputs)} → {', '.join(outputs)}) are not the manifest's"
        )
    for arg in (*session.get_inputs(), *session.get_outputs()):
        last = arg.shape[-1] if arg.shape else None
        want = {"logits": vocab, "mask": vocab, "inputs_embeds": d_model}.get(arg.name)
        if want is not None and isinstance(last, int) and last != want:
            raise ValueError(f"{arg.name} is {last} wide in the graph, {want} in the manifest")


class DecoderRun:
    """One batch being decoded: preallocated cache and logits buffers bound to the decoder once (IOBinding).

    Each step writes one more cache position in place and fills the same logits array, so a step allocates and
    copies nothing but the token embeddings. `logits` returned by `step` is overwritten by the next step.
    """

    def __init__(self, model: OnnxMarian, enc: EncoderState, max_len: int, group: int = 1) -> None:
        """`group` consecutive rows decode each sentence of `enc` (its beams; the graph shares its cross K/V)."""
        self.model = model
        self.enc = enc
        self.group = group
        dh = model.d_model // model.heads
        self.cache = [np.zeros((self.rows, model.heads, max_len, dh), dtype=np.float32) for _ in model._past_names]
        self.length = 0
        # the length each restore to fewer positions (and each select: 0) left, in order: a snapshot taken after
        # the first `n` of them is still valid while none of the later ones went below its length
        self._rewinds: list[int] = []
        self._scratch: np.ndarray | None = None  # beam search's reorder buffer, made on first use
        self._owns_enc = False  # enc is the caller's (see select)
        self._bind()

    @property
    def rows(self) -> int:
        """Decoder rows: `group` per sentence of the encoder state."""
        return self.enc.mask.shape[0] * self.group

    def _bind(self) -> None:
        model, ort_value = self.model, ort.OrtValue.ortvalue_from_numpy
        self.logits = np.empty((self.rows, model.vocab_size), dtype=np.float32)
        io = model.decoder.io_binding()
        self._keep = [self.enc.mask, *self.enc.cross]  # bound memory must outlive the binding
        io.bind_ortvalue_input("encoder_attention_mask", ort_value(self.enc.mask))
        for name, array in zip(model._cross_names, self.enc.cross):
            io.bind_ortvalue_input(name, ort_value(array))
        for past, present, array in zip(model._past_names, model._present_names, self.cache):
            value = ort_value(array)
            io.bind_ortvalue_input(past, value)
            io.bind_ortvalue_output(present, value)
        io.bind_ortvalue_output("logits", ort_value(self.logits))
        self.io = io

    def step(self, tokens: np.ndarray) -> np.ndarray:
        """Decode tokens [rows] at the next position; returns logits [rows, V] (valid until the next step)."""
        model, io = self.model, self.io
        embeds = model.embed(tokens[:, None], self.length)
        length = np.array([self.length], dtype=np.int32)
        io.bind_cpu_input("inputs_embeds", embeds)
        io.bind_cpu_input("past_length", length)
        # The first step of a batch releases what earlier (possibly larger) batches left in the arena.
        model.decoder.run_with_iobinding(io, SHRINK_ARENA if self.length == 0 else None)
        self.length += 1
        return self.logits

    def reorder(self, index: np.ndarray, shared: np.ndarray | None = None) -> None:
        """Beam search: row r continues the history of row index[r] (only the filled positions are moved).

        `shared[r]` (optional) counts the leading positions row r's cache already holds for its new history: the
        positions of a common token prefix. Rows of a batch are decoded together, each row's computation on its
        own (the dynamic quantisation's scale is per step, shared by every row), so equal token prefixes leave
        bitwise equal caches and only the positions after them move: two thirds of the copying, batch 8 × beam 4
        with the random full-size model (tests/engine/test_reorder_shared.py checks the equality at both
        precisions).

        The rows are gathered into one contiguous scratch buffer kept for the whole run. A temporary per layer and
        step would be a fresh mapping above the allocator's mmap threshold (engine.runtime.native_memory), and mapping,
        faulting in and unmapping it in this multi-threaded process cost more than the copy itself: 7.8 ms of a
        27 ms step for 8 sentences × 4 beams, 1.6 ms with this buffer."""
        n = self.length
        starts = shared.tolist() if shared is not None else [0] * len(index)
        pairs = enumerate(zip(index.tolist(), starts))
        moves = [(row, parent, start) for row, (parent, start) in pairs if row != parent and start < n]
        if not moves:
            return
        if self._scratch is None:
            self._scratch = np.empty(self.cache[0].size, dtype=np.float32)
        rows, heads, _, dh = self.cache[0].shape
        gathered = self._scratch[: rows * heads * n * dh].reshape(rows, heads, n, dh)
        for array in self.cache:
            filled = array[:, :, :n]
            # slice copies, no temporaries (fancy indexing and np.take make them, and np.take into a buffer was
            # slower than these copies); rows that keep their own history stay where they are
            for row, parent, start in moves:
                gathered[row, :, start:] = filled[parent, :, start:]
            for row, _, start in moves:
                filled[row, :, start:] = gathered[row, :, start:]

    def snapshot(self) -> CacheSnapshot:
        """The first `length` positions of this run's cache, by reference: nothing is copied (base.DecoderRun)."""
        return CacheSnapshot(self, self.length, len(self._rewinds))

    def restore(self, snapshot: CacheSnapshot) -> None:
        """Continue from `snapshot` (base.DecoderRun): one of this run's only moves `length` back; another run's
        filled positions are copied into every row (from its one row, or row for row)."""
        source, n = snapshot.run, snapshot.length
        if min(source._rewinds[snapshot.since :], default=n) < n:
            raise ValueError("the snapshot's positions were decoded again or moved since it was taken")
        if source is self:
            if n > self.length:
                raise ValueError(f"a snapshot of {n} positions cannot restore a run at {self.length}")
            if n < self.length:
                self._rewinds.append(n)
            self.length = n
            return
        capacity = self.cache[0].shape[2]
        if n > capacity or source.rows not in (1, self.rows):
            raise ValueError(f"a snapshot of {source.rows} rows × {n} positions does not fit {self.rows} × {capacity}")
        for dst, src in zip(self.cache, source.cache):
            dst[:, :, :n] = src[:, :, :n]  # one row broadcasts to every row
        self._rewinds.append(0)  # earlier snapshots of this run are no longer its positions
        self.length = n

    def select(self, rows: np.ndarray) -> None:
        """Keep only `rows` (ascending; finished sentences leave the batch) and rebind.

        The cache is compacted in place, its filled positions only, and the first rows bound as a view: copying it
        into new arrays would hold two caches at once (the process's peak memory). The encoder state is the
        caller's until the first select, which copies the kept rows (the caller may decode other runs over it);
        later selects compact that copy in place. The reorder buffer, sized for the first rows, stays."""
        n, moves = self.length, [(new, int(old)) for new, old in enumerate(rows) if new != old]
        sentences = _sentences(rows, self.group)
        if self._owns_enc:
            kept = [(new, int(old)) for new, old in enumerate(sentences) if new != old]
            cross = [_compact(c, kept, len(sentences)) for c in self.enc.cross]
        else:
            cross = [c[sentences] for c in self.enc.cross]
            self._owns_enc = True
        self.enc = EncoderState(cross=cross, mask=self.enc.mask[sentences])
        for array in self.cache:
            for new, old in moves:  # new < old: a row is read before anything overwrites it
                array[new, :, :n] = array[old, :, :n]
        self.cache = [array[: len(rows)] for array in self.cache]
        self._rewinds.append(0)  # rows moved: earlier snapshots no longer hold their rows
        self._bind()


@dataclass(frozen=True)
class CacheSnapshot:
    """A Marian run's first `length` cache positions (read from `run` when restored); `since`: how many of the
    run's rewinds had happened when it was taken."""

    run: DecoderRun
    length: int
    since: int


def _sentences(rows: np.ndarray, group: int) -> np.ndarray:
    """The sentences whose rows `rows` are: ascending (compaction moves rows down), each sentence's `group` rows
    kept together or not at all."""
    sentences = rows[::group] // group
    whole = len(rows) % group == 0 and np.array_equal(rows, (sentences[:, None] * group + np.arange(group)).ravel())
    if not whole or np.any(np.diff(rows) <= 0):
        raise ValueError(f"rows {rows.tolist()} are not ascending whole sentences of {group} rows")
    return sentences


def _compact(array: np.ndarray, moves: list[tuple[int, int]], rows: int) -> np.ndarray:
    """`array`'s rows moved down in place (each new < old), as a view of the first `rows`."""
    for new, old in moves:
        array[new] = array[old]
    return array[:rows]
