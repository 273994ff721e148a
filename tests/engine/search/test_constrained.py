"""Constrained beam search on the fixture: every constraint's tokens (and text) end up in the output, impossible ones
are reported, unconstrained rows decode exactly as the plain searches do, scores are the model's log-probabilities."""

from __future__ import annotations

import time
from itertools import pairwise

import numpy as np
import pytest

from engine.pipeline.batching import length_limit
from engine.pipeline.translator import Translator
from engine.search.constrained import beam_size, constrained_beam_search
from engine.search.decoding import StepUpdate, beam_search, greedy_search, log_softmax
from engine.search.types import Constraint, RowExtras
from tests.conftest import FIXTURE_DIR

pytestmark = pytest.mark.torch

LIMIT = 40


@pytest.fixture(scope="module")
def fp32(bundle_dir):
    return Translator(bundle_dir, precision="fp32", threads=1)


@pytest.fixture(scope="module")
def int8(bundle_dir):
    return Translator(bundle_dir, precision="int8", threads=1)


def _corpus(n: int = 12) -> list[str]:
    rows = (FIXTURE_DIR / "corpus.tsv").read_text(encoding="utf-8").splitlines()
    return [r.split("\t")[0] for r in rows[:n]]


def _encode(tr: Translator, texts):
    ids = [tr.tokenizer.encode(f">>cmn_Hans<< {t}") for t in texts]
    width = max(len(i) for i in ids)
    arr = np.full((len(ids), width), tr.defaults.pad_id, dtype=np.int64)
    mask = np.zeros((len(ids), width), dtype=np.int64)
    for r, row in enumerate(ids):
        arr[r, : len(row)], mask[r, : len(row)] = row, 1
    return tr._model.encode(arr, mask)


def _limits(texts, limit=LIMIT):
    return np.full(len(texts), limit, dtype=np.int64)


def _plain(tr, texts, beams=4, limit=LIMIT):
    search = greedy_search if beams == 1 else beam_search
    *_, last = search(tr._model, _encode(tr, texts), tr.params(beams, max_length=limit), _limits(texts, limit))
    return last.tokens


def _constrained(tr, texts, extras, beams=4, limit=LIMIT, **overrides):
    params = tr.params(beams, max_length=limit, **overrides)
    return list(constrained_beam_search(tr._model, _encode(tr, texts), params, _limits(texts, limit), extras))


def _c(tr, *pieces: str, label: str = "") -> Constraint:
    return Constraint((tuple(tr.tokenizer.token_to_id(p) for p in pieces),), label or "".join(pieces))


def _contains(tokens, seq) -> bool:
    n = len(seq)
    return any(tuple(tokens[i : i + n]) == tuple(seq) for i in range(len(tokens) - n + 1))


def _assert_met(tr, tokens, constraint: Constraint) -> None:
    assert any(_contains(tokens, o) for o in constraint.options), (tr.tokenizer.decode(tokens), constraint)
    texts = {tr.tokenizer.decode(o) for o in constraint.options if _contains(tokens, o)}
    assert any(t in tr.tokenizer.decode(tokens) for t in texts)


def _missing_chunks(tr, texts, size):
    """For each sentence: a `size`-token chunk of another sentence's plain output that its own output lacks."""
    plain = _plain(tr, texts)
    chunks = []
    for i, own in enumerate(plain):
        for j in [*range(i + 1, len(plain)), *range(i)]:
            other = [t for t in plain[j] if tr.tokenizer.id_to_piece(t) != "▁"]
            found = [tuple(other[s : s + size]) for s in range(len(other) - size + 1)]
            found = [c for c in found if not _contains(own, c) and not any(x in own for x in c)]
            if found:
                chunks.append(Constraint((found[0],), tr.tokenizer.decode(found[0])))
                break
    assert len(chunks) == len(texts)
    return plain, chunks


def test_a_single_missing_constraint_appears_in_every_sentence(fp32):
    texts = _corpus(8)
    plain, chunks = _missing_chunks(fp32, texts, 1)
    last = _constrained(fp32, texts, [RowExtras(constraints=(c,)) for c in chunks])[-1]
    for tokens, before, c, out in zip(last.tokens, plain, chunks, last.outputs):
        assert not _contains(before, c.options[0])
        _assert_met(fp32, tokens, c)
        assert out.unmet == () and list(out.best.tokens) == tokens


def test_multi_token_and_several_constraints(fp32):
    texts = _corpus(6)
    _, twos = _missing_chunks(fp32, texts, 2)
    _, ones = _missing_chunks(fp32, texts[::-1], 1)
    ones = ones[::-1]
    extras = [RowExtras(constraints=(a, b)) for a, b in zip(twos, ones) if a.options[0][0] not in b.options[0]]
    assert len(extras) >= 4
    last = _constrained(fp32, texts[: len(extras)], extras)[-1]
    for tokens, e, out in zip(last.tokens, extras, last.outputs):
        for c in e.constraints:
            _assert_met(fp32, tokens, c)
        assert out.unmet == ()


def test_a_constraint_with_two_tokenisations_is_met_by_either(fp32):
    both = Constraint(((fp32.tokenizer.token_to_id("▁明天"),), (fp32.tokenizer.token_to_id("明天"),)), "明天")
    texts = ["Thank you very much.", "Good morning, everyone!", "See you tomorrow."]
    last = _constrained(fp32, texts, [RowExtras(constraints=(both,))] * 3)[-1]
    for tokens, out in zip(last.tokens, last.outputs):
        _assert_met(fp32, tokens, both)
        assert "明天" in fp32.tokenizer.decode(tokens) and out.unmet == ()
    # one option made impossible (a banned token): the other still meets it
    banned = Constraint(((fp32.defaults.pad_id,), both.options[1]), "明天")
    last = _constrained(fp32, texts[:1], [RowExtras(constraints=(banned,))])[-1]
    assert _contains(last.tokens[0], both.options[1]) and last.outputs[0].unmet == ()


def test_a_constraint_already_in_the_output_leaves_it_alone(fp32):
    texts = _corpus(6)
    plain = _plain(fp32, texts)
    extras = [RowExtras(constraints=(Constraint((tuple(p[:2]),), "already"),)) for p in plain]
    last = _constrained(fp32, texts, extras)[-1]
    for tokens, e in zip(last.tokens, extras):
        _assert_met(fp32, tokens, e.constraints[0])
    assert last.tokens == plain


def test_an_impossible_constraint_is_reported_not_dropped(fp32):
    texts = ["Thank you very much."]
    long = Constraint((tuple([fp32.tokenizer.token_to_id("北")] * 20),), "北" * 20)
    last = _constrained(fp32, texts, [RowExtras(constraints=(long,))], limit=12)[-1]
    assert last.outputs[0].unmet == (0,)
    assert last.tokens[0] and len(last.tokens[0]) <= 10
    # two that each fit but not together: the output keeps one, the other is reported
    a, b = _c(fp32, "北", "京", "北"), _c(fp32, "客", "气", "客")
    last = _constrained(fp32, texts, [RowExtras(constraints=(a, b))], limit=6)[-1]
    out = last.outputs[0]
    assert len(out.unmet) == 1 and len(last.tokens[0]) <= 4
    _assert_met(fp32, last.tokens[0], (a, b)[1 - out.unmet[0]])


@pytest.mark.parametrize("beams", [1, 4])
def test_unconstrained_rows_decode_as_the_plain_search(fp32, beams):
    texts = _corpus(12)
    _, chunks = _missing_chunks(fp32, texts, 1)
    extras = [RowExtras(constraints=(c,)) if i % 3 == 0 else RowExtras() for i, c in enumerate(chunks)]
    plain = _plain(fp32, texts, beams)
    last = _constrained(fp32, texts, extras, beams)[-1]
    for i, (tokens, e) in enumerate(zip(last.tokens, extras)):
        if e.constraints:
            _assert_met(fp32, tokens, e.constraints[0])
            assert tokens != plain[i]
        else:
            assert tokens == plain[i], texts[i]
            out = last.outputs[i]  # the plain search's own SentenceOutput, where it gives one
            assert out is None or list(out.best.tokens) == tokens
            assert tokens == fp32.generate_ids([fp32.tokenizer.encode(f">>cmn_Hans<< {texts[i]}")], beams, LIMIT)[0]
    assert sum(bool(e.constraints) for e in extras) == 4


def test_one_beam_uses_a_beam_per_constraint(fp32):
    params = fp32.params(1)
    one, three = RowExtras(constraints=(Constraint(((5,),)),)), RowExtras(constraints=(Constraint(((5,),)),) * 3)
    assert beam_size(params, [one]) == 2 and beam_size(params, [one, three]) == 4
    assert beam_size(fp32.params(4), [one]) == 4 and beam_size(fp32.params(4), [three] * 2) == 4
    texts = _corpus(4)
    _, chunks = _missing_chunks(fp32, texts, 2)
    last = _constrained(fp32, texts, [RowExtras(constraints=(c,)) for c in chunks], beams=1)[-1]
    for tokens, c in zip(last.tokens, chunks):
        _assert_met(fp32, tokens, c)


def _recompute(tr, text, tokens):
    """Per-token log-probabilities (and eos') by feeding `tokens` one at a time through model.start/step."""
    model, start = tr._model, tr.defaults.decoder_start_id
    run = model.start(_encode(tr, [text]), len(tokens) + 2)
    out = []
    for tok in [start, *tokens]:
        out.append(log_softmax(run.step(np.array([tok], dtype=np.int64)).copy())[0])
    return [float(out[i][t]) for i, t in enumerate(tokens)], float(out[len(tokens)][tr.defaults.eos_id])


# INT8 quantises activations dynamically, over the whole batch: a hypothesis decoded among others is scored a little
# differently from the same tokens decoded alone, so INT8 is held to the model's log-probabilities only loosely.
@pytest.mark.parametrize(("precision", "tol"), [("fp32", 1e-4), ("int8", 0.5)])
def test_scores_are_the_models_log_probabilities(fp32, int8, precision, tol):
    tr = fp32 if precision == "fp32" else int8
    texts = _corpus(6)
    _, chunks = _missing_chunks(fp32, texts, 2)
    last = _constrained(tr, texts, [RowExtras(constraints=(c,)) for c in chunks], num_return=3)[-1]
    for text, tokens, out, c in zip(texts, last.tokens, last.outputs, chunks):
        _assert_met(tr, tokens, c)
        assert 1 <= len(out.nbest) <= 3 and out.nbest[0] == out.best
        assert len({h.tokens for h in out.nbest}) == len(out.nbest)
        assert [h.score for h in out.nbest] == sorted((h.score for h in out.nbest), reverse=True)
        for h in out.nbest:
            _assert_met(tr, h.tokens, c)
            assert len(h.logprobs) == len(h.tokens) and h.eos_logprob is not None
            steps, eos = _recompute(tr, text, list(h.tokens))
            assert np.allclose(h.logprobs, steps, atol=tol, rtol=0)
            assert abs(h.eos_logprob - eos) < tol
            total = sum(h.logprobs) + h.eos_logprob
            assert abs(h.score - total / (len(h.tokens) + 1)) < 1e-6
            assert abs(total - (sum(steps) + eos)) < tol * (len(steps) if precision == "int8" else 1)


def test_the_full_vocabulary_path_agrees_with_the_scorer(fp32, monkeypatch):
    texts = _corpus(6)
    _, chunks = _missing_chunks(fp32, texts, 2)
    extras = [RowExtras(constraints=(c,)) for c in chunks]
    fast = _constrained(fp32, texts, extras)[-1]
    monkeypatch.setattr(fp32._model, "scorer", lambda params: None)
    exact = _constrained(fp32, texts, extras)[-1]
    assert exact.tokens == fast.tokens
    for a, b in zip(exact.outputs, fast.outputs):
        assert np.allclose(a.best.logprobs, b.best.logprobs, atol=1e-5)


def test_streaming_commits_only_final_tokens(fp32):
    texts = _corpus(6)
    _, chunks = _missing_chunks(fp32, texts, 2)
    extras = [RowExtras(constraints=(c,)) if i % 2 else RowExtras() for i, c in enumerate(chunks)]
    steps = _constrained(fp32, texts, extras)
    final = steps[-1]
    assert all(final.done) and final.tokens == final.committed
    seen = [[] for _ in texts]
    for update in steps:
        assert len(update.best) == len(texts) and len(update.outputs) == len(texts)
        for b, tokens in enumerate(update.committed):
            assert tokens[: len(seen[b])] == seen[b]  # never taken back
            assert final.tokens[b][: len(tokens)] == tokens
            seen[b] = list(tokens)
            if update.done[b] and extras[b].constraints:
                assert update.outputs[b] is not None and list(update.outputs[b].best.tokens) == final.tokens[b]
    partial = [any(0 < len(s.committed[b]) < len(final.tokens[b]) for s in steps) for b in range(len(texts))]
    assert any(p for p, e in zip(partial, extras) if e.constraints)  # constrained rows stream too


def test_a_forced_prefix_is_kept_and_the_constraint_still_met(fp32):
    text = "See you tomorrow."
    c = _c(fp32, "不", "用")
    prefix = tuple(_plain(fp32, [text])[0][:1])
    last = _constrained(fp32, [text], [RowExtras(prefix=prefix, constraints=(c,))])[-1]
    tokens, out = last.tokens[0], last.outputs[0]
    assert tuple(tokens[: len(prefix)]) == prefix and len(out.best.logprobs) == len(tokens)
    _assert_met(fp32, tokens, c)
    steps, _ = _recompute(fp32, text, tokens)
    assert np.allclose(out.best.logprobs, steps, atol=1e-4)


@pytest.mark.parametrize("path", ["scorer", "full vocabulary"])
def test_multi_token_bad_words_still_apply(fp32, monkeypatch, path):
    if path != "scorer":
        monkeypatch.setattr(fp32._model, "scorer", lambda params: None)
    text = "Thank you very much."
    c = _c(fp32, "客", "气")
    free = _constrained(fp32, [text], [RowExtras(constraints=(c,))])[-1].tokens[0]
    pairs = [(a, b) for a, b in pairwise(free) if a not in c.options[0] and b not in c.options[0]]
    assert pairs
    banned = pairs[0]
    last = _constrained(fp32, [text], [RowExtras(constraints=(c,))], bad_words=((1881,), banned))[-1]
    assert not _contains(last.tokens[0], banned)
    _assert_met(fp32, last.tokens[0], c)


def test_int8_meets_constraints_too(int8, fp32):
    texts = _corpus(8)
    _, chunks = _missing_chunks(fp32, texts, 1)
    last = _constrained(int8, texts, [RowExtras(constraints=(c,)) for c in chunks])[-1]
    for tokens, c, out in zip(last.tokens, chunks, last.outputs):
        _assert_met(int8, tokens, c)
        assert out.unmet == ()


@pytest.fixture(scope="module")
def full():
    from tests.engine.convert.test_full_model import CACHE, _current

    bundle = CACHE / "bundle"
    if not _current(bundle):
        pytest.skip("no full-size random bundle (pytest -m slow tests/engine/convert/test_full_model.py builds it)")
    return Translator(bundle, precision="fp32", threads=2)


def _timed(search, *args) -> tuple[float, StepUpdate]:
    start = time.perf_counter()
    *_, last = search(*args)
    return time.perf_counter() - start, last


@pytest.mark.slow
@pytest.mark.parametrize("beams", [4, 1])
def test_the_full_size_model_meets_every_constraint(full, beams):
    """The random full-size model (opus-mt-en-zh's shape, the fixture's tokenizer) writes random text up to the length
    limit; every constraint must still appear. Prints what the constraints cost over the plain search (greedy for
    one beam, where the constrained search runs 1 + constraints beams)."""
    texts = _corpus(6)
    model = full._model
    _, chunks2 = _missing_chunks(full, texts, 2)
    _, chunks1 = _missing_chunks(full, texts[::-1], 1)
    costs = {1: [], 2: []}
    for i, text in enumerate(texts):
        limit = np.array([length_limit(len(full.tokenizer.encode(f">>cmn_Hans<< {text}")), model.max_positions)])
        enc, params = _encode(full, [text]), full.params(beams, max_length=int(limit[0]))
        base, last = _timed(greedy_search if beams == 1 else beam_search, model, enc, params, limit)
        assert not any(_contains(last.tokens[0], c.options[0]) for c in (chunks2[i], chunks1[-1 - i]))
        for n, constraints in ((1, (chunks2[i],)), (2, (chunks2[i], chunks1[-1 - i]))):
            extras = [RowExtras(constraints=constraints)]
            took, out = _timed(constrained_beam_search, model, enc, params, limit, extras)
            for c in constraints:
                _assert_met(full, out.tokens[0], c)
            assert out.outputs[0].unmet == ()
            costs[n].append(took / base)
    for n, ratios in costs.items():
        ratio = np.median(ratios)
        print(f"\nconstrained / plain search ({beams} beam(s), 2 threads), {n} constraint(s): median ×{ratio:.2f}")


@pytest.mark.parametrize(
    "overrides",
    [
        {"renormalize": True, "min_length": 12},  # the full-vocabulary path, eos banned early
        {"early_stopping": True},
        {"early_stopping": "never", "length_penalty": 0.6},
    ],
)
def test_other_generation_settings_still_meet_constraints(fp32, overrides):
    texts = _corpus(6)
    _, chunks = _missing_chunks(fp32, texts, 2)
    last = _constrained(fp32, texts, [RowExtras(constraints=(c,)) for c in chunks], **overrides)[-1]
    for tokens, c, out in zip(last.tokens, chunks, last.outputs):
        _assert_met(fp32, tokens, c)
        assert out.unmet == () and len(tokens) >= overrides.get("min_length", 0) - 1
        lp = overrides.get("length_penalty", 1.0)
        total = sum(out.best.logprobs) + out.best.eos_logprob
        assert abs(out.best.score - total / (len(tokens) + 1) ** lp) < 1e-6


def test_renormalised_bans_on_the_scorer_equal_the_full_vocabulary_path(fp32, bundle_dir, monkeypatch):
    """opus-mt's config renormalises after the bans: constrained rows with multi-token bad words and a minimum length
    stay on the TopK scorer (they used to take numpy's full-vocabulary log-softmax every step) and still give the
    full-vocabulary path's tokens and scores."""
    assert fp32.defaults.renormalize
    texts = _corpus(6)
    _, chunks = _missing_chunks(fp32, texts, 2)
    plain = _plain(fp32, texts)
    bans = tuple({(o[1], o[2]) for o in plain if len(o) > 2})  # bite: the plain outputs' own second bigram
    extras = [RowExtras(constraints=(c,)) for c in chunks]
    overrides = {"bad_words": fp32.defaults.bad_words + bans, "min_length": 8}
    exact = Translator(bundle_dir, precision="fp32", threads=1)
    exact._model.scorer = lambda params: None
    import engine.search.constrained

    full_passes = []
    real = engine.search.constrained.log_softmax
    monkeypatch.setattr(engine.search.constrained, "log_softmax", lambda x: full_passes.append(len(x)) or real(x))
    fast_last = _constrained(fp32, texts, extras, **overrides)[-1]
    assert full_passes == []  # no full-vocabulary pass: every step on the scorer
    exact_last = _constrained(exact, texts, extras, **overrides)[-1]
    assert full_passes
    assert fast_last.tokens == exact_last.tokens
    for f, e in zip(fast_last.outputs, exact_last.outputs):
        assert np.allclose(f.best.logprobs, e.best.logprobs, atol=1e-4)
        assert abs(f.best.score - e.best.score) < 1e-4
        assert f.unmet == e.unmet
    changed = sum(a != b for a, b in zip(fast_last.tokens, _constrained(fp32, texts, extras)[-1].tokens))
    assert changed  # the bans and the minimum length changed some output


def test_do_not_translate_spans_come_out_verbatim(fp32):
    """Spans tokenised as the source side tokenises them (the vocabulary is joint) appear in the text unchanged."""
    cases = [("Visit https://example.com today.", "https://example.com"), ("See you at 2024.", "2024")]
    cases.append(("Thank you %s.", "%s"))
    texts = [src for src, _ in cases]
    spans = [Constraint((tuple(fp32.tokenizer.encode(span, add_eos=False)),), span) for _, span in cases]
    plain = _plain(fp32, texts, limit=60)
    last = _constrained(fp32, texts, [RowExtras(constraints=(c,)) for c in spans], limit=60)[-1]
    for before, tokens, c in zip(plain, last.tokens, spans):
        assert c.label not in fp32.tokenizer.decode(before)
        assert c.label in fp32.tokenizer.decode(tokens)
        _assert_met(fp32, tokens, c)
