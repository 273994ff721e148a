"""engine.store.catalogue: a strict reader of the bundle list; a hostile catalogue is a CatalogueError, never a
crash."""

from __future__ import annotations

import json

import pytest

from engine.store.catalogue import (
    DEFAULT_CATALOGUE_URL,
    MAX_CATALOGUE_BYTES,
    CatalogueError,
    catalogue_location,
    load_catalogue,
    parse_catalogue,
)
from tests.engine import model_helpers
from tests.engine.model_helpers import closed_port_url

server = model_helpers.server
BASE = "https://example.org/releases/v1/catalogue.json"
GOOD = {
    "id": "opus-mt-en-zh",
    "name": "English → Chinese (opus-mt-en-zh)",
    "source": "en",
    "target": "zh",
    "model_id": "Helsinki-NLP/opus-mt-en-zh",
    "url": "https://example.org/qiao-model-opus-mt-en-zh.zip",
    "size": 123,
    "sha256": "AB" * 32,
    "license": "CC-BY-4.0",
    "precisions": ["int8", "fp32"],
}


def _doc(*entries: dict, **top: object) -> bytes:
    return json.dumps({"format": 1, "bundles": list(entries), **top}).encode()


def test_a_good_catalogue_reads_whole():
    (entry,) = parse_catalogue(_doc(GOOD), BASE)
    assert entry.id == "opus-mt-en-zh" and entry.pair_key == "en-zh" and entry.size == 123
    assert entry.sha256 == "ab" * 32, "hex is normalised to lower case"
    assert entry.precisions == ("int8", "fp32") and entry.model_id == "Helsinki-NLP/opus-mt-en-zh"


def test_unknown_keys_are_ignored_for_newer_catalogues():
    (entry,) = parse_catalogue(_doc({**GOOD, "mirrors": ["…"]}, published="2026-12-01"), BASE)
    assert entry.id == GOOD["id"]


def test_relative_urls_resolve_against_the_catalogue():
    (entry,) = parse_catalogue(_doc({**GOOD, "url": "opus-mt-en-zh.zip"}), BASE)
    assert entry.url == "https://example.org/releases/v1/opus-mt-en-zh.zip"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"{", "not valid JSON"),
        (b"\xff\xfe", "not valid JSON"),
        (b"[]", "expected a JSON object"),
        (b"[" * 100_000, "nested too deeply"),
        (json.dumps({"format": 2, "bundles": []}).encode(), "format 2"),
        (json.dumps({"format": True, "bundles": []}).encode(), "format True"),
        (json.dumps({"format": 1}).encode(), "bundles: expected a list"),
        (b'{"format": 1, "format": 1, "bundles": []}', "appears twice"),
        (b'{"format": 1, "bundles": [{"size": NaN}]}', "not a valid JSON number"),
        (_doc(GOOD, GOOD), "'opus-mt-en-zh' appears twice"),
        (_doc("x"), r"bundles\[0\]: expected an object"),
    ],
)
def test_malformed_catalogues_are_refused(data, message):
    with pytest.raises(CatalogueError, match=message):
        parse_catalogue(data, BASE)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("id", "../evil"),
        ("id", ".hidden"),
        ("id", 7),
        ("name", ""),
        ("name", "bell\x07"),
        ("name", "x" * 201),
        ("source", "EN"),
        ("target", None),
        ("model_id", ["a"]),
        ("size", 0),
        ("size", -1),
        ("size", True),
        ("size", 1.5),
        ("size", 2**41),
        ("sha256", "ab" * 31),
        ("sha256", "zz" * 32),
        ("license", 3),
        ("precisions", []),
        ("precisions", "int8"),
        ("precisions", ["int8", "int8"]),
        ("precisions", ["INT 8"]),
        ("url", ""),
        ("url", 5),
    ],
)
def test_each_field_has_its_type_and_form(field, value):
    with pytest.raises(CatalogueError, match=rf"bundles\[0\]\.{field}: expected"):
        parse_catalogue(_doc({**GOOD, field: value}), BASE)


def test_a_missing_field_is_named():
    entry = {k: v for k, v in GOOD.items() if k != "sha256"}
    with pytest.raises(CatalogueError, match=r"bundles\[0\]\.sha256: expected 64 hexadecimal digits, found nothing"):
        parse_catalogue(_doc(entry), BASE)


def test_same_source_and_target_is_refused():
    with pytest.raises(CatalogueError, match="both 'en'"):
        parse_catalogue(_doc({**GOOD, "target": "en"}), BASE)


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://example.org/a.zip", True),
        ("http://example.org/a.zip", False),  # could be rewritten on the way, hash and all
        ("http://127.0.0.1:8000/a.zip", True),
        ("http://localhost/a.zip", True),
        ("http://[::1]/a.zip", True),
        ("ftp://example.org/a.zip", False),
        ("file:///tmp/a.zip", False),  # a remote catalogue may not point at this machine's files
        ("javascript:alert(1)", False),
    ],
)
def test_url_policy_for_a_remote_catalogue(url, allowed):
    data = _doc({**GOOD, "url": url})
    if allowed:
        assert parse_catalogue(data, BASE)[0].url == url
    else:
        with pytest.raises(CatalogueError, match="url refused"):
            parse_catalogue(data, BASE)


def test_a_local_catalogue_may_name_local_files(tmp_path):
    path = tmp_path / "catalogue.json"
    path.write_bytes(_doc({**GOOD, "url": "bundles/a.zip"}))
    (entry,) = load_catalogue(str(path))
    assert entry.url == (tmp_path / "bundles" / "a.zip").as_uri()
    (again,) = load_catalogue(path.as_uri())
    assert again.url == entry.url


def test_too_many_entries_and_too_large_a_catalogue_are_refused(tmp_path):
    many = [{**GOOD, "id": f"m{i}"} for i in range(501)]
    with pytest.raises(CatalogueError, match="over 500 bundles"):
        parse_catalogue(_doc(*many), BASE)
    huge = tmp_path / "huge.json"
    huge.write_bytes(b" " * (MAX_CATALOGUE_BYTES + 1))
    with pytest.raises(CatalogueError, match="larger than 1024 kB"):
        load_catalogue(str(huge))


def test_catalogue_locations_that_cannot_be_read(tmp_path):
    with pytest.raises(CatalogueError, match="no such file"):
        load_catalogue(str(tmp_path / "missing.json"))
    with pytest.raises(CatalogueError, match="plain http"):
        load_catalogue("http://example.org/catalogue.json")
    with pytest.raises(CatalogueError, match="only https"):
        load_catalogue("ftp://example.org/catalogue.json")


def test_the_default_location_and_its_override(monkeypatch):
    monkeypatch.delenv("QIAO_CATALOGUE_URL", raising=False)
    assert catalogue_location() == DEFAULT_CATALOGUE_URL and DEFAULT_CATALOGUE_URL.startswith("https://")
    monkeypatch.setenv("QIAO_CATALOGUE_URL", "/srv/mirror/catalogue.json")
    assert catalogue_location() == "/srv/mirror/catalogue.json"


def test_a_catalogue_over_http_from_this_machine(server):
    url = server.add("/catalogue.json", _doc({**GOOD, "url": "a.zip"}))
    (entry,) = load_catalogue(url)
    assert entry.url == server.url + "/a.zip"
    with pytest.raises(CatalogueError, match="the server answered 404"):
        load_catalogue(server.url + "/nothing.json")


def test_a_catalogue_redirecting_to_plain_http_elsewhere_is_refused(server):
    import http.server

    class Redirect(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(302)
            self.send_header("Location", "http://example.org/catalogue.json")
            self.end_headers()

        def log_message(self, *a):
            pass

    import threading

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Redirect)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        with pytest.raises(CatalogueError, match="redirected to a refused address"):
            load_catalogue(f"http://127.0.0.1:{httpd.server_address[1]}/c.json")
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_offline_is_said_so(server):
    with pytest.raises(CatalogueError, match="you are offline or the server cannot be reached") as exc:
        load_catalogue(closed_port_url("/catalogue.json"))
    assert exc.value.offline
    with pytest.raises(CatalogueError) as exc:
        load_catalogue(server.url + "/nothing.json")
    assert not exc.value.offline, "a server that answers is not offline"


# -- family, quality, speed (several models per direction) ------------------------------------------------------

QUALITY = {"metric": "COMET-22", "test_set": "FLORES devtest", "score": 86.31, "source": "Mozilla, comet-results.md"}
SPEED = {"tokens_per_s": 512.5, "threads": 2, "precision": "int8", "machine": "AMD EPYC 7763"}
FIREFOX = {
    **GOOD,
    "id": "firefox-base-memory-en-zh",
    "model_id": "mozilla/firefox-base-memory-en-zh",
    "license": "MPL-2.0",
    "precisions": ["int8"],
    "family": "bergamot",
    "installed_size": 45_000_000,
    "quality": QUALITY,
    "speed": SPEED,
}


def test_family_quality_speed_and_installed_size_are_read():
    from engine.store.quality import Quality, Speed

    opus, firefox = parse_catalogue(_doc(GOOD, FIREFOX), BASE)
    assert firefox.family == "bergamot" and firefox.installed_size == 45_000_000
    assert firefox.quality == Quality("COMET-22", "FLORES devtest", 86.31, "Mozilla, comet-results.md")
    assert firefox.speed == Speed(512.5, 2, "int8", "AMD EPYC 7763")
    assert opus.family == "marian" and opus.speed is None and opus.installed_size is None
    assert opus.quality is not None and opus.quality.score == 82.44, "an older catalogue: the score Qiao knows"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"family": "Bergamot!"}, "family"),
        ({"family": 3}, "family"),
        ({"installed_size": -1}, "installed_size"),
        ({"quality": {**QUALITY, "score": "best"}}, "quality: score"),
        ({"quality": "great"}, "quality"),
        ({"speed": {**SPEED, "threads": True}}, "speed: threads"),
        ({"speed": {**SPEED, "machine": "x\n"}}, "speed: machine"),
    ],
)
def test_a_bad_family_quality_or_speed_is_refused_naming_the_field(change, field):
    with pytest.raises(CatalogueError, match=rf"bundles\[0\]\.{field}"):
        parse_catalogue(_doc({**FIREFOX, **change}), BASE)


def test_recommended_is_the_best_quality_bundle_of_each_direction():
    from engine.store.catalogue import recommended

    base = {**FIREFOX, "id": "firefox-base-en-zh", "model_id": "mozilla/firefox-base-en-zh"}
    base["quality"] = {**QUALITY, "score": 85.56}
    zh_en = {**GOOD, "id": "opus-mt-zh-en", "source": "zh", "target": "en", "model_id": "Helsinki-NLP/opus-mt-zh-en"}
    unknown = {**GOOD, "id": "mine", "model_id": "me/mine"}
    entries = parse_catalogue(_doc(unknown, GOOD, zh_en, base, FIREFOX), BASE)
    assert [e.id for e in recommended(entries)] == ["firefox-base-memory-en-zh", "opus-mt-zh-en"]
    assert [e.id for e in recommended(entries[:1])] == ["mine"], "no score known: the only one of its direction"
