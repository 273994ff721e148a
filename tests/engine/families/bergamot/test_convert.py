"""Firefox Translations folders → Qiao bundles (engine.families.bergamot.converter.convert), in every published layout,
and the bundles through the whole Translator: token for token with the numpy reference and, marker `bergamot`,
text for text with bergamot-translator's float output (int8 files: bergamot on their dequantised float weights),
and within the issue's agreement with its int8 output. Then what the build refuses (a misnamed parameter, a
damaged shortlist), what the manifest records, and `qiao model build` / `qiao model import` of a folder and of an
archive through the CLI.

The comparisons translate with the guards off (RAW): then Qiao, as bergamot, runs a repetition loop to the length
limit (the random fixture models loop often), so every sentence, the length-limit stops included, must come out as
bergamot's.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnx")
spm = pytest.importorskip("sentencepiece")

from engine import families  # noqa: E402
from engine.bundle.manifest import load_manifest, verify_bundle  # noqa: E402
from engine.cli.main import main  # noqa: E402
from engine.errors import BuildError, BundleError, CheckpointError  # noqa: E402
from engine.families.bergamot.converter import marian_io  # noqa: E402
from engine.families.bergamot.converter.convert import build_bundle, languages_of, recognises  # noqa: E402
from engine.families.bergamot.converter.reader import ModelFolder, read_model  # noqa: E402
from engine.families.bergamot.converter.reference import EOS, decode  # noqa: E402
from engine.families.bergamot.shortlist import parse as parse_shortlist  # noqa: E402
from engine.options import TranslationOptions  # noqa: E402
from engine.pipeline.length_limits import LengthRule, length_limit  # noqa: E402
from engine.pipeline.translator import Translator  # noqa: E402
from engine.store.installed import installed_models  # noqa: E402
from tests.conftest import CHECKPOINT  # noqa: E402
from tests.engine import model_helpers  # noqa: E402
from tests.engine.families.bergamot.markers import int8_as_measured  # noqa: E402
from tests.fixtures.bergamot import make  # noqa: E402
from tests.oracles import bergamot  # noqa: E402

store = model_helpers.store

LINES = make.english_lines()[::9][:30]
INT8_LINES = make.english_lines()[:200]
RAW = TranslationOptions(normalize_punctuation=False, guards=False)  # the model's own output, as Firefox shows it

# (layout, vocabulary, tying, shortlist, gzipped): every published layout at least once
CASES = [
    ("npz", "shared", "tied-all", True, False),
    ("npz", "separate", "untied", False, False),
    ("bin", "separate", "tied", True, False),
    ("bin", "shared", "tied", False, True),
    ("intgemm-alphas", "separate", "tied", True, True),
    ("intgemm-alphas", "shared", "tied-all", True, False),
    ("intgemm8", "separate", "tied", True, False),
    ("intgemm8", "shared", "tied-all", False, False),
]
BASE_MEMORY_LIKE = [CASES[4], CASES[5]]  # enzh: separate, tied; zhen: shared, tied-all; alphas and a shortlist


def case_id(case: tuple) -> str:
    layout, vocab, tying, short, gz = case
    return f"{layout}-{vocab}-{tying}{'-shortlist' if short else ''}{'-gz' if gz else ''}"


_BUILT: dict[tuple, tuple[ModelFolder, Path]] = {}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """case → (the model folder, its bundle), each built once per module."""

    def get(case: tuple) -> tuple[ModelFolder, Path]:
        if case not in _BUILT:
            layout, vocab, tying, short, gz = case
            folder = make.cached_folder(replace(make.TINY, vocab=vocab, tying=tying), layout, shortlist=short, gz=gz)
            out = tmp_path_factory.mktemp(case_id(case)) / "bundle"
            build_bundle(folder.model.parent, out, quiet=True)
            _BUILT[case] = (folder, out)
        return _BUILT[case]

    return get


@pytest.fixture(scope="module")
def oracle() -> None:
    reason = bergamot.unavailable_reason()
    if reason:
        pytest.skip(f"bergamot oracle unavailable: {reason}")


def float_twin(folder: ModelFolder, out: Path) -> ModelFolder:
    """The float model an int8 file stands for (its weights dequantised as Marian does), as a .npz folder beside the
    same vocabularies and shortlist: what bergamot's float path computes for it."""
    checkpoint = read_model(folder.model)
    params = {name: value.reshape(1, -1) if value.ndim == 1 else value for name, value in checkpoint.params.items()}
    out.mkdir(parents=True, exist_ok=True)
    model = out / f"model.{folder.pair}.npz"
    model.write_bytes(marian_io.write_npz(params, checkpoint.yaml_text))
    return replace(folder, model=model)


def oracle_answers(folder: ModelFolder, lines: list[str], tmp_path: Path) -> list[bergamot.Translation]:
    is_int8 = folder.model.name.removesuffix(".gz").endswith(("intgemm.alphas.bin", "intgemm8.bin"))
    return bergamot.translate_folder(float_twin(folder, tmp_path / "float") if is_int8 else folder, lines)


# -- the bundle translates as the model computes -------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_bundle_translates_as_the_numpy_reference(built, case: tuple) -> None:
    folder, bundle = built(case)
    translator = Translator(bundle, precision="fp32")
    checkpoint = read_model(folder.model)
    model = translator._model
    ends = set()
    for line in LINES:
        ids = translator.tokenizer.encode(line)
        result = translator.translate(line, RAW)
        expected = decode(checkpoint, ids, model.shortlist_for(np.array([ids])))
        assert result.tokens == [expected.text_ids], line
        ends.add("empty" if expected.tokens == [EOS] else "eos" if expected.tokens[-1] == EOS else "limit")
    assert ends == {"empty", "eos", "limit"}  # the family's length rule: 2 × the source ids, as Marian's
    assert Translator(bundle, precision="int8").translate(LINES[0], RAW).stats is not None


@pytest.mark.bergamot
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_fp32_bundle_gives_bergamots_float_output(oracle: None, built, tmp_path: Path, case: tuple) -> None:
    folder, bundle = built(case)
    translator = Translator(bundle, precision="fp32")
    answers = oracle_answers(folder, LINES, tmp_path)
    limit_stops = 0
    for line, answer in zip(LINES, answers):
        result = translator.translate(line, RAW)
        assert result.text == answer.text, line
        limit_stops += len(result.tokens[0]) == 2 * len(translator.tokenizer.encode(line))
    assert limit_stops  # some sentences stop at the length limit, and at the same token as bergamot's


@int8_as_measured
@pytest.mark.bergamot
@pytest.mark.parametrize("case", BASE_MEMORY_LIKE, ids=case_id)
def test_int8_bundle_agrees_with_bergamots_int8_on_200_sentences(
    oracle: None, built, case: tuple, record_property: pytest.RecordProperty
) -> None:
    folder, bundle = built(case)
    translator = Translator(bundle, precision="int8")
    answers = bergamot.translate_folder(folder, INT8_LINES)
    same = sum(translator.translate(line, RAW).text == a.text for line, a in zip(INT8_LINES, answers))
    share = same / len(INT8_LINES)
    record_property("int8_agreement", share)
    print(f"INT8 {case_id(case)}: {share:.1%} of {len(INT8_LINES)} identical to bergamot's int8")
    assert share >= 0.97


# -- what the bundle records -----------------------------------------------------------------------------------------


def test_manifest_is_format_5_of_family_bergamot_with_every_file_hashed(built) -> None:
    folder, bundle = built(CASES[4])  # intgemm + alphas, separate vocabularies, shortlist, gzipped
    manifest = verify_bundle(bundle)  # every file's size and sha256, the seal, the schema
    raw = manifest.raw
    assert raw["format_version"] == 5 and manifest.family == "bergamot"
    assert set(raw["files"]) == {
        p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file() and p.name != "manifest.json"
    }
    assert set(manifest.precisions) == {"fp32", "int8"}
    assert "alphas" in manifest.precisions["int8"]["quantization"]
    assert raw["model"]["license"] == "MPL-2.0"
    assert "Firefox Translations" in manifest.attribution
    assert f"converted by Qiao from {folder.model.name};" in manifest.attribution  # the published file, no folder
    licence = (bundle / "MODEL_LICENSE.txt").read_text(encoding="utf-8")
    assert "Mozilla Public License" in licence and raw["source"]["files"][folder.model.name] in licence
    assert (manifest.pair.source.code, manifest.pair.target.code) == ("en", "zh")
    assert raw["config"]["source_vocab_size"] == raw["architecture"]["source_vocab"]  # separate vocabularies
    assert raw["tokenizer"]["source_file"] != raw["tokenizer"]["target_file"]
    # the shortlist as published, gunzipped and checked
    assert (bundle / raw["shortlist"]["file"]).read_bytes() == marian_io.read_bytes(folder.shortlist)
    parse_shortlist((bundle / raw["shortlist"]["file"]).read_bytes())
    report = json.loads((bundle / "validation.json").read_text(encoding="utf-8"))
    assert report["passed"] and report["fp32_identical_to_reference"] == report["sentences"] == 40
    spec = families.get("bergamot").generation_spec(manifest)
    assert (spec.eos_id, spec.pad_id, spec.forced_eos_id) == (0, 0, None)
    # Marian's max-length-factor 2: a sentence of n source ids (</s> included) gets at most 2n target tokens
    for n in (1, 2, 7, 40):
        assert length_limit(n, 1024, LengthRule(*spec.length_rule)) - 1 == 2 * n


def test_shared_vocabulary_bundle_has_one_tokenizer_file(built) -> None:
    _, bundle = built(CASES[0])
    raw = load_manifest(bundle).raw
    assert raw["tokenizer"]["shared"] and raw["tokenizer"]["source_file"] == raw["tokenizer"]["target_file"]
    assert "source_vocab_size" not in raw["config"]


def test_a_bundle_without_its_shortlist_or_with_a_changed_graph_list_is_refused(built, tmp_path: Path) -> None:
    _, bundle = built(CASES[2])
    copy = tmp_path / "copy"
    shutil.copytree(bundle, copy)
    (copy / "lex.s2t.bin").unlink()
    with pytest.raises(BundleError, match=r"lex\.s2t\.bin"):
        Translator(copy)
    raw = load_manifest(bundle).raw
    raw["graphs"]["decoder"]["inputs"] = raw["graphs"]["decoder"]["inputs"][:-1]  # no `shortlist` input
    from engine.bundle.manifest import dumps

    (copy / "manifest.json").write_text(dumps(raw), encoding="utf-8")
    with pytest.raises(BundleError, match=r"graphs\.decoder\.inputs"):
        load_manifest(copy)


def old_shape_bundle(bundle: Path, out: Path, before_0e1c962: bool = True) -> Path:
    """A copy of `bundle` as an older Qiao converted it: its encoder took the padded rows (`ids` [B,S], `mask_bias`,
    `positions` [S,E]) where it now takes the real tokens only, and (before 0e1c962) its decoder step took the
    shortlist's ids (`shortlist`) where it now takes the gathered rows (`output_w`, `output_b`); the manifest sealed
    again, as that Qiao sealed it."""
    from engine.bundle.manifest import dumps

    shutil.copytree(bundle, out)
    raw = load_manifest(bundle).raw
    assert raw["graphs"]["encoder"]["inputs"] == ["ids", "positions", "pad_index", "pack_index", "mask_bias"]
    raw["graphs"]["encoder"]["inputs"] = ["ids", "mask_bias", "positions"]
    inputs = raw["graphs"]["decoder"]["inputs"]
    assert inputs[-2:] == ["output_w", "output_b"]
    if before_0e1c962:
        raw["graphs"]["decoder"]["inputs"] = [*inputs[:-2], "shortlist"]
    (out / "manifest.json").write_text(dumps(raw), encoding="utf-8")
    return out


@pytest.mark.parametrize("before_0e1c962", [True, False], ids=["step gathers its rows", "padded encoder"])
def test_a_bundle_converted_by_an_older_qiao_says_to_convert_again(
    built, store, tmp_path: Path, capsys, before_0e1c962: bool
) -> None:
    """Loading, `qiao translate` and the installed-models list (the Models dialog's) all say what to do: one "format"
    problem (the window words it "made for a different version of Qiao", with its fix), never a traceback, whether
    the bundle predates the step's gathered rows (and the packed encoder) or only the packed encoder."""
    _, bundle = built(CASES[2])
    old = old_shape_bundle(bundle, tmp_path / "old", before_0e1c962)
    again = "converted by an older Qiao"
    with pytest.raises(BundleError) as raised:
        Translator(old)
    assert [p.kind for p in raised.value.issues] == ["format"]
    assert "the encoder takes padded rows" in str(raised.value)  # the newest change it predates
    assert again in str(raised.value) and "convert the model again" in str(raised.value)
    assert main(["--model", str(old), "translate", "Good morning."]) == 1
    err = capsys.readouterr().err
    assert again in err and "qiao model build --from" in err and "Traceback" not in err
    assert main(["model", "import", str(old)]) == 1  # refused as it is: nothing installed
    err = capsys.readouterr().err
    assert again in err and "Traceback" not in err
    shutil.copytree(old, store.models / "old-enzh")  # one installed before this Qiao
    (model,) = installed_models()
    assert model.problem is not None and again in model.problem
    # the only en→zh model: loading it says why it cannot be used, rather than that none is installed
    assert main(["translate", "Good morning."]) == 1
    err = capsys.readouterr().err
    assert again in err and "no en-zh model installed" not in err and "Traceback" not in err


# -- what the build refuses ----------------------------------------------------------------------------------------


def test_a_misnamed_parameter_fails_the_build_by_name(tmp_path: Path) -> None:
    params = make.random_params(make.TINY)
    params["encoder_l1_ffn_W1x"] = params.pop("encoder_l1_ffn_W1")
    folder = make.write_folder(tmp_path / "misnamed", make.TINY, "npz", params=params)
    with pytest.raises(CheckpointError, match="encoder_l1_ffn_W1") as caught:
        build_bundle(folder.model.parent, tmp_path / "out", quiet=True)
    assert "encoder_l1_ffn_W1x" in str(caught.value)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("damage", ["checksum", "size"])
def test_a_damaged_shortlist_fails_the_build(tmp_path: Path, damage: str) -> None:
    folder = make.write_folder(tmp_path / "model", make.TINY, "npz", shortlist=True)
    assert folder.shortlist is not None
    blob = bytearray(folder.shortlist.read_bytes())
    if damage == "checksum":
        blob[-8] ^= 1  # a list entry covered by the checksum
    else:
        del blob[-4:]
    folder.shortlist.write_bytes(bytes(blob))
    with pytest.raises(BuildError, match=damage):
        build_bundle(folder.model.parent, tmp_path / "out", quiet=True)
    assert not (tmp_path / "out").exists()


def test_languages_come_from_the_pair_unless_given() -> None:
    folder = make.cached_folder(make.TINY, "npz")
    assert languages_of(folder, None, None, None) == ("en", "zh")
    assert languages_of(replace(folder, pair="zhen"), None, None, None) == ("zh", "en")
    assert languages_of(replace(folder, pair="x"), {"sourceLanguage": "zh", "targetLanguage": "en"}, None, None) == (
        "zh",
        "en",
    )
    assert languages_of(folder, None, "zh", "en") == ("zh", "en")
    with pytest.raises(BuildError, match="--source and --target"):
        languages_of(replace(folder, pair="x"), None, None, None)
    with pytest.raises(BuildError, match="no language"):
        languages_of(replace(folder, pair="xxyy"), None, None, None)


def test_the_registry_finds_the_converter_of_a_firefox_folder_only(built, tmp_path: Path) -> None:
    folder, bundle = built(CASES[0])
    family = families.converter_for(folder.model.parent)
    assert family is not None and family.name == "bergamot"
    nested = tmp_path / "outer"
    shutil.copytree(folder.model.parent, nested / "enzh")
    assert recognises(nested) and families.converter_for(nested) == family  # an unpacked archive's top folder
    assert families.converter_for(bundle) is None  # a Qiao bundle is imported as it is
    assert families.converter_for(CHECKPOINT) is None  # a Marian checkpoint is built by the Marian pipeline


# -- through the CLI -----------------------------------------------------------------------------------------------


def test_qiao_model_build_converts_a_firefox_folder(tmp_path: Path, capsys) -> None:
    folder = make.cached_folder(replace(make.TINY, vocab="shared", tying="tied-all"), "intgemm-alphas", gz=True)
    out = tmp_path / "bundle"
    argv = ["model", "build", "--from", str(folder.model.parent), "--out", str(out), "--quiet"]
    assert main([*argv, "--source", "zh", "--target", "en", "--model-id", "me/firefox-zhen"]) == 0
    printed = capsys.readouterr().out
    assert "bergamot" in printed and "int8:" in printed and "fp32:" in printed
    manifest = verify_bundle(out)
    assert manifest.model_id == "me/firefox-zhen" and manifest.pair.key == "zh-en"
    assert Translator(out, precision="int8").translate("你好", RAW).stats is not None
    assert main(argv) == 1  # the folder is not empty now: refused without --force
    assert "not empty" in capsys.readouterr().err


def test_qiao_model_build_reports_a_bad_model(tmp_path: Path, capsys) -> None:
    params = make.random_params(make.TINY)
    params["decoder_l1_rnn_Wf"] = params["decoder_l1_rnn_Wf"][:, :32]
    folder = make.write_folder(tmp_path / "bad", make.TINY, "npz", params=params)
    assert main(["model", "build", "--from", str(folder.model.parent), "--out", str(tmp_path / "out")]) == 1
    assert "decoder_l1_rnn_Wf" in capsys.readouterr().err


@pytest.mark.parametrize("form", ["folder", "zip", "tar.gz"])
def test_qiao_model_import_converts_a_folder_or_its_archive(store, tmp_path: Path, capsys, form: str) -> None:
    folder = make.cached_folder(replace(make.TINY, vocab="separate", tying="tied"), "intgemm-alphas", shortlist=True)
    source = folder.model.parent
    if form == "zip":
        source = model_helpers.zip_bundle(tmp_path / "enzh.zip", folder.model.parent, top="enzh")
    elif form == "tar.gz":
        source = model_helpers.tar_bundle(tmp_path / "enzh.tar.gz", bundle=folder.model.parent, top="enzh")
    assert main(["model", "import", str(source)]) == 0, capsys.readouterr().err
    (model,) = installed_models()
    assert load_manifest(model.path).family == "bergamot" and model.pair_key == "en-zh" and model.problem is None
    assert model.path.parent == store.models
    verify_bundle(model.path)
    assert Translator(model.path).translate("Good morning.", RAW).stats is not None
    assert main(["model", "import", str(source)]) == 1  # installed already: refused without --force
    assert "already installed" in capsys.readouterr().err
    assert main(["model", "import", str(source), "--force"]) == 0


def test_qiao_model_import_of_a_broken_firefox_folder_changes_nothing(store, tmp_path: Path, capsys) -> None:
    folder = make.write_folder(tmp_path / "model", make.TINY, "npz", shortlist=True)
    assert folder.shortlist is not None
    blob = bytearray(folder.shortlist.read_bytes())
    blob[-8] ^= 1
    folder.shortlist.write_bytes(bytes(blob))
    assert main(["model", "import", str(folder.model.parent)]) == 1
    err = capsys.readouterr().err
    assert "could not be converted" in err and "checksum" in err
    assert installed_models() == []
    assert not [p for p in store.models.iterdir() if not p.name.startswith(".")]


# -- broken folders: one clear message from the converter, exit 1, nothing left behind --------------------------------


def _copy_of(tmp_path: Path, gz: bool = False) -> Path:
    folder = make.cached_folder(make.TINY, "npz", shortlist=True, gz=gz)
    copy = tmp_path / "enzh"
    shutil.copytree(folder.model.parent, copy, ignore=shutil.ignore_patterns(".complete"))
    return copy


def _no_vocabulary(folder: Path) -> str:
    for vocab in folder.glob("trgvocab.*"):
        vocab.unlink()
    return "not both srcvocab.enzh.spm and trgvocab.enzh.spm"


def _two_models(folder: Path) -> str:
    (model,) = folder.glob("model.enzh.*")
    shutil.copy(model, folder / model.name.replace("enzh", "deen"))
    return "more than one model file"


def _only_a_shortlist(folder: Path) -> str:
    for path in folder.iterdir():
        if not path.name.startswith("lex."):
            path.unlink()
    return "no model.<pair>"


@pytest.mark.parametrize("damage", [_no_vocabulary, _two_models, _only_a_shortlist], ids=lambda f: f.__name__[1:])
def test_an_incomplete_firefox_folder_is_reported_by_its_converter(store, tmp_path: Path, capsys, damage) -> None:
    """A folder named as Mozilla names its files but incomplete was handed to the Marian pipeline before, which
    answered "not a complete Marian checkpoint: missing config.json, …" (and `import` of its archive "no Qiao
    model bundle in unpacked"): now its converter names what the folder lacks."""
    folder = _copy_of(tmp_path)
    expected = damage(folder)
    assert recognises(folder) and recognises(tmp_path)  # the folder, and the folder holding it (an archive's top)
    out = tmp_path / "out"
    assert main(["model", "build", "--from", str(folder), "--out", str(out), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert expected in err and "Marian" not in err and "Traceback" not in err and err.count("\n") == 1
    assert not out.exists()
    archive = model_helpers.tar_bundle(tmp_path / "enzh.tar.gz", bundle=folder, top="enzh")
    assert main(["model", "import", str(archive)]) == 1
    err = capsys.readouterr().err
    assert "enzh.tar.gz could not be converted" in err and expected in err
    assert ".import-" not in err  # the work folder inside the models folder is not the user's business
    assert installed_models() == []
    assert not [p for p in store.models.iterdir() if not p.name.startswith(".")]


def test_a_folder_that_is_no_model_still_gets_the_marian_message(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "config.json").write_text("{}")
    assert not recognises(tmp_path)
    assert families.converter_for(tmp_path) is None


def test_qiao_model_build_of_an_empty_folder_says_so(tmp_path: Path, capsys) -> None:
    (tmp_path / "empty").mkdir()
    assert main(["model", "build", "--from", str(tmp_path / "empty"), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "empty is empty" in err and "Firefox Translations model folder" in err and "config.json" not in err
    assert not (tmp_path / "out").exists()


def _corrupt_deflate(path: Path) -> str:
    blob = bytearray(path.read_bytes())
    for at in range(100, min(len(blob) - 8, 2000), 7):
        blob[at] ^= 0x55
    path.write_bytes(bytes(blob))
    return "damaged gzip data"


def _cut_short(path: Path) -> str:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    return "truncated"


def _trailing_garbage(path: Path) -> str:
    path.write_bytes(path.read_bytes() + b"not gzip")
    return "trailing bytes"


@pytest.mark.parametrize("which", ["model", "srcvocab", "lex"])
@pytest.mark.parametrize("damage", [_corrupt_deflate, _cut_short, _trailing_garbage], ids=lambda f: f.__name__[1:])
def test_damaged_gzip_data_is_one_message_naming_the_file(tmp_path: Path, capsys, which: str, damage) -> None:
    """A damaged deflate stream escaped as zlib.error (a traceback) before: every .gz of the folder is now read
    through one checked gunzip."""
    folder = _copy_of(tmp_path, gz=True)
    (path,) = folder.glob(f"{which}.*.gz")
    expected = damage(path)
    out = tmp_path / "out"
    assert main(["model", "build", "--from", str(folder), "--out", str(out), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"qiao: {path.name}: ") and expected in err and err.count(path.name) == 1
    assert not out.exists()


def test_a_gzip_bomb_stops_at_the_bound(tmp_path: Path, capsys, monkeypatch) -> None:
    """A .gz that unpacks past marian_io.MAX_FILE_BYTES is refused while unpacking (gzip.decompress unpacked all of
    it into memory before: a few MB of zeros took gigabytes)."""
    import gzip
    import zlib

    monkeypatch.setattr(marian_io, "MAX_FILE_BYTES", 1 << 20)
    folder = _copy_of(tmp_path, gz=True)
    (path,) = folder.glob("model.*.gz")
    path.write_bytes(gzip.compress(path.read_bytes()[:4096] + bytes(8 << 20)))
    assert main(["model", "build", "--from", str(folder), "--out", str(tmp_path / "out"), "--quiet"]) == 1
    assert "unpacks to over" in capsys.readouterr().err
    assert marian_io.gunzip(gzip.compress(b"ab") + gzip.compress(b"cd") + bytes(3)) == b"abcd"  # as gzip reads it
    with pytest.raises(marian_io.ContainerError, match="not gzip"):
        marian_io.gunzip(zlib.compress(b"zlib, not gzip"))


def test_a_model_built_as_another_pair_is_not_scored_as_mozillas(tmp_path: Path, capsys) -> None:
    """`--source zh --target en` on an enzh base-memory folder kept the id
    mozilla/firefox-translations-enzh-base-memory, so `qiao model list` showed the zh-en bundle with en→zh's
    published COMET 86.31, and it outranked opus-mt-zh-en."""
    from engine.store.quality import published_for, quality_of

    folder = _copy_of(tmp_path)
    meta = json.loads((folder / "metadata.json").read_text())
    meta["architecture"] = "base-memory"
    (folder / "metadata.json").write_text(json.dumps(meta))
    out = tmp_path / "as-zhen"
    argv = ["model", "build", "--from", str(folder), "--out", str(out), "--quiet"]
    assert main([*argv, "--source", "zh", "--target", "en"]) == 0
    assert "named as en → zh; building it as zh → en" in capsys.readouterr().err
    manifest = load_manifest(out)
    assert manifest.pair.key == "zh-en" and published_for(manifest.model_id) is None
    assert quality_of(manifest.raw, manifest.model_id) is None
    assert main([*argv, "--force"]) == 0  # as its files name it: Mozilla's model, with its published score
    assert "note:" not in capsys.readouterr().err
    manifest = load_manifest(out)
    assert manifest.model_id == "mozilla/firefox-translations-enzh-base-memory"
    assert quality_of(manifest.raw, manifest.model_id) is not None


def test_files_and_metadata_naming_different_pairs_are_refused_unless_told(tmp_path: Path) -> None:
    folder = make.cached_folder(make.TINY, "npz")
    mixed = {"sourceLanguage": "zh", "targetLanguage": "en"}
    with pytest.raises(BuildError, match=r"named enzh .* metadata\.json says zh → en"):
        languages_of(folder, mixed, None, None)
    assert languages_of(folder, mixed, "en", "zh") == ("en", "zh")
    assert languages_of(folder, {"sourceLanguage": "eng", "targetLanguage": "zho"}, None, None) == ("en", "zh")


def test_a_model_folder_nested_in_single_folders_is_found(store, tmp_path: Path, capsys) -> None:
    """An archive of models/base-memory/enzh (the repository's layout) was 'no Qiao model bundle in unpacked', and
    `qiao model build --from` its top folder went to the Marian pipeline: single subfolders are now followed."""
    folder = _copy_of(tmp_path)
    top = tmp_path / "archive"
    shutil.move(str(folder), str(top / "models" / "base-memory" / "enzh"))
    assert recognises(top) and not recognises(tmp_path / "nowhere")
    out = tmp_path / "out"
    assert main(["model", "build", "--from", str(top), "--out", str(out), "--quiet"]) == 0
    assert load_manifest(out).family == "bergamot"
    archive = model_helpers.tar_bundle(tmp_path / "models.tar.gz", bundle=top / "models", top="models")
    assert main(["model", "import", str(archive)]) == 0, capsys.readouterr().err
    (model,) = installed_models()
    assert model.pair_key == "en-zh" and model.problem is None
    (top / "models" / "base").mkdir()  # two models' folders: which one is meant is not guessed
    assert not recognises(top)


def test_metadata_json_is_read_strictly_and_recorded_as_plain_facts(tmp_path: Path, capsys) -> None:
    """`"score": NaN` in metadata.json (Python's json reads it) ended the build in a traceback when the manifest was
    sealed (ValueError: Out of range float values are not JSON compliant)."""
    folder = _copy_of(tmp_path)
    meta = json.loads((folder / "metadata.json").read_text())
    out = tmp_path / "out"
    argv = ["model", "build", "--from", str(folder), "--out", str(out), "--quiet"]
    (folder / "metadata.json").write_text(json.dumps({**meta, "score": float("nan")}))
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err == "qiao: metadata.json: not valid JSON (NaN is not a JSON value)\n" and not out.exists()
    extra = {"modelStatistics": {"a": [1, 2]}, "note": "x" * 5000, "version": "1.0", "quantized": True}
    (folder / "metadata.json").write_text(json.dumps({**meta, **extra}))
    assert main(argv) == 0
    recorded = load_manifest(out).raw["source"]["metadata"]
    assert recorded["version"] == "1.0" and recorded["quantized"] is True and recorded["hash"] == meta["hash"]
    assert not {"modelStatistics", "note", "modelConfig"} & set(recorded)


def test_a_vocabulary_sentencepiece_refuses_is_a_build_error(tmp_path: Path, capsys) -> None:
    """A damaged character map that the conversion's reader accepts but SentencePiece's own check refuses ended the
    build in `RuntimeError: INTERNAL: precompiled_charsmap is invalid.` (validation loads SentencePiece)."""
    from sentencepiece import sentencepiece_model_pb2 as pb

    from engine.families.bergamot.vocabulary import CharsMap

    folder = _copy_of(tmp_path)
    (path,) = folder.glob("srcvocab.*")
    proto = pb.ModelProto()
    proto.ParseFromString(path.read_bytes())
    blob = bytes(proto.normalizer_spec.precompiled_charsmap)

    def refused_by_sentencepiece_only(at: int) -> bytes | None:
        damaged = bytearray(blob)
        damaged[at] = 132
        try:
            CharsMap(bytes(damaged))
        except ValueError:
            return None
        proto.normalizer_spec.precompiled_charsmap = bytes(damaged)
        try:
            spm.SentencePieceProcessor(model_proto=proto.SerializeToString())
        except RuntimeError:
            return proto.SerializeToString()
        return None

    damaged = next(d for at in range(4, len(blob), 997) if (d := refused_by_sentencepiece_only(at)) is not None)
    path.write_bytes(damaged)
    out = tmp_path / "out"
    assert main(["model", "build", "--from", str(folder), "--out", str(out), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("qiao: srcvocab.enzh.spm is damaged: SentencePiece cannot load it") and not out.exists()


def test_a_firefox_folder_given_as_a_bundle_says_how_to_convert_it(store, tmp_path: Path, capsys) -> None:
    """`qiao translate --model ~/Downloads/enzh` (the folder as Mozilla publishes it) suggested building
    Helsinki-NLP/opus-mt-en-zh; it now names the import that converts that very folder."""
    folder = _copy_of(tmp_path)
    for argv in (["translate", "--model", str(folder), "Hello"], ["model", "verify", str(folder)]):
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert f"`qiao model import {folder}` converts and installs it" in err and "Helsinki-NLP" not in err
    assert main(["translate", "--model", str(tmp_path / "missing"), "Hello"]) == 1
    assert "Helsinki-NLP" in capsys.readouterr().err  # no folder to convert: the usual ways to get a model


def test_qiao_model_build_of_a_file_names_what_to_give_instead(tmp_path: Path, capsys) -> None:
    """`--from enzh.tar.gz` or `--from enzh/model.enzh.npz` went to the Marian pipeline: 'is a file; pass the
    checkpoint directory'."""
    folder = _copy_of(tmp_path)
    archive = model_helpers.tar_bundle(tmp_path / "enzh.tar.gz", bundle=folder, top="enzh")
    (model,) = folder.glob("model.*")
    out = tmp_path / "out"
    assert main(["model", "build", "--from", str(archive), "--out", str(out)]) == 1
    assert f"is an archive: `qiao model import {archive}`" in capsys.readouterr().err
    assert main(["model", "build", "--from", str(model), "--out", str(out)]) == 1
    assert f"is one file of a model folder: give the folder, --from {folder}" in capsys.readouterr().err
    assert not out.exists()


def test_a_model_damaged_under_its_published_size_is_named_damaged_first(tmp_path: Path, capsys) -> None:
    """A byte flipped in the model's header was reported as whatever the parser tripped on ('malformed item
    header ...'), metadata.json's sha256 only compared afterwards (on a second read of the file)."""
    folder = make.cached_folder(make.TINY, "intgemm-alphas", shortlist=True)
    copy = tmp_path / "enzh"
    shutil.copytree(folder.model.parent, copy, ignore=shutil.ignore_patterns(".complete"))
    model = copy / folder.model.name
    blob = bytearray(model.read_bytes())
    blob[20] ^= 0x40  # the first item's name length
    model.write_bytes(bytes(blob))
    assert main(["model", "build", "--from", str(copy), "--out", str(tmp_path / "out"), "--quiet"]) == 1
    assert "differs from metadata.json's" in capsys.readouterr().err


def test_sigterm_during_a_build_cleans_up_as_ctrl_c(tmp_path: Path) -> None:
    """`timeout` or `kill` (SIGTERM) during `qiao model build` killed Python outright: the staging folder (215 MB for
    base-memory's shape) stayed in the temporary folder. Now it is handled as Ctrl+C: cleaned up, exit 130."""
    import subprocess
    import sys

    folder = _copy_of(tmp_path)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    script = f"""
import os, signal, sys, tempfile
sys.path.insert(0, {str(make.ROOT)!r})
tempfile.tempdir = {str(scratch)!r}
from engine.families.bergamot.converter import convert
def validate(*args, **kwargs):  # the build is half done: its staging folder holds the graphs
    assert [n for n in os.listdir({str(tmp_path)!r}) if n.startswith(".out.build-")]
    os.kill(os.getpid(), signal.SIGTERM)
    raise AssertionError("SIGTERM did not interrupt the build")
convert.validate = validate
from engine.cli.main import main
sys.exit(main(["model", "build", "--from", {str(folder)!r}, "--out", {str(tmp_path / "out")!r}, "--quiet"]))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr
    assert list(scratch.iterdir()) == [] and not (tmp_path / "out").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]


def test_qiao_model_build_of_a_bundle_says_it_is_one(built, tmp_path: Path, capsys) -> None:
    """--from a bundle went to the Marian pipeline: 'not a complete Marian checkpoint: missing config.json, …'."""
    _, bundle = built(CASES[0])
    assert main(["model", "build", "--from", str(bundle), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "is a Qiao bundle already" in err and f"`qiao model import {bundle}`" in err and "Marian" not in err
    assert not (tmp_path / "out").exists()


def test_a_vocabulary_of_the_wrong_size_is_named(tmp_path: Path, capsys) -> None:
    """'the vocabularies have 512 and 512 pieces; the model's dim-vocabs are 512 and 1024' left the user to work out
    which file was wrong."""
    folder = _copy_of(tmp_path)
    shutil.copy(folder / "srcvocab.enzh.spm", folder / "trgvocab.enzh.spm")
    assert main(["model", "build", "--from", str(folder), "--out", str(tmp_path / "out"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "trgvocab.enzh.spm has 512 pieces, the model's target vocabulary 1024" in err and "srcvocab" not in err
