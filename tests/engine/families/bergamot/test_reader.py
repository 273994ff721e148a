"""The Bergamot reader: every published layout reads back to the weights written, and anything the engine would
not compute exactly (architecture keys, a missing, misnamed, extra or misshapen parameter, incomplete alphas) is
refused before a single weight is decoded (Marian itself silently fills a misnamed parameter with random values)."""

from __future__ import annotations

import gzip
import importlib.util
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from engine.errors import CheckpointError
from engine.families.bergamot.converter import marian_io, model_yml, reader
from engine.families.bergamot.converter.marian_io import FLOAT32, INT8, META_NAME
from tests.fixtures.bergamot import make

SPEC = make.TINY

# The synthetic folders train their SentencePiece vocabularies here: the build extra's sentencepiece.
NEEDS_SPM = pytest.mark.skipif(
    importlib.util.find_spec("sentencepiece") is None, reason="could not import 'sentencepiece' (the build extra)"
)


@pytest.fixture(scope="module")
def params() -> dict[str, np.ndarray]:
    return make.random_params(SPEC)


def _items_bin(spec: make.Spec, params: dict[str, np.ndarray], config: dict | None = None) -> bytes:
    """A float32 .bin with `params` as given (names and shapes unchecked) and `config` as model.yml."""
    text = model_yml.dumps(config if config is not None else make.config(spec))
    items = [(n, FLOAT32, v.shape, v.astype("<f4").tobytes()) for n, v in params.items()]
    meta = marian_io.meta_array(text)
    return marian_io.write_bin([*items, (META_NAME, INT8, (len(meta),), meta.tobytes())])


def _read_bin(blob: bytes) -> reader.Checkpoint:
    return reader.read_items(marian_io.bin_items(blob), "test.bin")


@NEEDS_SPM
@pytest.mark.parametrize("layout", ["npz", "bin"])
def test_float_layouts_read_back_exactly(tmp_path: Path, params: dict[str, np.ndarray], layout: str) -> None:
    folder = make.write_folder(tmp_path / layout, SPEC, layout, params=params)
    checkpoint = reader.read_model(folder.model)
    assert checkpoint.gemm_precision == "float32" and not checkpoint.int8 and not checkpoint.alphas
    assert set(checkpoint.params) == set(params)
    for name, value in params.items():
        np.testing.assert_array_equal(checkpoint.params[name], value.reshape(checkpoint.params[name].shape))
    assert checkpoint.params["encoder_l1_self_bq"].ndim == 1  # vectors come back 1-D
    assert checkpoint.config == make.config(SPEC)


@NEEDS_SPM
def test_intgemm8_payloads_are_transposed_and_dequantised(tmp_path: Path, params: dict[str, np.ndarray]) -> None:
    """Non-embedding int8 weights are stored W^T row-major with a float32 qm trailer; Wemb untransposed and
    dequantised as q * (1/qm). A wrong orientation would be off by far more than half a quantisation step."""
    folder = make.write_folder(tmp_path / "int8", SPEC, "intgemm8", params=params)
    checkpoint = reader.read_model(folder.model)
    assert checkpoint.gemm_precision == "int8shiftAll"
    for name in ("encoder_l1_self_Wq", "encoder_l1_ffn_W1", "decoder_l2_rnn_Wf", "decoder_Wemb", "encoder_Wemb"):
        value = params[name]
        raw = checkpoint.int8[name]
        assert raw.q.shape == value.shape and raw.q.dtype == np.int8
        assert raw.qm == np.float32(127.0) / np.float32(np.abs(value).max())
        step = 1 / float(raw.qm)
        assert np.abs(checkpoint.params[name] - value).max() <= step / 2 + 1e-6
    wemb = checkpoint.int8["decoder_Wemb"]
    np.testing.assert_array_equal(
        checkpoint.params["decoder_Wemb"], wemb.q.astype(np.float32) * (np.float32(1.0) / wemb.qm)
    )
    assert "encoder_l1_self_bq" not in checkpoint.int8  # biases stay float32


@NEEDS_SPM
def test_alphas_are_read_by_weight_name(tmp_path: Path) -> None:
    folder = make.write_folder(tmp_path / "alphas", SPEC, "intgemm-alphas")
    checkpoint = reader.read_model(folder.model)
    assert checkpoint.gemm_precision == "int8shiftAlphaAll"
    required, output = reader.alpha_names(checkpoint.arch)
    assert {n + reader.ALPHA_SUFFIX for n in checkpoint.alphas} == required | output
    assert "none" in checkpoint.alphas and "decoder_Wemb" in checkpoint.alphas  # the Wemb alpha went through intgemm8
    assert checkpoint.alphas["decoder_Wemb"] == pytest.approx(checkpoint.alphas["none"], rel=1e-6)
    assert all(a > 0 for a in checkpoint.alphas.values())


@NEEDS_SPM
def test_gzipped_folder_reads_the_same(tmp_path: Path, params: dict[str, np.ndarray]) -> None:
    plain = make.write_folder(tmp_path / "plain", SPEC, "bin", params=params, shortlist=True)
    zipped = make.write_folder(tmp_path / "gz", SPEC, "bin", params=params, shortlist=True, gz=True)
    assert zipped.model.name.endswith(".bin.gz") and zipped.shortlist and zipped.shortlist.name.endswith(".gz")
    a, b = reader.read_model(plain.model), reader.read_model(zipped.model)
    assert all(np.array_equal(a.params[n], b.params[n]) for n in a.params)
    assert reader.read_metadata(zipped.metadata)["modelConfig"] == make.config(SPEC)


@pytest.mark.parametrize(
    ("tying", "present", "absent"),
    [
        ("tied-all", {"Wemb"}, {"encoder_Wemb", "decoder_Wemb", "decoder_ff_logit_out_Wt"}),
        ("tied", {"encoder_Wemb", "decoder_Wemb"}, {"Wemb", "decoder_ff_logit_out_Wt"}),
        ("untied", {"encoder_Wemb", "decoder_Wemb", "decoder_ff_logit_out_Wt"}, {"Wemb"}),
    ],
)
def test_tying_flags_choose_the_tables(tying: str, present: set[str], absent: set[str]) -> None:
    spec = replace(SPEC, tying=tying)
    arch = reader.check_config(make.config(spec))
    names = set(reader.expected_parameters(arch))
    assert present <= names and not (absent & names)
    assert (
        arch.output_weight == {"tied-all": "Wemb", "tied": "decoder_Wemb", "untied": "decoder_ff_logit_out_Wt"}[tying]
    )


def test_tied_all_with_separate_vocabularies_uses_one_table() -> None:
    """base/enzh ships srcvocab/trgvocab with tied-embeddings-all: the tables follow the flags, not the files."""
    spec = replace(SPEC, tying="tied-all", vocab="separate")
    arch = reader.check_config(make.config(spec))
    assert arch.src_embedding == arch.trg_embedding == arch.output_weight == "Wemb"


def _decoding_forbidden(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_: object) -> None:
        raise AssertionError("a weight was decoded before the model was checked")

    monkeypatch.setattr(marian_io, "float32_array", boom)
    monkeypatch.setattr(marian_io, "intgemm8_payload", boom)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda p: p.update(encoder_l1_self_Wqq=p.pop("encoder_l1_self_Wq")), "encoder_l1_self_Wqq: not a parameter"),
        (lambda p: p.pop("decoder_l2_rnn_Wf"), "decoder_l2_rnn_Wf: missing"),
        (lambda p: p.update(decoder_l1_rnn_gamma=np.ones((1, 64), np.float32)), "decoder_l1_rnn_gamma: not a param"),
        (lambda p: p.update(decoder_l1_rnn_W=np.ones((64, 32), np.float32)), "decoder_l1_rnn_W: shape [64, 32]"),
        (lambda p: p.update(decoder_ff_logit_out_W=p["decoder_Wemb"].T.copy()), "decoder_ff_logit_out_W: not a par"),
    ],
    ids=["misnamed", "missing", "extra", "misshapen", "legacy-untransposed-output"],
)
def test_parameter_set_differences_are_refused(
    params: dict[str, np.ndarray], monkeypatch: pytest.MonkeyPatch, change: object, message: str
) -> None:
    changed = dict(params)
    change(changed)  # type: ignore[operator]
    blob = _items_bin(SPEC, changed)
    _decoding_forbidden(monkeypatch)
    with pytest.raises(CheckpointError, match=message.replace("[", r"\[").replace("]", r"\]")):
        _read_bin(blob)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("dec-cell", "gru"),
        ("transformer-decoder-autoreg", "self-attention"),
        ("transformer-preprocess", "n"),
        ("transformer-postprocess", "da"),
        ("transformer-postprocess-emb", "dn"),
        ("transformer-ffn-activation", "swish"),
        ("layer-normalization", True),
        ("output-omit-bias", True),
        ("transformer-train-position-embeddings", True),
        ("transformer-tied-layers", [1, 2]),
        ("type", "s2s"),
        ("some-new-option", 3),
    ],
)
def test_unsupported_architecture_is_refused(
    params: dict[str, np.ndarray], monkeypatch: pytest.MonkeyPatch, key: str, value: object
) -> None:
    config = make.config(SPEC) | {key: value}
    blob = _items_bin(SPEC, params, config)
    _decoding_forbidden(monkeypatch)
    with pytest.raises(CheckpointError, match=f"model.yml.*{key}"):
        _read_bin(blob)


def test_missing_architecture_key_is_refused(params: dict[str, np.ndarray]) -> None:
    """Marian's default autoregression is self-attention: a model.yml without the key is not an SSRU model."""
    config = {k: v for k, v in make.config(SPEC).items() if k != "transformer-decoder-autoreg"}
    with pytest.raises(CheckpointError, match="lacks transformer-decoder-autoreg"):
        _read_bin(_items_bin(SPEC, params, config))


@NEEDS_SPM
def test_incomplete_alphas_are_refused(tmp_path: Path) -> None:
    folder = make.write_folder(tmp_path / "alphas", SPEC, "intgemm-alphas")
    items = [i for i in marian_io.bin_items(folder.model.read_bytes()) if i.name != "encoder_l2_ffn_W2_QuantMultA"]
    with pytest.raises(CheckpointError, match="encoder_l2_ffn_W2_QuantMultA: missing"):
        reader.read_items(items, "no-alpha")
    without_output = [i for i in items if i.name not in ("none_QuantMultA", "decoder_Wemb_QuantMultA")]
    with pytest.raises(CheckpointError, match="no alpha for the output layer"):
        reader.read_items(without_output, "no-output-alpha")


@NEEDS_SPM
def test_alphas_file_without_alphas_is_refused(tmp_path: Path) -> None:
    folder = make.write_folder(tmp_path / "int8", SPEC, "intgemm8")
    renamed = folder.model.with_name("model.enzh.intgemm.alphas.bin")
    folder.model.rename(renamed)
    with pytest.raises(CheckpointError, match="holds no alphas"):
        reader.read_model(renamed)


@NEEDS_SPM
def test_untied_int8_output_table_is_refused(tmp_path: Path) -> None:
    """marian-conv stores an untied decoder_ff_logit_out_Wt as intgemm8, and bergamot then multiplies it with the
    wrong inner dimension (checked against bergamot: 0 of 25 sentences agree), so there is nothing to match."""
    folder = make.write_folder(tmp_path / "untied", replace(SPEC, tying="untied"), "intgemm8")
    with pytest.raises(CheckpointError, match="decoder_ff_logit_out_Wt: stored as intgemm8"):
        reader.read_model(folder.model)


def test_truncated_and_foreign_files_are_refused(tmp_path: Path, params: dict[str, np.ndarray]) -> None:
    blob = _items_bin(SPEC, params)
    (tmp_path / "model.enzh.bin").write_bytes(blob[: len(blob) // 2])
    with pytest.raises(CheckpointError, match="truncated"):
        reader.read_model(tmp_path / "model.enzh.bin")
    (tmp_path / "model.xxyy.bin.gz").write_bytes(b"not gzip")
    with pytest.raises(CheckpointError, match="gzip"):
        reader.read_model(tmp_path / "model.xxyy.bin.gz")
    (tmp_path / "model.xxyy.npz").write_bytes(gzip.compress(b"x"))
    with pytest.raises(CheckpointError, match="npz"):
        reader.read_model(tmp_path / "model.xxyy.npz")


@NEEDS_SPM
def test_model_folder_names_its_files(tmp_path: Path) -> None:
    shared = make.write_folder(tmp_path / "shared", replace(SPEC, vocab="shared"), "npz", shortlist=True)
    assert shared.shared_vocab and shared.src_vocab == shared.trg_vocab and shared.pair == "enzh"
    assert shared.shortlist is not None and shared.shortlist.name == "lex.16.24.enzh.s2t.bin"
    separate = make.write_folder(tmp_path / "separate", SPEC, "intgemm-alphas")
    assert not separate.shared_vocab and separate.src_vocab.name == "srcvocab.enzh.spm"
    assert separate.shortlist is None and separate.metadata is not None
    (tmp_path / "separate" / "model.enzh.npz").write_bytes(b"")
    with pytest.raises(CheckpointError, match="more than one model file"):
        reader.find_model_folder(tmp_path / "separate")
    (tmp_path / "separate" / "model.enzh.npz").unlink()
    (tmp_path / "separate" / "trgvocab.enzh.spm").unlink()
    with pytest.raises(CheckpointError, match="srcvocab"):
        reader.find_model_folder(tmp_path / "separate")


def test_model_yml_subset_reads_marian_output() -> None:
    text = (
        'dim-vocabs:\n  - 32000\n  - 32000\ninput-types:\n  []\ntransformer-preprocess: ""\n'
        "version: v1.12.14 2d067af 2024-02-16 11:44:13 -0500\ntied-embeddings: true\nempty:\n"
        "inline: [a, 'b c']  # comment\n"
    )
    assert model_yml.loads(text) == {
        "dim-vocabs": [32000, 32000],
        "input-types": [],
        "transformer-preprocess": "",
        "version": "v1.12.14 2d067af 2024-02-16 11:44:13 -0500",
        "tied-embeddings": True,
        "empty": None,
        "inline": ["a", "b c"],
    }
    config = make.config(SPEC)
    assert model_yml.loads(model_yml.dumps(config)) == config
    with pytest.raises(model_yml.YamlSubsetError):
        model_yml.loads("a:\n  b: 1\n")


def _npz(arrays: dict[str, np.ndarray], compressed: bool = False) -> bytes:
    import io

    out = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(out, **arrays)
    return out.getvalue()


@pytest.mark.parametrize("compressed", [False, True], ids=["stored", "deflated"])
def test_a_damaged_npz_member_is_a_checkpoint_error(tmp_path: Path, compressed: bool) -> None:
    """A flipped byte inside an array escaped as zipfile.BadZipFile (a bad CRC) or zlib.error: a traceback."""
    import io
    import zipfile

    rng = np.random.default_rng(0)
    blob = bytearray(_npz({"a": rng.random((64, 64), dtype=np.float32), "b": np.ones(8, np.float32)}, compressed))
    info = zipfile.ZipFile(io.BytesIO(blob)).getinfo("a.npy")
    blob[info.header_offset + 30 + len(info.filename) + len(info.extra) + info.compress_size // 2] ^= 0xFF
    (tmp_path / "model.enzh.npz").write_bytes(bytes(blob))
    with pytest.raises(CheckpointError, match=r"model\.enzh\.npz: not a valid \.npz file"):
        reader.read_model(tmp_path / "model.enzh.npz")


def test_an_npz_is_refused_by_its_headers_before_it_is_unpacked(monkeypatch) -> None:
    """A deflated .npz whose arrays unpack past MAX_FILE_BYTES (a zip bomb) or hold objects is refused from the
    member headers; np.load unpacked every array before."""
    monkeypatch.setattr(marian_io, "MAX_FILE_BYTES", 1 << 20)
    unpacked: list[str] = []
    real_load = np.load

    def load(*args, **kwargs):
        unpacked.append("np.load")
        return real_load(*args, **kwargs)

    monkeypatch.setattr(marian_io.np, "load", load)
    with pytest.raises(marian_io.ContainerError, match="unpack to over 1 MiB"):
        marian_io.npz_items(_npz({"w": np.zeros((1024, 1024), np.float32)}, compressed=True))
    with pytest.raises(marian_io.ContainerError, match="float64"):
        marian_io.npz_items(_npz({"w": np.zeros(4)}))
    assert unpacked == []
    items = marian_io.npz_items(_npz({"w": np.ones((2, 3), np.float32), "m": np.arange(3, dtype=np.int8)}))
    assert [(i.name, i.type, i.shape) for i in items] == [("w", FLOAT32, (2, 3)), ("m", INT8, (3,))]


def test_a_damaged_binary_header_is_a_container_error(params: dict[str, np.ndarray], tmp_path: Path) -> None:
    """A flipped byte in an item's name escaped as UnicodeDecodeError (a traceback from `qiao model build`)."""
    blob = _items_bin(SPEC, params)
    count = int.from_bytes(blob[8:16], "little")
    names_at = 16 + 32 * count
    bad_name = bytearray(blob)
    bad_name[names_at] = 0xFF
    (tmp_path / "model.enzh.bin").write_bytes(bytes(bad_name))
    with pytest.raises(CheckpointError, match=r"model\.enzh\.bin: malformed item name .*not UTF-8"):
        reader.read_model(tmp_path / "model.enzh.bin")
    huge = bytearray(blob)
    huge[16 + 16 : 16 + 24] = (2**63 + 5).to_bytes(8, "little")  # the first item's shape length
    with pytest.raises(marian_io.ContainerError, match="past the end of the file"):
        marian_io.bin_items(bytes(huge))
    name_lengths = [int.from_bytes(blob[16 + 32 * i : 24 + 32 * i], "little") for i in range(count)]
    negative = bytearray(blob)
    shapes_at = names_at + sum(name_lengths)
    negative[shapes_at : shapes_at + 4] = (-3).to_bytes(4, "little", signed=True)
    with pytest.raises(marian_io.ContainerError, match="malformed shape"):
        marian_io.bin_items(bytes(negative))
