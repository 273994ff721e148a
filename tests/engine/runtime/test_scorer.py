"""The beam scorer's session (engine.runtime.scorer)."""

from __future__ import annotations

import numpy as np

from engine.bundle.manifest import load_manifest
from engine.runtime.scorer import TopKScorer


def _scorer(bundle_dir):
    manifest = load_manifest(bundle_dir)
    vocab = manifest.tokenizer["vocab_size"]
    return TopKScorer(bundle_dir / manifest.graphs["scorer"]["file"], vocab, [3], threads=1), vocab


def test_scorer_keeps_its_arena_and_releases_it_when_the_batch_changes(bundle_dir):
    """Its per-step [rows, vocab] temporaries are reused within a batch (without the arena each step mapped and
    faulted in fresh ones: beam search 1.3× slower at full size), and handed back at the first step of a batch of
    another size, so a large batch's do not stay reserved."""
    scorer, vocab = _scorer(bundle_dir)
    assert scorer._session.get_session_options().enable_cpu_mem_arena is True
    real, seen = scorer._session, []

    class Spy:
        def run(self, names, feeds, run_options=None):
            seen.append(run_options)
            return real.run(names, feeds, run_options)

    scorer._session = Spy()
    logits = np.zeros((3, vocab), dtype=np.float32)
    for rows in (3, 3, 3, 2, 2, 3):
        scorer.top(logits[:rows], 4)
    released = [o is not None for o in seen]
    assert released == [True, False, False, True, False, True]
    assert seen[0].get_run_config_entry("memory.enable_memory_arena_shrinkage") == "cpu:0"


def test_scorer_top_k_with_the_ban(bundle_dir):
    """The fixture's scorer is built for opus-mt's config (renormalize_logits): log-probabilities over the tokens
    the mask allows; without renormalisation they would be normalised over the whole vocabulary first."""
    scorer, vocab = _scorer(bundle_dir)
    renormalize = load_manifest(bundle_dir).graphs["scorer"]["renormalize"]
    assert renormalize is True
    logits = np.random.default_rng(0).standard_normal((3, vocab)).astype(np.float32)
    logits[:, 3] = 100.0  # banned: never chosen however likely
    values, ids = scorer.top(logits, 4)
    allowed = logits.astype(np.float64)
    allowed[:, 3] = -np.inf
    logprobs = allowed - np.log(np.exp(allowed).sum(axis=1, keepdims=True))
    want = np.argsort(-logprobs, axis=1, kind="stable")[:, :4]
    assert (ids == want).all()
    np.testing.assert_allclose(values, np.take_along_axis(logprobs, want, axis=1), rtol=1e-5, atol=1e-5)
