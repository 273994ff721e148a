from engine.segment import has_letters, segment_text

SAMPLES = [
    "",
    "One sentence.",
    "Dr. Smith arrived at 3.30 p.m. He was late! Was he?",
    "First paragraph. Second sentence.\n\nSecond paragraph.\r\n  Indented line.\n",
    "Trailing spaces.   \n\n\n",
    "Visit https://example.org/a.b?c=d. Then leave.",
    "😀 Emoji first. Then words.",
    "no punctuation at all",
]


def test_segments_rebuild_the_text_exactly():
    for text in SAMPLES:
        assert "".join(s.text for s in segment_text(text)) == text


def test_sentences_and_layout():
    segs = segment_text("Dr. Smith arrived at 3.30 p.m. He was late! Was he?\n\nYes.")
    sentences = [s.text for s in segs if s.translate]
    assert sentences == ["Dr. Smith arrived at 3.30 p.m.", "He was late!", "Was he?", "Yes."]
    gaps = [s for s in segs if not s.translate]
    assert [g.inline_gap for g in gaps] == [True, True, False, False]


def test_text_without_letters_is_not_translated():
    assert not has_letters("12:30 — 😀 !!!")
    assert has_letters("é") and has_letters("你")
    segs = segment_text("12345")
    assert [s.translate for s in segs] == [False]
