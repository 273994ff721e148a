"""A second LibreTranslate client from PyPI against `qiao serve` (issue 27, Local API 2): libretranslate-aio 0.1.3
(sync client, on httpx) covers what libretranslatepy does not call: /health, /suggest, alternatives, /translate_file
with the download, /frontend/settings. At cd519ae its health() and suggest() met a 404 and alternatives were [].
Skipped where libretranslate-aio is not installed (the test extra pins it)."""

from __future__ import annotations

import pytest

from .serving import Served, allow_loopback

aio = pytest.importorskip("libretranslate_aio")


@pytest.fixture(scope="module")
def client():
    server = Served([])
    with aio.LibreTranslate(base_url=server.url, timeout=30) as lt:
        yield lt
    assert server.stop() == 0
    assert "Traceback" not in "".join(server.stderr_lines)


@pytest.fixture(autouse=True)
def loopback(monkeypatch):
    allow_loopback(monkeypatch)


def test_health_languages_and_settings(client):
    assert client.health() is True
    codes = {language.code for language in client.languages()}
    assert codes == {"en", "zh-Hans", "zh-Hant"}
    settings = client.frontend_settings()
    assert settings.suggestions is False and settings.key_required is False


def test_translate_detect_and_the_n_best(client):
    assert client.translate("Thank you very much.", source="en", target="zh-Hans").translated_text == "非常感谢。"
    assert client.translate("Thank you very much.", source="en", target="zh").translated_text == "非常感谢。"
    best = client.translate("Thank you very much.", source="en", target="zh-Hans", alternatives=2)
    assert len(best.alternatives) == 2 and best.translated_text not in best.alternatives
    assert client.detect("Thank you very much.")[0].language == "en"


def test_suggest_is_refused_as_libretranslate_refuses_it(client):
    with pytest.raises(aio.ForbiddenError, match=r"Suggestions are disabled on this server\."):
        client.suggest("Thank you.", "谢谢。", "en", "zh-Hans")


def test_translate_file_then_download_once(client, tmp_path):
    import httpx

    source = tmp_path / "报告.txt"
    source.write_text("Thank you very much.\nSee you tomorrow.\n", encoding="utf-8")
    url = client.translate_file(str(source), source="en", target="zh-Hans").translated_file_url
    first = httpx.get(url, timeout=30)
    assert first.status_code == 200 and first.content.decode("utf-8") == "非常感谢。\n明天见。\n"
    assert httpx.get(url, timeout=30).status_code == 404  # served once
