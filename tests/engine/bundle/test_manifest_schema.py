"""A malformed manifest is refused with one clear message per problem (field path + what was expected), by every
entry point, before any other bundle file is opened: never a traceback, never a silently wrong model."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from engine.bundle.manifest import dumps, load_manifest, verify_bundle
from engine.cli.main import main
from engine.errors import BundleError
from engine.pipeline.translator import Translator
from tests.conftest import BUNDLE

GOOD = json.loads((BUNDLE / "manifest.json").read_text(encoding="utf-8"))


def _set(path: str | tuple, value) -> Callable[[dict], None]:
    """A change that sets (or, with value DELETE, removes) one field given as a dotted path or a tuple of keys."""

    def change(raw: dict) -> None:
        *parents, last = path.split(".") if isinstance(path, str) else path
        node = raw
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if value is DELETE:
            del node[last]
        elif isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return change


DELETE = object()
TOK = "tokenizer.json"

# (name, change to the good manifest, text the error must contain)
CASES: list[tuple[str, Callable[[dict], None], str]] = [
    ("no model.id", _set("model.id", DELETE), "model.id: expected a non-empty string, found nothing"),
    ("model.id empty", _set("model.id", ""), "model.id: expected a non-empty string"),
    ("model a string", _set("model", "opus"), 'model: expected an object, found "opus" (a string)'),
    ("no model.license", _set("model.license", DELETE), "model.license: expected a string"),
    ("no files", _set("files", DELETE), "files: expected an object"),
    ("files a list", _set("files", ["tokenizer.json"]), "files: expected an object of file"),
    ("files empty", _set("files", {}), "files: expected an object of file → {size, sha256} with at least one"),
    ("sha256 a number", _set(("files", TOK, "sha256"), 12345), f'files["{TOK}"].sha256: expected 64 lowercase hex'),
    ("sha256 short", _set(("files", TOK, "sha256"), "ab" * 31), f'files["{TOK}"].sha256: expected 64'),
    ("sha256 upper", _set(("files", TOK, "sha256"), "AB" * 32), f'files["{TOK}"].sha256'),
    ("size negative", _set(("files", TOK, "size"), -1), f'files["{TOK}"].size: expected an integer from 0'),
    ("size a string", _set(("files", TOK, "size"), "340943"), f'files["{TOK}"].size'),
    ("file entry a string", _set(("files", TOK), "x"), f'files["{TOK}"]: expected an object with size'),
    ("precisions a string", _set("precisions", "int8"), "precisions: expected an object with one or more"),
    ("precisions empty", _set("precisions", {}), "precisions: expected an object with one or more"),
    ("unknown precision", lambda r: r["precisions"].update(fp16=r["precisions"]["fp32"]), "expected only int8"),
    ("precision a list", _set("precisions.int8", []), "precisions.int8: expected an object"),
    ('d_model "512"', _set("config.d_model", "512"), 'config.d_model: expected an integer from 1 to 8192, found "512"'),
    ("d_model 0", _set("config.d_model", 0), "config.d_model: expected an integer from 1 to 8192, found 0"),
    ("d_model float", _set("config.d_model", 64.0), "config.d_model: expected an integer"),
    ("d_model bool", _set("config.d_model", True), "config.d_model: expected an integer"),
    ("d_model not per head", _set("config.decoder_attention_heads", 3), "a multiple of config.decoder_attention"),
    ("positions negative", _set("config.max_position_embeddings", -5), "config.max_position_embeddings: expected"),
    ("positions 10⁹", _set("config.max_position_embeddings", 10**9), "found 1000000000"),
    ("no config", _set("config", DELETE), "config: expected an object, found nothing"),
    ("generation null", _set("generation", None), "generation: expected an object, found null"),
    ("no eos", _set("generation.eos_token_id", DELETE), "generation.eos_token_id: expected a token id"),
    ("pad beyond vocab", _set("generation.pad_token_id", 1882), "generation.pad_token_id: expected a token id from 0"),
    ("beams 0", _set("generation.num_beams", 0), "generation.num_beams: expected an integer from 1 to 8"),
    ("max_length beyond positions", _set("generation.max_length", 4096), "generation.max_length"),
    ("penalty a string", _set("generation.length_penalty", "1"), "generation.length_penalty: expected a number"),
    ("bad words flat", _set("generation.bad_words_ids", [1881]), "generation.bad_words_ids"),
    ("config vocab wrong", _set("config.vocab_size", 1000), "tokenizer.vocab_size: expected config.vocab_size"),
    ("tokenizer vocab wrong", _set("tokenizer.vocab_size", 1883), "tokenizer.vocab_size: expected config.vocab_size"),
    ("embedding rows wrong", _set("precisions.int8.embedding.shape", [1000, 64]), "int8.embedding.shape: expected"),
    ("embedding width wrong", _set("precisions.fp32.embedding.shape", [1882, 32]), "fp32.embedding.shape"),
    ("embedding offset negative", _set("precisions.fp32.embedding.offset", -1), "fp32.embedding.offset: expected"),
    ("embedding past its file", _set("precisions.fp32.embedding.offset", 4096), "inside fp32/embedding.bin"),
    ("embedding dtype", _set("precisions.fp32.embedding.dtype", "float16"), 'embedding.dtype: expected "float32"'),
    ("block size", _set("precisions.int8.embedding.block_size", 7), "int8.embedding.block_size: expected a divisor"),
    ("scales past the file", _set("precisions.int8.embedding.scales_offset", 130000), "embedding.scales_offset"),
    ("head outside", _set("precisions.int8.head", "../head.bin"), "precisions.int8.head points outside the model"),
    ("head a number", _set("precisions.int8.head", 7), "precisions.int8.head: expected a file path, found 7"),
    ("logits renamed", _set("graphs.decoder.outputs.0", "logitz"), 'graphs.decoder.outputs[0]: expected "logits"'),
    ("cross output missing", lambda r: r["graphs"]["encoder"]["outputs"].pop(), "graphs.encoder.outputs: expected 4"),
    ("layers vs graphs", _set("config.decoder_layers", 3), "graphs.encoder.outputs: expected 6 names"),
    ("no decoder graph", _set("graphs.decoder", DELETE), "graphs.decoder: expected an object"),
    ("scorer inputs", _set("graphs.scorer.inputs", ["logits"]), "graphs.scorer.inputs"),
    ("no tokenizer file", _set("tokenizer.file", DELETE), "tokenizer.file: expected a file path, found nothing"),
    ("special id a string", _set("tokenizer.special_tokens.0.id", "x"), "tokenizer.special_tokens[0].id"),
    ("language id beyond", _set(("tokenizer", "language_ids", ">>cmn<<"), 99999), "tokenizer.language_ids"),
    ("variant token unknown", _set("languages.variants.1.token", ">>xx<<"), "variants[1].token: expected a token"),
    ("no languages", _set("languages", DELETE), "languages: expected an object"),
    ("source code missing", _set("languages.source.code", DELETE), "languages.source.code: expected a language code"),
    ("target script", _set("languages.target.script", "klingon"), "languages.target.script: expected one of"),
    ("variant key twice", _set("languages.variants.1.key", "hans"), "variants[1].key: expected a key not used"),
    ("default variant", _set("languages.default_variant", "latn"), "default_variant: expected one of hans, hant"),
    ("no self-test", _set("languages.self_test", ""), "languages.self_test: expected a non-empty string"),
    ("joiner a number", _set("languages.joiner", 0), "languages.joiner: expected a string"),
    ("tokenizer unlisted", _set(("files", TOK), DELETE), "tokenizer.json: tokenizer.file is loaded but not listed"),
    ("embedding unlisted", _set(("files", "int8/embedding.bin"), DELETE), "int8/embedding.bin: precisions.int8.embed"),
    ("format a string", _set("format_version", "4"), "format version '4'; this Qiao reads 4"),
]


def _write(tmp_path, change) -> None:
    raw = json.loads(json.dumps(GOOD))
    change(raw)
    (tmp_path / "manifest.json").write_text(dumps(raw), encoding="utf-8")


@pytest.mark.parametrize(("change", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_manifest_is_refused_everywhere_with_its_field(tmp_path, capsys, change, expected):
    # only manifest.json exists: the refusal must come before any other file of the bundle is looked at
    _write(tmp_path, change)
    for entry in (load_manifest, verify_bundle, Translator):
        with pytest.raises(BundleError) as err:
            entry(tmp_path)
        assert any(expected in p for p in err.value.problems), (entry, err.value.problems)
        assert all(p.kind in ("manifest", "unlisted", "format", "outside") for p in err.value.issues)
    assert main(["model", "verify", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert expected in captured.err and "Traceback" not in captured.err


def test_every_problem_is_reported_at_once(tmp_path):
    def two(raw):
        raw["model"].pop("id")
        raw["config"]["d_model"] = "512"

    _write(tmp_path, two)
    with pytest.raises(BundleError) as err:
        load_manifest(tmp_path)
    assert [p.split(": ")[1] for p in err.value.problems] == ["model.id", "config.d_model"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[" * 10_000 + "]" * 10_000, "nested too deeply"),
        ('{"format_version": 3, "a": ' + '{"b": ' * 10_000 + "1" + "}" * 10_001, "nested too deeply"),
        ('{"format_version": 3, "format_version": 3}', "'format_version' appears twice"),
        ('{"format_version": 3, "x": NaN}', "NaN is not a valid JSON number"),
        ('{"format_version": 3, "x": 1' + "0" * 5000 + "}", "unreadable"),
        ("[1, 2]", "expected a JSON object"),
        ("{not json", "unreadable"),
    ],
    ids=["deep list", "deep object", "duplicate key", "NaN", "huge integer", "a list", "not JSON"],
)
def test_unparseable_manifest_is_a_clear_error(tmp_path, capsys, text, expected):
    (tmp_path / "manifest.json").write_text(text, encoding="utf-8")
    with pytest.raises(BundleError, match=expected):
        load_manifest(tmp_path)
    assert main(["model", "verify", str(tmp_path)]) == 1
    assert "Traceback" not in capsys.readouterr().err


def test_manifest_not_utf8_or_huge(tmp_path):
    (tmp_path / "manifest.json").write_bytes(b'{"format_version": 3, "x": "\xff"}')
    with pytest.raises(BundleError, match="unreadable"):
        load_manifest(tmp_path)
    with open(tmp_path / "manifest.json", "wb") as fh:
        fh.truncate(17 << 20)
    with pytest.raises(BundleError, match="larger than 16 MiB"):
        load_manifest(tmp_path)


def test_a_missing_seal_is_refused(tmp_path):
    raw = {k: v for k, v in GOOD.items() if k != "manifest_sha256"}
    (tmp_path / "manifest.json").write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(BundleError, match="manifest_sha256: expected the sha256"):
        load_manifest(tmp_path)


def test_the_good_manifest_passes_the_schema(tmp_path):
    _write(tmp_path, lambda raw: None)
    assert load_manifest(tmp_path).model_id == "qiao/tiny-marian-fixture"
