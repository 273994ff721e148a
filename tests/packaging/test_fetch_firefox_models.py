"""fetch_firefox_models, offline: a synthetic Firefox Translations folder (tests/fixtures/bergamot/make.py, gzipped
as published) served from a file:// mirror with the repository's layout stands in for Mozilla. Every file is
checked against its published size and sha256 before anything is unpacked (a changed byte, a wrong size, an http://
URL are refused and leave nothing behind), un-gzipped with a bound, converted by the real `qiao model build`
(family bergamot), given Mozilla's published quality, verified, self-tested, and catalogued."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import shutil
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import fetch_firefox_models as fetcher
import make_catalogue
import pytest

from engine.bundle.manifest import verify_bundle
from engine.store.catalogue import load_catalogue
from tests.engine.api.serving import allow_loopback

URL = "https://github.com/example/qiao/releases/download/v1.0.0"


@pytest.fixture(scope="module")
def synthetic_folder() -> Path:
    """A tiny base-memory-like en→zh folder (int8 with alphas, separate vocabularies, a shortlist), gzipped."""
    pytest.importorskip("sentencepiece", reason="the synthetic vocabularies are trained with sentencepiece")
    from tests.fixtures.bergamot import make

    folder = make.cached_folder(make.TINY, "intgemm-alphas", shortlist=True, gz=True)
    return folder.model.parent


def published(folder: Path) -> tuple[fetcher.PublishedFile, ...]:
    files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    return tuple(
        fetcher.PublishedFile(p.name, p.stat().st_size, hashlib.sha256(p.read_bytes()).hexdigest(), p.suffix == ".gz")
        for p in files
    )


@pytest.fixture
def mirror(synthetic_folder, tmp_path) -> tuple[str, fetcher.FirefoxModel, Path]:
    """A file:// mirror holding the synthetic folder at models/base-memory/enzh, and the model as published there."""
    root = tmp_path / "mirror"
    model = fetcher.FirefoxModel("base-memory", "enzh", published(synthetic_folder))
    place = root / model.folder
    place.mkdir(parents=True)
    for file in model.files:
        shutil.copyfile(synthetic_folder / file.name, place / file.name)
    return root.as_uri(), model, place


def test_the_pinned_table_is_the_four_en_zh_models_with_full_hashes():
    ids = [m.id for m in fetcher.MODELS]
    assert ids == [
        "firefox-translations-enzh-base-memory",
        "firefox-translations-enzh-base",
        "firefox-translations-zhen-base-memory",
        "firefox-translations-zhen-base",
    ]
    for model in fetcher.MODELS:
        names = {f.name for f in model.files}
        assert f"model.{model.pair}.intgemm.alphas.bin.gz" in names and "metadata.json" in names
        assert f"lex.50.50.{model.pair}.s2t.bin.gz" in names
        assert all(len(f.sha256) == 64 and int(f.sha256, 16) >= 0 and f.size > 0 for f in model.files)
    first = fetcher.MODELS[0]
    assert fetcher.file_url(first, first.files[0]) == (
        f"https://media.githubusercontent.com/media/mozilla/firefox-translations-models/{fetcher.COMMIT}"
        "/models/base-memory/enzh/model.enzh.intgemm.alphas.bin.gz"
    )
    meta = next(f for f in first.files if f.name == "metadata.json")
    assert fetcher.file_url(first, meta).startswith("https://raw.githubusercontent.com/mozilla/")


def test_published_files_are_downloaded_and_checked(mirror, tmp_path):
    base, model, _ = mirror
    folder = fetcher.fetch(model, tmp_path / "downloads", base, say=lambda _: None)
    assert sorted(p.name for p in folder.iterdir()) == sorted(f.name for f in model.files)


@pytest.mark.parametrize("damage", ["byte", "longer", "shorter"])
def test_a_file_that_differs_from_the_published_one_is_refused_and_nothing_is_kept(mirror, tmp_path, damage):
    base, model, place = mirror
    victim = place / model.files[0].name
    data = bytearray(victim.read_bytes())
    if damage == "byte":
        data[len(data) // 2] ^= 0xFF
    elif damage == "longer":
        data += b"\0"
    else:
        del data[-1]
    victim.write_bytes(bytes(data))
    downloads = tmp_path / "downloads"
    with pytest.raises(fetcher.FetchError) as caught:
        fetcher.fetch(model, downloads, base, say=lambda _: None)
    message = str(caught.value)
    assert model.files[0].name in message
    assert ("sha256" in message and "refused" in message) if damage == "byte" else "published" in message
    leftovers = [p.name for p in downloads.rglob("*") if p.is_file()]
    assert model.files[0].name not in leftovers and not any(n.endswith(".part") for n in leftovers)


def test_a_cached_download_is_kept_only_when_it_is_the_published_file(mirror, tmp_path):
    base, model, place = mirror
    downloads = tmp_path / "downloads"
    folder = fetcher.fetch(model, downloads, base, say=lambda _: None)
    first = model.files[0]
    shutil.rmtree(place)  # the mirror is gone: only a cached file that checks out can be used
    assert fetcher.fetch(model, downloads, base, say=lambda _: None) == folder
    (folder / first.name).write_bytes(b"stale")
    with pytest.raises(fetcher.FetchError, match="cannot download"):
        fetcher.fetch(model, downloads, base, say=lambda _: None)
    assert not (folder / first.name).exists(), "a stale cached file is never used"


def test_only_https_or_a_local_mirror_is_fetched(tmp_path):
    file = fetcher.PublishedFile("x.gz", 1, "0" * 64)
    with pytest.raises(fetcher.FetchError, match="only https://"):
        fetcher.download("http://example.org/x.gz", tmp_path / "x.gz", file)
    assert not (tmp_path / "x.gz").exists()


# -- a local HTTP server shaped like the published source: files by path, and the ways a real server fails ----------


class _Server:
    """Serves `root` over http://127.0.0.1; `behaviour[name]` makes the file named `name` misbehave: "truncate"
    (the full Content-Length promised, a tenth sent, connection closed), "stall" (headers, then silence), "trickle"
    (a few bytes a second). Every misbehaviour ends by itself within seconds, so a client that waits never hangs
    the test run."""

    def __init__(self, root: Path) -> None:
        self.root, self.behaviour, self.requests = root, {}, []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                server.requests.append(self.path)
                path = server.root / self.path.lstrip("/")
                if not path.is_file():
                    self.send_error(404)
                    return
                data = path.read_bytes()
                how = server.behaviour.get(path.name)
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    if how == "truncate":
                        self.wfile.write(data[: len(data) // 10])
                    elif how == "stall":
                        self.wfile.flush()
                        time.sleep(4)
                    elif how == "trickle":
                        for i in range(20):
                            self.wfile.write(data[i : i + 1])
                            self.wfile.flush()
                            time.sleep(0.2)
                    else:
                        self.wfile.write(data)
                except OSError:
                    pass  # the client gave up

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server(tmp_path, monkeypatch):
    allow_loopback(monkeypatch)  # the suite forbids the network; this server is on 127.0.0.1 only
    served = _Server(tmp_path / "served")
    (tmp_path / "served").mkdir()
    yield served
    served.close()


def _blob(server: _Server, name: str, size: int = 200_000) -> fetcher.PublishedFile:
    data = bytes(range(256)) * (size // 256)
    (server.root / name).write_bytes(data)
    return fetcher.PublishedFile(name, len(data), hashlib.sha256(data).hexdigest())


def test_a_local_http_mirror_serves_the_published_files(mirror, tmp_path, server):
    _, model, place = mirror
    shutil.copytree(place.parents[2], server.root, dirs_exist_ok=True)  # the mirror's models/… tree, over HTTP
    folder = fetcher.fetch(model, tmp_path / "downloads", server.url, say=lambda _: None)
    assert sorted(p.name for p in folder.iterdir()) == sorted(f.name for f in model.files)
    assert all(r.startswith("/models/base-memory/enzh/") for r in server.requests)


def test_a_missing_file_on_the_server_names_the_file_and_the_answer(mirror, tmp_path, server):
    _, model, place = mirror
    shutil.copytree(place.parents[2], server.root, dirs_exist_ok=True)
    missing = model.files[-1]
    (server.root / model.folder / missing.name).unlink()
    with pytest.raises(fetcher.FetchError, match=f"{missing.name}: cannot download .*404") as caught:
        fetcher.fetch(model, tmp_path / "downloads", server.url, say=lambda _: None)
    assert server.url in str(caught.value)
    assert not (tmp_path / "downloads" / "enzh-base-memory" / missing.name).exists()


def test_a_truncated_download_is_refused_and_nothing_is_kept(tmp_path, server):
    file = _blob(server, "model.enzh.intgemm.alphas.bin.gz")
    server.behaviour[file.name] = "truncate"
    dest = tmp_path / "d" / file.name
    sent = f"{file.size // 10:,} bytes, but {file.size:,} were published"
    with pytest.raises(fetcher.FetchError, match=f"{file.name}: {sent}"):
        fetcher.download(f"{server.url}/{file.name}", dest, file, timeout=5)
    assert not dest.exists() and not dest.with_name(dest.name + ".part").exists()


@pytest.mark.parametrize("how", ["stall", "trickle"])
def test_a_server_that_stalls_or_trickles_is_given_up_on_with_a_clear_message(tmp_path, server, how):
    """Before, only a read that got nothing for the whole timeout ended a download: a server sending a byte now and
    then kept the release job waiting until its own time limit, and a local mirror could not be served at all."""
    file = _blob(server, "lex.50.50.enzh.s2t.bin.gz")
    server.behaviour[file.name] = how
    dest = tmp_path / "d" / file.name
    with pytest.raises(fetcher.FetchError) as caught:
        fetcher.download(f"{server.url}/{file.name}", dest, file, timeout=1)
    message = str(caught.value)
    assert file.name in message and server.url in message and "given up" in message
    assert ("sent nothing for 1 s" if how == "stall" else "the server stalled") in message
    assert not dest.exists() and not dest.with_name(dest.name + ".part").exists()


def test_unpacking_is_bounded_and_rejects_what_is_not_gzip(tmp_path):
    downloads = tmp_path / "d"
    downloads.mkdir()
    (downloads / "model.enzh.bin.gz").write_bytes(gzip.compress(b"\0" * 4096))
    with pytest.raises(fetcher.FetchError, match="unpacks past 1,000 bytes"):
        fetcher.unpack(downloads, tmp_path / "u", limit=1000)
    (downloads / "model.enzh.bin.gz").write_bytes(b"not gzip")
    with pytest.raises(fetcher.FetchError, match="not a gzip file"):
        fetcher.unpack(downloads, tmp_path / "u")


@pytest.mark.parametrize("damage", ["gzip header over garbage", "empty", "truncated", "bad crc"])
def test_a_gz_that_is_not_a_whole_gzip_stream_is_refused_with_a_message(tmp_path, damage):
    """Before, a gzip header followed by bytes that are not deflate escaped as a zlib.error traceback, and an empty
    .gz unpacked into an empty model file."""
    good = gzip.compress(b"model bytes " * 500)
    data = {
        "gzip header over garbage": good[:10] + b"\xff" * 200,
        "empty": b"",
        "truncated": good[: len(good) // 2],
        "bad crc": good[:-8] + b"\0" * 8,
    }[damage]
    downloads = tmp_path / "d"
    downloads.mkdir()
    (downloads / "model.enzh.intgemm.alphas.bin.gz").write_bytes(data)
    with pytest.raises(
        fetcher.FetchError, match=re.escape("model.enzh.intgemm.alphas.bin.gz: not a gzip file Qiao can unpack")
    ):
        fetcher.unpack(downloads, tmp_path / "u")
    assert not (tmp_path / "u" / "model.enzh.intgemm.alphas.bin").exists()


def test_only_the_published_files_are_unpacked(mirror, tmp_path):
    """A file the published list does not name (left in the download folder by an older pin or a mirror: here a
    shared vocabulary beside the model's separate ones) never reaches the converter."""
    base, model, _ = mirror
    downloaded = fetcher.fetch(model, tmp_path / "d", base, say=lambda _: None)
    (downloaded / "vocab.enzh.spm.gz").write_bytes(gzip.compress(b"stray"))
    folder = fetcher.unpack(downloaded, tmp_path / "u" / "enzh", names=[f.name for f in model.files])
    assert sorted(p.name for p in folder.iterdir()) == sorted(f.name.removesuffix(".gz") for f in model.files)


def test_metadata_is_compared_with_the_model_but_not_enforced(mirror, tmp_path):
    base, model, _ = mirror
    folder = fetcher.unpack(fetcher.fetch(model, tmp_path / "d", base, say=lambda _: None), tmp_path / "u" / "enzh")
    assert "match" in fetcher.metadata_note(folder) and "differs" not in fetcher.metadata_note(folder)
    meta = json.loads((folder / "metadata.json").read_text(encoding="utf-8"))
    (folder / "metadata.json").write_text(json.dumps({**meta, "hash": "0" * 64}), encoding="utf-8")
    assert "hash differs from" in fetcher.metadata_note(folder)


def test_a_converted_bundle_of_another_model_is_refused(mirror, tmp_path, bundle_dir):
    base, model, _ = mirror

    def wrong(folder: Path, out: Path, model_id: str) -> None:  # a converter that wrote some other bundle
        shutil.copytree(bundle_dir, out)

    with pytest.raises(fetcher.FetchError, match="is qiao/tiny-marian-fixture, not mozilla/firefox-translations-enzh"):
        fetcher.make_bundle(model, tmp_path / "out", tmp_path / "work", base_url=base, convert=wrong, say=print)


def test_download_convert_annotate_verify_self_test_and_catalogue(mirror, tmp_path, capsys):
    """The whole job on the synthetic folder, with the real converter (family bergamot), speed and self-test."""
    pytest.importorskip("onnx", reason="the converter needs the build extra")
    base, model, _ = mirror
    out = tmp_path / "bundles"
    argv = ["--out", str(out), "--base-url", base, "--work", str(tmp_path / "work")]
    assert fetcher.main(argv, models=[model]) == 0, capsys.readouterr().err
    bundle = out / "firefox-translations-enzh-base-memory"
    manifest = verify_bundle(bundle)
    assert manifest.family == "bergamot" and manifest.model_id == "mozilla/firefox-translations-enzh-base-memory"
    assert manifest.license == "MPL-2.0" and manifest.pair.key == "en-zh"
    assert manifest.raw["quality"]["score"] == 86.31 and "comet-results.md" in manifest.raw["quality"]["source"]
    printed = capsys.readouterr().out
    assert "verified and self-tested" in printed and "metadata.json's byteSize and hash match" in printed

    release = tmp_path / "release"
    assert make_catalogue.main([str(bundle), "--out", str(release), "--url-base", URL]) == 0
    (entry,) = load_catalogue(release / "catalogue.json")
    assert entry.id == "firefox-translations-enzh-base-memory" and entry.family == "bergamot"
    assert entry.license == "MPL-2.0" and entry.quality is not None and entry.quality.score == 86.31
    assert entry.speed is not None and entry.speed.tokens_per_s == manifest.raw["speed"]["tokens_per_s"] > 0
    assert (release / "qiao-model-firefox-translations-enzh-base-memory.zip").is_file()


def test_a_step_that_hangs_is_stopped_with_a_message_naming_it():
    """Before, the conversion and the self-test ran without a limit: a hung step held the job until its own limit."""
    sleeper = [sys.executable, "-c", "import time; time.sleep(30)"]
    with pytest.raises(fetcher.FetchError, match=r"the self-test of x did not finish in 0\.5 s; stopped"):
        fetcher._run(sleeper, "the self-test of x", timeout=0.5)


def test_unknown_ids_are_refused(capsys, tmp_path):
    assert fetcher.main(["--out", str(tmp_path), "--only", "nope"]) == 2
    assert "unknown id nope" in capsys.readouterr().err
