"""Prefix-forced decoding equals generate(decoder_input_ids=[[start, *prefix]]) on the fixture (FP32): greedy and
beam, prefixes of several lengths (one ending inside a word, from a text prefix), rows of one batch with different
prefix lengths or none; the prefix's own tokens are scored by the model's raw distribution."""

from __future__ import annotations

import numpy as np
import pytest

from engine.errors import InputError
from engine.pipeline.translator import Translator
from engine.text import punctuation
from engine.text.target_prefix import encode_target_prefix
from tests.conftest import FIXTURE_DIR
from tests.engine.search.test_decoding import _sources, load_hf
from tests.engine.search_oracle import TOL, hf_scored, search_outputs

pytestmark = pytest.mark.torch


@pytest.fixture(scope="module")
def hf(checkpoint_dir):
    return load_hf(checkpoint_dir)


@pytest.fixture(scope="module")
def fp32(bundle_dir):
    return Translator(bundle_dir, precision="fp32", threads=1)


def _cases(fp32):
    """(text, prefix) pairs: cuts of each sentence's own translation at several lengths, and an unrelated prefix."""
    texts = _sources()[::7][:8]
    rows = fp32.tokenizer.encode_batch(texts)
    outs = fp32.generate_ids(rows, beams=1)
    cases = []
    for text, out in zip(texts, outs):
        for n in sorted({1, 2, len(out) // 2, max(1, len(out) - 1)}):
            cases.append((text, out[:n]))
        cases.append((text, outs[0][:3]))  # another sentence's start: the model must continue from it
    return cases


@pytest.mark.parametrize("beams", [1, 4])
def test_prefix_matches_generate_with_decoder_input_ids(hf, fp32, beams):
    start = fp32.defaults.decoder_start_id
    for text, prefix in _cases(fp32):
        ids = hf[0](text).input_ids
        (out,) = search_outputs(fp32, [ids], beams, extras=[prefix])
        ((tokens, steps, ended, score),) = hf_scored(hf, [text], beams, prompt=[start, *prefix])
        assert list(out.best.tokens) == [*prefix, *tokens], (text, prefix)
        gen = [*out.best.logprobs[len(prefix) :], *([out.best.eos_logprob] if ended else [])]
        assert np.allclose(gen, steps, atol=TOL, rtol=0)
        if score is not None:  # generate() scores what follows the prefix only
            assert abs(sum(gen) / len(gen) ** fp32.defaults.length_penalty - score) <= TOL


def test_prefix_tokens_are_scored_by_the_model(hf, fp32):
    import torch

    tok, model = hf
    start = fp32.defaults.decoder_start_id
    text, prefix = _cases(fp32)[2]
    ids = tok(text).input_ids
    (out,) = search_outputs(fp32, [ids], 4, extras=[prefix])
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids]), decoder_input_ids=torch.tensor([[start, *prefix]])).logits
    ref = torch.log_softmax(logits[0], dim=-1)
    expected = [float(ref[i, t]) for i, t in enumerate(prefix)]
    assert np.allclose(out.best.logprobs[: len(prefix)], expected, atol=TOL)


def test_text_prefix_ending_inside_a_word(hf, fp32):
    """Cut a known translation in the middle of a multi-character piece: the prefix ends inside a word, and
    decoding from it still equals generate() with the same forced tokens."""
    tok = fp32.tokenizer
    rules = punctuation.rules_for(fp32.pair.target.script)
    start = fp32.defaults.decoder_start_id
    tested = 0
    for text in _sources()[:40]:
        ids = tok.encode(text)
        out = fp32.generate_ids([ids], beams=4)[0]
        cut = next((i for i, t in enumerate(out) if len(tok.id_to_piece(t).lstrip("▁")) >= 2), None)
        if cut is None:
            continue
        head = rules.normalize(tok.decode(out[:cut]))
        piece = tok.id_to_piece(out[cut]).lstrip("▁")
        # the text up to one character into the multi-character piece (the space before it kept, if any)
        shown = rules.normalize(tok.decode(out[: cut + 1]))
        prefix_text = shown[: len(shown) - len(piece) + 1]
        assert len(prefix_text) > len(head)
        prefix = encode_target_prefix(tok, prefix_text)
        assert rules.normalize(tok.decode(prefix)) == prefix_text.strip()
        assert prefix != out[: len(prefix)]  # really inside a piece: the tokens differ from the model's own
        for beams in (1, 4):
            (got,) = search_outputs(fp32, [ids], beams, extras=[prefix])
            ((tokens, _, _, _),) = hf_scored(hf, [text], beams, prompt=[start, *prefix])
            assert list(got.best.tokens) == [*prefix, *tokens]
        tested += 1
        if tested == 4:
            break
    assert tested == 4


@pytest.mark.parametrize("beams", [1, 4])
def test_rows_with_different_prefixes_in_one_batch(fp32, beams):
    cases = _cases(fp32)[:10]
    rows = [fp32.tokenizer.encode(t) for t, _ in cases]
    prefixes = [p if i % 3 else [] for i, (_, p) in enumerate(cases)]  # some rows without a prefix
    assert len({len(p) for p in prefixes}) >= 3
    together = search_outputs(fp32, rows, beams, extras=prefixes)
    for row, prefix, out in zip(rows, prefixes, together):
        (alone,) = search_outputs(fp32, [row], beams, extras=[prefix])
        assert out.best.tokens == alone.best.tokens
        assert list(out.best.tokens[: len(prefix)]) == list(prefix)
        assert np.allclose(out.best.logprobs, alone.best.logprobs, atol=TOL)


def test_target_prefix_never_loses_a_character(fp32):
    """Every prefix of every corpus translation (shown form: full-width punctuation) tokenises back to itself."""
    tok = fp32.tokenizer
    rules = punctuation.rules_for(fp32.pair.target.script)
    lines = (FIXTURE_DIR / "corpus.tsv").read_text(encoding="utf-8").splitlines()
    checked = 0
    for line in lines:
        target = line.split("\t")[1]
        for j in range(1, len(target) + 1):
            prefix = target[:j]
            assert rules.normalize(tok.decode(encode_target_prefix(tok, prefix))) == rules.normalize(prefix.strip())
            checked += 1
    assert checked > 500
    assert encode_target_prefix(tok, "   ") == []
    with pytest.raises(InputError):
        encode_target_prefix(tok, "我\U0001f600")
