"""Token log-probabilities and hypothesis scores equal transformers' on the fixture in FP32 (tolerance TOL = 1e-4
absolute): greedy against compute_transition_scores(normalize_logits=True), beam search (the TopK scorer path and
the exact full-vocabulary path) against compute_transition_scores with beam_indices and sequences_scores."""

from __future__ import annotations

import numpy as np
import pytest

from engine.pipeline.translator import Translator
from tests.engine.search.test_decoding import _sources, load_hf
from tests.engine.search_oracle import TOL, hf_scored, ours_steps, search_outputs

pytestmark = pytest.mark.torch


@pytest.fixture(scope="module")
def hf(checkpoint_dir):
    return load_hf(checkpoint_dir)


@pytest.fixture(scope="module")
def fp32(bundle_dir):
    return Translator(bundle_dir, precision="fp32", threads=1)


@pytest.fixture(scope="module")
def exact(bundle_dir):
    tr = Translator(bundle_dir, precision="fp32", threads=1)
    tr._model.scorer = lambda params: None  # the full-vocabulary path
    return tr


def _check(hf, tr, texts, beams, max_length):
    for text in texts:
        ids = hf[0](text).input_ids
        (out,) = search_outputs(tr, [ids], beams, max_length)
        ((tokens, steps, ended, score),) = hf_scored(hf, [text], beams, max_length)
        assert list(out.best.tokens) == tokens, text
        assert (out.best.eos_logprob is not None) == ended
        assert np.allclose(ours_steps(out.best), steps, atol=TOL, rtol=0), text
        if score is not None:
            assert abs(out.best.score - score) <= TOL, text
        else:  # greedy: the mean over the generated steps
            assert abs(out.best.score - float(np.mean(steps))) <= TOL


@pytest.mark.parametrize("max_length", [512, 12])
def test_greedy_scores_match_transition_scores(hf, fp32, max_length):
    _check(hf, fp32, _sources()[::3], 1, max_length)


@pytest.mark.parametrize("max_length", [512, 12])
def test_beam_scores_match_generate(hf, fp32, max_length):
    _check(hf, fp32, _sources()[::3], 4, max_length)


@pytest.mark.parametrize("beams", [1, 4])
def test_scores_on_the_exact_path_match_generate(hf, exact, beams):
    """Without the bundle's scorer: beam search's full-vocabulary path (greedy never uses the scorer)."""
    _check(hf, exact, _sources()[::6], beams, 512)


@pytest.mark.parametrize("beams", [1, 4])
def test_scores_with_bans_and_a_minimum_length_match_generate(hf, fp32, exact, beams):
    """Banned tokens (multi-token bad words, the EOS ban of min_new_tokens) leave the normaliser of greedy's
    processed logits; greedy and beam search (both of its paths) still match generate()."""
    texts = _sources()[:10]
    bans = _bigram_bans(fp32, texts)
    bad = (*fp32.defaults.bad_words, *bans)
    for text in texts:
        ids = hf[0](text).input_ids
        ((tokens, steps, _, score),) = hf_scored(
            hf, [text], beams, 30, min_new_tokens=12, bad_words_ids=[list(w) for w in bad]
        )
        for tr in (fp32, exact):
            (out,) = search_outputs(tr, [ids], beams, 30, min_new_tokens=12, bad_words=bad)
            assert list(out.best.tokens) == tokens, text
            assert np.allclose(ours_steps(out.best), steps, atol=TOL, rtol=0), text
            if score is not None:
                assert abs(out.best.score - score) <= TOL


def test_scores_are_real_log_probabilities(fp32):
    """Not zeros or copies: negative and varied (the fixture is confident on its corpus: most are near 0)."""
    rows = fp32.tokenizer.encode_batch(_sources()[:10])
    outs = search_outputs(fp32, rows, 4)
    lps = [x for o in outs for x in o.best.logprobs]
    assert all(x <= 1e-6 for x in lps)
    assert len({round(x, 7) for x in lps}) > len(lps) // 2
    assert min(lps) < -0.1


@pytest.mark.parametrize("beams", [1, 4])
def test_batched_scores_equal_each_row_alone(fp32, beams):
    texts = _sources()[:6]
    rows = fp32.tokenizer.encode_batch(texts)
    together = search_outputs(fp32, rows, beams)
    for row, out in zip(rows, together):
        (alone,) = search_outputs(fp32, [row], beams)
        assert alone.best.tokens == out.best.tokens
        assert np.allclose(alone.best.logprobs, out.best.logprobs, atol=TOL)
        assert abs(alone.best.score - out.best.score) <= TOL


def test_best_follows_the_running_hypothesis(fp32):
    """StepUpdate.best is the best running hypothesis each step: it grows, and ends as the result."""
    (row,) = fp32.tokenizer.encode_batch(_sources()[:1])
    params = fp32.params(4)
    updates = list(fp32._search([row], params, np.array([512])))
    lengths = [len(u.best[0]) for u in updates[:-1] if not u.done[0]]
    assert lengths == sorted(lengths) and lengths[-1] > 0
    assert updates[-1].best[0] == updates[-1].tokens[0]


# -- multi-token bad words on the TopK path ------------------------------------------------------------------------
def _bigram_bans(fp32, texts):
    """Bad words that really bite: the first two tokens of each text's own translation."""
    outs = fp32.generate_ids(fp32.tokenizer.encode_batch(texts), beams=4)
    return tuple({(o[0], o[1]) for o in outs if len(o) >= 2}) + tuple({(o[1], o[2], o[3]) for o in outs if len(o) > 3})


def _count_exact_steps(monkeypatch) -> list[int]:
    """Every beam-search step that takes the full-vocabulary path appends its row count."""
    from engine.search import decoding

    calls: list[int] = []
    real = decoding._exact_candidates

    def counting(logits, *args):
        calls.append(len(logits))
        return real(logits, *args)

    monkeypatch.setattr(decoding, "_exact_candidates", counting)
    return calls


@pytest.mark.parametrize("extra", [{}, {"min_new_tokens": 6}])
def test_multi_token_bad_words_stay_on_the_fast_path(fp32, exact, monkeypatch, extra):
    """opus-mt's config renormalises the scores after the bans; multi-token bad words and the EOS ban of a minimum
    length used to send every such step to numpy's full-vocabulary log-softmax (issue #26: 4.5× slower per token).
    Now no step does, and the output is the exact path's: same tokens, log-probabilities and scores."""
    assert fp32.defaults.renormalize  # the fixture carries opus-mt's real generation config
    texts = _sources()[:24]
    bans = _bigram_bans(fp32, texts)
    bad_words = fp32.defaults.bad_words + bans
    rows = fp32.tokenizer.encode_batch(texts)
    exact_steps = _count_exact_steps(monkeypatch)
    fast = search_outputs(fp32, rows, 4, bad_words=bad_words, **extra)
    assert exact_steps == []  # every step on the TopK scorer's path
    slow = search_outputs(exact, rows, 4, bad_words=bad_words, **extra)
    assert exact_steps  # the counter sees the exact path when it runs
    plain = search_outputs(fp32, rows, 4, **extra)
    changed = 0
    for f, s, p in zip(fast, slow, plain):
        assert f.best.tokens == s.best.tokens
        assert np.allclose(f.best.logprobs, s.best.logprobs, atol=TOL)
        assert abs(f.best.score - s.best.score) <= TOL
        toks = list(f.best.tokens)
        for word in bans:
            n = len(word)
            assert all(tuple(toks[i : i + n]) != word for i in range(len(toks) - n + 1))
        changed += f.best.tokens != p.best.tokens
    assert changed >= len(texts) // 2  # the bans changed the output


@pytest.mark.parametrize("heavy", [0.0, 0.3, 0.9, 0.999999])
def test_banned_mass_shift_is_the_renormaliser(heavy):
    """Against float64 log_softmax over the allowed tokens: rows with little banned mass (the shift from the mass),
    with most of it (summed again over the row), repeated pairs and a token the mask bans already."""
    from engine.search.scores import banned_mass_shift

    rng = np.random.default_rng(7)
    vocab, n = 5000, 6
    logits = rng.normal(0, 3, (n, vocab)).astype(np.float32)
    mask = np.zeros(vocab, dtype=np.float32)
    mask[[11, 12]] = -np.inf
    if heavy:  # token 40 holds `heavy` of row 0's allowed mass
        others = np.log(np.sum(np.exp(np.delete(logits[0].astype(np.float64), [11, 12, 40]))))
        logits[0, 40] = np.float32(others + np.log(heavy / (1 - heavy)))
    rows = np.array([0, 0, 0, 2, 2, 5], dtype=np.int64)
    tokens = np.array([40, 40, 11, 7, 8, 3], dtype=np.int64)
    allowed = logits.astype(np.float64) + mask
    lse = np.log(np.sum(np.exp(allowed), axis=1))
    ids = np.argsort(-allowed, axis=1, kind="stable")[:, :8]
    values = (np.take_along_axis(allowed, ids, axis=1) - lse[:, None]).astype(np.float32)
    got = banned_mass_shift(logits, values, ids, rows, tokens, mask)
    expected = np.zeros(n)
    for r in range(n):
        row = allowed[r].copy()
        row[tokens[rows == r]] = -np.inf
        expected[r] = np.log(np.sum(np.exp(row))) - lse[r]
    assert np.allclose(got, expected, atol=1e-5, rtol=0)
    assert got[1] == got[3] == got[4] == 0.0  # rows without bans are not shifted
    if heavy >= 0.9:
        assert got[0] < np.log1p(-0.5)  # past MAX_BANNED_MASS: summed from the row, not capped


def test_default_options_stay_on_the_fast_path(bundle_dir, monkeypatch):
    """What every front end runs (the window, the popup, the CLI, documents and the API all go through
    Translator.translate): default options, guards on, so a source without applause gets the subtitle-artefact bans
    as multi-token bad words, on the real generation config (renormalised, 4 beams). No step leaves the fast path."""
    from engine.search import decoding

    tr = Translator(bundle_dir, precision="int8", threads=1)
    assert tr.defaults.renormalize and tr.defaults.num_beams == 4
    seen: list = []
    real_beam = decoding.beam_search

    def watching(model, enc, params, *args, **kwargs):
        seen.append(params)
        return real_beam(model, enc, params, *args, **kwargs)

    monkeypatch.setattr("engine.search.batch.beam_search", watching)
    exact_steps = _count_exact_steps(monkeypatch)
    result = tr.translate(" ".join(_sources()[:5]))
    assert result.text.strip()
    assert seen, "the translation did not run beam search"
    assert any(len(w) > 1 for p in seen for w in p.bad_words)  # the guards' multi-token bans were in force
    assert exact_steps == []


@pytest.mark.parametrize("beams", [1, 4])
def test_multi_token_bad_words_match_generate(hf, fp32, beams):
    import torch

    tok, model = hf
    texts = _sources()[:12]
    bans = _bigram_bans(fp32, texts)
    bad = [list(w) for w in (*fp32.defaults.bad_words, *bans)]
    for text in texts:
        with torch.no_grad():
            out = model.generate(**tok([text], return_tensors="pt"), num_beams=beams, bad_words_ids=bad)
        expected = [t for t in out[0].tolist()[1:] if t not in (tok.eos_token_id, tok.pad_token_id)]
        (ours,) = search_outputs(fp32, [tok(text).input_ids], beams, bad_words=tuple(map(tuple, bad)))
        assert list(ours.best.tokens) == expected, text


# -- the repetition guard --------------------------------------------------------------------------------------------
class _LoopRun:
    """A decoder run whose chosen rows are pushed into a period-2 loop from position 2 on (the fixture never loops
    by itself: its output is memorised)."""

    def __init__(self, run, rows, pattern):
        self.run, self.rows, self.pattern = run, rows, pattern

    def step(self, tokens):
        logits = self.run.step(tokens)
        pos = self.run.length - 1
        if pos >= 2:
            logits[self.rows, self.pattern[pos % 2]] += 40.0
        return logits

    def reorder(self, index, shared=None):
        self.run.reorder(index, shared)

    def select(self, rows):
        self.rows = [i for i, r in enumerate(rows.tolist()) if r in self.rows]
        self.run.select(rows)


class _LoopModel:
    def __init__(self, model, rows, pattern):
        self.model, self.rows, self.pattern = model, rows, pattern

    def start(self, enc, max_len, beams=1):
        return _LoopRun(self.model.start(enc, max_len, beams), list(self.rows), self.pattern)

    def encode(self, ids, mask):
        return self.model.encode(ids, mask)

    def scorer(self, params):
        return self.model.scorer(params)


@pytest.mark.parametrize("beams", [1, 4])
def test_repetition_guard_stops_a_loop_in_the_search(bundle_dir, beams):
    from engine.search.repetition import repeating_tail

    tr = Translator(bundle_dir, precision="fp32", threads=1)
    rows = tr.tokenizer.encode_batch(_sources()[:3])
    normal = search_outputs(tr, rows, beams, max_length=60)
    pattern = (normal[1].best.tokens[0], normal[2].best.tokens[0])
    tr._model = _LoopModel(tr._model, range(beams), pattern)  # only sentence 0 loops
    free = search_outputs(tr, rows, beams, max_length=60)
    guarded = search_outputs(tr, rows, beams, max_length=60, stop_repeats=True)
    assert len(free[0].best.tokens) == 58 and not free[0].repeated  # without the guard: to the limit (forced eos)
    assert guarded[0].repeated and repeating_tail(guarded[0].best.tokens)
    assert len(guarded[0].best.tokens) < 20
    assert guarded[0].best.eos_logprob is None
    for g, n in zip(guarded[1:], normal[1:]):  # the other sentences are untouched
        assert g.best.tokens == n.best.tokens and not g.repeated
    assert not any(o.repeated for o in normal)


def test_generate_ids_keeps_the_guard_off(fp32):
    assert not fp32.params(4).stop_repeats
