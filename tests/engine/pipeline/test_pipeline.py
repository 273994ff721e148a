"""The segment-level seam without a model: conventions from the language pair, streaming, many texts at once."""

from __future__ import annotations

import threading

import pytest

from engine.languages import default_pair
from engine.options import TranslationOptions
from engine.pipeline.requests import Pipeline
from engine.pipeline.sentence_cache import SentenceCache
from engine.results import StreamEvent, Translation
from tests.engine.pipeline_fakes import PARAMS, CharTokenizer, DictionaryModel

ZH_EN = default_pair("zh", "en")
EN_ZH = default_pair("en", "zh", [">>cmn_Hans<<", ">>cmn_Hant<<"])
# Guards off: their artefact bans read a piece vocabulary, and CharTokenizer's is every code point (the guards are
# tested with this fake in test_pipeline_sentences.py)
NO_GUARDS = TranslationOptions(guards=False)
ZH_TABLE = {"你好。": "Hello.", "我是学生！": "I am a student!", "他说：“你好。”": "He said, “Hello.”"}


def stream(pair, text, model, options=None, cache=None):
    pipe = Pipeline(CharTokenizer(), pair)  # type: ignore[arg-type]
    job = pipe.job(text, options or NO_GUARDS, None, 0.0)
    items = list(pipe.stream(job, PARAMS, model.decoding(cache), None))
    events = [i for i in items if isinstance(i, StreamEvent)]
    result = items[-1]
    assert isinstance(result, Translation)
    assert "".join(e.delta for e in events) == result.text  # the streaming contract
    return result


def test_a_chinese_source_splits_without_spaces_and_english_sentences_join_with_one():
    model = DictionaryModel(ZH_TABLE)
    result = stream(ZH_EN, "你好。我是学生！\n\n他说：“你好。”", model)
    assert model.rows == ["你好。", "我是学生！", "他说：“你好。”"]
    assert result.text == "Hello. I am a student!\n\nHe said, “Hello.”"


def test_an_english_source_into_chinese_joins_sentences_with_nothing():
    model = DictionaryModel({"Hello.": "你好。", "I am here.": "我在这里。"})
    assert stream(EN_ZH, "Hello. I am here.", model).text == "你好。我在这里。"


def test_wrapped_chinese_lines_join_with_nothing_before_translation():
    model = DictionaryModel({})
    line = "本办法适用于所有在本市居住的居民以及在本市工作"
    stream(ZH_EN, f"{line}\n的外来人员。", model)
    assert model.rows == [f"{line}的外来人员。"]


def test_full_width_marks_in_english_output_become_ascii_only_for_a_latin_target():
    leaky = DictionaryModel({"你好。": "Hello，world。", "我是学生！": "Yes！"})
    assert stream(ZH_EN, "你好。我是学生！", leaky).text == "Hello, world. Yes!"
    raw = stream(ZH_EN, "你好。", leaky, TranslationOptions(normalize_punctuation=False, guards=False))
    assert raw.text == "Hello，world。"
    half = DictionaryModel({"Hi, there!": "你好,朋友!"})
    assert stream(EN_ZH, "Hi, there!", half).text == "你好，朋友！"  # han target: half → full width


def test_cache_keys_belong_to_one_model():
    cache = SentenceCache()
    first = DictionaryModel({"你好。": "Hello."})
    stream(ZH_EN, "你好。", first, cache=cache)
    pipe = Pipeline(CharTokenizer(), ZH_EN)  # type: ignore[arg-type]
    other = DictionaryModel({"你好。": "Hi."})
    job = pipe.job("你好。", NO_GUARDS, None, 0.0)
    *_, result = pipe.stream(job, PARAMS, other.decoding(cache, scope="another-model"), None)
    assert result.text == "Hi." and other.rows == ["你好。"]  # same ids, another model: decoded, not reused


def test_many_texts_come_back_one_result_each_in_order_with_errors_in_place():
    model = DictionaryModel(ZH_TABLE)
    pipe = Pipeline(CharTokenizer(), ZH_EN)  # type: ignore[arg-type]
    texts = ["你好。", "", 42, "我是学生！你好。"]
    window = pipe.read_window(iter(texts), NO_GUARDS, None)
    results = list(pipe.run_window(window, PARAMS, model.decoding(), None))
    assert [r.text for r in results] == ["Hello.", "", "", "I am a student! Hello."]
    assert results[2].error == "text must be a string" and results[1].error is None
    assert model.rows == ["你好。", "我是学生！", "你好。"]  # decoded together, in reading order


def test_a_cancelled_window_answers_every_text_it_read():
    model = DictionaryModel({})
    pipe = Pipeline(CharTokenizer(), ZH_EN)  # type: ignore[arg-type]
    cancel = threading.Event()
    cancel.set()
    window = pipe.read_window(iter(["一。", "二。"]), NO_GUARDS, None)
    results = list(pipe.run_window(window, PARAMS, model.decoding(), cancel))
    assert [r.cancelled for r in results] == [True, True] and model.rows == []


@pytest.mark.parametrize("text", ["", "   ", "\n\n"])
def test_nothing_to_translate_gives_the_empty_result(text):
    result = stream(ZH_EN, text, DictionaryModel({}))
    assert result.text == "" and result.stats.sentences == 0


def test_a_sentence_behind_the_one_in_progress_is_not_drained_after_its_steps(monkeypatch):
    """Rows decoded together each give a step; only the sentence whose text is being shown can add any, so the
    others' steps are not drained (µs a row a step): the same deltas, from fewer drains."""
    from engine.pipeline.assembly import Assembler

    model = DictionaryModel({"One.": "Uno.", "Two two two.": "Dos dos dos.", "Three.": "Tres."})
    drains = []
    drain = Assembler.drain

    def counting(self):
        drains.append(1)
        return drain(self)

    monkeypatch.setattr(Assembler, "drain", counting)
    pipe = Pipeline(CharTokenizer(), EN_ZH)  # type: ignore[arg-type]
    job = pipe.job("One. Two two two. Three.", NO_GUARDS, None, 0.0)
    items = list(pipe.stream(job, PARAMS, model.decoding(), None))
    deltas = [item.delta for item in items[:-1]]
    assert "".join(deltas) == items[-1].text == "Uno.Dos dos dos.Tres."
    assert deltas[:4] == ["U", "n", "o", ".Dos"]  # "Dos" waited for "Uno." (the same step finished it)
    steps = len("Dos dos dos.") + 1
    assert len(drains) < 2 * steps  # one a step (the sentence shown) and one a finish, not three a step
