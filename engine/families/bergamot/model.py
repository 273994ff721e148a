"""One precision of a Bergamot model loaded into ONNX Runtime: the encoder and the SSRU decoder step
(engine.families.bergamot.converter.graphs writes them), the batch's lexical shortlist, and what the searches drive.

The searches (engine.search) see the same surface as the Marian family's: `encode`, `start` → a run with
`step(tokens)` → logits [rows, V], `reorder` and `select`. Bergamot's rules live here:

* The first step feeds a zero embedding (no start token: the searches' start id is ignored there), later steps
  the previous output id; the position is the step index.
* The decoder state is each SSRU layer's cell [rows, E], carried from step to step (no attention cache): beams
  reorder it by row, finished sentences leave it by row.
* With a shortlist, the graph scores only the batch's allowed ids (Marian's rules: engine.families.bergamot
  .shortlist, the union over the whole batch), whose output rows and bias a run gathers once
  (engine.families.bergamot.output_table); `step` spreads them over a full-width row whose other entries are
  −inf, so a log-softmax over the row is the log-softmax over the shortlist (as Marian scores) and argmax and
  top-k give vocabulary ids. `run.shortlist_logits` [rows, K] and `run.shortlist` are the compact form.
* `<unk>` is never emitted: its logit is −inf (Marian without `allow-unk`), in the shortlist or not.
* `run.alignment` [rows, S]: head 0 of the alignment layer's (the last by default) cross-attention at the last
  step (Marian's soft alignment).
* `adopt(other)` continues another run's state on every row (a shared start decoded once); an SSRU state cannot
  be rewound to an earlier position (there is no per-position cache to cut), so a caller that rewinds
  (`length = n`) must decode again from the start.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import onnxruntime as ort

from engine.families.bergamot import output_table, prepacked_output
from engine.families.bergamot.architecture import Architecture, embed_scale, positions
from engine.runtime.bound_step import Binder
from engine.runtime.native_memory import HeapPolicy
from engine.runtime.sessions import SHRINK_ARENA, default_threads, inference_session, session_options

UNK_ID = 1
MASK_FACTOR = np.float32(-99999999.0)  # Marian's additive mask on padding (transformer.h transposedLogMask)
DEFAULT_MAX_POSITIONS = 1024  # positions have no trained limit (sinusoidal); this bounds a request's length


class ShortlistRule(Protocol):
    """engine.families.bergamot.shortlist.Shortlist: the target ids a batch of source rows may emit."""

    def allowed(self, source_ids: np.ndarray, target_vocab_size: int, shared: bool) -> np.ndarray: ...


@dataclass
class BergamotEncoderState:
    """Per-batch encoder results the decoder reads at every step, and the batch's shortlist."""

    cross: list[np.ndarray]  # cross_k.0 [B,H,Dh,S], cross_v.0 [B,H,S,Dh], ...
    mask: np.ndarray  # [B,S] int64, 1 on tokens
    ids: np.ndarray  # [B,S] the source ids (a row subset's shortlist is computed again from them)
    shortlist: np.ndarray | None  # sorted target ids the batch may emit (None: every id)
    # the model's rule (OnnxBergamot.shortlist_for): a batch of other rows gets its own shortlist
    shortlist_of: Callable[[np.ndarray], np.ndarray | None] | None = None
    allowed: np.ndarray | None = None  # target ids added to every shortlist of these rows (see `allowing`)
    # read by one run only (`sole`): that run compacts the arrays in place as sentences finish, never copying them
    sole_reader: bool = False

    @property
    def mask_bias(self) -> np.ndarray:
        """Marian's additive mask [B,S]: 0 on tokens, −99999999 on padding."""
        return ((1 - self.mask).astype(np.float32) * MASK_FACTOR).astype(np.float32)

    def repeated(self, n: int) -> BergamotEncoderState:
        """Each row n times in a row (the shortlist, a union over the same ids, stays)."""
        return BergamotEncoderState(
            cross=[np.repeat(c, n, axis=0) for c in self.cross],
            mask=np.repeat(self.mask, n, axis=0),
            ids=np.repeat(self.ids, n, axis=0),
            shortlist=self.shortlist,
            shortlist_of=self.shortlist_of,
            allowed=self.allowed,
        )

    def sole(self) -> BergamotEncoderState:
        """This state, for a caller that hands it to one run and reads it no more (engine.search.batch: the search
        that encoded it): the run's `select` may then overwrite it (the first select otherwise copies every layer's
        K/V, ~1 ms of a five-sentence paragraph at the full-shape model)."""
        return BergamotEncoderState(
            self.cross, self.mask, self.ids, self.shortlist, self.shortlist_of, self.allowed, sole_reader=True
        )

    def take(self, rows: Sequence[int] | np.ndarray) -> BergamotEncoderState:
        """Only `rows`, in that order: a batch of its own, with its own shortlist (Marian's is per batch)."""
        return self._rows(np.asarray(rows, dtype=np.int64), keep_shortlist=False)

    def _rows(self, index: np.ndarray, keep_shortlist: bool) -> BergamotEncoderState:
        mask, ids = self.mask[index], self.ids[index]
        shortlist = self.shortlist
        if not keep_shortlist and self.shortlist_of is not None:
            shortlist = _union(self.shortlist_of(ids * mask), self.allowed)
        cross = [np.ascontiguousarray(c[index]) for c in self.cross]
        return BergamotEncoderState(cross, mask, ids, shortlist, self.shortlist_of, self.allowed)

    def allowing(self, ids: Iterable[int]) -> BergamotEncoderState:
        """These rows with the target `ids` added to their shortlist, now and in every row subset's (a forced
        prefix or glossary terms the lexicon does not offer would otherwise score −inf); without one, itself."""
        extra = np.unique(np.fromiter((int(i) for i in ids), dtype=np.int64))
        if self.shortlist is None or np.isin(extra, self.shortlist).all():
            return self
        allowed = extra if self.allowed is None else np.union1d(self.allowed, extra)
        shortlist = _union(self.shortlist, allowed)
        return BergamotEncoderState(
            self.cross, self.mask, self.ids, shortlist, self.shortlist_of, allowed, sole_reader=self.sole_reader
        )


class OnnxBergamot:
    """Runs a Bergamot model's two graphs at one precision. Sessions are created once and kept."""

    # its per-batch buffers (a few MB) reuse the heap pages the last request freed: engine.runtime.native_memory
    heap_policy = HeapPolicy(mmap_threshold=8 << 20, retain=32 << 20)

    def __init__(
        self,
        encoder: Path | bytes,
        decoder: Path | bytes,
        arch: Architecture,
        precision: str,
        *,
        shortlist: ShortlistRule | None = None,
        shared_vocab: bool = False,
        threads: int | None = None,
        providers: list[str] | None = None,
        max_positions: int = DEFAULT_MAX_POSITIONS,
    ) -> None:
        """`shortlist`: the model's lexical shortlist (the decoder graph must then take a `shortlist` input);
        `shared_vocab`: source and target are one vocabulary (one file), so the source ids join the shortlist."""
        self.arch = arch
        self._precision = precision
        self.threads = threads or default_threads()
        self.encoder = inference_session(encoder, session_options(self.threads), providers)
        self.decoder = inference_session(decoder, _step_options(self.threads), providers)
        self.binder = Binder(self.decoder)  # the step's buffers bound through ORT's native objects
        self._shortlist_rule = shortlist
        self.shared_vocab = shared_vocab
        self._max_positions = max_positions
        self._dec_inputs = {i.name for i in self.decoder.get_inputs()}
        self.shortlisted = "output_w" in self._dec_inputs
        if self.shortlisted != (shortlist is not None):
            have = "takes" if self.shortlisted else "has no"
            raise ValueError(f"the decoder graph {have} a shortlist input but the model has {shortlist is not None}")
        # the output rows a batch's shortlist selects (the graph takes them as inputs, gathered once per batch)
        self.output: output_table.OutputTable | None = None
        if self.shortlisted:
            self.output = output_table.read(decoder, self.decoder.get_modelmeta().custom_metadata_map)
        # INT8 graphs that hand over the output product's inputs: a long batch over a wide shortlist packs its
        # columns once (engine.families.bergamot.prepacked_output), the step multiplying a few dummy columns instead
        handed = {o.name for o in self.decoder.get_outputs()} >= set(prepacked_output.OUTPUTS)
        self.prepackable = self.output is not None and self.output.scale is not None and handed
        width = prepacked_output.DUMMY_WIDTH
        self._dummy_output = (np.zeros((arch.dim, width), np.int8), np.zeros(width, np.float32))
        self._enc_out = [o.name for o in self.encoder.get_outputs()]
        layers = arch.decoder_layers
        self._cross_names = [f"cross_{kind}.{i}" for i in range(layers) for kind in ("k", "v")]
        self._state_in = [f"state.{i}" for i in range(layers)]
        self._state_out = [f"next_state.{i}" for i in range(layers)]
        if self._enc_out != self._cross_names:
            raise ValueError(f"the encoder graph's outputs {self._enc_out} are not {self._cross_names}")
        self.embed_scale = np.array([embed_scale(arch.dim)], dtype=np.float32)
        self._positions = positions(0, 256, arch.dim)

    # -- what the pipeline reads ----------------------------------------------------------------------------------
    @property
    def precision(self) -> str:
        return self._precision

    @property
    def max_positions(self) -> int:
        return self._max_positions

    @property
    def vocab_size(self) -> int:
        """The target vocabulary's size: the width of `step`'s logits."""
        return self.arch.target_vocab

    def scorer(self, params) -> None:
        """No bundled top-k scorer: beam search takes the full-vocabulary path over the −inf-padded rows."""
        return None

    def position_rows(self, start: int, count: int) -> np.ndarray:
        """The sinusoidal signal of positions [start, start+count), extended on demand."""
        end = start + count
        if end > len(self._positions):
            self._positions = positions(0, max(end, 2 * len(self._positions)), self.arch.dim)
        return self._positions[start:end]

    # -- graphs -----------------------------------------------------------------------------------------------
    def shortlist_for(self, ids: np.ndarray) -> np.ndarray | None:
        """The sorted target ids a batch of source rows may emit (padding is </s> = 0, as Marian pads)."""
        if self._shortlist_rule is None:
            return None
        return np.asarray(self._shortlist_rule.allowed(ids, self.arch.target_vocab, self.shared_vocab), dtype=np.int64)

    def encode(self, ids: np.ndarray, mask: np.ndarray) -> BergamotEncoderState:
        """Source rows [B,S] (each ending in </s>, padded with 0) and their mask → the decoder's cross K/V [B,…,S]
        (the encoder computes on the real tokens only: `packed`)."""
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        mask = np.ascontiguousarray(mask, dtype=np.int64)
        state = BergamotEncoderState([], mask, ids, self.shortlist_for(ids * mask), self.shortlist_for)
        tokens, pad_index, pack_index, at = packed(ids, mask, self.arch.heads)
        signal = self.position_rows(0, ids.shape[1])
        whole = len(ids) == 1 and len(at) == len(signal)  # one unpadded row: its positions are 0..S-1
        feeds = {
            "ids": tokens,
            "positions": signal if whole else signal[at],
            "pad_index": pad_index,
            "pack_index": pack_index,
            "mask_bias": state.mask_bias,
        }
        # activations scale with batch × length: the arena shrinks after every batch's encoder run
        state.cross = self.encoder.run(self._enc_out, feeds, SHRINK_ARENA)
        return state

    def start(self, enc: BergamotEncoderState, max_len: int, beams: int = 1) -> BergamotRun:
        """A decoding run of `beams` rows per sentence of `enc` (each sentence's rows consecutive; they share its
        encoder state). `max_len` only bounds the positions (an SSRU state has no cache to size)."""
        if max_len > self._max_positions:
            raise ValueError(f"{max_len} positions asked for; the model decodes at most {self._max_positions}")
        return BergamotRun(self, enc, beams)


class BergamotRun:
    """One batch being decoded: the SSRU cells (two buffers per layer, read one, written the other, swapped each
    step), the logits and alignment buffers bound to the decoder once (IOBinding)."""

    def __init__(self, model: OnnxBergamot, enc: BergamotEncoderState, group: int = 1) -> None:
        self.model = model
        self.enc = enc
        self.group = group
        self.length = 0
        e = model.arch.dim
        rows = enc.mask.shape[0] * group
        self._states = [np.zeros((rows, e), np.float32) for _ in model._state_in]  # read at the next step
        self._spare = [np.zeros((rows, e), np.float32) for _ in model._state_in]  # written at the next step
        # the decoder's whole state: the SSRU cells [rows, E] per layer that the next step reads (no attention
        # cache: base.DecoderRun's `cache` here has no positions to copy)
        self.cache: list[np.ndarray] = self._states
        shortlist = enc.shortlist
        width = model.vocab_size if shortlist is None else len(shortlist)
        self.shortlist = np.arange(model.vocab_size, dtype=np.int64) if shortlist is None else shortlist
        self._unk = np.flatnonzero(self.shortlist == UNK_ID)
        self._compact = np.empty((rows, width), np.float32)
        self._alignment = np.empty((rows, enc.mask.shape[1]), np.float32)
        # full-width rows, −inf outside the shortlist: `step` fills them (the narrow greedy path never touches them)
        self._full = self._compact if shortlist is None else np.empty((rows, model.vocab_size), np.float32)
        # the shortlist's output rows and bias, bound as inputs: a batch keeps its shortlist (select, reorder)
        selected = None if model.output is None else model.output.select(self.shortlist)
        self._output = () if selected is None else selected
        if self._output and self._unk.size:
            # <unk>'s bias −inf: its logit is −inf from the product itself (x + −inf), no masking per step
            self._output[1][self._unk] = -np.inf
            self._unk = self._unk[:0]
        self._position = np.zeros((1, model.arch.dim), np.float32)
        self._scale = np.zeros(1, np.float32)
        # the output product's inputs as a prepackable step hands them over (bound whether the batch uses them or not)
        self._q = np.empty((rows, e), np.uint8)
        self._a_scale = np.empty((), np.float32)
        self._prepacked: prepacked_output.PrepackedOutput | None = None
        fed = self._output
        rescale = None if model.output is None else model.output.scale
        longest = int(enc.mask.sum(axis=1).max())
        if model.prepackable and selected and rescale is not None and prepacked_output.worthwhile(width, longest):
            self._prepacked = prepacked_output.PrepackedOutput(selected[0], selected[1], rescale)
            fed = model._dummy_output  # the step's own product over a few zero columns: its logits go unread
            self._dummy_logits = np.empty((rows, prepacked_output.DUMMY_WIDTH), np.float32)
        # the inputs whose buffers live as long as the run: wrapped once, bound again by every `_bind`
        fixed = [("embed_scale", self._scale), ("position", self._position), *zip(output_table.INPUTS, fed)]
        self._fixed = [(name, model.binder.value(array)) for name, array in fixed]
        self._owns_enc = enc.sole_reader  # else the caller's: copied at the first select
        self._bind()

    @property
    def rows(self) -> int:
        return self.enc.mask.shape[0] * self.group

    @property
    def shortlist_logits(self) -> np.ndarray:
        """The last step's logits over `shortlist` [rows, K] (<unk> at −inf); valid until the next step."""
        return self._compact[: self.rows]

    @property
    def alignment(self) -> np.ndarray:
        """Head 0 of the alignment layer's cross-attention at the last step [rows, S]."""
        return self._alignment[: self.rows]

    def _bind(self) -> None:
        """Two bindings, one per direction of the SSRU cells (A reads `_states` and writes `_spare`, B the other
        way), each with every input and output bound once to buffers kept here: a step only writes its tokens and
        position into the bound buffers and runs the binding of its parity (no bind calls, no allocations)."""
        model = self.model
        binder = model.binder
        value = binder.value
        rows = self.rows
        self._mask_bias = self.enc.mask_bias
        self._tokens = np.zeros(rows, np.int64)
        self._keep = [self._mask_bias, *self.enc.cross]  # bound memory must outlive the binding
        self._compact_view = self._compact[:rows]
        self._full_view = self._full[:rows]
        shared = [("mask_bias", self._mask_bias), *zip(model._cross_names, self.enc.cross), ("tokens", self._tokens)]
        # each buffer wrapped once for both bindings (an OrtValue costs µs: a bind is ~50 of them); the cells too:
        # one binding reads the buffers the other writes
        values = [(name, value(array)) for name, array in shared] + self._fixed
        cells = [[value(array[:rows]) for array in arrays] for arrays in (self._states, self._spare)]
        logits = self._compact_view if self._prepacked is None else self._dummy_logits[:rows]
        outputs = [("logits", value(logits)), ("alignment", value(self._alignment[:rows]))]
        q, a_scale = self._q[:rows], self._a_scale
        if model.prepackable:
            outputs += [(name, value(array)) for name, array in zip(prepacked_output.OUTPUTS, (q, a_scale))]
        self._bindings = [
            binder.step([*values, *zip(model._state_in, read)], [*zip(model._state_out, write), *outputs])
            for read, write in ((cells[0], cells[1]), (cells[1], cells[0]))
        ]
        self._parity = 0  # the binding whose inputs are `_states`
        # a packed batch's output product, run after each step: the step's handed-over inputs → the logits
        self._output_step = None if self._prepacked is None else self._prepacked.bind(q, a_scale, self._compact_view)

    def _advance(self, tokens: np.ndarray) -> None:
        """Run the decoder at the next position; the shortlist's logits land in `_compact_view` (<unk> −inf)."""
        model = self.model
        first = self.length == 0
        # the first step (also after a restore to length 0) feeds a zero embedding
        self._tokens[:] = 0 if first else tokens
        self._scale[:] = 0.0 if first else model.embed_scale
        self._position[:] = model.position_rows(self.length, 1)
        # The first step of a batch releases what earlier (possibly larger) batches left in the arena.
        self._bindings[self._parity].run(SHRINK_ARENA if first else None)
        if self._output_step is not None:
            self._output_step.run()
        self._parity ^= 1
        self._states, self._spare = self._spare, self._states
        self.cache = self._states
        self.length += 1
        if self._unk.size:  # the whole vocabulary scored: <unk>'s column masked here
            self._compact_view[:, int(self._unk[0])] = -np.inf

    def step(self, tokens: np.ndarray) -> np.ndarray:
        """Decode `tokens` [rows] (the previous outputs; ignored at the first step, whose input is a zero
        embedding) at the next position → logits [rows, V] (valid until the next step)."""
        self._advance(tokens)
        if self._full is not self._compact:
            # filled again every step: the searches use the returned rows as scratch (engine.search.scores)
            full = self._full_view
            full.fill(-np.inf)
            full[:, self.shortlist] = self._compact_view
        return self._full_view

    def step_shortlist(self, tokens: np.ndarray) -> np.ndarray:
        """`step` without the full-width rows: the logits over `shortlist` [rows, K] (valid until the next step;
        the caller may use them as scratch). Every id outside the shortlist would score −inf, so a log-softmax
        over these columns is the full row's, and the sorted shortlist keeps argmax's lowest-id tie break."""
        self._advance(tokens)
        return self._compact_view

    def reorder(self, index: np.ndarray, shared: np.ndarray | None = None) -> None:
        """Beam search: row r continues the history of row index[r] (`shared` is the attention caches' hint;
        a recurrent state has no positions to skip)."""
        if np.array_equal(index, np.arange(len(index))):
            return
        for array in self._states:
            view = array[: len(index)]
            view[:] = view[index]

    def select(self, rows: np.ndarray) -> None:
        """Keep only `rows` (ascending whole sentences; finished sentences leave the batch) and rebind. The
        shortlist stays the batch's (Marian computes it once per batch)."""
        sentences = _sentences(rows, self.group)
        if self._owns_enc:  # compacted in place: no fresh (page-faulted) copy of every layer's K/V per select
            self.enc.cross = [_keep_rows(c, sentences) for c in self.enc.cross]
            self.enc.mask = self.enc.mask[sentences]
            self.enc.ids = self.enc.ids[sentences]
        else:  # the caller's state (it may decode other runs over it): a copy of the kept rows
            self.enc = self.enc._rows(sentences, keep_shortlist=True)
            self._owns_enc = True
        for array in self._states:
            array[: len(rows)] = array[rows]
        self._bind()

    def adopt(self, other: BergamotRun) -> None:
        """Continue from `other`'s first row on every row (a shared start decoded once at batch 1)."""
        for mine, theirs in zip(self._states, other._states):
            mine[: self.rows] = theirs[:1]
        self.length = other.length

    # -- the shared start's seam (base.DecoderRun.snapshot/restore; engine.pipeline.alternatives) --
    def snapshot(self) -> StateSnapshot:
        return _snapshot(self)

    def restore(self, snapshot: StateSnapshot) -> None:
        _restore(self, snapshot)


@dataclass(frozen=True)
class StateSnapshot:
    """A Bergamot run's SSRU cells [rows, E] per layer after its first `length` positions (copies)."""

    states: tuple[np.ndarray, ...]
    length: int


def _snapshot(run: BergamotRun) -> StateSnapshot:
    """base.DecoderRun.snapshot: the cells the next step reads, copied (the run overwrites its buffers)."""
    return StateSnapshot(tuple(array[: run.rows].copy() for array in run._states), run.length)


def _restore(run: BergamotRun, snapshot: StateSnapshot) -> None:
    """base.DecoderRun.restore: every row's cells from the snapshot's (one row broadcast, or row for row)."""
    rows = len(snapshot.states[0]) if snapshot.states else 1
    if rows not in (1, run.rows):
        raise ValueError(f"a snapshot of {rows} rows does not fit a run of {run.rows}")
    for mine, saved in zip(run._states, snapshot.states):
        mine[: run.rows] = saved
    run.length = snapshot.length


def packed(ids: np.ndarray, mask: np.ndarray, heads: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The packed encoder's inputs (engine.families.bergamot.converter.graphs) for source rows [B,S] and their mask
    (1 on tokens, then padding): the tokens' ids [T] row after row; `pad_index` [B,H,S], the packed head row t·H+h
    that each padded slot's head h reads (a padding slot reads its row's last token's: the mask keeps it from every
    result); `pack_index` [T,H], the padded head row (b·H+h)·S+s of each token's head; and each token's position s
    [T]. Rows without padding (a single sentence) take the indices of their shape, made once (read-only)."""
    flat = mask.reshape(-1)
    if flat.all():
        return ids.reshape(-1), *_unpadded(*mask.shape, heads)
    slots = np.flatnonzero(flat)
    return ids.reshape(-1)[slots], *_indices(slots, np.cumsum(flat) - 1, mask.shape, heads)


Indices = tuple[np.ndarray, np.ndarray, np.ndarray]  # packed's pad_index, pack_index and positions


def _indices(slots: np.ndarray, rows: np.ndarray, shape: tuple[int, int], heads: int) -> Indices:
    """`packed`'s indices from each token's slot b·S+s [T] and each slot's packed row [B·S]."""
    b, s = shape
    head = np.arange(heads, dtype=np.int64)
    pad_index = (rows * heads).reshape(b, 1, s) + head[:, None]
    at = slots % s
    pack_index = (slots * heads - at * (heads - 1))[:, None] + head * s  # (b·H + h)·S + s from b·S + s
    return pad_index, pack_index, at


@functools.lru_cache(maxsize=64)
def _unpadded(b: int, s: int, heads: int) -> Indices:
    """`packed`'s indices for B rows of S tokens each (shared: read-only)."""
    slots = np.arange(b * s, dtype=np.int64)
    arrays = _indices(slots, slots, (b, s), heads)
    for array in arrays:
        array.setflags(write=False)
    return arrays


def _step_options(threads: int) -> ort.SessionOptions:
    """The decoder step's options: the engine's (spinning), and on one thread ORT's memory pattern. A batch runs
    the step at one input shape for every token, so the intermediates' layout planned at its first step serves the
    rest (one block instead of an arena request per value): a 1-row INT8 step 0.33 -> 0.30 ms in the same process
    (base-memory dims, 1 thread, AMD EPYC; 5 rows unchanged), the full-shape model's sentence 22.2 -> 19.6-20.7 ms
    (bench/bergamot_peer.py). At 2 threads that bench gave 41 ms against 29 without it, twice, on a loaded 2-core
    machine (unconfirmed in-process), so there it stays off, as for the once-per-batch encoder (the default)."""
    options = session_options(threads, spinning=True)
    options.enable_mem_pattern = threads == 1
    return options


def _union(shortlist: np.ndarray | None, allowed: np.ndarray | None) -> np.ndarray | None:
    """The shortlist with the allowed ids added (sorted; None stays None: every id is allowed already)."""
    return shortlist if shortlist is None or allowed is None else np.union1d(shortlist, allowed)


def _keep_rows(array: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """`array[rows]` for ascending `rows`, moved to the front of `array` itself: the first axis' prefix view
    (contiguous when `array` is; each kept row moves forward, never over a row still to be read)."""
    for i, r in enumerate(rows.tolist()):
        if i != r:
            array[i] = array[r]
    return array[: len(rows)]


def _sentences(rows: np.ndarray, group: int) -> np.ndarray:
    """The sentences whose rows `rows` are: ascending, each sentence's `group` rows kept together or not at all.
    One row per sentence (greedy search) is checked in Python: a few rows' numpy checks cost ~10 µs a select."""
    if group == 1:
        listed = rows.tolist()
        if any(b <= a for a, b in itertools.pairwise(listed)):
            raise ValueError(f"rows {listed} are not ascending whole sentences of 1 rows")
        return rows
    sentences = rows[::group] // group
    whole = len(rows) % group == 0 and np.array_equal(rows, (sentences[:, None] * group + np.arange(group)).ravel())
    if not whole or np.any(np.diff(rows) <= 0):
        raise ValueError(f"rows {rows.tolist()} are not ascending whole sentences of {group} rows")
    return sentences
