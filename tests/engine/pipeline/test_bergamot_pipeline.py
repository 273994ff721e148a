"""Every sentence-level feature of the pipeline on a Bergamot model (issue 29), without a bundle: the synthetic
tiny model of tests/fixtures/bergamot (separate vocabularies, a lexical shortlist, FP32), its graphs built and
loaded as OnnxBergamot, its vocabularies as BergamotTokenizer, driven through engine.pipeline's SentenceRun,
the alternatives, the alignment and the Pipeline's streaming, as the translator drives a Marian bundle.

Each expectation is computed another way: the searches run directly on the model (greedy, beam), a sentence
forced to a candidate's start (the alternatives' contract), a fresh shared start (a kept one restored through
DecoderRun.snapshot/restore), the decoder stepped by hand (alignment)."""

from __future__ import annotations

import time
from functools import partial

import numpy as np
import pytest

from engine.errors import NotSupported
from engine.glossary import Glossary, GlossaryEntry
from engine.languages import default_pair
from engine.options import TranslationOptions
from engine.pipeline import alignment, alternatives, guards
from engine.pipeline.alternatives import SentenceRun, SentenceSettings, SharedStarts
from engine.pipeline.length_limits import LengthRule
from engine.pipeline.requests import Decoding, Pipeline
from engine.pipeline.sentence_cache import SentenceCache
from engine.results import Translation
from engine.search.batch import encode_rows, search_batch
from engine.search.decoding import GenerationParams, beam_search, greedy_search
from engine.text.token_spans import source_spans

pytest.importorskip("sentencepiece")
pytest.importorskip("sentencepiece.sentencepiece_model_pb2")

PARAMS = GenerationParams(eos_id=0, pad_id=0, decoder_start_id=0)
RULE = LengthRule(2.0, 1)
PAIR = default_pair("en", "zh")


@pytest.fixture(scope="module")
def parts(tmp_path_factory):
    """(model, tokenizer) of the tiny synthetic Bergamot model with its shortlist."""
    from engine.families.bergamot import shortlist as shortlist_io
    from engine.families.bergamot.converter.graphs import build_decoder, build_encoder, from_checkpoint
    from engine.families.bergamot.converter.marian_io import read_bytes
    from engine.families.bergamot.converter.reader import read_model
    from engine.families.bergamot.converter.tokenizer import build_tokenizer
    from engine.families.bergamot.model import OnnxBergamot
    from engine.families.bergamot.tokenizer import BergamotTokenizer
    from tests.engine.families.bergamot.test_reference_oracle import make_plain
    from tests.fixtures.bergamot import make

    folder = make.cached_folder(make.TINY, "npz", shortlist=True)
    arch, weights = from_checkpoint(read_model(folder.model))
    assert folder.shortlist is not None
    short = shortlist_io.parse(read_bytes(folder.shortlist), target_vocab_size=arch.target_vocab)
    encoder = build_encoder(arch, weights, "fp32")[0].SerializeToString()
    decoder = build_decoder(arch, weights, "fp32", shortlisted=True)[0].SerializeToString()
    model = OnnxBergamot(encoder, decoder, arch, "fp32", shortlist=short, shared_vocab=folder.shared_vocab, threads=1)
    out = tmp_path_factory.mktemp("bergamot-tokenizer")
    target = None if folder.shared_vocab else make_plain(folder.trg_vocab)
    info = build_tokenizer(make_plain(folder.src_vocab), target, out)
    return model, BergamotTokenizer(info.as_dict(), out)


@pytest.fixture(scope="module")
def lines():
    from tests.fixtures.bergamot import make

    return make.english_lines()[::7][:12]


def sentence_run(parts, **options) -> SentenceRun:
    model, tok = parts
    settings = SentenceSettings(defaults=PARAMS, length_rule=RULE, target_script=PAIR.target.script)
    return SentenceRun(model, tok, settings, TranslationOptions(**options))


def direct(parts, source: str, beams: int):
    """The search run straight on the model, with the same limit."""
    model = parts[0]
    run = sentence_run(parts)
    ids = run.source_ids(source)
    limits = np.array([run.limit(ids, 0)])
    enc = encode_rows(model, [ids], 0)
    search = greedy_search if beams == 1 else beam_search
    *_, last = search(model, enc, PARAMS.replace(num_beams=beams, max_length=int(limits[0])), limits)
    return last.outputs[0].best


@pytest.mark.parametrize("beams", [1, 4], ids=["greedy", "beam"])
def test_a_sentence_is_the_models_own_search_with_its_scores(parts, lines, beams):
    run = sentence_run(parts, beams=beams, guards=False)
    lengths = set()
    for source in lines:
        result = alternatives.translate_sentence(run, source)
        best = direct(parts, source, beams)
        assert result.tokens == best.tokens
        np.testing.assert_allclose(result.logprobs, best.logprobs, rtol=1e-5, atol=1e-5)  # confidence
        assert all(np.isfinite(result.logprobs)) and all(p <= 0 for p in result.logprobs)
        assert len(result.token_spans) == len(result.tokens) and result.text == parts[1].decode(result.tokens)
        lengths.add(len(result.tokens))
    assert len(lengths) > 2, "varied outputs"


def test_nbest_gives_distinct_texts_with_lower_scores(parts, lines):
    run = sentence_run(parts, beams=4, alternatives=3, guards=False)
    found = 0
    for source in lines:
        result = alternatives.translate_sentence(run, source)
        texts = [a.text for a in result.alternatives]
        assert result.text not in texts and len(set(texts)) == len(texts)
        assert all(a.score <= result.score + 1e-6 and np.isfinite(a.score) for a in result.alternatives)
        found += len(texts)
    assert found


def test_alternatives_are_what_forcing_their_start_gives(parts, lines):
    run = sentence_run(parts, guards=False)
    kept = SharedStarts()
    checked = 0
    for source in lines:
        tokens = alternatives.translate_sentence(run, source).tokens
        for position in sorted({0, len(tokens) // 2, len(tokens) - 1}) if len(tokens) >= 3 else ():
            alts = alternatives.alternatives(run, kept, source, tokens, position, k=3)
            assert alts
            for alt in alts:
                assert alt.tokens[:position] == tokens[:position] and alt.tokens[position] != tokens[position]
                forced = alternatives.translate_sentence(run, source, prefix=alt.tokens[: position + 1])
                assert alt.tokens == forced.tokens and alt.text == forced.text
                checked += 1
    assert checked


def test_a_kept_start_restored_at_another_position_answers_as_a_fresh_one(parts, lines):
    """The shared start goes back (DecoderRun.restore of a snapshot of its SSRU cells) and forward on a sentence:
    every click answers exactly what a click with nothing kept does."""
    for beams in (1, 3):
        run = sentence_run(parts, beams=beams, guards=False)
        source, tokens = next(
            (line, out) for line in lines if len(out := alternatives.translate_sentence(run, line).tokens) >= 4
        )
        kept = SharedStarts()
        alternatives.prepare(run, kept, source, tokens)
        start = kept.start
        for position in (len(tokens) - 1, 1, len(tokens) // 2, 0, 2):
            warm = list(alternatives.iter_alternatives(run, kept, source, tokens, position, k=3))
            cold = list(alternatives.iter_alternatives(run, SharedStarts(), source, tokens, position, k=3))
            assert warm == cold and warm[-1]
        assert kept.start is start, "every click reused the kept start"


def test_a_prefix_outside_the_shortlist_is_forced_and_scored(parts, lines):
    model, tok = parts
    run = sentence_run(parts, guards=False)
    source = lines[0]
    ids = run.source_ids(source)
    allowed = set(model.shortlist_for(np.array([ids])).tolist())
    outside = next(i for i in range(2, tok.vocab_size) if i not in allowed and i not in tok.special_ids)
    result = alternatives.translate_sentence(run, source, prefix=[outside])
    assert result.tokens[0] == outside
    assert np.isfinite(result.logprobs[0]) and np.isfinite(result.score)


def test_a_glossary_term_is_placed(parts, lines):
    model, tok = parts
    source = next(line for line in lines if len(line.split()) > 3)
    word = max(source.split(), key=len).strip(".,!?")
    run = sentence_run(parts, guards=False)
    ids = run.source_ids(source)
    allowed = set(model.shortlist_for(np.array([ids])).tolist())
    term = next(
        piece.lstrip("▁")
        for i in range(2, tok.vocab_size)
        if i not in allowed and i not in tok.special_ids and len((piece := tok.id_to_piece(i)).lstrip("▁")) > 1
    )
    glossary = Glossary((GlossaryEntry(word, term),), protect=False)
    run = sentence_run(parts, guards=False, glossary=glossary, beams=2)
    result = alternatives.translate_sentence(run, source)
    assert term in result.text and not result.unmet
    assert all(np.isfinite(result.logprobs))


def test_guards_ban_with_the_target_vocabulary_and_skip_its_special_pieces(parts, lines):
    tok = parts[1]
    bans = guards.artefact_bans("Thank you.", tok)
    assert not any(t in tok.special_ids for ban in bans for t in ban)
    assert any(tok.id_to_piece(i).startswith("<0x") for i in tok.special_ids) or all(
        tok.target.piece_type(i) != 6 for i in range(tok.vocab_size)
    ), "byte pieces are special"
    run = sentence_run(parts, beams=2)  # guards on: bans, the repetition stop and the flags
    for source in lines[:4]:
        result = alternatives.translate_sentence(run, source)
        assert isinstance(result.flags, tuple)
        assert not any(result.tokens[i : i + len(b)] == b for b in bans for i in range(len(result.tokens))), (
            "no banned spelling written"
        )


def test_alignment_is_the_models_attention_on_source_words(parts, lines):
    model, tok = parts
    run = sentence_run(parts, guards=False)
    checked = 0
    for source in lines:
        tokens = alternatives.translate_sentence(run, source).tokens
        spans = alignment.align(run, source, tokens)
        assert len(spans) == len(tokens)
        if not tokens:
            continue
        ids = run.source_ids(source)
        words = source_spans(tok.pieces(source), source)
        dec = model.start(model.encode(np.array([ids]), np.ones((1, len(ids)), np.int64)), len(tokens) + 1)
        for i, token in enumerate((0, *tokens[:-1])):
            dec.step(np.array([token]))
            want = words[int(np.argmax(dec.alignment[0, : len(ids) - 1]))]
            assert spans[i] == want
            a, b = spans[i]
            assert 0 <= a <= b <= len(source)
        checked += sum(a < b for a, b in spans)
    assert checked, "some tokens align to a word"


def test_streaming_and_segments_through_the_pipeline(parts, lines):
    model, tok = parts
    pipeline = Pipeline(tok, PAIR, RULE)
    decoding = Decoding(partial(search_batch, model), model.max_positions, "fp32", SentenceCache(), "bergamot")
    options = TranslationOptions(beams=1, guards=False)

    def stream(text: str) -> Translation:
        job = pipeline.job(text, options, None, time.perf_counter())
        events = list(pipeline.stream(job, PARAMS, decoding, None))
        final = events[-1]
        assert isinstance(final, Translation) and not final.cancelled
        assert "".join(e.delta for e in events[:-1]) == final.text
        return final

    run = sentence_run(parts, guards=False)
    checked = 0
    for line in lines:  # one sentence: the batch's shortlist is the sentence's own
        want = alternatives.translate_sentence(run, line).tokens
        if any(want[i] == want[i + 1] == want[i + 2] for i in range(len(want) - 2)):
            continue  # a loop: the stream cuts it (engine.pipeline.decode_loop), a sentence request does not
        (sentence,) = stream(line).sentences
        assert sentence.tokens == want
        checked += 1
    assert checked >= 2
    # several sentences decode as one batch under the union of their shortlists (Marian's rule)
    together = stream(" ".join(lines[:3]))
    assert len(together.sentences) == 3 and together.text


def test_marian_says_it_cannot_align(bundle_dir):
    from engine.pipeline.translator import Translator

    tr = Translator(bundle_dir, precision="fp32", threads=1)
    result = tr.translate_sentence("Hello world.")
    with pytest.raises(NotSupported, match="no word alignment") as caught:
        tr.alignment("Hello world.", result.tokens)
    assert caught.value.feature == "alignment"
