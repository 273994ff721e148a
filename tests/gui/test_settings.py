"""Typed settings: defaults, persistence, validation, and recovery from a corrupt file."""

from __future__ import annotations

import pytest

from gui.settings import SPECS, Key, Settings


def test_defaults_are_what_a_new_user_gets(tmp_path):
    s = Settings(tmp_path / "qiao.ini")
    assert s.get(Key.PRECISION) == "int8"
    assert s.get(Key.VARIANT) == "hans"
    assert s.get(Key.THREADS) == 0  # automatic
    assert s.get(Key.LIVE_TRANSLATE) is False
    assert s.get(Key.UI_LANGUAGE) == "system"
    assert s.take_notices() == []


def test_values_persist_with_their_types(tmp_path):
    path = tmp_path / "qiao.ini"
    s = Settings(path)
    s.set(Key.PRECISION, "fp32")
    s.set(Key.THREADS, 2)
    s.set(Key.LIVE_TRANSLATE, True)
    s.set(Key.SPLITTER_STATE, b"\x00\x01binary\xff")
    s.sync()
    again = Settings(path)
    assert again.get(Key.PRECISION) == "fp32"
    assert again.get(Key.THREADS) == 2
    assert again.get(Key.LIVE_TRANSLATE) is True
    assert again.get(Key.SPLITTER_STATE) == b"\x00\x01binary\xff"
    assert again.take_notices() == []


def test_set_rejects_values_outside_the_key_and_keeps_the_old_one(tmp_path):
    s = Settings(tmp_path / "qiao.ini")
    with pytest.raises(ValueError):
        s.set(Key.PRECISION, "fp16")
    with pytest.raises(ValueError):
        s.set(Key.FONT_SIZE, 200)
    assert s.get(Key.PRECISION) == "int8" and s.get(Key.FONT_SIZE) == SPECS[Key.FONT_SIZE].default


def test_changed_is_emitted_only_for_real_changes(qtbot, tmp_path):
    s = Settings(tmp_path / "qiao.ini")
    seen: list = []
    s.changed.connect(seen.append)
    s.set(Key.PRECISION, "fp32")
    s.set(Key.PRECISION, "fp32")
    s.set(Key.VARIANT, "hant")
    assert seen == [Key.PRECISION, Key.VARIANT]


def test_a_bad_value_falls_back_to_its_default_with_a_notice(tmp_path):
    path = tmp_path / "qiao.ini"
    path.write_text("[engine]\nprecision=fp16\nthreads=lots\n[editor]\nfont_size=14\n", encoding="utf-8")
    s = Settings(path)
    assert s.get(Key.PRECISION) == "int8"
    assert s.get(Key.THREADS) == 0
    assert s.get(Key.FONT_SIZE) == 14, "good values in the same file are kept"
    notices = s.take_notices()
    assert len(notices) == 2 and "“Precision”" in notices[0] and "“Threads”" in notices[1]
    assert "fp16" in notices[0] and "lots" in notices[1], "the notice says which value was refused"
    assert not any("engine/" in n for n in notices), "never the raw INI key"
    assert s.take_notices() == [], "each notice is shown once"


@pytest.mark.parametrize(
    "content",
    [b"\x00\x89PNG\r\n\x1a\n\x00\x00\x00binary", b"[engine\nprecision=fp32\n", b"\xff\xfe\xfd not utf-8 at all"],
    ids=["binary", "broken-section", "not-utf8"],
)
def test_a_corrupt_file_gives_defaults_a_notice_and_a_backup(tmp_path, content):
    path = tmp_path / "qiao.ini"
    path.write_bytes(content)
    s = Settings(path)
    assert s.get(Key.PRECISION) == "int8"
    notices = s.take_notices()
    assert len(notices) == 1 and "could not be read" in notices[0]
    backups = list(tmp_path.glob("qiao.ini.corrupt-*"))
    assert len(backups) == 1 and backups[0].read_bytes() == content
    assert str(backups[0]) in notices[0]
    s.set(Key.PRECISION, "fp32")
    s.sync()
    assert Settings(path).get(Key.PRECISION) == "fp32", "the fresh file works"


def test_direction_and_variant_keep_their_ini_keys_and_refuse_junk(tmp_path):
    path = tmp_path / "q.ini"
    path.write_text("[engine]\nscript=hant\ndirection=zh-en\n", encoding="utf-8")
    s = Settings(path)
    assert s.get(Key.VARIANT) == "hant", "the variant still reads the old `engine/script` key"
    assert s.get(Key.DIRECTION) == "zh-en" and s.take_notices() == []
    with pytest.raises(ValueError):
        s.set(Key.DIRECTION, "english to chinese")
    path.write_text("[engine]\ndirection=../../etc\n", encoding="utf-8")
    again = Settings(path)
    assert again.get(Key.DIRECTION) == "en-zh"
    assert any("Translation direction" in n for n in again.take_notices())


def test_the_model_chosen_per_direction_persists_and_the_engine_reads_it_from_the_same_file(tmp_path):
    from engine.store.choice import read_choices
    from gui.settings import MODEL_CHOICE

    path = tmp_path / "qiao.ini"
    s = Settings(path)
    assert s.get(Key.MODEL_EN_ZH) == "" and s.get(Key.MODEL_ZH_EN) == "", "no choice: the best installed one"
    s.set(MODEL_CHOICE["en-zh"], "firefox-base-memory-en-zh")
    s.set(MODEL_CHOICE["zh-en"], "opus-mt-zh-en")
    s.set(Key.PRECISION, "fp32")  # other sections around it
    s.sync()
    assert Settings(path).get(Key.MODEL_EN_ZH) == "firefox-base-memory-en-zh"
    assert read_choices(path) == {"en-zh": "firefox-base-memory-en-zh", "zh-en": "opus-mt-zh-en"}, (
        "the CLI and the worker's load read what the window saved"
    )
    for bad in ("../other", "two words", "a/b"):
        with pytest.raises(ValueError):
            s.set(Key.MODEL_EN_ZH, bad)
    s.reset(Key.MODEL_EN_ZH)
    s.sync()
    assert read_choices(path) == {"zh-en": "opus-mt-zh-en"}


def test_the_models_offered_are_kept_as_a_space_separated_list(tmp_path):
    path = tmp_path / "qiao.ini"
    s = Settings(path)
    s.set(Key.MODELS_OFFERED, "firefox-base-en-zh firefox-base-memory-en-zh")
    s.sync()
    assert Settings(path).get(Key.MODELS_OFFERED).split() == ["firefox-base-en-zh", "firefox-base-memory-en-zh"]
    with pytest.raises(ValueError):
        s.set(Key.MODELS_OFFERED, "a,b")
