"""The local API asked for Traditional Chinese (zh-Hant, zh-TW) when the model chosen for en→zh writes Simplified
only (Firefox's; issue 29: a feature that cannot apply says so): an installed model of the direction that writes it
serves the request, else a 400 in LibreTranslate's shape ({"error": …}) says what the installed model writes. Real
engine, real WSGI app: the tiny Firefox-family en→zh bundle chosen in qiao.ini, the tiny opus-mt fixture beside it
or not."""

from __future__ import annotations

import pytest

from engine.api.app import ApiApp
from engine.api.errors import UnsupportedLanguage
from engine.api.guard import Access
from engine.api.languages import PairInfo, resolve
from engine.api.service import EngineService, installed_pairs
from engine.options import TranslationOptions
from engine.pipeline.translator import Translator
from tests.engine import model_helpers

from .fakes import PORT, call

store = model_helpers.store
TEXT = "Thank you very much."
FIREFOX, OPUS = model_helpers.FIREFOX_ENZH, model_helpers.OPUS_ENZH


install = model_helpers.install_enzh


@pytest.fixture
def serve():
    services: list[EngineService] = []

    def serve_() -> ApiApp:
        service = EngineService()
        services.append(service)
        return ApiApp(service, Access(port=PORT))

    yield serve_
    for service in services:
        service.close()


def engine_text(bundle, variant: str | None = None) -> str:
    return Translator(bundle, precision="int8").translate(TEXT, TranslationOptions(variant=variant)).text


def test_the_direction_is_described_by_the_chosen_model_with_what_only_another_writes(install):
    install(OPUS, FIREFOX)  # opus-mt first in search order: the choice, not the order, describes the direction
    [pair] = installed_pairs()
    assert (pair.model, pair.written, pair.elsewhere) == (FIREFOX, ("hans",), (("hant", OPUS),))
    assert resolve([pair], [TEXT], "en", "zh-TW").job_key == f"en-zh/{OPUS}"
    assert resolve([pair], [TEXT], "en", "zh-Hans").job_key == "en-zh"


def test_traditional_is_served_by_the_installed_model_that_writes_it(install, serve):
    models = install(FIREFOX, OPUS)
    app = serve()
    for target in ("zh-Hant", "zh-TW"):
        reply = call(app, "POST", "/translate", json_body={"q": TEXT, "source": "en", "target": target})
        assert reply.status == 200 and reply.json() == {"translatedText": engine_text(models[OPUS], "hant")}
    reply = call(app, "POST", "/translate", json_body={"q": TEXT, "source": "en", "target": "zh-Hans"})
    assert reply.status == 200 and reply.json() == {"translatedText": engine_text(models[FIREFOX])}
    assert engine_text(models[FIREFOX]) != engine_text(models[OPUS], "hant"), "the two models are told apart"
    langs = {entry["code"]: entry["targets"] for entry in call(app, "GET", "/languages").json()}
    assert langs["en"] == ["zh-Hans", "zh-Hant"], "Traditional is listed: an installed model writes it"


def test_traditional_without_a_model_that_writes_it_is_a_clear_400(install, serve):
    install(FIREFOX)
    app = serve()
    reply = call(app, "POST", "/translate", json_body={"q": TEXT, "source": "en", "target": "zh-Hant"})
    assert reply.status == 400
    assert reply.json() == {
        "error": f"zh-Hant is not supported: the installed en-zh model ({FIREFOX}) writes zh-Hans only; install "
        "one that writes zh-Hant, such as opus-mt-en-zh"
    }
    stream = call(app, "POST", "/qiao/stream", json_body={"q": TEXT, "source": "en", "target": "zh-TW"})
    assert stream.status == 400 and "writes zh-Hans only" in stream.json()["error"]
    langs = {entry["code"]: entry["targets"] for entry in call(app, "GET", "/languages").json()}
    assert langs["en"] == ["zh-Hans"], "Traditional is not offered"
    reply = call(app, "POST", "/translate", json_body={"q": TEXT, "source": "en", "target": "zh"})
    assert reply.status == 200 and reply.json()["translatedText"], "plain zh (and zh-Hans) still work"


def test_a_pair_known_only_by_its_variants_is_judged_by_what_it_writes():
    """The app's API knows the window's loaded pair alone (gui.desktop.api_service): a Chinese target without
    variants (Firefox's) writes zh-Hans, so zh-Hant is refused instead of answered in Simplified."""
    firefox = PairInfo("en", "zh", "English", "Chinese", ())
    assert resolve([firefox], [TEXT], "en", "zh-CN").pair == firefox
    with pytest.raises(UnsupportedLanguage, match="the installed en-zh model writes zh-Hans only") as info:
        resolve([firefox], [TEXT], "en", "zh-TW")
    assert info.value.status == 400
    opus = PairInfo("en", "zh", "English", "Chinese", ("hans", "hant"))
    assert resolve([opus], [TEXT], "en", "zh-TW").variant == "hant"
