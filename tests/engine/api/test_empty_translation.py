"""The API never answers "" for text with words in it: an item (or an html paragraph, or a document's paragraph)
whose translation the model gave empty comes back as it was, and the answer's `warnings` (Qiao's own field, as
/translate_file's) say which. The real engine: the tiny zh→en Firefox-family model, which translates some Chinese
sentences as nothing. Before, /translate answered {"translatedText": ""} with 200 and nothing else."""

from __future__ import annotations

from urllib.parse import unquote

import pytest

from engine.api.service import EngineService
from tests.fixtures.bergamot import make

from .fakes import call, make_app, multipart


@pytest.fixture(scope="module")
def service(bergamot_zh_en_bundle_dir):
    service = EngineService(str(bergamot_zh_en_bundle_dir))
    yield service
    service.close()


@pytest.fixture(scope="module")
def pair(service) -> tuple[str, str]:
    """(a sentence the model translates as nothing, one it translates into text), when the service translates them
    together in this order (as a two-paragraph document or html fragment sends them): the engine's own answers."""
    lines = list(dict.fromkeys(make.chinese_lines()))
    alone = service.translate(lines, "zh", "en")
    empty = [line for line, text in zip(lines, alone, strict=True) if not text.strip()]
    full = [line for line, text in zip(lines, alone, strict=True) if text.strip()]
    for e in empty:
        for f in full:
            together = service.translate([f, e], "zh", "en")
            if together[0].strip() and not together[1].strip():
                return e, f
    pytest.skip("the tiny zh→en model translates every fixture sentence into text")


def test_one_item_translated_as_nothing_comes_back_as_it_was_with_a_warning(service, pair):
    empty, _ = pair
    app, _ = make_app(service)
    reply = call(app, "POST", "/translate", json_body={"q": empty, "source": "zh", "target": "en"})
    assert reply.status == 200
    data = reply.json()
    assert data["translatedText"] == empty
    assert len(data["warnings"]) == 1 and empty in data["warnings"][0] and "empty" in data["warnings"][0]


def test_a_batch_names_the_item_and_translates_the_others(service, pair):
    empty, full = pair
    app, _ = make_app(service)
    items = [full, empty, "   "]
    raw = service.translate(items, "zh", "en")  # the engine's own answers, for this batch
    assert raw[0].strip() and not raw[1].strip()
    data = call(app, "POST", "/translate", json_body={"q": items, "source": "zh", "target": "en"}).json()
    assert data["translatedText"] == [raw[0], empty, raw[2]]  # blank stays blank: nothing to lose
    assert len(data["warnings"]) == 1 and data["warnings"][0].startswith("q[1]: ") and empty in data["warnings"][0]
    plain = call(app, "POST", "/translate", json_body={"q": [full], "source": "zh", "target": "en"}).json()
    assert "warnings" not in plain  # only when something was kept


def test_alternatives_do_not_hide_it(service, pair):
    empty, full = pair
    app, _ = make_app(service)
    raw = [text for text, _ in service.translate_nbest([full, empty], "zh", "en", 2)]  # the engine's own answers
    blank = [i for i, text in enumerate(raw) if not text.strip()]
    if not blank:
        pytest.skip("with alternatives the model translates both")
    body = {"q": [full, empty], "source": "zh", "target": "en", "alternatives": 2}
    data = call(app, "POST", "/translate", json_body=body).json()
    assert data["translatedText"] == [[full, empty][i] if i in blank else raw[i] for i in range(2)]
    assert [w[:6] for w in data["warnings"]] == [f"q[{i}]: " for i in blank]
    assert len(data["alternatives"]) == 2


def test_html_keeps_the_paragraph_and_its_tags(service, pair):
    empty, full = pair
    app, _ = make_app(service)
    fragments = ["<p>ok</p>", f"<p>{full}</p><p><b>{empty}</b></p>"]
    body = {"q": fragments, "source": "auto", "target": "en", "format": "html"}
    data = call(app, "POST", "/translate", json_body=body).json()
    second = data["translatedText"][1]
    assert second == f"<p>{service.translate([full, empty], 'zh', 'en')[0]}</p><p><b>{empty}</b></p>"  # <b></b> before
    assert len(data["warnings"]) == 1 and data["warnings"][0].startswith("q[1]: ") and empty in data["warnings"][0]


def test_translate_file_keeps_the_paragraph_and_warns(service, pair):
    empty, full = pair
    app, _ = make_app(service)
    body, content_type = multipart(
        {"source": "zh", "target": "en"}, {"file": ("notes.txt", f"{full}\n\n{empty}\n".encode())}
    )
    reply = call(app, "POST", "/translate_file", body=body, content_type=content_type)
    assert reply.status == 200
    data = reply.json()
    assert any(empty in w for w in data["warnings"])
    name = unquote(data["translatedFileUrl"].split("/download_file/", 1)[1])
    written = call(app, "GET", "/download_file/" + name).body.decode("utf-8")
    first, _, second = written.partition("\n\n")
    assert first == service.translate([full, empty], "zh", "en")[0]
    assert second == f"{empty}\n"


def test_the_stream_ends_with_the_text_as_it_was(service, pair):
    empty, _ = pair
    app, _ = make_app(service)
    reply = call(app, "POST", "/qiao/stream", json_body={"q": empty, "source": "zh", "target": "en"})
    events = reply.body.decode("utf-8")
    assert f'"delta": "{empty}"' in events
    done = events.split("event: done\n", 1)[1]
    assert f'"translatedText": "{empty}"' in done and '"warnings"' in done
