"""Per-sentence results of the segment seam, mostly without a model (a fake search that delivers outputs): spans in
both texts, token scores, origin (model, cache, memory), n-best alternatives, guards' flags and bans, glossary
constraints, cancel, option checks; then the same through the real Translator on the fixture."""

from __future__ import annotations

import itertools
import sys
import threading
import types

import pytest

from engine.errors import InputError
from engine.glossary import Glossary, GlossaryEntry
from engine.languages import default_pair
from engine.options import TranslationOptions
from engine.pipeline import batching, guards
from engine.pipeline.decode_loop import Clock, decode
from engine.pipeline.planning import Sentence
from engine.pipeline.requests import Pipeline
from engine.pipeline.sentence_cache import SentenceCache
from engine.results import (
    FLAG_CONSTRAINT,
    FLAG_LENGTH,
    FLAG_NUMBERS,
    FLAG_REPETITION,
    ORIGIN_CACHE,
    ORIGIN_MEMORY,
    ORIGIN_MODEL,
    Flag,
    StreamEvent,
    Translation,
)
from engine.search.decoding import StepUpdate
from engine.search.types import Constraint, Hypothesis, SentenceOutput
from tests.engine.pipeline_fakes import PARAMS, CharTokenizer, DictionaryModel, hypothesis, logprob

ZH_EN = default_pair("zh", "en")
EN_ZH = default_pair("en", "zh", [">>cmn_Hans<<", ">>cmn_Hant<<"])
NO_GUARDS = TranslationOptions(guards=False)


def spy_guards(monkeypatch, bans_for=lambda source: (), flags_for=None):
    """The real engine.pipeline.guards, watched: every check_sentence call is recorded in the returned list, and
    answered by
    `flags_for` when given (else by the real check). Its artefact bans come from `bans_for`: the real ones read a
    piece vocabulary, and CharTokenizer's is every code point."""
    checks = []
    real_check = guards.check_sentence

    def check_sentence(source, target, *, source_tokens, target_tokens, repeated=False, unmet=()):
        kw = dict(source_tokens=source_tokens, target_tokens=target_tokens, repeated=repeated, unmet=tuple(unmet))
        checks.append((source, target, kw))
        return tuple((flags_for or real_check)(source, target, **kw))

    def artefact_bans(source, tokenizer):
        assert isinstance(tokenizer, CharTokenizer)
        return bans_for(source)

    monkeypatch.setattr(guards, "check_sentence", check_sentence)
    monkeypatch.setattr(guards, "artefact_bans", artefact_bans)
    return checks


def run(pair, text, model, options=NO_GUARDS, cache=None, cancel=None):
    pipe = Pipeline(CharTokenizer(), pair)  # type: ignore[arg-type]
    job = pipe.job(text, options, None, 0.0)
    items = list(pipe.stream(job, PARAMS, model.decoding(cache), cancel))
    events = [i for i in items if isinstance(i, StreamEvent)]
    result = items[-1]
    assert isinstance(result, Translation)
    assert "".join(e.delta for e in events) == result.text  # the streaming contract
    return result, events


def test_every_field_of_a_decoded_sentence():
    text = "你好。  我是学生！\n\n他说：“你好。”"
    table = {"你好。": "Hello.", "我是学生！": "I am a student!", "他说：“你好。”": "He said hi."}
    result, _ = run(ZH_EN, text, DictionaryModel(table))
    assert [s.index for s in result.sentences] == [0, 1, 2]
    for s in result.sentences:
        a, b = s.source_span
        assert text[a:b] == s.source
        assert result.text[s.target_span[0] : s.target_span[1]] == table[s.source] == s.text
        assert s.origin == ORIGIN_MODEL and s.flags == () and s.unmet == () and s.alternatives == ()
        assert s.tokens == tuple(ord(ch) for ch in table[s.source])
        assert s.logprobs == tuple(logprob(ch) for ch in table[s.source])
        assert s.score == pytest.approx(hypothesis(table[s.source]).score)
        assert [result.text[s.target_span[0] + x : s.target_span[0] + y] for x, y in s.token_spans] == [
            "" if ch == " " else ch for ch in table[s.source]
        ]
    assert result.tokens == [list(s.tokens) for s in result.sentences]


def test_a_joined_wrapped_sentence_spans_its_lines_and_reads_joined():
    text = "This sentence was wrapped\nover two lines by an e-mail program. Next one."
    result, _ = run(EN_ZH, text, DictionaryModel({}))
    first, second = result.sentences
    assert first.source == "This sentence was wrapped over two lines by an e-mail program."
    assert text[first.source_span[0] : first.source_span[1]] == text[: text.index(" Next")]
    assert text[second.source_span[0] : second.source_span[1]] == "Next one."
    assert result.text == first.source.upper() + "NEXT ONE."  # zh joiner: nothing between sentences
    assert result.text[second.target_span[0] : second.target_span[1]] == "NEXT ONE."


def test_target_spans_and_token_spans_follow_the_punctuation_rules():
    model = DictionaryModel({"你好。": "Hello，world。", "我是学生！": "Yes！"})
    result, _ = run(ZH_EN, "你好。我是学生！", model)
    assert result.text == "Hello, world. Yes!"
    first, second = result.sentences
    assert result.text[slice(*first.target_span)] == "Hello, world." and first.tokens[5] == ord("，")
    pieces = [result.text[first.target_span[0] + a : first.target_span[0] + b] for a, b in first.token_spans]
    assert pieces[5] == "," and pieces[6] == "w" and pieces[-1] == "."  # "，" → ", ": the space belongs to no token
    assert result.text[slice(*second.target_span)] == "Yes!"


def test_the_pieces_of_a_split_long_sentence_share_its_span(monkeypatch):
    clause = "这是一个很长的句子的一部分"
    text = "，".join([clause] * 30) + "。"  # 30 clauses, far over CHUNK_TOKENS code points
    result, _ = run(ZH_EN, text, DictionaryModel({}))
    assert len(result.sentences) > 1
    assert {s.source_span for s in result.sentences} == {(0, len(text))}
    assert "".join(s.source for s in result.sentences) == text  # each row's source is its own piece
    spans = [s.target_span for s in result.sentences]
    assert all(a < b for a, b in spans) and all(b1 <= a2 for (_, b1), (a2, _) in itertools.pairwise(spans))


def test_run_window_fills_sentences_for_each_text():
    model = DictionaryModel({"你好。": "Hello.", "我是学生！": "I am a student!"})
    pipe = Pipeline(CharTokenizer(), ZH_EN)  # type: ignore[arg-type]
    window = pipe.read_window(iter(["你好。", 42, "我是学生！你好。"]), NO_GUARDS, None)
    first, refused, third = pipe.run_window(window, PARAMS, model.decoding(), None)
    assert [s.source for s in first.sentences] == ["你好。"] and refused.sentences == []
    assert [third.text[slice(*s.target_span)] for s in third.sentences] == ["I am a student!", "Hello."]
    assert [s.source_span for s in third.sentences] == [(0, 5), (5, 8)]


def test_cache_hits_keep_their_scores_and_say_so():
    cache = SentenceCache()
    model = DictionaryModel({"你好。": "Hello."})
    fresh, _ = run(ZH_EN, "你好。", model, cache=cache)
    again, events = run(ZH_EN, "你好。", model, cache=cache)
    assert model.rows == ["你好。"]  # decoded once
    (a,), (b,) = fresh.sentences, again.sentences
    assert a.origin == ORIGIN_MODEL and b.origin == ORIGIN_CACHE
    assert (b.tokens, b.logprobs, b.score, b.token_spans) == (a.tokens, a.logprobs, a.score, a.token_spans)
    assert events[0].delta == "Hello."  # at once


@pytest.mark.parametrize(
    "other",
    [
        TranslationOptions(guards=False, alternatives=1),
        TranslationOptions(guards=True),
        TranslationOptions(guards=False, glossary=Glossary((GlossaryEntry("你好", "hi"),))),
    ],
)
def test_the_cache_key_has_everything_that_changes_a_sentence(monkeypatch, other):
    spy_guards(monkeypatch)
    fake_glossary(monkeypatch)
    cache = SentenceCache()
    model = DictionaryModel({"你好。": "Hello."})
    run(ZH_EN, "你好。", model, NO_GUARDS, cache)
    result, _ = run(ZH_EN, "你好。", model, other, cache)
    assert model.rows == ["你好。", "你好。"] and result.sentences[0].origin == ORIGIN_MODEL


def test_alternatives_come_from_the_n_best_distinct_and_without_the_best():
    model = DictionaryModel({"你好。": ["Hello.", "Hello.", "Hi.", "Hey.", "Hi."]})
    result, _ = run(ZH_EN, "你好。", model, TranslationOptions(alternatives=3, guards=False))
    params, _ = model.calls[0]
    assert params.num_return == 4 and params.num_beams == 4  # greedy raised to the n-best's size
    (s,) = result.sentences
    assert [a.text for a in s.alternatives] == ["Hi.", "Hey."]  # the duplicate best and repeated "Hi." dropped
    assert s.alternatives[0].tokens == tuple(map(ord, "Hi.")) and s.alternatives[0].score == hypothesis("Hi.").score
    wide = PARAMS.replace(num_beams=5)
    pipe = Pipeline(CharTokenizer(), ZH_EN)  # type: ignore[arg-type]
    job = pipe.job("你好。", TranslationOptions(alternatives=1, guards=False), None, 0.0)
    *_, again = pipe.stream(job, wide, model.decoding(), None)
    assert model.calls[-1][0].num_beams == 5 and model.calls[-1][0].num_return == 2  # never lowered
    assert [a.text for a in again.sentences[0].alternatives] == []  # the second hypothesis reads like the best


class Memory:
    def __init__(self, table):
        self.table = table
        self.asked = []

    def lookup(self, source):
        self.asked.append(source)
        return self.table.get(source)


def test_a_memory_hit_is_not_decoded_is_shown_as_written_and_streams_at_once():
    memory = Memory({"你好。": "Hi，there"})  # the user's text keeps its full-width comma
    model = DictionaryModel({"我是学生！": "I am a student!"})
    options = TranslationOptions(memory=memory, guards=False)
    result, events = run(ZH_EN, "你好。我是学生！", model, options)
    assert memory.asked == ["你好。", "我是学生！"] and model.rows == ["我是学生！"]
    assert result.text == "Hi，there I am a student!" and events[0].delta.startswith("Hi，there")
    hit, decoded = result.sentences
    assert (hit.origin, hit.tokens, hit.logprobs, hit.score, hit.token_spans) == (ORIGIN_MEMORY, (), (), None, ())
    assert result.text[slice(*hit.target_span)] == "Hi，there" and decoded.origin == ORIGIN_MODEL
    assert result.stats.sentences_reused == 0 and result.tokens[0] == []


def test_guards_flag_sentences_ban_artefacts_per_sentence_and_cut_beam_loops(monkeypatch):
    checks = spy_guards(
        monkeypatch,
        bans_for=lambda source: () if "掌声" in source else ((40, 50), (60,)),
        flags_for=lambda source, target, **kw: (Flag(FLAG_LENGTH, "short"),) if len(target) < 3 else (),
    )
    model = DictionaryModel({"一。": "One.", "掌声。": "(Applause)", "三。": "3"})
    result, _ = run(ZH_EN, "一。掌声。三。", model, TranslationOptions())
    assert [s.flags for s in result.sentences] == [(), (), (Flag(FLAG_LENGTH, "short"),)]
    assert [c[0] for c in checks] == ["一。", "掌声。", "三。"]
    assert checks[0][2] == dict(source_tokens=2, target_tokens=4, repeated=False, unmet=())
    # one search call per ban set; the odd sentence gets its own, in reading order of first sentences
    assert [(p.bad_words, p.stop_repeats) for p, _ in model.calls] == [(((40, 50), (60,)), True), ((), True)]
    assert model.rows == ["一。", "三。", "掌声。"]
    assert result.text == "One. (Applause) 3"  # still in reading order
    checks.clear()
    off, _ = run(ZH_EN, "一。掌声。三。", DictionaryModel({}), NO_GUARDS)
    assert checks == [] and all(s.flags == () for s in off.sentences)


def test_equal_ban_sets_of_many_sentences_are_kept_once(monkeypatch):
    """The bans memo holds the shared set: a fresh copy per sentence (4,350 sequences at real scale) was 35 KB a
    sentence, the largest part of a long session's memory growth."""
    spy_guards(monkeypatch, bans_for=lambda source: tuple((40 + i, 50) for i in range(3)))  # a new tuple per call
    pipe = Pipeline(CharTokenizer(), ZH_EN)  # type: ignore[arg-type]
    model = DictionaryModel({})
    job = pipe.job("一。二。三。四。", TranslationOptions(), None, 0.0)
    list(pipe.stream(job, PARAMS, model.decoding(None), None))
    kept = list(pipe.memos.bans._items.values())
    assert len(kept) == 4 and all(b is kept[0] for b in kept)
    assert kept[0] == ((40, 50), (41, 50), (42, 50))


def test_guards_off_leaves_bans_and_loop_cutting_out(monkeypatch):
    spy_guards(monkeypatch, bans_for=lambda source: ((7, 8),))
    model = DictionaryModel({})
    run(ZH_EN, "一。", model, NO_GUARDS)
    assert (model.calls[0][0].bad_words, model.calls[0][0].stop_repeats) == ((), False)


def test_guards_on_the_real_checks_flag_a_sentence_and_off_they_do_not(monkeypatch):
    checks = spy_guards(monkeypatch)  # the real check_sentence answers
    model = DictionaryModel({"我有3本书。": "I have 4 books.", "一。": "One."})
    result, _ = run(ZH_EN, "我有3本书。一。", model, TranslationOptions(guards=True))
    wrong, right = result.sentences
    assert [f.kind for f in wrong.flags] == [FLAG_NUMBERS] and right.flags == ()
    assert [c[0] for c in checks] == ["我有3本书。", "一。"]
    off, _ = run(ZH_EN, "我有3本书。", model, NO_GUARDS)
    assert off.sentences[0].flags == () and len(checks) == 2


def fake_glossary(monkeypatch):
    """A stand-in engine.pipeline.glossary_match: every entry whose source occurs becomes one constraint (its
    target)."""
    module = types.ModuleType("engine.pipeline.glossary_match")

    def constraints_for(glossary, source, tokenizer):
        return tuple(
            Constraint((tuple(map(ord, e.target or e.source)),), e.target or e.source)
            for e in glossary.entries
            if e.source in source
        )

    module.constraints_for = constraints_for
    monkeypatch.setitem(sys.modules, "engine.pipeline.glossary_match", module)


@pytest.mark.parametrize("guards_on", [True, False])
def test_glossary_constraints_reach_the_search_and_unmet_ones_are_reported(monkeypatch, guards_on):
    fake_glossary(monkeypatch)
    spy_guards(monkeypatch)
    glossary = Glossary((GlossaryEntry("乔", "Qiao"), GlossaryEntry("学生", "pupil")), protect=False)
    model = DictionaryModel({"乔是学生。": "Qiao is a student.", "你好。": "Hello."})
    options = TranslationOptions(glossary=glossary, guards=guards_on)
    result, _ = run(ZH_EN, "乔是学生。你好。", model, options)
    (_, extras), *_ = model.calls
    assert [tuple(c.label for c in e.constraints) for e in extras] == [("Qiao", "pupil"), ()]
    first, second = result.sentences
    assert first.unmet == ("pupil",) and second.unmet == ()
    assert [f.kind for f in first.flags] == [FLAG_CONSTRAINT] and "pupil" in first.flags[0].detail
    assert second.flags == ()


def test_a_glossary_without_matches_sends_no_extras(monkeypatch):
    fake_glossary(monkeypatch)
    model = DictionaryModel({})
    run(ZH_EN, "你好。", model, TranslationOptions(glossary=Glossary((GlossaryEntry("猫", "cat"),)), guards=False))
    assert model.calls[0][1] is None  # a search without the extras argument is called as before


def test_a_search_without_outputs_gives_unscored_sentences():
    result, _ = run(ZH_EN, "你好。", DictionaryModel({"你好。": "Hi."}, outputs=False))
    (s,) = result.sentences
    assert s.tokens == tuple(map(ord, "Hi.")) and s.logprobs == () and s.score is None and len(s.token_spans) == 3


def test_on_cancel_sentences_are_the_finished_ones_in_the_text(monkeypatch):
    monkeypatch.setattr(batching, "BATCH_SENTENCES", 1)
    cancel = threading.Event()
    model = DictionaryModel({"一。": "One.", "二。": "Two."})
    inner = model.search

    def search(*args):
        for update in inner(*args):
            if all(update.done):
                cancel.set()  # as the first batch (one sentence) finishes
            yield update

    model.search = search  # type: ignore[method-assign]
    result, _ = run(ZH_EN, "一。二。", model, cancel=cancel)
    assert result.cancelled and result.text == "One. "  # the joiner after it was already final
    assert [s.source for s in result.sentences] == ["一。"]


def test_a_greedy_loop_is_cut_and_reported_to_the_guards(monkeypatch):
    checks = spy_guards(monkeypatch)  # the real check_sentence answers
    result, _ = run(ZH_EN, "哈。", DictionaryModel({"哈。": "ha" * 40}), TranslationOptions())
    (s,) = result.sentences
    assert len(s.tokens) < 80 and FLAG_REPETITION in [f.kind for f in s.flags] and s.score is None
    assert checks[0][2]["repeated"] is True


def test_without_the_guards_a_greedy_loop_runs_to_the_length_limit(monkeypatch):
    """--no-guards is the model's own output, as the reference engines give it: no loop is cut short."""
    checks = spy_guards(monkeypatch)
    result, _ = run(ZH_EN, "哈。", DictionaryModel({"哈。": "ha" * 40}), TranslationOptions(guards=False))
    (s,) = result.sentences
    assert len(s.tokens) > 40 and FLAG_REPETITION not in [f.kind for f in s.flags] and s.score is not None
    assert checks == []  # the guards never ran


def test_the_decode_loop_cuts_a_beam_loop_from_the_best_running_hypothesis():
    loop = [5, 6] * 10

    def search(rows, params, limits):
        for step in range(1, 40):
            yield StepUpdate(committed=[[]], done=[False], outputs=[None], best=[loop[:step]])

    sentences = [Sentence(0, [9, 0], "x")]
    beams = PARAMS.replace(num_beams=4)
    steps = list(decode(sentences, beams.replace(stop_repeats=True), search, 512, None, Clock()))
    *_, (_, toks, output) = steps
    assert output is not None and output.repeated and toks == list(output.best.tokens) and len(toks) < 20
    clock = Clock()
    uncut = list(decode(sentences, beams, search, 512, None, clock))
    assert all(o is None for _, _, o in uncut) and clock.cancelled  # ran out of steps without finishing


def test_the_cache_keeps_the_whole_output():
    cache = SentenceCache()
    best, other = hypothesis("Hi."), hypothesis("Hey.")
    key = SentenceCache.key([1, 2, 0], 4, "fp32", "m", extra=(2, True, (), ()))
    cache.put(key, best.tokens, "Hi.", SentenceOutput(best, (best, other), (1,), True))
    hit = cache.lookup(key)
    assert hit.output == SentenceOutput(best, (best, other), (1,), True) and hit.text == "Hi."
    assert cache.get(SentenceCache.key([1, 2, 0], 4, "fp32", "m", extra=(1, True, (), ()))) is None
    plain = Hypothesis((1,), (-0.5,), None, -0.5)
    cache.put(key, (1,), "x", SentenceOutput(plain))
    assert cache.lookup(key).output == SentenceOutput(plain)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"alternatives": -1}, "alternatives must be a whole number between 0 and 7"),
        ({"alternatives": 8}, "between 0 and 7"),
        ({"alternatives": True}, "alternatives must be"),
        ({"alternatives": 1.5}, "alternatives must be"),
        ({"glossary": {"cat": "猫"}}, "glossary must be a Glossary or None, not dict"),
        ({"memory": {"a": "b"}}, "memory must have a lookup"),
        ({"guards": "yes"}, "guards must be true or false"),
    ],
)
def test_the_new_options_are_checked(changes, message):
    with pytest.raises(InputError, match=message):
        TranslationOptions(**changes).validate((), 8)


def test_valid_new_options_pass():
    options = TranslationOptions(alternatives=7, glossary=Glossary(), memory=Memory({}), guards=False)
    assert options.validate((), 8) is options


def test_a_retranslation_reuses_flags_bans_and_spans_of_unchanged_sentences(monkeypatch):
    asked = []
    checks = spy_guards(
        monkeypatch,
        bans_for=lambda source: asked.append(source) or ((7, 8),),
        flags_for=lambda source, target, **kw: (Flag(FLAG_LENGTH, "short"),),
    )
    pipe = Pipeline(CharTokenizer(), ZH_EN)  # type: ignore[arg-type]
    model = DictionaryModel({"一。": "One."})
    decoding = model.decoding()
    results = []
    for text in ("一。", "一。二。"):
        job = pipe.job(text, TranslationOptions(), None, 0.0)
        *_, result = pipe.stream(job, PARAMS, decoding, None)
        results.append(result)
    assert asked == ["一。", "二。"] and [c[0] for c in checks] == ["一。", "二。"]  # each computed once
    first, again = results[0].sentences[0], results[1].sentences[0]
    assert again.origin == ORIGIN_CACHE and again.flags == first.flags and again.token_spans == first.token_spans


# -- the same through the real Translator on the committed fixture ---------------------------------------------------


@pytest.fixture(scope="module")
def fixture_translator(bundle_dir):
    from engine.pipeline.translator import Translator

    return Translator(bundle_dir, precision="fp32", threads=1)


def test_the_translator_fills_sentences_with_memory_cache_and_n_best(fixture_translator):
    tr = fixture_translator
    tr.clear_cache()
    text = "Thank you very much.\nGood morning, everyone!"
    searched = []
    real = tr._search

    def spy(batch, *args):
        searched.extend(len(row) for row in batch)
        return real(batch, *args)

    tr._search = spy
    try:
        memory = Memory({"Good morning, everyone!": "早上好（我的版本）"})
        options = TranslationOptions(beams=3, alternatives=2, memory=memory, guards=False)
        events = []
        result = tr.translate(text, options, on_event=events.append)
        assert "".join(e.delta for e in events) == result.text
        decoded, mine = result.sentences
        assert len(searched) == 1  # the memory hit was not decoded
        assert mine.origin == ORIGIN_MEMORY and mine.text == "早上好（我的版本）" and mine.tokens == ()
        assert result.text == decoded.text + "\n" + mine.text
        assert text[slice(*decoded.source_span)] == "Thank you very much." and decoded.origin == ORIGIN_MODEL
        assert len(decoded.token_spans) == len(decoded.tokens) == len(result.tokens[0])
        assert len(decoded.alternatives) <= 2 and decoded.text not in {a.text for a in decoded.alternatives}
        assert result.stats.beams == 3
        again = tr.translate(text, options)
        assert len(searched) == 1 and again.sentences[0].origin == ORIGIN_CACHE
        assert (again.sentences[0].score, again.sentences[0].alternatives) == (decoded.score, decoded.alternatives)
    finally:
        del tr._search
