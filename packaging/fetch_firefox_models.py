"""Fetch Mozilla's en↔zh Firefox Translations models, check them against their published hashes, and make Qiao bundles.

    python packaging/fetch_firefox_models.py --out DIR [--only ID]... [--base-url URL] [--work DIR] [--no-speed]

The release workflow's Firefox job. For each model of `MODELS` (en→zh and zh→en, base-memory and base):

1. download every published file from the repository where Mozilla published them, pinned to one commit:
   mozilla/firefox-translations-models at `COMMIT` (git-LFS objects through media.githubusercontent.com, the plain
   metadata.json through raw.githubusercontent.com). `--base-url` names a mirror with the same layout
   (`<url>/models/<architecture>/<pair>/<file>`: https://, or file:// or http://127.0.0.1 for a local mirror); a
   server that sends nothing, or only a trickle, for 60 s is given up on with a message, never waited on for ever;
2. refuse any file whose size or sha256 differs from the published one (the LFS pointer's oid and size, the git
   blob's sha256 for metadata.json), before anything is unpacked;
3. un-gzip into a model folder as Firefox has it (bounded: no file may unpack past MAX_UNPACKED bytes) and compare
   metadata.json's byteSize and hash with the model file (reported, not enforced: what they cover is unconfirmed);
4. convert it with `qiao model build --from FOLDER --out DIR/<id> --model-id <id>` (family bergamot: the converter
   validates the graphs against its reference and writes MPL-2.0 with Mozilla's attribution);
5. add the published quality (Mozilla's COMET-22 on FLORES devtest, engine.store.quality) to the manifest, measure
   the speed (packaging/measure_speed.py), verify every file and run `qiao --self-test` on the bundle.

DIR/<id>/ then holds bundles for packaging/make_catalogue.py. Where Mozilla publishes them today: the repository is
no longer maintained and the models now live in a Google Cloud Storage registry
(https://storage.googleapis.com/moz-fx-translations-data--303e-prod-translations-data/db/models.json) and in
Firefox's Remote Settings (collection translations-models-v2); the pinned LFS objects are the same published files,
and their hashes are fixed here, so a changed upstream file can never slip into a release.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from engine.bundle.manifest import MANIFEST, dumps, load_manifest, verify_bundle  # noqa: E402
from engine.errors import QiaoError  # noqa: E402
from engine.store.quality import published_for  # noqa: E402
from engine.store.web import url_problem  # noqa: E402

REPOSITORY = "mozilla/firefox-translations-models"
COMMIT = "e7957fc407441a5e3e35bbcbf9d60d9b35764618"  # "Add deprecation notice", the last commit
LFS_BASE = f"https://media.githubusercontent.com/media/{REPOSITORY}/{COMMIT}"
RAW_BASE = f"https://raw.githubusercontent.com/{REPOSITORY}/{COMMIT}"
MAX_UNPACKED = 512 << 20  # the largest model is ~60 MB unpacked
_CHUNK = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"


class FetchError(QiaoError):
    """A download, a hash check, an unpacking or a conversion step refused; the message says which file and why."""


@dataclass(frozen=True)
class PublishedFile:
    """One file as published: its name, size and sha256 (the LFS oid; for a plain git file, its content's sha256)."""

    name: str
    size: int
    sha256: str
    lfs: bool = True


@dataclass(frozen=True)
class FirefoxModel:
    """One published model folder (`models/<architecture>/<pair>` in the repository) and the bundle it becomes."""

    architecture: str  # "base-memory" | "base"
    pair: str  # "enzh" | "zhen"
    files: tuple[PublishedFile, ...]

    @property
    def folder(self) -> str:
        return f"models/{self.architecture}/{self.pair}"

    @property
    def model_id(self) -> str:
        """The id Qiao's converter gives this folder (engine.families.bergamot.converter.convert._model_id)."""
        return f"mozilla/firefox-translations-{self.pair}-{self.architecture}"

    @property
    def id(self) -> str:
        """The bundle's folder name and catalogue id."""
        return self.model_id.split("/", 1)[1]


def _f(name: str, size: int, sha256: str, lfs: bool = True) -> PublishedFile:
    return PublishedFile(name, size, sha256, lfs)


# Sizes and sha256 from the repository at COMMIT: the git-LFS pointers' oid and size, metadata.json's own bytes.
MODELS: tuple[FirefoxModel, ...] = (
    FirefoxModel(
        "base-memory",
        "enzh",
        (
            _f(
                "model.enzh.intgemm.alphas.bin.gz",
                33375922,
                "7f255403b3bb2502f08ac4d5ca397a8a5a13f899d2f2e987a4934e089d241d16",
            ),
            _f(
                "lex.50.50.enzh.s2t.bin.gz", 3537095, "c933ff15b544fc36ddaa41d088fca060604da469267fcd2b004a4d270dbe5b68"
            ),
            _f("srcvocab.enzh.spm.gz", 407784, "7846e3c236388390f4e5d321f8413d67f34c1bab5f066165eeb673bfd07607cc"),
            _f("trgvocab.enzh.spm.gz", 425748, "4d641ce165b1f8478ee2ffb5149d2d46fab3779dc8fa1e9b97f9af1d2206c091"),
            _f("metadata.json", 2233, "42d277178bca7f757463067ff659467e1b0d300f8408b6de6c7e891b4c19075b", lfs=False),
        ),
    ),
    FirefoxModel(
        "base",
        "enzh",
        (
            _f(
                "model.enzh.intgemm.alphas.bin.gz",
                30500315,
                "927de8ae55e97d9ebc29a051dfef37dd4310a1ee065b205f8e9cccfccb636a59",
            ),
            _f(
                "lex.50.50.enzh.s2t.bin.gz", 3537095, "a6a86815587ea3920b9e61f19b6b69d8507944ed4a15d277639619ce0a709bc8"
            ),
            _f("srcvocab.enzh.spm.gz", 407784, "06a2e7c235ab702ab9018588048316e81546b5f24c02d293dab0b338549cfd01"),
            _f("trgvocab.enzh.spm.gz", 425748, "6548dbda9f8636774f76a3d49b7a514f7d2084a0ced8883931aa07e736f6803b"),
            _f("metadata.json", 2254, "5603b98c416cd4ea76f5e7e05547d91de2efa0e7f79741a4c25c87bc939dc4e8", lfs=False),
        ),
    ),
    FirefoxModel(
        "base-memory",
        "zhen",
        (
            _f(
                "model.zhen.intgemm.alphas.bin.gz",
                32726806,
                "c430e24baad44b8e4f725458e2454aec8a760faefbd0a4592c80f114b051f692",
            ),
            _f(
                "lex.50.50.zhen.s2t.bin.gz", 4822158, "216b4f87e61c89741114fa36b3cf01fb1e3a32cf0eb97bf1cb2f992951e8691b"
            ),
            _f("vocab.zhen.spm.gz", 738862, "244ac04cd4e2126852fc6f697b2aa1e04acad4492c5ec8b37453974f33f88183"),
            _f("metadata.json", 2238, "40767965cbc4289fccc7a8dc34fa6d4700ccc0ff36ba382a85acc943fb1b0c03", lfs=False),
        ),
    ),
    FirefoxModel(
        "base",
        "zhen",
        (
            _f(
                "model.zhen.intgemm.alphas.bin.gz",
                44369188,
                "820f50dc36b1e25c97208fff0470bae7fda62bd6f371c4c4bf94947a9de58497",
            ),
            _f(
                "lex.50.50.zhen.s2t.bin.gz", 4824122, "b1bef5f75f5068877afdb2db0eeb670129165976bfa2af4889928f59c264b7b9"
            ),
            _f("vocab.zhen.spm.gz", 738862, "fd0cc08ddcbe480e3be06e6a86cb8aaf75f946263a5d9fc7d2773a197990cfb2"),
            _f("metadata.json", 2254, "84b8cb982f801e7227b7223f800b01eb6d951ef30dcbf086962a2f0bb2865420", lfs=False),
        ),
    ),
)

Say = Callable[[str], None]
Converter = Callable[[Path, Path, str], None]


def _say(text: str) -> None:
    print(f"fetch_firefox_models: {text}", flush=True)


# -- 1-2: download and check ------------------------------------------------------------------------------------


def file_url(model: FirefoxModel, file: PublishedFile, base_url: str | None = None) -> str:
    """Where `file` is published (or, with `base_url`, where a mirror of the same layout has it)."""
    if base_url:
        return f"{base_url.rstrip('/')}/{model.folder}/{file.name}"
    return f"{LFS_BASE if file.lfs else RAW_BASE}/{model.folder}/{file.name}"


def _matches(path: Path, expected: PublishedFile) -> bool:
    """Whether `path` already holds the published file (a cached download), checked in full."""
    try:
        if path.stat().st_size != expected.size:
            return False
        digest = hashlib.sha256()
        with open(path, "rb") as fh:
            while chunk := fh.read(_CHUNK):
                digest.update(chunk)
    except OSError:
        return False
    return digest.hexdigest() == expected.sha256


MIN_PROGRESS = 64 << 10  # bytes that must arrive in every `timeout` seconds: a trickle is a stall, not a download


def download(url: str, dest: Path, expected: PublishedFile, timeout: float = 60) -> None:
    """Download `url` to `dest`, refusing it (nothing left at `dest`) unless its size and sha256 are the published
    ones; a file already there that is the published one is kept (the workflow caches downloads). Only https://,
    file:// and http:// to this machine are fetched. A server that sends nothing for `timeout` seconds, or less than
    MIN_PROGRESS bytes in any `timeout` seconds (a trickle), is given up on with a message saying so: never a hang."""
    if _matches(dest, expected):
        return
    dest.unlink(missing_ok=True)
    if url_problem(url, allow_file=True) is not None:  # the app's downloader's policy, file:// for a local mirror
        raise FetchError(f"{url}: only https:// (or file:// or http://127.0.0.1 for a local mirror) is fetched")
    dest.parent.mkdir(parents=True, exist_ok=True)
    digest, size = hashlib.sha256(), 0
    tmp = dest.with_name(dest.name + ".part")
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, open(tmp, "wb") as out:
            read = getattr(response, "read1", response.read)  # what has arrived, so the clock is checked often
            window_start, window_bytes = time.monotonic(), 0
            while chunk := read(_CHUNK):
                size += len(chunk)
                if size > expected.size:
                    raise FetchError(f"{expected.name}: larger than the published {expected.size:,} bytes ({url})")
                digest.update(chunk)
                out.write(chunk)
                window_bytes += len(chunk)
                now = time.monotonic()
                if now - window_start >= timeout:
                    if window_bytes < MIN_PROGRESS and size < expected.size:
                        waited = now - window_start
                        raise FetchError(
                            f"{expected.name}: the server stalled: {window_bytes:,} bytes in {waited:.0f} s "
                            f"({size:,} of {expected.size:,} so far) from {url}; given up, nothing kept"
                        )
                    window_start, window_bytes = now, 0
        if size != expected.size:
            raise FetchError(f"{expected.name}: {size:,} bytes, but {expected.size:,} were published ({url})")
        got = digest.hexdigest()
        if got != expected.sha256:
            raise FetchError(
                f"{expected.name}: sha256 {got} differs from the published {expected.sha256} ({url}); refused"
            )
        os.replace(tmp, dest)
    except (TimeoutError, urllib.error.URLError) as exc:
        if not isinstance(getattr(exc, "reason", exc), TimeoutError):
            raise FetchError(f"{expected.name}: cannot download {url}: {exc}") from None
        raise FetchError(
            f"{expected.name}: the server sent nothing for {timeout:g} s ({size:,} of {expected.size:,} bytes) "
            f"from {url}; given up, nothing kept"
        ) from None
    except (OSError, http.client.HTTPException) as exc:
        raise FetchError(f"{expected.name}: cannot download {url}: {exc}") from None
    finally:
        tmp.unlink(missing_ok=True)


def fetch(model: FirefoxModel, downloads: Path, base_url: str | None = None, say: Say = _say) -> Path:
    """Every published file of `model`, checked, in `downloads/<pair>-<architecture>/`."""
    folder = downloads / f"{model.pair}-{model.architecture}"
    for file in model.files:
        url = file_url(model, file, base_url)
        say(f"{model.id}: {file.name} ({file.size / 1e6:.1f} MB) from {url}")
        download(url, folder / file.name, file)
    return folder


# -- 3: unpack ------------------------------------------------------------------------------------------------------


def unpack(downloaded: Path, dest: Path, limit: int = MAX_UNPACKED, names: Sequence[str] | None = None) -> Path:
    """The model folder as Firefox has it: every .gz un-gzipped (at most `limit` bytes each), the rest copied. With
    `names` (the published files), only those: anything else lying in the download folder (a file a previous pin
    or a mirror left there) never reaches the converter."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    wanted = None if names is None else set(names)
    for path in sorted(downloaded.iterdir()):
        if path.name.endswith(".part") or (wanted is not None and path.name not in wanted):
            continue
        if not path.name.endswith(".gz"):
            shutil.copyfile(path, dest / path.name)
            continue
        target = dest / path.name[: -len(".gz")]
        written = 0
        try:
            with open(path, "rb") as head:
                if head.read(2) != GZIP_MAGIC:  # gzip reads an empty file as an empty stream: not a published model
                    raise gzip.BadGzipFile("no gzip header")
            with gzip.open(path, "rb") as src, open(target, "wb") as out:
                while chunk := src.read(_CHUNK):
                    written += len(chunk)
                    if written > limit:
                        raise FetchError(f"{path.name}: unpacks past {limit:,} bytes, more than any model; refused")
                    out.write(chunk)
        except (OSError, EOFError, zlib.error) as exc:  # zlib.error: a gzip header over data that is not deflate
            target.unlink(missing_ok=True)
            raise FetchError(f"{path.name}: not a gzip file Qiao can unpack ({exc})") from None
        except FetchError:
            target.unlink(missing_ok=True)
            raise
    return dest


def metadata_note(folder: Path) -> str:
    """Whether metadata.json's byteSize and hash describe the unpacked model file (reported only)."""
    meta_path = folder / "metadata.json"
    models = sorted(p for p in folder.glob("model.*") if p.is_file())
    if not meta_path.is_file() or not models:
        return "no metadata.json to compare"
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return f"metadata.json unreadable ({exc})"
    data = models[0].read_bytes()
    same_size = meta.get("byteSize") == len(data)
    same_hash = meta.get("hash") == hashlib.sha256(data).hexdigest()
    if same_size and same_hash:
        return f"metadata.json's byteSize and hash match {models[0].name}"
    return (
        f"metadata.json's byteSize {'matches' if same_size else 'differs from'} and hash "
        f"{'matches' if same_hash else 'differs from'} {models[0].name} (not enforced: their meaning is unconfirmed)"
    )


# -- 4-5: convert, annotate, check ---------------------------------------------------------------------------------


def qiao_command(*args: str) -> list[str]:
    """`qiao …` as this Python runs it (the engine's commands, no window)."""
    return [sys.executable, "-m", "engine.cli.main", *args]


def build_with_qiao(folder: Path, out: Path, model_id: str) -> None:
    """`qiao model build --from FOLDER --out OUT --model-id ID --force` (the family's converter)."""
    cmd = qiao_command("model", "build", "--from", str(folder), "--out", str(out), "--model-id", model_id, "--force")
    _run(cmd, f"converting {folder.name}")


STEP_TIMEOUT = 20 * 60  # one conversion or self-test; the job's limit is 60 minutes for all four models


def _run(cmd: Sequence[str], what: str, timeout: float = STEP_TIMEOUT) -> None:
    """Run a step; one that fails, or runs past `timeout` seconds (stopped), is a FetchError naming it."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    try:
        done = subprocess.run(list(cmd), cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise FetchError(f"{what} did not finish in {timeout:g} s; stopped") from None
    if done.stdout.strip():
        print(done.stdout.rstrip(), flush=True)
    if done.returncode != 0:
        raise FetchError(f"{what} failed (exit {done.returncode}):\n{done.stderr.strip()}")


def annotate(bundle: Path, model: FirefoxModel) -> dict:
    """Write the model's published quality into the bundle's manifest (resealed); refuse a bundle that is not the
    model (another pair or model id)."""
    manifest = load_manifest(bundle)
    if manifest.model_id != model.model_id:
        raise FetchError(f"{bundle}: the bundle is {manifest.model_id}, not {model.model_id}")
    if manifest.pair.key.replace("-", "") != model.pair:
        raise FetchError(f"{bundle}: the bundle translates {manifest.pair.key}, not {model.pair}")
    published = published_for(model.model_id)
    if published is None:
        raise FetchError(f"{model.model_id}: no published quality is known (engine.store.quality.PUBLISHED)")
    raw = {**manifest.raw, "quality": published.quality.to_dict()}
    (bundle / MANIFEST).write_text(dumps(raw), encoding="utf-8")
    return raw


def self_test(bundle: Path) -> None:
    """Every file's sha256 and `qiao --self-test` (a sentence in every precision)."""
    verify_bundle(bundle)
    _run(qiao_command("--self-test", "--model", str(bundle)), f"the self-test of {bundle.name}")


def make_bundle(
    model: FirefoxModel,
    out: Path,
    work: Path,
    *,
    base_url: str | None = None,
    convert: Converter = build_with_qiao,
    speed: bool = True,
    say: Say = _say,
) -> Path:
    """Steps 1-5 for one model; the checked bundle at out/<id>."""
    downloaded = fetch(model, work / "downloads", base_url, say)
    folder = unpack(
        downloaded,
        work / "folders" / f"{model.pair}-{model.architecture}" / model.pair,
        names=[f.name for f in model.files],
    )
    say(f"{model.id}: {metadata_note(folder)}")
    bundle = out / model.id
    convert(folder, bundle, model.model_id)
    annotate(bundle, model)
    if speed:
        from measure_speed import measure, record

        record(bundle, measure(bundle))
    self_test(bundle)
    say(f"{model.id}: {bundle} verified and self-tested")
    return bundle


def main(
    argv: list[str] | None = None, models: Sequence[FirefoxModel] = MODELS, convert: Converter = build_with_qiao
) -> int:
    parser = argparse.ArgumentParser(description="download, check and convert Mozilla's en↔zh Firefox models")
    parser.add_argument("--out", required=True, type=Path, help="folder for the bundles (one per model, by id)")
    parser.add_argument("--only", action="append", metavar="ID", help="only this model id (repeatable)")
    parser.add_argument("--base-url", help="a mirror with the repository's layout (default: the pinned repository)")
    parser.add_argument("--work", type=Path, help="folder for downloads and unpacked folders (default: temporary)")
    parser.add_argument("--no-speed", action="store_true", help="do not measure the speed")
    args = parser.parse_args(argv)
    by_id = {m.id: m for m in models}
    unknown = [i for i in args.only or () if i not in by_id]
    if unknown:
        print(f"fetch_firefox_models: unknown id {', '.join(unknown)} (known: {', '.join(by_id)})", file=sys.stderr)
        return 2
    chosen = [by_id[i] for i in dict.fromkeys(args.only)] if args.only else list(models)
    work = args.work or Path(tempfile.mkdtemp(prefix="qiao-firefox-"))
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        for model in chosen:
            make_bundle(model, args.out, work, base_url=args.base_url, convert=convert, speed=not args.no_speed)
    except QiaoError as exc:
        print(f"fetch_firefox_models: {exc}", file=sys.stderr)
        return 1
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    _say(f"{len(chosen)} bundle(s) in {args.out}: {', '.join(m.id for m in chosen)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
