"""The WSGI app against a fake service: LibreTranslate's fields and errors, and every check on hostile input."""

from __future__ import annotations

import logging

import pytest

from engine.api import body as bodies
from engine.api.app import MAX_CHARS
from engine.api.languages import PairInfo

from .fakes import PORT, FakeService, call, make_app, multipart


@pytest.fixture
def app():
    return make_app()[0]


# -- /translate ---------------------------------------------------------------------------------------------------


def test_translate_form_encoded_as_libretranslatepy_sends_it(app):
    reply = call(app, "POST", "/translate", form={"q": "Hello", "source": "en", "target": "zh"})
    assert reply.status == 200
    assert reply.json() == {"translatedText": "zh:Hello"}
    assert reply.headers["Content-Type"].startswith("application/json")


def test_translate_json_list_keeps_order_and_is_one_call():
    app, service = make_app()
    reply = call(app, "POST", "/translate", json_body={"q": ["a b", "c", "d"], "source": "en", "target": "zh"})
    assert reply.json() == {"translatedText": ["zh:a b", "zh:c", "zh:d"]}
    assert [c[1] for c in service.calls] == [["a b", "c", "d"]]  # translated together


def test_translate_repeated_form_field_is_a_batch(app):
    reply = call(app, "POST", "/translate", form={"q": ["one", "two"], "source": "en", "target": "zh"})
    assert reply.json()["translatedText"] == ["zh:one", "zh:two"]


def test_script_codes_choose_the_variant(app):
    for code, tag in (("zh-Hant", "zh-hant"), ("zh-TW", "zh-hant"), ("zh-Hans", "zh-hans"), ("zh", "zh")):
        reply = call(app, "POST", "/translate", json_body={"q": "x", "source": "en", "target": code})
        assert reply.json()["translatedText"] == f"{tag}:x", code


def test_auto_source_is_detected_per_item_and_reported(app):
    reply = call(
        app, "POST", "/translate", json_body={"q": ["Good morning", "早上好"], "source": "auto", "target": "en"}
    )
    data = reply.json()
    assert reply.status == 200
    assert data["translatedText"] == ["Good morning", "en:早上好"]  # English into English is left as it is
    assert [d["language"] for d in data["detectedLanguage"]] == ["en", "zh-Hans"]  # LibreTranslate's code
    assert all(d["confidence"] > 50 for d in data["detectedLanguage"])
    single = call(app, "POST", "/translate", form={"q": "Hello there", "source": "auto", "target": "zh"}).json()
    assert single["detectedLanguage"]["language"] == "en"
    assert single["translatedText"] == "zh:Hello there"


def test_alternatives_are_the_services_n_best(app):
    """They were always empty lists; now the service's n-best (the fake's: "<k>~" + its translation)."""
    one = call(app, "POST", "/translate", json_body={"q": "x", "source": "en", "target": "zh", "alternatives": 3})
    assert one.json() == {"translatedText": "zh:x", "alternatives": ["1~zh:x", "2~zh:x", "3~zh:x"]}
    many = call(app, "POST", "/translate", form={"q": ["x", "y"], "source": "en", "target": "zh", "alternatives": "2"})
    assert many.json()["alternatives"] == [["1~zh:x", "2~zh:x"], ["1~zh:y", "2~zh:y"]]
    auto = call(app, "POST", "/translate", json_body={"q": "x", "source": "auto", "target": "zh", "alternatives": 9})
    assert auto.json()["alternatives"] == ["1~zh:x", "2~zh:x", "3~zh:x"]  # at most 3, LibreTranslate's default
    none = call(app, "POST", "/translate", json_body={"q": "x", "source": "en", "target": "zh"})
    assert "alternatives" not in none.json()
    html = {"q": "<b>x</b>", "source": "en", "target": "zh", "format": "html", "alternatives": 2}
    assert call(app, "POST", "/translate", json_body=html).json()["alternatives"] == []  # as LibreTranslate


def test_html_keeps_tags_and_entities(app):
    q = '<p>Hello <b>world</b> &amp; <a href="https://example.org/">friends</a></p>'
    reply = call(app, "POST", "/translate", json_body={"q": q, "source": "en", "target": "zh", "format": "html"})
    out = reply.json()["translatedText"]
    assert reply.status == 200
    assert out.startswith("<p>") and out.endswith("</p>")
    assert '<a href="https://example.org/">' in out and "<b>" in out and "</b>" in out
    assert "zh:" in out


@pytest.mark.parametrize("charset", ["gbk", "iso-8859-1", "windows-1252", "shift_jis"])
def test_html_is_read_as_the_text_it_was_sent_as_whatever_charset_it_declares(charset):
    """A page's <meta charset> names the encoding of its bytes; a `q` field is text the client decoded already.
    Read by the declaration, a gbk page with Chinese in it was refused ("not valid gbk text") and an iso-8859-1 one
    had "Café" translated as "CafÃ©"."""
    app = make_app()[0]
    q = f'<html><head><meta charset="{charset}"></head><body><p>Café au lait</p><pre>中文 café ©</pre></body></html>'
    reply = call(app, "POST", "/translate", json_body={"q": q, "source": "en", "target": "zh", "format": "html"})
    assert reply.status == 200, reply.json()
    out = reply.json()["translatedText"]
    assert "<p>zh:Café au lait</p>" in out and "<pre>中文 café ©</pre>" in out
    assert out.startswith(f'<html><head><meta charset="{charset}"></head>')  # the declaration is the client's to keep
    zh = '<meta charset="gb2312"><p>我们今天去公园散步。</p><p>今天天气很好。</p>'
    auto = call(app, "POST", "/translate", json_body={"q": zh, "source": "auto", "target": "en", "format": "html"})
    assert auto.json()["detectedLanguage"]["language"] == "zh-Hans"
    assert "<p>en:我们今天去公园散步。</p>" in auto.json()["translatedText"]


def test_auto_source_of_html_is_told_by_its_text_not_its_markup(app):
    """A Chinese page's tags, classes and links are Latin letters: read as text they outweighed its Chinese, so it
    was detected as English and either came back untranslated (to en) or went through the en→zh model (to zh)."""
    page = (
        '<div class="content-wrapper main-section" style="font-family: Arial">'
        '<p><a href="https://example.com/some/long/path/here">我们今天去公园散步。</a></p></div>'
    )
    english = '<div class="说明 提示"><p title="标题">The weather is nice today.</p></div>'
    body = {"q": [page, english], "source": "auto", "target": "en", "format": "html"}
    reply = call(app, "POST", "/translate", json_body=body)
    data = reply.json()
    assert reply.status == 200
    assert [d["language"] for d in data["detectedLanguage"]] == ["zh-Hans", "en"]
    assert ">en:我们今天去公园散步。</a>" in data["translatedText"][0]  # translated by zh→en, markup kept
    assert data["translatedText"][1] == english  # English into English is left as it is
    plain = call(app, "POST", "/translate", json_body={**body, "q": page, "format": "text"}).json()
    assert plain["detectedLanguage"]["language"] == "en"  # as text, the markup is what it reads


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"source": "en", "target": "zh"}, "Invalid request: missing q parameter"),
        ({"q": [], "source": "en", "target": "zh"}, "Invalid request: missing q parameter"),
        ({"q": "x", "target": "zh"}, "Invalid request: missing source parameter"),
        ({"q": "x", "source": "en"}, "Invalid request: missing target parameter"),
        ({"q": "x", "source": "en", "target": "zh", "format": "xml"}, "xml format is not supported"),
        ({"q": "x", "source": "en", "target": "zh", "alternatives": "abc"}, "alternatives parameter is not a number"),
        ({"q": "x", "source": "en", "target": "zh", "alternatives": True}, "alternatives parameter is not a number"),
        ({"q": "x", "source": "en", "target": "zz"}, "zz is not supported"),
        ({"q": "x", "source": "fr", "target": "zh"}, "fr is not supported"),
        ({"q": 5, "source": "en", "target": "zh"}, "q must be a string or a list of strings"),
        ({"q": ["x", None], "source": "en", "target": "zh"}, "q must be a string or a list of strings"),
        ({"q": {"a": 1}, "source": "en", "target": "zh"}, "q must be a string or a list of strings"),
        ({"q": "x", "source": ["en"], "target": "zh"}, "source must be a language code"),
    ],
)
def test_bad_fields_are_400_with_libretranslate_wording(app, fields, message):
    reply = call(app, "POST", "/translate", json_body=fields)
    assert reply.status == 400
    assert message in reply.json()["error"]


def test_unsupported_language_names_what_is_installed(app):
    error = call(app, "POST", "/translate", json_body={"q": "x", "source": "en", "target": "ja"}).json()["error"]
    assert error == "ja is not supported (installed: en-zh, zh-en)"


def test_pair_not_installed_is_400_with_a_clear_message():
    app, _ = make_app(FakeService(pairs=[FakeService().pairs[0]]))  # en-zh only
    reply = call(app, "POST", "/translate", json_body={"q": "你好", "source": "zh", "target": "en"})
    assert reply.status == 400
    assert reply.json()["error"] == "no zh-en model is installed (installed: en-zh)"


def test_unknown_fields_are_ignored(app):
    fields = {"q": "x", "source": "en", "target": "zh", "glossary": {"a": "b"}, "extra": [1, 2]}
    assert call(app, "POST", "/translate", json_body=fields).json() == {"translatedText": "zh:x"}


def test_total_characters_over_the_limit_is_400():
    app, service = make_app(max_chars=10)
    reply = call(app, "POST", "/translate", json_body={"q": ["12345", "678901"], "source": "en", "target": "zh"})
    assert reply.status == 400
    assert reply.json()["error"] == "Invalid request: request (11) exceeds text limit (10)"
    assert service.calls == []
    assert MAX_CHARS >= 10_000


# -- malformed bodies ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "ctype", "message"),
    [
        (b'{"q": "x", "source": ', "application/json", "Invalid JSON"),
        (b'["not", "a", "dict"]', "application/json", "Invalid JSON format"),
        (b'{"q": "x", "q": "y"}', "application/json", "appears twice"),
        (b'{"q": NaN}', "application/json", "Invalid JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "application/json", "Invalid JSON"),
        (b'{"q": "\xff\xfe"}', "application/json", "not UTF-8"),
        (b"q=\xff&source=en&target=zh", "application/x-www-form-urlencoded", "not UTF-8"),
        (b"q=%FF%FE&source=en&target=zh", "application/x-www-form-urlencoded", "not UTF-8"),
        (b"<q>x</q>", "application/xml", "not application/xml"),
        (b"--x\r\n", "multipart/form-data; boundary=x", "not a multipart upload"),
    ],
)
def test_malformed_bodies_are_4xx_with_a_reason(app, data, ctype, message):
    reply = call(app, "POST", "/translate", body=data, content_type=ctype)
    assert 400 <= reply.status < 500
    assert message in reply.json()["error"]


def test_too_many_form_fields_is_400(app):
    data = "&".join(f"f{i}=1" for i in range(bodies.MAX_FIELDS + 5)).encode()
    reply = call(app, "POST", "/translate", body=data, content_type="application/x-www-form-urlencoded")
    assert reply.status == 400


def test_huge_body_is_413_by_content_length_before_reading(app):
    class Exploding:
        def read(self, n=-1):
            raise AssertionError("the body was read")

    length = str(bodies.MAX_JSON_BYTES + 1)
    reply = call(app, "POST", "/translate", content_type="application/json", content_length=length, stream=Exploding())
    assert reply.status == 413
    assert "1 MB" in reply.json()["error"]
    for bad in ("-5", "12abc"):
        assert call(app, "POST", "/translate", content_type="application/json", content_length=bad).status == 400


def test_huge_body_without_content_length_is_413_once_read(app):
    data = b'{"q": "' + b"a" * (bodies.MAX_JSON_BYTES + 10) + b'"}'
    reply = call(app, "POST", "/translate", body=data, content_type="application/json", content_length="")
    assert reply.status == 413


def test_huge_upload_is_413(app):
    reply = call(
        app,
        "POST",
        "/translate_file",
        content_type="multipart/form-data; boundary=x",
        content_length=str(bodies.MAX_FILE_BYTES + 1),
    )
    assert reply.status == 413


def test_unknown_path_404_wrong_method_405(app):
    assert call(app, "GET", "/admin").status == 404
    assert call(app, "GET", "/translate/../../etc/passwd").status == 404
    reply = call(app, "GET", "/translate")
    assert reply.status == 405
    assert "POST" in reply.headers["Allow"]
    assert call(app, "DELETE", "/languages").status == 405


# -- Host, Origin, key --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    ["evil.example:5454", "evil.example", "127.0.0.1.nip.io:5454", "localhost:80", "127.0.0.1:9999", "localhost.:5454"],
)
def test_a_host_that_is_not_this_server_is_421(app, host):
    reply = call(app, "GET", "/languages", headers={"Host": host})
    assert reply.status == 421
    assert "DNS rebinding" in reply.json()["error"]


@pytest.mark.parametrize("host", [None, "", "[::1", "localhost:abc"])
def test_missing_or_malformed_host_is_400(app, host):
    assert call(app, "GET", "/languages", headers={"Host": host}).status == 400


@pytest.mark.parametrize("host", [f"127.0.0.1:{PORT}", f"localhost:{PORT}", f"LOCALHOST:{PORT}", f"[::1]:{PORT}"])
def test_loopback_names_are_served(app, host):
    assert call(app, "GET", "/languages", headers={"Host": host}).status == 200


@pytest.mark.parametrize("origin", ["https://evil.example", "http://127.0.0.1:5454", "null", "file://", "x" * 5000])
def test_a_web_page_origin_is_refused(origin):
    app, service = make_app()
    reply = call(
        app, "POST", "/translate", headers={"Origin": origin}, json_body={"q": "x", "source": "en", "target": "zh"}
    )
    assert reply.status == 403
    assert "--allow-origin" in reply.json()["error"]
    assert "Access-Control-Allow-Origin" not in reply.headers
    assert service.calls == []


@pytest.mark.parametrize("origin", ["chrome-extension://abcdefgh", "moz-extension://1234-5678"])
def test_extension_origins_are_served_with_cors(app, origin):
    reply = call(
        app, "POST", "/translate", headers={"Origin": origin}, json_body={"q": "x", "source": "en", "target": "zh"}
    )
    assert reply.status == 200
    assert reply.headers["Access-Control-Allow-Origin"] == origin


def test_an_allowed_origin_is_served_and_preflighted():
    app, _ = make_app(allow_origins=("https://notes.example",))
    pre = call(app, "OPTIONS", "/translate", headers={"Origin": "https://notes.example/"})
    assert pre.status == 204
    assert "POST" in pre.headers["Access-Control-Allow-Methods"]
    assert call(app, "OPTIONS", "/translate", headers={"Origin": "https://other.example"}).status == 403
    assert call(app, "GET", "/languages", headers={"Origin": "https://notes.example"}).status == 200


def test_api_key_missing_wrong_and_right():
    app, service = make_app(api_key="s3cret-key")
    fields = {"q": "x", "source": "en", "target": "zh"}
    missing = call(app, "POST", "/translate", json_body=fields)
    assert missing.status == 403 and "API key" in missing.json()["error"]
    wrong = call(app, "POST", "/translate", json_body={**fields, "api_key": "s3cret-kez"})
    assert wrong.status == 403 and wrong.json()["error"] == "Invalid API key"
    typed = call(app, "POST", "/translate", json_body={**fields, "api_key": ["s3cret-key"]})
    assert typed.status == 403
    assert service.calls == []
    right = call(app, "POST", "/translate", json_body={**fields, "api_key": "s3cret-key"})
    assert right.status == 200
    bearer = call(app, "POST", "/translate", json_body=fields, headers={"Authorization": "Bearer s3cret-key"})
    assert bearer.status == 200
    in_query = call(app, "POST", "/translate", json_body=fields, query="api_key=s3cret-key")
    assert in_query.status == 200
    for path in ("/detect", "/qiao/stream"):
        assert call(app, "POST", path, json_body={"q": "x", "source": "en", "target": "zh"}).status == 403
    assert call(app, "GET", "/languages").status == 200  # as LibreTranslate: listing needs no key
    assert call(app, "GET", "/frontend/settings").json()["keyRequired"] is True


def test_busy_service_is_503_with_retry_after():
    app, service = make_app()
    service.busy = True
    reply = call(app, "POST", "/translate", json_body={"q": "x", "source": "en", "target": "zh"})
    assert reply.status == 503
    assert int(reply.headers["Retry-After"]) >= 1
    assert "busy" in reply.json()["error"]


def test_an_unexpected_error_is_a_500_without_details(caplog):
    app, service = make_app()

    def broken(*args, **kwargs):
        raise RuntimeError("secret text inside")

    service.translate = broken  # type: ignore[method-assign]
    with caplog.at_level(logging.INFO, logger="qiao.api"):
        reply = call(app, "POST", "/translate", json_body={"q": "x", "source": "en", "target": "zh"})
    assert reply.status == 500
    assert reply.json() == {"error": "internal error"}
    assert "secret text inside" not in caplog.text
    assert "RuntimeError" in caplog.text


def test_request_text_stays_out_of_the_log_unless_asked(caplog):
    app, _ = make_app()
    with caplog.at_level(logging.DEBUG):
        call(app, "POST", "/translate", json_body={"q": "my private letter", "source": "en", "target": "zh"})
        call(app, "POST", "/translate", json_body={"q": "my private letter", "source": "en", "target": "zz"})
        call(app, "POST", "/detect", form={"q": "my private letter"})
    assert "private" not in caplog.text
    assert "POST /translate 200" in caplog.text
    assert "(17 chars)" in caplog.text
    caplog.clear()
    app, _ = make_app(log_content=True, api_key="k")
    with caplog.at_level(logging.INFO, logger="qiao.api"):
        call(
            app,
            "POST",
            "/translate",
            json_body={"q": "my private letter", "source": "en", "target": "zh", "api_key": "k"},
        )
    assert "my private letter" in caplog.text
    assert '"api_key": "***"' in caplog.text


# -- the other endpoints ------------------------------------------------------------------------------------------


def test_languages_lists_codes_names_and_targets(app):
    """Chinese as LibreTranslate lists it today (zh-Hans, zh-Hant): a client that checks its target against
    /languages refused zh-Hans when Qiao listed "zh"."""
    assert call(app, "GET", "/languages").json() == [
        {"code": "en", "name": "English", "targets": ["zh-Hans", "zh-Hant"]},
        {"code": "zh-Hans", "name": "Chinese", "targets": ["en"]},
        {"code": "zh-Hant", "name": "Chinese (Traditional)", "targets": ["en"]},
    ]
    simplified_only, _ = make_app(FakeService([PairInfo("en", "zh", "English", "Chinese")]))
    assert call(simplified_only, "GET", "/languages").json() == [
        {"code": "en", "name": "English", "targets": ["zh-Hans"]},
        {"code": "zh-Hans", "name": "Chinese", "targets": []},
    ]
    for code in ("zh", "zh-Hans", "zh-Hant", "zh-CN"):  # every spelling stays accepted
        assert call(app, "POST", "/translate", json_body={"q": "x", "source": "en", "target": code}).status == 200
        assert call(app, "POST", "/translate", json_body={"q": "你好", "source": code, "target": "en"}).status == 200
    # libretranslatepy sends GET with a form body
    assert call(app, "GET", "/languages", form={"api_key": ""}).status == 200


def test_detect(app):
    chinese = call(app, "POST", "/detect", form={"q": "今天天气很好"}).json()[0]
    assert chinese == {"confidence": 100.0, "language": "zh-Hans"}  # LibreTranslate's code for it
    english = call(app, "POST", "/detect", json_body={"q": "The weather is nice"}).json()
    assert english[0]["language"] == "en"
    assert call(app, "POST", "/detect", json_body={"q": 3}).status == 400
    assert call(app, "POST", "/detect", json_body={}).status == 400


def test_frontend_settings(app):
    data = call(app, "GET", "/frontend/settings").json()
    assert data["keyRequired"] is False and data["filesTranslation"] is True
    assert ".docx" in data["supportedFilesFormat"]
    assert data["language"]["source"]["code"] == "en"
    assert data["charLimit"] == MAX_CHARS
    # the default target in the code /languages lists it under (a client picks its menu entry by it); was "zh"
    listed = {entry["code"] for entry in call(app, "GET", "/languages").json()}
    assert data["language"]["target"] == {"code": "zh-Hans", "name": "Chinese"}
    assert {data["language"]["source"]["code"], data["language"]["target"]["code"]} <= listed


def test_health(app):
    assert call(app, "GET", "/qiao/health").json()["pairs"] == ["en-zh", "zh-en"]


def test_stream_is_server_sent_events():
    app, _ = make_app()
    reply = call(app, "POST", "/qiao/stream", json_body={"q": "one two three", "source": "en", "target": "zh"})
    assert reply.status == 200
    assert reply.headers["Content-Type"].startswith("text/event-stream")
    events = reply.body.decode().split("\n\n")
    assert events[:3] == ['data: {"delta": "one "}', 'data: {"delta": "two "}', 'data: {"delta": "three"}']
    assert events[3] == 'event: done\ndata: {"translatedText": "one two three"}'


def test_stream_refusals_are_json_errors_before_any_event():
    app, service = make_app()
    assert call(app, "POST", "/qiao/stream", json_body={"q": ["a"], "source": "en", "target": "zh"}).status == 400
    assert call(app, "POST", "/qiao/stream", json_body={"q": "a", "source": "en", "target": "zz"}).status == 400
    service.busy = True
    assert call(app, "POST", "/qiao/stream", json_body={"q": "a", "source": "en", "target": "zh"}).status == 503


def test_translate_file_then_download_once_by_its_url(app):
    data, ctype = multipart({"source": "en", "target": "zh"}, {"file": ("notes.txt", b"Hello.\n\nGood night.\n")})
    reply = call(app, "POST", "/translate_file", body=data, content_type=ctype)
    assert reply.status == 200, reply.body
    url = reply.json()["translatedFileUrl"]
    assert url.startswith(f"http://127.0.0.1:{PORT}/download_file/") and url.endswith(".notes.zh.txt")
    path = url.split(f":{PORT}", 1)[1]
    got = call(app, "GET", path)
    assert got.status == 200
    assert got.body == b"zh:Hello.\n\nzh:Good night.\n"
    assert "notes.zh.txt" in got.headers["Content-Disposition"]
    assert call(app, "GET", path).status == 404  # served once, as the README says (a second GET worked)
    token_guess = path.rsplit("/", 1)[0] + "/AAAAAAAAAAAAAAAAAAAAAAAA.notes.zh.txt"
    assert call(app, "GET", token_guess).status == 404
    assert call(app, "GET", path.rsplit(".", 3)[0] + ".other.zh.txt").status == 404


def test_translate_file_reports_what_the_reader_kept_verbatim(app):
    """A stray line between subtitle cues is kept untranslated and said: the job's warnings were dropped by the API.
    An extra field LibreTranslate's clients ignore; absent when there is nothing to say (LibreTranslate's shape)."""
    from engine.documents.formats import srt

    subtitles = (
        b"1\n00:00:01,000 --> 00:00:02,000\nHello.\n\nThis line is in no cue.\n\n"
        b"2\n00:00:03,000 --> 00:00:04,000\nBye.\n"
    )
    data, ctype = multipart({"source": "en", "target": "zh"}, {"file": ("film.srt", subtitles)})
    reply = call(app, "POST", "/translate_file", body=data, content_type=ctype)
    assert reply.status == 200, reply.body
    answer = reply.json()
    assert answer["warnings"] == list(srt.read(subtitles).warnings) and len(answer["warnings"]) == 1
    assert "This line is in no cue." in answer["warnings"][0]
    got = call(app, "GET", answer["translatedFileUrl"].split(f":{PORT}", 1)[1])
    assert b"\nThis line is in no cue.\n" in got.body and b"zh:Hello." in got.body
    data, ctype = multipart({"source": "en", "target": "zh"}, {"file": ("notes.txt", b"Hello.\n")})
    assert call(app, "POST", "/translate_file", body=data, content_type=ctype).json().keys() == {"translatedFileUrl"}


@pytest.mark.parametrize(
    ("files", "fields", "status", "message"),
    [
        ({}, {"source": "en", "target": "zh"}, 400, "missing file parameter"),
        ({"file": ("report.pdf", b"%PDF-1.4")}, {"source": "en", "target": "zh"}, 400, "PDF is not supported"),
        ({"file": ("x.exe", b"MZ")}, {"source": "en", "target": "zh"}, 400, "does not translate .exe"),
        ({"file": ("x.docx", b"not a zip")}, {"source": "en", "target": "zh"}, 400, "not a Word document"),
        ({"file": ("x.txt", b"Hi.")}, {"source": "en"}, 400, "missing target parameter"),
        ({"file": ("x.txt", b"Hi.")}, {"source": "en", "target": "ja"}, 400, "ja is not supported"),
    ],
)
def test_translate_file_refusals(app, files, fields, status, message):
    data, ctype = multipart(fields, files)
    reply = call(app, "POST", "/translate_file", body=data, content_type=ctype)
    assert reply.status == status
    assert message in reply.json()["error"]


def test_a_path_in_the_upload_name_is_dropped(app):
    data, ctype = multipart({"source": "en", "target": "zh"}, {"file": ("../../etc/evil.txt", b"Hi.")})
    url = call(app, "POST", "/translate_file", body=data, content_type=ctype).json()["translatedFileUrl"]
    assert url.endswith(".evil.zh.txt") and "etc" not in url


def test_malformed_multipart_is_400(app):
    reply = call(app, "POST", "/translate_file", body=b"garbage", content_type="multipart/form-data; boundary=zz")
    assert reply.status == 400
    nob = call(app, "POST", "/translate_file", body=b"garbage", content_type="multipart/form-data")
    assert nob.status == 400


def test_batch_limit_and_lone_surrogates_are_400(app):
    from engine.api.app import MAX_ITEMS

    many = call(app, "POST", "/translate", json_body={"q": [""] * (MAX_ITEMS + 1), "source": "en", "target": "zh"})
    assert many.status == 400 and "exceeds batch limit" in many.json()["error"]
    data = b'{"q": "bad \\ud800 text", "source": "en", "target": "zh"}'
    lone = call(app, "POST", "/translate", body=data, content_type="application/json")
    assert lone.status == 400 and "lone surrogate (\\ud800)" in lone.json()["error"]
    detect = call(app, "POST", "/detect", body=b'{"q": "\\udfff"}', content_type="application/json")
    assert detect.status == 400


def test_json_sent_as_text_plain_or_without_a_type_is_read_as_json(app):
    data = b'{"q": "x", "source": "en", "target": "zh"}'
    for ctype in ("text/plain;charset=UTF-8", None):
        reply = call(app, "POST", "/translate", body=data, content_type=ctype)
        assert reply.json() == {"translatedText": "zh:x"}, ctype


def test_health_and_suggest_answer_as_libretranslate_does(app):
    """LibreTranslate's app.py: GET /health → {"status": "ok"} (POST 405); /suggest with suggestions off → 403
    "Suggestions are disabled on this server." (Qiao answered 404 to both)."""
    reply = call(app, "GET", "/health")
    assert (reply.status, reply.json()) == (200, {"status": "ok"})
    assert call(app, "POST", "/health").status == 405
    fields = {"q": "Hello", "s": "你好", "source": "en", "target": "zh"}
    reply = call(app, "POST", "/suggest", form=fields)
    assert (reply.status, reply.json()) == (403, {"error": "Suggestions are disabled on this server."})
    assert call(app, "GET", "/frontend/settings").json()["suggestions"] is False
