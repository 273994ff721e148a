"""A Firefox Translations (Bergamot family) model in the real window, with the real worker and engine: the tiny
synthetic en→zh and zh→en bundles (tests/conftest.py) installed in a new profile's models folder, as a user who
imported them has them. Each flow the window offers (streaming, swap, the quick popup, documents, the in-app API,
history, the glossary, alternatives, confidence, word alignment) must work on it. The oracle is the engine itself
(a Translator on the same bundle with the window's options): the random model's words mean nothing."""

from __future__ import annotations

import json
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QApplication, QTableWidgetItem

from engine.documents.job import DocumentJob, DocumentOptions
from engine.options import TranslationOptions
from engine.pipeline.translator import Translator
from gui.app import attach_desktop, attach_quick, attach_records
from gui.desktop.single_instance import InstanceRequest
from gui.documents.document_queue import State
from gui.review.alternatives_controller import forced_tokens
from gui.review.confidence import unsure_spans, whole_words
from gui.review.word_alignment import merged
from gui.settings import Key
from gui.window.alignment import SOURCE, TARGET
from gui.window.main_window import MainWindow
from gui.worker.engine import local_engine
from tests.gui.real_windows import real_windows
from tests.gui.review.test_review_alignment import move_mouse, point_of
from tests.gui.test_real_window_panels import _post, _serve_in_app_api

EN_TEXT = "Thank you very much. See you tomorrow."


def install(bundle: Path, tmp_path: Path, name: str) -> Path:
    """The bundle copied into this test's per-user models folder (XDG_DATA_HOME, tests/gui/conftest.py)."""
    target = tmp_path / "data" / "Qiao" / "models" / name
    shutil.copytree(bundle, target)
    return target


@pytest.fixture
def bergamot_profile(tmp_path, monkeypatch, bergamot_bundle_dir, bergamot_zh_en_bundle_dir):
    monkeypatch.delenv("QIAO_DATA_DIR", raising=False)
    return {
        "en-zh": install(bergamot_bundle_dir, tmp_path, "firefox-enzh"),
        "zh-en": install(bergamot_zh_en_bundle_dir, tmp_path, "firefox-zhen"),
    }


@pytest.fixture
def open_window(qtbot, tmp_path, settings, bergamot_profile):
    """The window as gui.app builds it (the engine's own locator, store and worker) in the direction asked for."""
    with real_windows(qtbot, tmp_path) as open_real:

        def open_(direction: str = "en-zh") -> MainWindow:
            settings.set(Key.DIRECTION, direction)
            w = open_real(settings)
            assert w.model.pair.key == direction
            attach_records(w)
            return w

        yield open_


@pytest.fixture
def window(open_window):
    return open_window()


_ENGINES: dict[Path, Translator] = {}


def engine(bundle: Path) -> Translator:
    """The oracle: the engine on the same bundle (INT8, the window's default), called directly."""
    if bundle not in _ENGINES:
        _ENGINES[bundle] = Translator(bundle, precision="int8")
    return _ENGINES[bundle]


def engine_text(bundle: Path, window, text: str) -> str:
    return engine(bundle).translate(text, window.requests.options()).text


def translate_in_window(qtbot, window, text: str) -> str:
    window.source.setPlainText(text)
    window.translate()
    qtbot.waitUntil(lambda: not window.translating, timeout=20_000)
    return window.target.toPlainText()


def translate_document(qtbot, window, path: Path) -> Path:
    before = len(window.documents.entries)
    window.documents.add([path])
    qtbot.waitUntil(
        lambda: len(window.documents.entries) > before and list(window.documents.entries.values())[-1].state.ended,
        timeout=20_000,
    )
    entry = list(window.documents.entries.values())[-1]
    assert entry.state is State.DONE, window.documents_panel.rows[entry.key].detail.text()
    return entry.output


def engine_document(bundle: Path, window, path: Path, out_dir: Path, target_lang: str = "zh") -> Path:
    """The same file translated by the engine's own document job (what `qiao translate-file` runs)."""
    job = DocumentJob(path, DocumentOptions(out_dir=out_dir), window.requests.options(), target_lang=target_lang)
    result = job.run(engine(bundle))
    assert result.error is None, result.error
    return job.output


def test_a_text_streams_into_the_window_as_the_engine_translates_it(qtbot, window, bergamot_profile):
    assert window.model.pair.key == "en-zh" and "firefox" in window.model.model_id
    deltas: list[str] = []
    window.engine.worker.translation_progress.connect(lambda _id, text, _done, _total: deltas.append(text))
    got = translate_in_window(qtbot, window, EN_TEXT)
    expected = engine_text(bergamot_profile["en-zh"], window, EN_TEXT)
    assert got == expected and got
    assert "".join(deltas) == expected, "the streamed pieces make up the translation"
    sentences = window.target_pane.sentences()
    assert [s.source for s in sentences] == ["Thank you very much.", "See you tomorrow."]
    assert all(s.tokens and len(s.logprobs) == len(s.tokens) for s in sentences)


def test_fp32_translates_too(qtbot, window, bergamot_profile):
    window.settings.set(Key.PRECISION, "fp32")
    qtbot.waitUntil(lambda: window.model.precision == "fp32", timeout=20_000)
    got = translate_in_window(qtbot, window, EN_TEXT)
    oracle = Translator(bergamot_profile["en-zh"], precision="fp32")
    assert got == oracle.translate(EN_TEXT, window.requests.options()).text


def test_swap_loads_the_other_bergamot_model_and_translates_back(qtbot, window, bergamot_profile):
    first = translate_in_window(qtbot, window, EN_TEXT)
    assert window.swap_action.isEnabled(), window.swap_button.toolTip()
    window.swap()  # the Chinese becomes the source, the zh→en bundle (one shared vocabulary) loads and translates it
    qtbot.waitUntil(lambda: window.model is not None and window.model.pair.key == "zh-en", timeout=20_000)
    qtbot.waitUntil(lambda: not window.translating and window.target.toPlainText() != EN_TEXT, timeout=20_000)
    assert window.source.toPlainText() == first
    assert window.target.toPlainText() == engine_text(bergamot_profile["zh-en"], window, first)
    # (the random model says nothing for that text: a sentence it does say something for)
    got = translate_in_window(qtbot, window, "我喜欢绿茶。")
    assert got == engine_text(bergamot_profile["zh-en"], window, "我喜欢绿茶。") and got
    window.swap()
    qtbot.waitUntil(lambda: window.model is not None and window.model.pair.key == "en-zh", timeout=20_000)
    qtbot.waitUntil(lambda: not window.translating and window.target.toPlainText() != "我喜欢绿茶。", timeout=20_000)
    assert window.source.toPlainText() == got
    assert window.target.toPlainText() == engine_text(bergamot_profile["en-zh"], window, got)


def test_the_quick_popup_translates_either_direction(qtbot, window, bergamot_profile):
    from tests.gui.quick.fakes import FakeBackend

    desktop = attach_desktop(window, use_tray=False)
    quick = attach_quick(window, desktop, backend=FakeBackend())
    qtbot.addWidget(quick.popup)
    try:
        desktop.handle(InstanceRequest("popup", "See you tomorrow."))
        expected = engine_text(bergamot_profile["en-zh"], window, "See you tomorrow.")
        qtbot.waitUntil(
            lambda: quick.popup.translation == expected and quick.popup.state != "translating", timeout=20_000
        )
        assert quick.popup.isVisible() and window.target.toPlainText() == ""
        # Chinese: the zh→en Bergamot bundle is loaded beside the window's, which stays en→zh
        desktop.handle(InstanceRequest("popup", "我喜欢绿茶。"))
        expected = engine(bergamot_profile["zh-en"]).translate("我喜欢绿茶。", TranslationOptions()).text
        qtbot.waitUntil(
            lambda: quick.popup.source_text == "我喜欢绿茶。" and quick.popup.state != "translating", timeout=20_000
        )
        assert quick.popup.translation == expected and expected
        assert window.model.pair.key == "en-zh"
    finally:
        quick.shutdown()


def test_documents_are_translated_beside_the_original(qtbot, window, bergamot_profile, tmp_path):
    from docx import Document

    folder = tmp_path / "docs"
    folder.mkdir()
    text = folder / "letter.txt"
    text.write_text("Thank you very much.\n\nSee you tomorrow.\n", encoding="utf-8")
    output = translate_document(qtbot, window, text)
    assert output.parent == folder and output != text
    oracle = engine_document(bergamot_profile["en-zh"], window, text, tmp_path / "oracle")
    assert output.read_text(encoding="utf-8") == oracle.read_text(encoding="utf-8")

    doc = Document()
    for line in ("Thank you very much.", "I like green tea.", "See you tomorrow."):
        doc.add_paragraph(line)
    docx = folder / "report.docx"
    doc.save(str(docx))
    output = translate_document(qtbot, window, docx)
    assert output.parent == folder and output.suffix == ".docx"
    oracle = engine_document(bergamot_profile["en-zh"], window, docx, tmp_path / "oracle")
    paragraphs = [p.text for p in Document(str(output)).paragraphs]
    assert paragraphs == [p.text for p in Document(str(oracle)).paragraphs]
    assert any(paragraphs)


def test_a_chinese_document_goes_to_the_zh_en_bergamot_model(qtbot, window, bergamot_profile, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    source = folder / "note.txt"
    source.write_text("我喜欢绿茶。\n\n我喜欢绿茶。\n", encoding="utf-8")
    output = translate_document(qtbot, window, source)  # the window stays en→zh
    assert output.parent == folder and window.model.pair.key == "en-zh"
    oracle = engine_document(bergamot_profile["zh-en"], window, source, tmp_path / "oracle", target_lang="en")
    assert output.read_text(encoding="utf-8") == oracle.read_text(encoding="utf-8")
    assert output.read_text(encoding="utf-8").strip()


def test_the_in_app_api_answers_a_libretranslate_request(qtbot, window, bergamot_profile, monkeypatch):
    desktop, port = _serve_in_app_api(window, monkeypatch)
    texts = ["Thank you very much.", "I like green tea."]
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            body = json.dumps({"q": texts, "source": "en", "target": "zh"}).encode()
            future = pool.submit(_post, port, "/translate", body, "application/json")
            qtbot.waitUntil(future.done, timeout=20_000)
            status, reply = future.result()
        assert status == 200, reply
        options = TranslationOptions(variant="hans")
        expected = [engine(bergamot_profile["en-zh"]).translate(t, options).text for t in texts]
        assert json.loads(reply)["translatedText"] == expected
    finally:
        desktop.shutdown()


def test_history_records_the_bergamot_translation(qtbot, window, bergamot_profile):
    got = translate_in_window(qtbot, window, EN_TEXT)
    recorder, panel = window.history_recorder, window.history_panel
    recorder.wait()
    qtbot.keyClick(window, Qt.Key.Key_H, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: [e.source for e in panel.entries()] == [EN_TEXT], timeout=5000)
    [entry] = panel.entries()
    assert (entry.output, entry.pair, entry.model) == (got, "en-zh", window.model.model_id)
    window.source.setPlainText("")
    panel.list.setCurrentRow(0)
    panel.reopen_selected()
    assert window.source.toPlainText() == EN_TEXT and window.target.toPlainText() == got


def test_a_glossary_term_is_placed_by_the_bergamot_model(qtbot, window, bergamot_profile):
    text = "I like green tea."
    before = translate_in_window(qtbot, window, text)
    assert "红茶" not in before
    dialog = window.glossary_menu.open()
    dialog.add_row()
    dialog.table.setItem(0, 0, QTableWidgetItem("green tea"))
    dialog.table.setItem(0, 1, QTableWidgetItem("红茶"))
    dialog.accept()
    expected = engine_text(bergamot_profile["en-zh"], window, text)
    assert "红茶" in expected
    qtbot.waitUntil(lambda: window.target.toPlainText() == expected and not window.translating, timeout=20_000)
    qtbot.waitUntil(lambda: bool(window.target_pane.sentences()), timeout=5000)  # set once it finished
    [sentence] = window.target_pane.sentences()
    assert sentence.unmet == ()


def test_alternatives_for_a_word_and_taking_one(qtbot, window, bergamot_profile):
    translate_in_window(qtbot, window, EN_TEXT)
    pane = window.target_pane
    sentence = pane.sentences()[1]
    position = 1
    start = pane.sentence_range(1)[0] + sentence.token_spans[position][0]
    options = window.requests.options()
    oracle = engine(bergamot_profile["en-zh"])
    expected = list(oracle.alternatives(sentence.source, sentence.tokens, position, options, k=5))
    assert len(expected) > 1
    assert window.alternatives.open_at_char(start)
    popup = window.alternatives.popup
    qtbot.waitUntil(lambda: popup.alternatives() == expected, timeout=20_000)
    qtbot.keyClick(popup.list, Qt.Key.Key_Down)
    qtbot.keyClick(popup.list, Qt.Key.Key_Return)
    chosen = expected[1]
    result = oracle.translate_sentence(sentence.source, options, prefix=forced_tokens(chosen))
    qtbot.waitUntil(lambda: pane.sentences()[1].tokens == result.tokens, timeout=20_000)
    assert pane.sentences()[1].text == result.text
    assert pane.edit_origin(1) == "alternative"


def test_more_translations_lists_the_bergamot_models_n_best(qtbot, window, bergamot_profile):
    from gui.worker.review import more_translations_options

    translate_in_window(qtbot, window, EN_TEXT)
    sentence = window.target_pane.sentences()[0]
    more = more_translations_options(window.requests.options(), window.model.default_beams)
    result = engine(bergamot_profile["en-zh"]).translate_sentence(sentence.source, more)
    expected = [result.text, *(a.text for a in result.alternatives)]
    assert len(expected) > 1
    assert window.alternatives.more_translations(0) is not None  # the context menu's "More translations…"
    popup = window.alternatives.popup
    qtbot.waitUntil(lambda: [a.text for a in popup.alternatives()] == expected, timeout=20_000)


def test_beam_search_from_the_settings(qtbot, window, bergamot_profile):
    assert window.model.default_beams == 1, "Firefox decodes greedily: the bundle says so"
    window.settings.set(Key.BEAMS, 4)
    got = translate_in_window(qtbot, window, EN_TEXT)
    assert window.requests.options().beams == 4
    assert got == engine_text(bergamot_profile["en-zh"], window, EN_TEXT)
    greedy = engine(bergamot_profile["en-zh"]).translate(EN_TEXT, window.requests.options().replace(beams=1)).text
    assert got != greedy, "the fixture's text tells beam search from greedy"


def test_unsure_words_are_underlined_from_the_models_scores(qtbot, window, bergamot_profile):
    window.settings.set(Key.CONFIDENCE_THRESHOLD, 50)
    translate_in_window(qtbot, window, EN_TEXT)
    pane = window.target_pane
    oracle = engine(bergamot_profile["en-zh"]).translate(EN_TEXT, window.requests.options())
    expected = []
    for sentence in oracle.sentences:
        start = sentence.target_span[0]
        text = oracle.text[slice(*sentence.target_span)]
        expected += [(start + a, start + b) for a, b in unsure_spans(sentence, text, 50)]
    assert expected, "the fixture sentence has a word under 50 %"
    assert pane.underlined() == expected


# -- word alignment -----------------------------------------------------------------------------------------------


@pytest.fixture
def alignment_calls(monkeypatch):
    """Every Translator.alignment call: (the thread it ran on, source, tokens)."""
    calls: list[tuple[threading.Thread, str, tuple[int, ...]]] = []
    real = Translator.alignment

    def spy(self, source, tokens, options=None):
        calls.append((threading.current_thread(), source, tuple(tokens)))
        return real(self, source, tokens, options)

    monkeypatch.setattr(Translator, "alignment", spy)
    return calls


def one_token_word(sentence, source: str, links) -> int:
    """A token that is a word of its own in the translation and aligns to a whole source word (so the highlight is
    exactly the engine's span on both sides)."""
    text = sentence.text
    for t, ((a, b), (sa, sb)) in enumerate(zip(sentence.token_spans, links, strict=True)):
        alone = sum(1 for x, y in sentence.token_spans if x < y and x < b and y > a) == 1
        if (
            a < b
            and whole_words(text, a, b) == (a, b)
            and alone
            and sa < sb
            and whole_words(source, sa, sb) == (sa, sb)
        ):
            return t
    raise AssertionError("no such token in the fixture's sentence")


def test_pointing_at_a_target_word_tints_the_source_words_it_was_written_from(
    qtbot, window, bergamot_profile, alignment_calls
):
    translate_in_window(qtbot, window, EN_TEXT)
    pane, align = window.target_pane, window.alignment
    sentence = pane.sentences()[0]
    links = engine(bergamot_profile["en-zh"]).alignment(sentence.source, sentence.tokens, window.requests.options())
    alignment_calls.clear()
    t = one_token_word(sentence, sentence.source, links)
    start = pane.sentence_range(0)[0]
    a, b = sentence.token_spans[t]
    move_mouse(window.target, point_of(window.target, start + a))
    source_start = window.source_pane.sentence_range(0)[0]
    expected = [(source_start + links[t][0], source_start + links[t][1])]
    qtbot.waitUntil(lambda: align.word_highlighted(SOURCE) == expected, timeout=20_000)
    assert window.source.toPlainText()[slice(*expected[0])] == sentence.source[slice(*links[t])]
    assert align.word_highlighted(TARGET) == [(start + a, start + b)]
    assert align.highlighted(SOURCE) == window.source_pane.sentence_range(0), "the sentence's tint stays under it"
    # Asked once, on the worker thread, for exactly that sentence
    assert [(c[1], c[2]) for c in alignment_calls] == [(sentence.source, sentence.tokens)]
    assert alignment_calls[0][0] is not threading.main_thread()
    # Another word of the same sentence, and the sentence again after leaving it: the kept answer, nothing asked
    other = next(k for k, (x, y) in enumerate(sentence.token_spans) if x < y and k != t)
    move_mouse(window.target, point_of(window.target, start + sentence.token_spans[other][0]))
    QApplication.sendEvent(window.target.viewport(), QEvent(QEvent.Type.Leave))
    move_mouse(window.target, point_of(window.target, start + a))
    assert align.word_highlighted(SOURCE) == expected
    assert len(alignment_calls) == 1


def test_pointing_at_a_source_word_tints_the_target_words_written_from_it(
    qtbot, window, bergamot_profile, alignment_calls
):
    translate_in_window(qtbot, window, EN_TEXT)
    pane, align = window.target_pane, window.alignment
    sentence = pane.sentences()[0]
    links = engine(bergamot_profile["en-zh"]).alignment(sentence.source, sentence.tokens, window.requests.options())
    t = one_token_word(sentence, sentence.source, links)
    word = links[t]
    start = pane.sentence_range(0)[0]
    expected = merged(
        [
            (start + x, start + y)
            for (x, y), (sa, sb) in zip(sentence.token_spans, links)
            if sa < word[1] and sb > word[0]
        ]
    )
    source_start = window.source_pane.sentence_range(0)[0]
    move_mouse(window.source, point_of(window.source, source_start + word[0]))
    qtbot.waitUntil(lambda: align.word_highlighted(TARGET) == expected, timeout=20_000)
    assert align.word_highlighted(SOURCE) == [(source_start + word[0], source_start + word[1])]


def test_an_english_word_of_several_pieces_tints_the_chinese_it_came_from(
    qtbot, open_window, bergamot_profile, alignment_calls
):
    window = open_window("zh-en")  # one shared vocabulary; English target words are often several pieces
    text = "我喜欢绿茶。"
    translate_in_window(qtbot, window, text)
    pane, align = window.target_pane, window.alignment
    [sentence] = pane.sentences()
    links = engine(bergamot_profile["zh-en"]).alignment(sentence.source, sentence.tokens, window.requests.options())
    alignment_calls.clear()
    word = whole_words(sentence.text, *sentence.token_spans[0])
    pieces = [k for k, (a, b) in enumerate(sentence.token_spans) if a < b and a < word[1] and b > word[0]]
    assert len(pieces) > 1, "the fixture's first English word is several pieces"
    expected = merged([links[k] for k in pieces])  # Han characters are words of their own: nothing to widen
    move_mouse(window.target, point_of(window.target, sentence.token_spans[0][0]))
    qtbot.waitUntil(lambda: align.word_highlighted(SOURCE) == expected, timeout=20_000)
    assert align.word_highlighted(TARGET) == [word]
    assert [c[0] is threading.main_thread() for c in alignment_calls] == [False]


def test_a_bundle_converted_by_an_older_qiao_is_worded_with_its_fix(
    qtbot, tmp_path, settings, monkeypatch, bergamot_bundle_dir
):
    """A Firefox model converted before the decoder step took its shortlisted rows as inputs: the window says the
    model was made for another Qiao and to build it again (no traceback, the English detail under Details)."""
    from tests.engine.families.bergamot.test_convert import old_shape_bundle

    monkeypatch.delenv("QIAO_DATA_DIR", raising=False)
    old_shape_bundle(bergamot_bundle_dir, tmp_path / "data" / "Qiao" / "models" / "firefox-enzh")
    settings.set(Key.DIRECTION, "en-zh")
    w = MainWindow(settings, tmp_path / "state" / "source.txt", engine=local_engine())
    qtbot.addWidget(w)
    w.show()
    try:
        qtbot.waitUntil(lambda: w.problem is not None, timeout=20_000)
        panel = w.model_panel
        visible = " ".join(x.text() for x in (panel.title, panel.body, panel.details) if x.isVisible())
        assert "different version of Qiao" in visible and "build or download the model again" in visible.lower()
        assert "Traceback" not in visible and "converted by an older Qiao" in panel.raw_details.text()
    finally:
        w.shutdown()
