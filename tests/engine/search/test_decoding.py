"""ONNX FP32 decoding equals transformers' generate() token for token on the fixture (greedy and beam, batch 1 and
batched with padding, with and without the forced-EOS length limit)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.pipeline.translator import Translator
from tests.conftest import FIXTURE_DIR

pytestmark = pytest.mark.torch


def _sources() -> list[str]:
    corpus = [r.split("\t")[0] for r in (FIXTURE_DIR / "corpus.tsv").read_text(encoding="utf-8").splitlines()]
    extra = (FIXTURE_DIR / "english_extra.txt").read_text(encoding="utf-8").splitlines()
    texts = [f">>cmn_Hans<< {s}" for s in corpus[::3]] + [f">>cmn_Hant<< {s}" for s in corpus[1::6]]
    return texts + [f">>cmn_Hans<< {s}" for s in extra[:20]]  # unseen input: longer, odd outputs


def load_hf(checkpoint):
    """transformers' tokenizer and model for a fixture checkpoint: the oracle (one thread, deterministic)."""
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    tok = transformers.MarianTokenizer.from_pretrained(str(checkpoint))
    model = transformers.MarianMTModel.from_pretrained(str(checkpoint)).eval()
    return tok, model


@pytest.fixture(scope="module")
def hf(checkpoint_dir):
    return load_hf(checkpoint_dir)


@pytest.fixture(scope="module")
def fp32(bundle_dir):
    return Translator(bundle_dir, precision="fp32", threads=1)


def _hf_generate(hf, texts, beams, max_length):
    import torch

    tok, model = hf
    with torch.no_grad():
        enc = tok(texts, return_tensors="pt", padding=True)
        out = model.generate(**enc, num_beams=beams, max_length=max_length, do_sample=False)
    rows = []
    for row in out.tolist():
        row = row[1:]
        if tok.eos_token_id in row:
            row = row[: row.index(tok.eos_token_id)]
        rows.append([t for t in row if t != tok.pad_token_id])
    return rows


def assert_batch_one_matches(hf, fp32, texts, beams, max_length, same_ids: bool = False) -> None:
    """Each text alone: our FP32 ids equal generate()'s (and, with `same_ids`, our tokenizer's ids equal HF's)."""
    assert len(texts) >= 70
    for text in texts:
        ids = hf[0](text).input_ids
        if same_ids:
            assert ids == fp32.tokenizer.encode(text)
        ours = fp32.generate_ids([ids], beams=beams, max_length=max_length)
        assert ours == _hf_generate(hf, [text], beams, max_length), text


def assert_padded_batches_match(hf, fp32, texts, beams) -> None:
    """Six random batches of six texts of different lengths (really padded) decode as generate() does."""
    rng = np.random.default_rng(0)
    for _ in range(6):
        batch = [texts[i] for i in rng.choice(len(texts), size=6, replace=False)]
        ids = [hf[0](t).input_ids for t in batch]
        assert len({len(i) for i in ids}) > 1  # really padded
        assert fp32.generate_ids(ids, beams=beams) == _hf_generate(hf, batch, beams, 512)


@pytest.mark.parametrize("beams", [1, 2, 4])
@pytest.mark.parametrize("max_length", [512, 12])
def test_batch_one_matches_generate(hf, fp32, beams, max_length):
    assert_batch_one_matches(hf, fp32, _sources(), beams, max_length)


@pytest.mark.parametrize("beams", [1, 4])
def test_batched_with_padding_matches_generate(hf, fp32, beams):
    assert_padded_batches_match(hf, fp32, _sources(), beams)


def test_min_and_max_new_tokens_match_generate(hf, fp32):
    import torch

    tok, model = hf
    text = ">>cmn_Hans<< Thank you very much."
    ids = tok(text).input_ids
    with torch.no_grad():
        out = model.generate(**tok([text], return_tensors="pt"), num_beams=1, min_new_tokens=15, max_new_tokens=15)
    expected = [t for t in out[0].tolist()[1:] if t not in (tok.eos_token_id, tok.pad_token_id)]
    ours = fp32.generate_ids([ids], beams=1, min_new_tokens=15, max_new_tokens=15)[0]
    assert ours == expected
    assert len(ours) == 14  # the 15th step is the forced EOS of the model's generation config


@pytest.mark.parametrize("beams", [1, 4])
def test_without_forced_eos_matches_generate(hf, fp32, beams):
    import torch

    tok, model = hf
    text = ">>cmn_Hans<< Thank you very much."
    with torch.no_grad():
        out = model.generate(
            **tok([text], return_tensors="pt"),
            num_beams=beams,
            min_new_tokens=15,
            max_new_tokens=15,
            forced_eos_token_id=None,
        )
    expected = [t for t in out[0].tolist()[1:] if t not in (tok.eos_token_id, tok.pad_token_id)]
    ours = fp32.generate_ids([tok(text).input_ids], beams=beams, min_new_tokens=15, max_new_tokens=15, forced_eos=False)
    assert ours[0] == expected
    assert len(expected) == 15  # 15 real tokens: nothing turned the last one into eos


def test_fixture_output_is_varied(fp32):
    """A model that repeats one token would make every parity test above meaningless."""
    texts = _sources()[:40]
    outs = fp32.generate_ids(fp32.tokenizer.encode_batch(texts), beams=1)
    distinct_outputs = {tuple(o) for o in outs}
    distinct_tokens = {t for o in outs for t in o}
    assert len(distinct_outputs) >= 35
    assert len(distinct_tokens) >= 150
    for o in outs:
        assert len(set(o)) >= max(2, len(o) // 3)


def test_int8_reproduces_fp32_on_the_fixture(bundle_dir, fp32):
    int8 = Translator(bundle_dir, precision="int8", threads=1)
    texts = _sources()[:60]
    ids = fp32.tokenizer.encode_batch(texts)
    same = sum(a == b for a, b in zip(int8.generate_ids(ids, beams=4), fp32.generate_ids(ids, beams=4)))
    assert same / len(texts) >= 0.95


@pytest.mark.parametrize("max_length", [512, 12])
def test_full_vocabulary_path_matches_generate(hf, bundle_dir, max_length):
    """Beam search without the TopK scorer (the path multi-token bad words take) is exact too."""
    tr = Translator(bundle_dir, precision="fp32", threads=1)
    tr._model.scorer = lambda params: None
    for text in _sources()[::4]:
        ids = hf[0](text).input_ids
        assert tr.generate_ids([ids], beams=4, max_length=max_length) == _hf_generate(hf, [text], 4, max_length)


def test_beam_with_min_new_tokens_matches_generate(hf, fp32):
    """The EOS ban of a minimum length goes through the scorer's k+1 candidates."""
    import torch

    tok, model = hf
    for text in _sources()[:10]:
        enc = tok([text], return_tensors="pt")
        with torch.no_grad():
            out = model.generate(**enc, num_beams=4, min_new_tokens=12, max_new_tokens=20)
        expected = [t for t in out[0].tolist()[1:] if t not in (tok.eos_token_id, tok.pad_token_id)]
        assert fp32.generate_ids([tok(text).input_ids], beams=4, min_new_tokens=12, max_new_tokens=20) == [expected]


def test_columns_of_maps_ids_to_their_shortlist_columns_and_others_to_minus_one() -> None:
    from engine.search.decoding import columns_of

    ids = np.array([0, 3, 7, 31999], dtype=np.int64)
    got = columns_of(ids, [7, 0, 31999, 5, 32000, -1, 3])
    assert got.tolist() == [2, 0, 3, -1, -1, -1, 1]
    assert columns_of(ids, np.zeros((0,), np.int64)).shape == (0,)


def test_params_replace_is_dataclasses_replace() -> None:
    """GenerationParams.replace copies the fields without dataclasses.replace's walk: the same params, the original
    unchanged, an unknown field refused."""
    import dataclasses

    from engine.search.decoding import GenerationParams

    params = GenerationParams(eos_id=0, pad_id=1, decoder_start_id=2, bad_words=((5,),), num_beams=4)
    changed = params.replace(max_length=9, bad_words=((5,), (6, 7)), forced_eos_id=0)
    assert changed == dataclasses.replace(params, max_length=9, bad_words=((5,), (6, 7)), forced_eos_id=0)
    assert hash(changed) == hash(dataclasses.replace(params, max_length=9, bad_words=((5,), (6, 7)), forced_eos_id=0))
    assert params.max_length == 512 and params.bad_words == ((5,),) and params.replace() == params
    with pytest.raises(dataclasses.FrozenInstanceError):
        changed.max_length = 3  # type: ignore[misc]
    with pytest.raises(TypeError, match="beam"):
        params.replace(beam=2)
