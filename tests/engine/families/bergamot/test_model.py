"""OnnxBergamot as the searches drive it: greedy output token for token with the direct computation, the shortlist
per batch, <unk> never emitted, beams (reorder), finished sentences leaving (select), row subsets (take)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.families.bergamot.architecture import Architecture
from engine.families.bergamot.converter.graphs import Weights, build_decoder, build_encoder
from engine.families.bergamot.model import OnnxBergamot
from engine.search.decoding import GenerationParams, beam_search, greedy_search
from engine.search.types import RowExtras
from tests.engine.families.bergamot.direct import UNK, Direct, calibrate, random_architecture, random_params

pytest.importorskip("onnx")  # the build extra: the graphs are written with it

PARAMS = GenerationParams(eos_id=0, pad_id=0, decoder_start_id=0)


class Rule:
    """Marian's shortlist rules over a lexicon (the first `first` ids, the lists of the batch's source ids, the
    source ids themselves when shared, padded to a multiple of 8 with the lowest free ids)."""

    def __init__(self, lexicon: list[np.ndarray], first: int = 4) -> None:
        self.lexicon, self.first = lexicon, first

    def allowed(self, source_ids, target_vocab_size: int, shared: bool) -> np.ndarray:
        ids = np.unique(np.asarray(source_ids))
        chosen = np.zeros(target_vocab_size, bool)
        chosen[: self.first] = True
        for s in ids:
            chosen[self.lexicon[s]] = True
        if shared:
            chosen[ids] = True
        count = int(chosen.sum())
        if count % 8:
            free = np.flatnonzero(~chosen[self.first :]) + self.first
            chosen[free[: (-count) % 8]] = True
        return np.flatnonzero(chosen)


def make(arch: Architecture, params, precision: str = "fp32", rule: Rule | None = None, shared: bool = True):
    weights = Weights(params)
    encoder = build_encoder(arch, weights, precision)[0].SerializeToString()
    decoder = build_decoder(arch, weights, precision, shortlisted=rule is not None)[0].SerializeToString()
    return OnnxBergamot(encoder, decoder, arch, precision, shortlist=rule, shared_vocab=shared, threads=1)


def lexicon(arch: Architecture, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.choice(np.arange(2, arch.target_vocab), 5, replace=False) for _ in range(arch.source_vocab)]


def sentences(arch: Architecture, count: int, seed: int = 1) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    return [[int(x) for x in rng.integers(2, arch.source_vocab, rng.integers(0, 9))] + [0] for _ in range(count)]


def batch(rows: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    ids = np.zeros((len(rows), max(map(len, rows))), np.int64)
    mask = np.zeros_like(ids)
    for r, row in enumerate(rows):
        ids[r, : len(row)] = row
        mask[r, : len(row)] = 1
    return ids, mask


def greedy(model: OnnxBergamot, rows: list[list[int]]) -> list[list[int]]:
    """Greedy search with Bergamot's length rule: at most 2 × the longest source (EOS included) tokens."""
    enc = model.encode(*batch(rows))
    limits = np.full(len(rows), 2 * max(map(len, rows)) + 1)
    *_, last = greedy_search(model, enc, PARAMS, limits)
    return last.tokens


@pytest.mark.parametrize("shared", [True, False], ids=["shared vocabulary", "separate vocabularies"])
def test_greedy_equals_the_direct_computation_token_for_token(shared: bool) -> None:
    arch = random_architecture() if shared else random_architecture(tied=True, source_vocab=50, target_vocab=70)
    params = random_params(arch, seed=2, scale=2.0)
    rule = Rule(lexicon(arch))
    model = make(arch, params, rule=rule, shared=shared)
    direct = Direct(arch, params)
    outputs = []
    for row in sentences(arch, 30):
        (ours,) = greedy(model, [row])
        expected = direct.greedy(row, shortlist=rule.allowed([row], arch.target_vocab, shared))
        assert ours == expected
        outputs.append(ours)
    assert len({tuple(o) for o in outputs}) > 10  # the outputs are not all alike
    assert any(len(o) == 2 * len(row) for o, row in zip(outputs, sentences(arch, 30)))  # length-limit stops


def test_the_step_plans_its_memory_once_per_shape_and_any_shape_after_another_decodes_the_same() -> None:
    """On one thread the decoder step runs with ORT's memory pattern (planned at a shape's first step, reused for
    the batch); the encoder, run once per batch, without. Batches of other shapes in between change no output."""
    arch = random_architecture()
    params = random_params(arch, seed=4, scale=2.0)
    model = make(arch, params, rule=Rule(lexicon(arch)))
    assert model.decoder.get_session_options().enable_mem_pattern
    assert not model.encoder.get_session_options().enable_mem_pattern
    rows = sentences(arch, 6, seed=9)
    alone = [greedy(model, [row]) for row in rows]
    together = greedy(model, rows)
    assert [greedy(model, [row]) for row in reversed(rows)] == alone[::-1]
    assert greedy(model, rows[:3]) == greedy(model, rows[:3])
    assert greedy(model, rows) == together


def test_a_batch_decodes_each_row_as_alone_under_the_batch_shortlist() -> None:
    arch = random_architecture()
    params = random_params(arch, seed=3, scale=2.0)
    rule = Rule(lexicon(arch))
    model = make(arch, params, rule=rule)
    direct = Direct(arch, params)
    rows = sentences(arch, 5, seed=4)
    union = rule.allowed(batch(rows)[0], arch.target_vocab, True)
    limit = 2 * max(map(len, rows))
    assert greedy(model, rows) == [direct.greedy(row, shortlist=union, max_len=limit) for row in rows]


def test_the_shortlist_is_per_batch_and_scores_only_its_ids() -> None:
    arch = random_architecture()
    rule = Rule(lexicon(arch))
    model = make(arch, random_params(arch, seed=5), rule=rule)
    a, b = model.encode(*batch([[3, 4, 0]])), model.encode(*batch([[30, 31, 32, 0]]))
    assert not np.array_equal(a.shortlist, b.shortlist)
    np.testing.assert_array_equal(a.shortlist, rule.allowed([[3, 4, 0]], arch.target_vocab, True))
    assert len(a.shortlist) % 8 == 0
    run = model.start(b, 10)
    logits = run.step(np.zeros(1, np.int64))
    assert logits.shape == (1, arch.target_vocab)
    outside = np.setdiff1d(np.arange(arch.target_vocab), b.shortlist)
    assert np.all(logits[0, outside] == -np.inf)
    inside = np.setdiff1d(b.shortlist, [UNK])
    np.testing.assert_array_equal(logits[0, inside], run.shortlist_logits[0, np.searchsorted(b.shortlist, inside)])
    # log-softmax over the full row is the log-softmax over the shortlist
    row = logits[0].astype(np.float64)
    full = row - np.log(np.sum(np.exp(row - row.max()))) - row.max()
    short = run.shortlist_logits[0].astype(np.float64)
    np.testing.assert_allclose(
        full[b.shortlist], short - np.log(np.sum(np.exp(short - short.max()))) - short.max(), atol=1e-9
    )
    # a row subset is a batch of its own: its shortlist is computed again
    both = model.encode(*batch([[3, 4, 0], [30, 31, 32, 0]]))
    np.testing.assert_array_equal(both.take([1]).shortlist, b.shortlist)


@pytest.mark.parametrize("shortlisted", [True, False])
def test_unk_is_never_emitted(shortlisted: bool) -> None:
    """A model whose output bias makes <unk> the best token by far: it never comes out, its logit is −inf."""
    arch = random_architecture()
    params = random_params(arch, seed=6)
    params["decoder_ff_logit_out_b"][0, UNK] = 50.0
    model = make(arch, params, rule=Rule(lexicon(arch)) if shortlisted else None)
    enc = model.encode(*batch([[5, 6, 7, 0]]))
    run = model.start(enc, 10)
    logits = run.step(np.zeros(1, np.int64))
    assert logits[0, UNK] == -np.inf
    raw = run.shortlist_logits
    assert raw[0, np.flatnonzero(run.shortlist == UNK)] == -np.inf
    outputs = greedy(model, sentences(arch, 10))
    assert all(UNK not in out for out in outputs)
    direct = Direct(arch, params)  # without the rule <unk> would win
    kv, _ = direct.encode([5, 6, 7, 0])
    raw_logits, _, _ = direct.step(None, 0, [np.zeros((1, arch.dim))] * 2, kv)
    assert int(np.argmax(raw_logits)) == UNK


def test_reorder_moves_each_rows_state_and_select_drops_sentences() -> None:
    """Two sentences × two beams: after a reorder each row continues its parent's state; after a select the
    remaining sentence decodes exactly as in a run of its own (same shortlist)."""
    arch = random_architecture()
    params = random_params(arch, seed=7, scale=2.0)
    model = make(arch, params, rule=Rule(lexicon(arch)))
    rows = [[5, 6, 7, 0], [9, 10, 0]]
    enc = model.encode(*batch(rows))
    run = model.start(enc, 20, beams=2)
    run.step(np.zeros(4, np.int64))
    run.step(np.array([8, 9, 10, 11]))
    before = [s.copy() for s in run.cache]
    run.reorder(np.array([1, 1, 3, 2]))
    for mine, old in zip(run.cache, before):
        np.testing.assert_array_equal(mine, old[[1, 1, 3, 2]])
    tokens = [np.array([12, 13, 14, 15]), np.array([16, 17, 18, 19])]
    run.step(tokens[0])
    run.select(np.array([2, 3]))  # the first sentence is done
    assert run.rows == 2 and enc.mask.shape[0] == 2  # the caller's state is untouched
    last = run.step(tokens[1][2:]).copy()
    # the same history for sentence 2 alone, in a run of its own with the batch's shortlist
    alone = model.start(enc._rows(np.array([1]), keep_shortlist=True), 20, beams=2)
    alone.step(np.zeros(2, np.int64))
    alone.step(np.array([10, 11]))
    alone.reorder(np.array([1, 0]))
    alone.step(tokens[0][2:])
    np.testing.assert_allclose(alone.step(tokens[1][2:]), last, rtol=1e-5, atol=1e-5)


def test_a_sole_readers_state_is_compacted_in_place_and_decodes_the_same() -> None:
    """A state handed to one run only (`sole`, as engine.search.batch hands the search it encoded) is compacted in
    place when a sentence leaves (its K/V arrays are not copied) and the run decodes exactly as over a copy; a
    state the caller keeps is still copied and left untouched."""
    arch = random_architecture()
    model = make(arch, random_params(arch, seed=7, scale=2.0), rule=Rule(lexicon(arch)))
    rows = [[5, 6, 7, 0], [9, 10, 0], [11, 12, 13, 14, 0]]
    logits = {}
    for sole in (False, True):
        kept = model.encode(*batch(rows))
        enc = kept.sole() if sole else kept
        memory = [c.__array_interface__["data"][0] for c in enc.cross]
        before = [c.copy() for c in kept.cross]
        run = model.start(enc, 20)
        run.step(np.zeros(3, np.int64))
        run.step(np.array([8, 9, 10]))
        run.select(np.array([0, 2]))
        assert ([c.__array_interface__["data"][0] for c in run.enc.cross] == memory) == sole
        assert (run.enc is enc) == sole
        assert run.enc.mask.shape[0] == 2
        logits[sole] = run.step(np.array([12, 13])).copy()
        if not sole:  # the caller's state is untouched
            assert all(np.array_equal(c, b) for c, b in zip(kept.cross, before))
    np.testing.assert_array_equal(logits[True], logits[False])


def test_search_batch_hands_the_search_a_sole_readers_state() -> None:
    from engine.search.batch import search_batch

    arch = random_architecture()
    model = make(arch, random_params(arch, seed=7, scale=2.0), rule=Rule(lexicon(arch)))
    started = []
    start = model.start

    def spy(enc, *args, **kwargs):
        started.append(enc.sole_reader)
        return start(enc, *args, **kwargs)

    model.start = spy  # type: ignore[method-assign]
    rows = [[5, 6, 7, 0], [9, 10, 0]]
    *_, last = search_batch(model, rows, PARAMS, np.full(2, 9))
    assert started == [True]
    model.start = start  # type: ignore[method-assign]
    assert last.tokens == greedy(model, rows)


def test_beam_search_runs_and_beam_one_equals_greedy() -> None:
    arch = random_architecture()
    params = random_params(arch, seed=8, scale=2.0)
    model = make(arch, params, rule=Rule(lexicon(arch)))
    rows = sentences(arch, 4, seed=9)
    enc = model.encode(*batch(rows))
    limits = np.full(len(rows), 2 * max(map(len, rows)) + 1)
    *_, one = beam_search(model, enc, PARAMS.replace(num_beams=1), limits)
    assert one.tokens == greedy(model, rows)
    *_, four = beam_search(model, enc, PARAMS.replace(num_beams=4, num_return=4), limits)
    assert all(UNK not in t for t in four.tokens)
    for out in four.outputs:  # the best of four is at least as good as greedy's (length-normalised)
        assert out is not None and len(out.nbest) == 4


def test_int8_model_agrees_with_fp32_on_most_sentences() -> None:
    arch = random_architecture(dim=64, ffn=128)
    params = random_params(arch, seed=10, scale=1.5)
    rule = Rule(lexicon(arch))
    alphas = calibrate(Direct(arch, params), sentences(arch, 8, seed=11))
    alphas["none"] = alphas.pop("output")
    weights = Weights(params, alphas=alphas)
    encoder = build_encoder(arch, weights, "int8")[0].SerializeToString()
    decoder = build_decoder(arch, weights, "int8")[0].SerializeToString()
    int8 = OnnxBergamot(encoder, decoder, arch, "int8", shortlist=rule, shared_vocab=True, threads=1)
    fp32 = make(arch, params, rule=rule)
    rows = sentences(arch, 40, seed=12)
    same = sum(greedy(int8, [row]) == greedy(fp32, [row]) for row in rows)
    assert same >= 30, same  # 32 of 40 here: a random tiny model has many near ties
    first = [m.start(m.encode(*batch(rows[:1])), 4).step(np.zeros(1, np.int64)).copy() for m in (int8, fp32)]
    assert not np.array_equal(*first)  # and it is int8 arithmetic, not the float one


def test_adopt_continues_a_shared_start_on_every_row() -> None:
    """A start decoded once at batch 1, then continued on three rows (the review window's shared start): each
    row's next step is the single run's next step."""
    arch = random_architecture()
    model = make(arch, random_params(arch, seed=13, scale=2.0), rule=Rule(lexicon(arch)))
    enc = model.encode(*batch([[5, 6, 7, 0]]))
    single = model.start(enc, 20)
    for token in (0, 8, 9):
        single.step(np.array([token]))
    wide = model.start(enc, 20, beams=3)
    wide.adopt(single)
    assert wide.length == 3
    expected = single.step(np.array([10])).copy()
    # equal up to the float rounding of a 3-row product against a 1-row one
    np.testing.assert_allclose(wide.step(np.array([10, 10, 10])), np.repeat(expected, 3, axis=0), atol=1e-5)


class FullWidth:
    """A model whose runs offer only the full-width `step` (the greedy search's general path)."""

    def __init__(self, model: OnnxBergamot) -> None:
        self.model = model

    def start(self, enc, max_len: int, beams: int = 1):
        run = self.model.start(enc, max_len, beams)

        class Run:
            step, select, shortlist = run.step, run.select, None

        return Run()


def test_greedy_scores_over_the_shortlist_columns_as_over_the_full_row() -> None:
    """A shortlisted run's greedy search takes `step_shortlist` (no [rows, V] row refilled with −inf every step)
    and gives the full-width path's tokens and log-probabilities: with a forced prefix, a banned token, a minimum
    length (eos banned) and the forced eos at the length limit mapped onto the columns."""
    arch = random_architecture()
    params = random_params(arch, seed=5, scale=2.0)
    model = make(arch, params, rule=Rule(lexicon(arch)))
    rows = sentences(arch, 6, seed=6)
    ids, mask = batch(rows)
    enc = model.encode(ids, mask)
    banned = int(enc.shortlist[5])
    prefix = (int(enc.shortlist[7]), int(enc.shortlist[6]))
    gen = PARAMS.replace(bad_words=((banned,), (arch.target_vocab - 1,)), min_length=3, forced_eos_id=0)
    extras = [RowExtras(prefix=prefix) if r % 2 else None for r in range(len(rows))]
    limits = np.array([4 + r for r in range(len(rows))])
    steps = {"narrow": 0}
    start = model.start

    def counting(enc, max_len, beams=1):
        run = start(enc, max_len, beams)
        narrow = run.step_shortlist

        def step_shortlist(tokens):
            steps["narrow"] += 1
            return narrow(tokens)

        run.step_shortlist = step_shortlist
        return run

    model.start = counting  # type: ignore[method-assign]
    *_, narrow = greedy_search(model, enc, gen, limits, extras)
    *_, full = greedy_search(FullWidth(model), enc, gen, limits, extras)
    assert steps["narrow"] > 0
    assert narrow.tokens == full.tokens
    assert all(out[: len(prefix)] == list(prefix) for out in narrow.tokens[1::2])
    assert banned not in {t for out in narrow.tokens for t in out[len(prefix) :]}
    for a, b in zip(narrow.outputs, full.outputs):
        assert a.best.tokens == b.best.tokens
        np.testing.assert_allclose(a.best.logprobs, b.best.logprobs, rtol=1e-5, atol=1e-6)
        assert a.best.eos_logprob == pytest.approx(b.best.eos_logprob, abs=1e-5)
