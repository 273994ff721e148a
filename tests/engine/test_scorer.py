"""The beam scorer's session (engine.scorer)."""

from __future__ import annotations

import numpy as np

from engine.manifest import load_manifest
from engine.scorer import TopKScorer


def _scorer(bundle_dir):
    manifest = load_manifest(bundle_dir)
    vocab = manifest.tokenizer["vocab_size"]
    return TopKScorer(bundle_dir / manifest.graphs["scorer"]["file"], vocab, [3], threads=1), vocab


def test_scorer_keeps_no_arena(bundle_dir):
    """Its per-step [rows, vocab] temporaries go back to the allocator after each run instead of staying reserved
    at the largest batch's size."""
    assert _scorer(bundle_dir)[0]._session.get_session_options().enable_cpu_mem_arena is False


def test_scorer_top_k_with_the_ban(bundle_dir):
    scorer, vocab = _scorer(bundle_dir)
    logits = np.random.default_rng(0).standard_normal((3, vocab)).astype(np.float32)
    logits[:, 3] = 100.0  # banned: never chosen however likely
    values, ids = scorer.top(logits, 4)
    shifted = logits - logits.max(axis=1, keepdims=True)
    logprobs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    logprobs[:, 3] = -np.inf
    want = np.argsort(-logprobs, axis=1, kind="stable")[:, :4]
    assert (ids == want).all()
    np.testing.assert_allclose(values, np.take_along_axis(logprobs, want, axis=1), rtol=1e-5, atol=1e-5)
