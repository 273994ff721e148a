"""engine.store.installed: bundles side by side, chosen by pair; imports verified before they move in; atomic
removal."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import sys
import threading
import zipfile
from pathlib import Path

import pytest

from engine.bundle.manifest import dumps
from engine.errors import ModelNotFoundError
from engine.store import installed as model_store
from engine.store.installed import (
    ModelStoreCancelled,
    ModelStoreError,
    bundle_name,
    clean_leftovers,
    find_bundle,
    find_for_pair,
    import_bundle,
    installed_models,
    known_verified,
    remove_bundle,
    verify_installed,
)
from tests.conftest import BUNDLE
from tests.engine import model_helpers
from tests.engine.model_helpers import FIXTURE_NAME, tar_bundle, zip_bundle

store = model_helpers.store


def _copy_as(dest: Path, *, pair: tuple[str, str] | None = None, model_id: str | None = None) -> Path:
    """A copy of the fixture bundle, resealed with another pair or model id (weights unchanged)."""
    shutil.copytree(BUNDLE, dest)
    raw = json.loads((dest / "manifest.json").read_text(encoding="utf-8"))
    if pair == ("zh", "en"):  # only the manifest's word: these weights still translate en→zh
        langs = raw["languages"]
        langs["source"], langs["target"] = langs["target"], langs["source"]
        langs["variants"], langs["default_variant"] = [], None
    if model_id is not None:
        raw["model"]["id"] = model_id
    (dest / "manifest.json").write_text(dumps(raw), encoding="utf-8")
    return dest


# -- names --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model_id", "name"),
    [
        ("Helsinki-NLP/opus-mt-en-zh", "opus-mt-en-zh"),
        ("qiao/tiny-marian-fixture", "tiny-marian-fixture"),
        ("../../etc", "etc"),
        ("a b/c d:e", "c-d-e"),
        ("...", "model"),
        ("x/.hidden", "hidden"),
        ("C:\\models\\zh", "zh"),
    ],
)
def test_bundle_names_are_the_last_part_of_the_model_id_and_safe(model_id, name):
    assert bundle_name(model_id) == name


# -- listing and choosing -----------------------------------------------------------------------------------------


def test_nothing_installed_lists_nothing_and_finding_says_where_it_looked(store):
    assert installed_models() == []
    with pytest.raises(ModelNotFoundError) as exc:
        find_bundle()
    assert str(store.models) in exc.value.searched
    with pytest.raises(ModelNotFoundError, match="no zh-en model installed"):
        find_for_pair("zh-en")


def test_bundles_side_by_side_are_listed_in_search_order_and_chosen_by_pair(store):
    _copy_as(store.source / "opus-mt-en-zh")
    _copy_as(store.models / "opus-mt-zh-en", pair=("zh", "en"))
    _copy_as(store.models / "another-en-zh")
    models = installed_models()
    assert [(m.name, m.location, m.pair_key) for m in models] == [
        ("opus-mt-en-zh", "source", "en-zh"),
        ("another-en-zh", "user", "en-zh"),
        ("opus-mt-zh-en", "user", "zh-en"),
    ]
    first = models[0]
    assert not first.removable and all(m.removable for m in models[1:])
    assert first.precisions == ("int8", "fp32") and first.license == "CC-BY-4.0" and first.problem is None
    listed = json.loads((BUNDLE / "manifest.json").read_text())["files"]
    assert first.size_bytes == sum(f["size"] for f in listed.values()) + (BUNDLE / "manifest.json").stat().st_size
    assert find_for_pair("zh-en") == store.models / "opus-mt-zh-en"
    assert find_for_pair("eng-zho") == store.source / "opus-mt-en-zh"  # ISO 639-3 names work too
    assert find_bundle(pair="zh-en") == store.models / "opus-mt-zh-en"
    assert find_bundle() == store.source / "opus-mt-en-zh"  # no pair: en→zh first


def test_without_en_zh_the_first_usable_bundle_is_opened(store):
    _copy_as(store.models / "opus-mt-zh-en", pair=("zh", "en"))
    assert find_bundle() == store.models / "opus-mt-zh-en"


def test_a_broken_bundle_is_listed_with_its_problem_and_skipped(store):
    broken = store.models / "aaa-old"
    broken.mkdir(parents=True)
    (broken / "manifest.json").write_text(json.dumps({"format_version": 3}), encoding="utf-8")
    _copy_as(store.models / "opus-mt-zh-en", pair=("zh", "en"))
    models = installed_models()
    assert models[0].name == "aaa-old" and models[0].pair is None
    assert "format version 3" in models[0].problem and "older Qiao" in models[0].problem
    assert find_bundle() == store.models / "opus-mt-zh-en"  # usable before broken
    assert verify_installed(models[0]) == [models[0].problem]


def test_only_broken_bundles_are_still_opened_so_loading_says_why(store):
    broken = store.models / "old"
    broken.mkdir(parents=True)
    (broken / "manifest.json").write_text("{", encoding="utf-8")
    assert find_bundle() == broken
    assert find_for_pair("en-zh") == broken  # its direction cannot be read: it may be this one, and loading says why
    _copy_as(store.models / "opus-mt-zh-en", pair=("zh", "en"))
    assert find_for_pair("en-zh") == broken and find_for_pair("zh-en") == store.models / "opus-mt-zh-en"


def test_a_bundle_stating_another_direction_is_not_opened_for_this_one(store):
    broken = _copy_as(store.models / "opus-mt-zh-en", pair=("zh", "en"))
    (broken / "validation.json").write_text("{}", encoding="utf-8")  # a file check fails; the manifest is intact
    raw = json.loads((broken / "manifest.json").read_text(encoding="utf-8"))
    raw["format_version"] = 3  # unusable, but the direction it states can still be read
    (broken / "manifest.json").write_text(json.dumps(raw), encoding="utf-8")
    assert installed_models()[0].problem is not None
    with pytest.raises(ModelNotFoundError, match="no en-zh model installed"):
        find_for_pair("en-zh")
    assert find_for_pair("zh-en") == broken


def test_work_folders_and_hidden_entries_are_never_bundles(store):
    for name in (".downloads", ".import-1-abc-x", ".old-1-abc-opus-mt-en-zh"):
        _copy_as(store.models / name)
    assert installed_models() == []


def test_explicit_and_env_bundles_are_final(store, tmp_path, monkeypatch):
    zh_en = _copy_as(tmp_path / "mine", pair=("zh", "en"))
    _copy_as(store.models / "opus-mt-en-zh")
    assert find_bundle(str(zh_en)) == zh_en
    assert find_for_pair("zh-en", str(zh_en)) == zh_en
    with pytest.raises(ModelNotFoundError, match="translates zh-en, not en-zh"):
        find_for_pair("en-zh", str(zh_en))
    monkeypatch.setenv("QIAO_MODEL_DIR", str(zh_en))
    with pytest.raises(ModelNotFoundError, match="given by QIAO_MODEL_DIR"):
        find_bundle(pair="en-zh")
    models = installed_models()
    assert [(m.location, m.removable) for m in models] == [("env", False), ("user", True)]
    monkeypatch.setenv("QIAO_MODEL_DIR", str(tmp_path / "none"))
    with pytest.raises(ModelNotFoundError, match="no model bundle at"):
        find_for_pair("en-zh")


def test_expected_folder_per_pair(store):
    from engine.store.installed import expected_bundle_dir

    assert expected_bundle_dir() == store.models / "opus-mt-en-zh"
    assert expected_bundle_dir("zh-en") == store.models / "opus-mt-zh-en"
    assert expected_bundle_dir(pair="eng-zho") == store.models / "opus-mt-en-zh"


def test_a_pair_that_is_no_pair_is_refused(store):
    for text in ("en", "en_zh", "-zh", "en-", "EN-ZH-X", "../x-y"):
        with pytest.raises(ModelStoreError, match="not a language pair"):
            find_for_pair(text)
    _copy_as(store.models / "opus-mt-en-zh")
    assert find_for_pair("EN-ZH") == store.models / "opus-mt-en-zh"


def test_the_same_folder_from_two_roots_is_listed_once(store, monkeypatch):
    bundle = _copy_as(store.models / "opus-mt-en-zh")
    monkeypatch.setenv("QIAO_MODEL_DIR", str(bundle))
    assert [m.location for m in installed_models()] == ["env"]


# -- verify -------------------------------------------------------------------------------------------------------


def test_verify_installed_hashes_every_file_with_progress_and_cancel(store):
    bundle = _copy_as(store.models / "opus-mt-en-zh")
    model = installed_models()[0]
    seen: list[tuple[int, int]] = []
    assert verify_installed(model, progress=lambda d, t: seen.append((d, t))) == []
    assert seen and seen[-1][0] == seen[-1][1] and all(a[0] <= b[0] for a, b in itertools.pairwise(seen))
    flip = bundle / "int8" / "decoder.weights"
    data = bytearray(flip.read_bytes())
    data[len(data) // 2] ^= 1
    flip.write_bytes(bytes(data))
    problems = verify_installed(model)
    assert len(problems) == 1 and problems[0].startswith("int8/decoder.weights: sha256")
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(ModelStoreCancelled):
        verify_installed(model, cancel=cancel)


def test_known_verified_follows_the_last_full_check(store, tmp_path, monkeypatch):
    monkeypatch.setenv("QIAO_CACHE_DIR", str(tmp_path / "cache"))
    _copy_as(store.models / "by-hand")
    (model,) = installed_models()
    assert not known_verified(model), "copied by hand: never hashed"
    assert verify_installed(model) == [] and known_verified(model)
    imported = import_bundle(zip_bundle(tmp_path / "b.zip"))
    assert known_verified(imported), "an import hashed every file"
    (imported.path / "MODEL_LICENSE.txt").write_text("changed")
    assert not known_verified(imported)


# -- import -------------------------------------------------------------------------------------------------------


def test_import_a_folder_copies_only_listed_files_and_verifies(store, tmp_path):
    source = _copy_as(tmp_path / "src")
    (source / "notes.txt").write_text("not listed")
    seen: list[tuple[int, int]] = []
    model = import_bundle(source, progress=lambda d, t: seen.append((d, t)))
    assert model.path == store.models / FIXTURE_NAME and model.location == "user" and model.removable
    assert model.pair_key == "en-zh" and model.problem is None
    assert not (model.path / "notes.txt").exists() and (source / "notes.txt").exists()  # the source is untouched
    assert verify_installed(model) == []
    assert seen[-1][0] == seen[-1][1]
    assert [p.name for p in store.models.iterdir()] == [FIXTURE_NAME], "no work folder is left"


@pytest.mark.parametrize("maker", ["zip", "zip-flat", "tar.gz", "tar.xz", "tar.bz2", "tar"])
def test_import_an_archive(store, tmp_path, maker):
    if maker == "zip":
        archive = zip_bundle(tmp_path / "b.zip")
    elif maker == "zip-flat":
        archive = zip_bundle(tmp_path / "b.zip", top=None)
    else:
        mode = "w" if maker == "tar" else f"w:{maker.split('.')[1]}"
        archive = tar_bundle(tmp_path / f"b.{maker}", mode)
    model = import_bundle(archive)
    assert model.name == FIXTURE_NAME and verify_installed(model) == []
    assert [p.name for p in store.models.iterdir()] == [FIXTURE_NAME]


def test_a_download_saved_without_a_suffix_is_recognised(store, tmp_path):
    archive = zip_bundle(tmp_path / "b.zip").rename(tmp_path / "download")
    assert import_bundle(archive).name == FIXTURE_NAME


def _evil_zip(path: Path, name: str, *, link: bool = False) -> Path:
    zip_bundle(path)
    with zipfile.ZipFile(path, "a") as zf:
        info = zipfile.ZipInfo(name)
        if link:
            info.external_attr = (0o120777) << 16
        zf.writestr(info, "/etc/passwd" if link else "evil")
    return path


@pytest.mark.parametrize(
    ("name", "link", "why"),
    [
        ("../evil", False, "outside"),
        (f"{FIXTURE_NAME}/../../evil", False, "outside"),
        ("/tmp/evil", False, "absolute"),
        ("C:/evil", False, "absolute"),
        (f"{FIXTURE_NAME}\\..\\evil", False, "backslash"),
        (f"{FIXTURE_NAME}/link", True, "symbolic link"),
    ],
)
def test_unsafe_zip_members_are_refused_and_nothing_changes(store, tmp_path, name, link, why):
    archive = _evil_zip(tmp_path / "evil.zip", name, link=link)
    store.models.mkdir(parents=True)
    with pytest.raises(ModelStoreError, match=why) as exc:
        import_bundle(archive)
    assert "refused" in str(exc.value)
    assert store.listing() == []
    assert not (tmp_path / "evil").exists() and not (store.data / "evil").exists()


@pytest.mark.parametrize("kind", ["symlink", "hardlink", "absolute", "dotdot", "fifo"])
def test_unsafe_tar_members_are_refused_and_nothing_changes(store, tmp_path, kind):
    import io
    import tarfile

    archive = tmp_path / "evil.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        tf.add(BUNDLE, arcname=FIXTURE_NAME)
        info = tarfile.TarInfo(f"{FIXTURE_NAME}/x")
        if kind == "symlink":
            info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
        elif kind == "hardlink":
            info.type, info.linkname = tarfile.LNKTYPE, f"{FIXTURE_NAME}/manifest.json"
        elif kind == "absolute":
            info.name = "/tmp/evil"
        elif kind == "dotdot":
            info.name = "../evil"
        else:
            info.type = tarfile.FIFOTYPE
        data = b"evil" if info.type == tarfile.REGTYPE else b""
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    store.models.mkdir(parents=True)
    with pytest.raises(ModelStoreError, match="refused"):
        import_bundle(archive)
    assert store.listing() == []


def test_a_damaged_file_fails_verification_and_nothing_changes(store, tmp_path):
    source = _copy_as(tmp_path / "src")
    weights = source / "fp32" / "encoder.weights"
    data = bytearray(weights.read_bytes())
    data[7] ^= 0xFF
    weights.write_bytes(bytes(data))
    archive = zip_bundle(tmp_path / "bad.zip", source)
    for bad in (source, archive):
        with pytest.raises(ModelStoreError) as exc:
            import_bundle(bad)
        assert "failed verification: nothing was changed" in str(exc.value)
        assert any(p.startswith("fp32/encoder.weights: sha256") for p in exc.value.problems)
        assert store.listing() == []


def test_a_truncated_file_and_a_broken_manifest_are_refused(store, tmp_path):
    source = _copy_as(tmp_path / "src")
    (source / "int8" / "embedding.bin").write_bytes(b"x")
    with pytest.raises(ModelStoreError) as exc:
        import_bundle(source)
    assert any("int8/embedding.bin: size 1 bytes" in p for p in exc.value.problems)
    (source / "manifest.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ModelStoreError, match="not a usable model bundle"):
        import_bundle(source)
    assert store.listing() == []


def test_archives_that_are_not_bundles(store, tmp_path):
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"PK\x03\x04 not really")
    with pytest.raises(ModelStoreError, match="not a readable zip archive"):
        import_bundle(junk)
    two = tmp_path / "two.zip"
    with zipfile.ZipFile(two, "w") as zf:
        zf.writestr("a/readme.txt", "hi")
        zf.writestr("b/readme.txt", "hi")
    with pytest.raises(ModelStoreError, match=r"no model in two\.zip: expected a Qiao model bundle"):
        import_bundle(two)
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(ModelStoreError, match="neither a model folder nor"):
        import_bundle(text)
    with pytest.raises(ModelStoreError, match="nothing to import"):
        import_bundle(tmp_path / "missing.zip")
    assert [p.name for p in store.models.iterdir()] == []


def test_a_folder_or_archive_without_a_model_names_itself_and_what_is_accepted(store, tmp_path):
    """QA: an empty folder got "no Qiao model bundle in empty: expected manifest.json…", never saying that a
    Firefox Translations model folder is imported too; an archive without a model was named by the work folder
    ("…in unpacked")."""
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = tmp_path / "nothing.zip"
    with zipfile.ZipFile(nothing, "w") as zf:
        zf.writestr("readme.txt", "hi")
    for source in (empty, nothing):
        with pytest.raises(ModelStoreError) as caught:
            import_bundle(source)
        message = str(caught.value)
        assert message.startswith(f"no model in {source.name}: expected a Qiao model bundle (manifest.json")
        assert "Firefox Translations model folder" in message and "unpacked" not in message
    assert [p.name for p in store.models.iterdir()] == []


def test_an_unreadable_folder_is_said_plainly(store, tmp_path, monkeypatch):
    """QA: importing a folder Qiao may not read said "import failed, nothing was changed: …/noperm/manifest.json:
    Permission denied". (As root, which reads everything, the refusal is what os.scandir gives an ordinary user.)"""
    folder = shutil.copytree(BUNDLE, tmp_path / "noperm")
    if os.geteuid() == 0:
        real_scandir = os.scandir

        def scandir(path="."):
            if not isinstance(path, int) and Path(os.fsdecode(path)) == folder:
                raise PermissionError(13, "Permission denied", os.fsdecode(path))
            return real_scandir(path)

        monkeypatch.setattr(os, "scandir", scandir)
    else:
        folder.chmod(0)
    try:
        with pytest.raises(ModelStoreError) as caught:
            import_bundle(folder)
    finally:
        folder.chmod(0o755)
    assert str(caught.value) == (
        f"cannot read {folder} (Qiao has no permission to read it): check that it is readable, then import it again"
    )
    assert store.listing() == []


def test_too_many_members_and_a_size_bomb_are_refused(store, tmp_path, monkeypatch):
    archive = zip_bundle(tmp_path / "b.zip")
    monkeypatch.setattr("engine.store.archive.MAX_MEMBERS", 5)
    with pytest.raises(ModelStoreError, match="over 5 members"):
        import_bundle(archive)
    monkeypatch.setattr("engine.store.archive.MAX_MEMBERS", 10_000)
    monkeypatch.setattr("engine.store.archive.MAX_TOTAL_BYTES", 1000)
    with pytest.raises(ModelStoreError, match="would unpack to"):
        import_bundle(archive)
    assert store.listing() == []


def test_not_enough_space_is_refused_before_unpacking(store, tmp_path, monkeypatch):
    archive = zip_bundle(tmp_path / "b.zip")
    monkeypatch.setattr(shutil, "disk_usage", lambda _: shutil._ntuple_diskusage(10**9, 10**9 - 1000, 1000))
    with pytest.raises(ModelStoreError, match="not enough space"):
        import_bundle(archive)
    assert store.listing() == []


def test_already_installed_is_refused_and_replace_swaps_it(store, tmp_path):
    first = import_bundle(zip_bundle(tmp_path / "b.zip"))
    marker = first.path / "old-marker"
    marker.write_text("old")
    with pytest.raises(ModelStoreError, match="already installed"):
        import_bundle(tmp_path / "b.zip")
    assert marker.exists()
    again = import_bundle(tmp_path / "b.zip", replace=True)
    assert again.path == first.path and not marker.exists() and verify_installed(again) == []
    assert [p.name for p in store.models.iterdir()] == [FIXTURE_NAME]


def test_a_failed_replace_puts_the_old_bundle_back(store, tmp_path, monkeypatch):
    first = import_bundle(zip_bundle(tmp_path / "b.zip"))
    (first.path / "old-marker").write_text("old")
    real_rename = os.rename

    def rename(src, dst):
        if "/.import-" in Path(src).as_posix():  # the new bundle moving into place
            raise PermissionError(13, "Permission denied")
        return real_rename(src, dst)

    monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(ModelStoreError, match="the old one is kept"):
        import_bundle(tmp_path / "b.zip", replace=True)
    assert (first.path / "old-marker").read_text() == "old"
    assert [p.name for p in store.models.iterdir()] == [FIXTURE_NAME]


def test_cancel_changes_nothing(store, tmp_path):
    archive = zip_bundle(tmp_path / "b.zip")
    cancel = threading.Event()

    def progress(done, total):
        if done > 1000:
            cancel.set()

    with pytest.raises(ModelStoreCancelled, match="nothing was changed"):
        import_bundle(archive, progress=progress, cancel=cancel)
    assert [p.name for p in store.models.iterdir()] == []


def test_wrong_pair_is_refused_when_one_is_expected(store, tmp_path):
    with pytest.raises(ModelStoreError, match="translates en-zh, but zh-en was expected"):
        import_bundle(zip_bundle(tmp_path / "b.zip"), expect_pair="zh-en")
    assert [p.name for p in store.models.iterdir()] == []


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX process ids")
def test_leftovers_of_a_killed_import_are_cleaned_and_a_moved_aside_bundle_restored(store, tmp_path):
    import subprocess

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    store.models.mkdir(parents=True)
    (store.models / f".import-{pid}-abc123-xyz").mkdir()
    _copy_as(store.models / f".old-{pid}-abc123-opus-mt-en-zh")
    (store.models / f".remove-{pid}-abc123").mkdir()
    alive = store.models / f".import-{os.getpid()}-abc123-busy"
    alive.mkdir()
    clean_leftovers()
    assert sorted(p.name for p in store.models.iterdir()) == [alive.name, "opus-mt-en-zh"]
    assert installed_models()[0].name == "opus-mt-en-zh"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX process ids")
def test_a_bergamot_bundle_moved_aside_by_a_killed_replace_is_listed_and_used_again_without_an_import(
    store, bergamot_bundle_dir
):
    """`qiao model import --force` killed between renaming the old bundle aside and the new one in: the user's model
    must not vanish from listings (and the window, the CLI) until some later import or removal cleans up."""
    import subprocess

    from engine.pipeline.translator import Translator

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    store.models.mkdir(parents=True)
    aside = store.models / f".old-{int(dead.stdout)}-abc123-firefox-enzh"
    shutil.copytree(bergamot_bundle_dir, aside)
    busy = store.models / f".old-{os.getpid()}-abc123-firefox-busy"  # a replace still running: left alone
    shutil.copytree(bergamot_bundle_dir, busy)
    models = installed_models()
    assert [(m.name, m.family, m.problem) for m in models] == [("firefox-enzh", "bergamot", None)]
    assert find_for_pair("en-zh") == store.models / "firefox-enzh" and busy.is_dir() and not aside.exists()
    assert Translator(find_for_pair("en-zh"), precision="int8").translate("Thank you very much.").text


# -- remove -------------------------------------------------------------------------------------------------------


def test_remove_deletes_a_user_bundle_and_refuses_others(store, tmp_path):
    _copy_as(store.source / "opus-mt-en-zh")
    model = import_bundle(zip_bundle(tmp_path / "b.zip"))
    remove_bundle(model)
    assert not model.path.exists() and [p.name for p in store.models.iterdir()] == []
    with pytest.raises(ModelStoreError, match="no longer installed"):
        remove_bundle(model)
    source = installed_models()[0]
    with pytest.raises(ModelStoreError, match="Qiao removes only the bundles in"):
        remove_bundle(source)
    assert source.path.exists()
    faked = model_store.InstalledModel(**{**source.__dict__, "removable": True})
    with pytest.raises(ModelStoreError, match="Qiao removes only"):
        remove_bundle(faked)  # a removable flag alone is not enough: it must be in the models folder
    assert source.path.exists()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_after_a_kill_9_mid_import_the_next_import_cleans_up_and_succeeds(store, tmp_path):
    import signal
    import subprocess
    import time

    archive = zip_bundle(tmp_path / "b.zip")
    script = (
        "import time\n"
        "from pathlib import Path\n"
        "from engine.store.installed import import_bundle\n"
        f"import_bundle(Path({str(archive)!r}), progress=lambda d, t: time.sleep(0.05))\n"
    )
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "QIAO_DATA_DIR": str(store.data), "PYTHONPATH": str(root)}
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=root, env=env)
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline:
            work = list(store.models.glob(".import-*/unpacked/*")) if store.models.exists() else []
            if work:
                break
            time.sleep(0.05)
        assert work, "the import never started"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    assert [p.name.startswith(".import-") for p in store.models.iterdir()] == [True]
    model = import_bundle(archive)
    assert [p.name for p in store.models.iterdir()] == [FIXTURE_NAME] and verify_installed(model) == []
