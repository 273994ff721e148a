"""The Marian allow-list (engine.families.marian.converter.checks): other families and computations Qiao's graphs do not
implement are refused in one line before any weights are loaded; licences come from the checkpoint's own card."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import pytest

from engine.errors import CheckpointError

pytestmark = pytest.mark.torch
pytest.importorskip("transformers")


def _config_dir(path: Path, config) -> Path:
    """A folder holding only config.json (and no weights, no tokenizer): the refusal must come before both."""
    path.mkdir(parents=True)
    config.save_pretrained(path)
    return path


def _nllb(path: Path) -> Path:
    from transformers import M2M100Config

    cfg = M2M100Config(vocab_size=128, d_model=16, encoder_layers=1, decoder_layers=1, encoder_ffn_dim=32)
    cfg.architectures = ["M2M100ForConditionalGeneration"]
    return _config_dir(path, cfg)


def _mbart50(path: Path) -> Path:
    from transformers import MBartConfig

    cfg = MBartConfig(vocab_size=128, d_model=16, encoder_layers=1, decoder_layers=1, encoder_ffn_dim=32)
    cfg.architectures = ["MBartForConditionalGeneration"]
    return _config_dir(path, cfg)


def _qwen2(path: Path) -> Path:
    from transformers import Qwen2Config

    cfg = Qwen2Config(vocab_size=128, hidden_size=16, intermediate_size=32, num_hidden_layers=1)
    cfg.num_attention_heads = 2
    cfg.architectures = ["Qwen2ForCausalLM"]
    return _config_dir(path, cfg)


@pytest.mark.parametrize(
    ("make", "family"),
    [(_nllb, "'m2m_100'"), (_mbart50, "'mbart'"), (_qwen2, "'qwen2'")],
)
def test_other_families_are_refused_from_their_config_alone(tmp_path, make, family):
    """Before: NLLB/mBART/Qwen2 failed on a missing source.spm, and past that loaded as MarianMTModel with random
    weights. Now config.json alone says what it is: no weights or tokenizer files exist here at all."""
    from engine.families.marian.converter.checkpoint import resolve_checkpoint

    folder = make(tmp_path / "ckpt")
    with pytest.raises(CheckpointError) as info:
        resolve_checkpoint(str(folder), source_lang="en", target_lang="zh")
    message = str(info.value)
    assert f"is a {family} checkpoint" in message and "not Marian" in message and "\n" not in message


def _safetensors_header(path: Path, names: list[str]) -> None:
    """A model.safetensors whose header names `names` (one float each): enough for a names-only check."""
    header = {n: {"dtype": "F32", "shape": [1], "data_offsets": [4 * i, 4 * i + 4]} for i, n in enumerate(names)}
    blob = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(blob)) + blob + b"\0" * (4 * len(names)))


def _marian_copy(tmp_path: Path, checkpoint_dir: Path, name: str = "ckpt") -> Path:
    ckpt = tmp_path / name
    shutil.copytree(checkpoint_dir, ckpt)
    return ckpt


def _edit_config(ckpt: Path, **changes) -> None:
    raw = json.loads((ckpt / "config.json").read_text(encoding="utf-8"))
    raw.update(changes)
    (ckpt / "config.json").write_text(json.dumps(raw), encoding="utf-8")


def test_mbart_weights_under_a_marian_config_are_refused_by_their_names(tmp_path, checkpoint_dir):
    """mBART relabelled "marian" built a wrong graph without error (its embedding LayerNorm and final LayerNorms
    were never read): the weights' names give it away, read from the header without loading a tensor."""
    from engine.families.marian.converter.checkpoint import resolve_checkpoint
    from engine.families.marian.converter.checks import expected_names

    ckpt = _marian_copy(tmp_path, checkpoint_dir)
    raw = json.loads((ckpt / "config.json").read_text(encoding="utf-8"))
    required, _ = expected_names(raw)
    mbart_only = ["model.encoder.layernorm_embedding.weight", "model.encoder.layer_norm.weight"]
    _safetensors_header(ckpt / "model.safetensors", [*sorted(required), "model.shared.weight", *mbart_only])
    with pytest.raises(CheckpointError, match=r"parameters Marian does not have \(model\.encoder\.layer_norm"):
        resolve_checkpoint(str(ckpt))
    _safetensors_header(ckpt / "model.safetensors", ["model.shared.weight"])  # every layer missing
    with pytest.raises(CheckpointError, match=r"lack Marian parameters \(model\.decoder\.layers\.N\.encoder_attn"):
        resolve_checkpoint(str(ckpt))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"normalize_before": True},
            r"normalize_before=true; Qiao's Marian graphs implement only normalize_before=false",
        ),
        ({"add_final_layer_norm": True}, r"add_final_layer_norm=true"),
        ({"layernorm_embedding": True}, r"layernorm_embedding=true"),
        ({"static_position_embeddings": False}, r"static_position_embeddings=false"),
        ({"activation_function": "gelu_new"}, r"activation 'gelu_new' is not supported \(Qiao builds swish"),
        ({"scale_embedding": "sqrt"}, r"scale_embedding must be true or false"),
        ({"rope_theta": 10000.0}, r"config\.json sets rope_theta, which Marian does not have"),
        ({"model_type": "bart", "architectures": ["BartForConditionalGeneration"]}, r"is a 'bart' checkpoint"),
    ],
)
def test_marian_configs_outside_what_the_graphs_compute_are_refused(tmp_path, checkpoint_dir, changes, message):
    from engine.families.marian.converter.checkpoint import resolve_checkpoint

    ckpt = _marian_copy(tmp_path, checkpoint_dir)
    _edit_config(ckpt, **changes)
    with pytest.raises(CheckpointError, match=message):
        resolve_checkpoint(str(ckpt))


def test_the_fixture_checkpoints_pass(checkpoint_dir, zh_en_checkpoint_dir):
    from engine.families.marian.converter.checks import check_checkpoint

    for folder in (checkpoint_dir, zh_en_checkpoint_dir):
        facts = check_checkpoint(folder)
        assert (facts.activation, facts.separate_vocabularies, facts.tied_head) == ("swish", False, True)


def test_qiaos_own_notes_in_a_config_are_accepted(checkpoint_dir):
    """bench/full_model.py records its random initialisation as `qiao_random_init`: a note, not computation (the
    bench's and the slow tier's full-size checkpoints carry it)."""
    import json

    from engine.families.marian.converter.checks import check_config

    raw = json.loads((checkpoint_dir / "config.json").read_text(encoding="utf-8"))
    check_config({**raw, "qiao_random_init": {"seed": 0}}, "bench")
    with pytest.raises(CheckpointError, match="random_init"):
        check_config({**raw, "random_init": {"seed": 0}}, "bench")  # not ours: unknown, refused


def test_the_cli_says_one_line_and_no_traceback(tmp_path, capsys):
    from engine.cli import main as cli

    folder = _mbart50(tmp_path / "mbart-large-50")
    code = cli.main(["model", "build", "--from", str(folder), "--out", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 1
    assert "is a 'mbart' checkpoint (MBartForConditionalGeneration), not Marian" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_a_hub_id_of_another_family_is_refused_before_its_weights_download(monkeypatch, tmp_path):
    from engine.families.marian.converter import checkpoint

    config_only = _qwen2(tmp_path / "snapshot")
    asked: list[list[str]] = []

    def fake_download(repo_id, allow_patterns):
        asked.append(list(allow_patterns))
        return str(config_only)

    monkeypatch.setattr("huggingface_hub.snapshot_download", fake_download)
    with pytest.raises(CheckpointError, match="is a 'qwen2' checkpoint"):
        checkpoint.resolve_checkpoint("Qwen/Qwen2-0.5B", source_lang="en", target_lang="zh")
    assert asked == [["config.json"]]  # never the weights


# -- licence and attribution ---------------------------------------------------------------------------------------


def test_the_licence_comes_from_the_card_and_only_opus_mt_ids_credit_opus(tmp_path, checkpoint_dir):
    """Before: every build said 'by Helsinki-NLP … CC-BY-4.0', whoever made the model."""
    from engine.families.marian.converter.checkpoint import UNKNOWN_LICENSE, resolve_checkpoint

    plain = resolve_checkpoint(str(checkpoint_dir), model_id="someone/tiny-marian")  # its card has no front matter
    assert plain.license == UNKNOWN_LICENSE == "unknown licence: check the model card"
    assert "Helsinki" not in plain.attribution and "CC-BY" not in plain.attribution
    assert plain.attribution.startswith("Translation model: someone/tiny-marian, licence unknown: check the model card")

    carded = _marian_copy(tmp_path, checkpoint_dir)
    card = "---\nlanguage:\n- en\n- zh\ntags:\n- translation\nlicense: apache-2.0\n---\n# A model\nlicense: mit\n"
    (carded / "README.md").write_text(card, encoding="utf-8")
    own = resolve_checkpoint(str(carded), model_id="someone/tiny-marian")
    assert own.license == "apache-2.0" and "licensed under apache-2.0" in own.attribution

    opus = resolve_checkpoint(str(checkpoint_dir), model_id="Helsinki-NLP/opus-mt-en-zh")
    assert opus.license == "CC-BY-4.0"
    assert opus.attribution.startswith("Translation model: opus-mt-en-zh by Helsinki-NLP")
    tc_big = resolve_checkpoint(str(carded), model_id="Helsinki-NLP/opus-mt-tc-big-en-zh")
    assert tc_big.license == "apache-2.0" and "by Helsinki-NLP" in tc_big.attribution  # its card's licence wins


def test_card_metadata_reads_front_matter_only(tmp_path):
    from engine.families.marian.converter.checkpoint import _card_license, card_metadata

    (tmp_path / "README.md").write_text("# Title\nlicense: mit\n", encoding="utf-8")
    assert card_metadata(tmp_path) == {} and _card_license(tmp_path) is None  # prose, not metadata
    (tmp_path / "README.md").write_text("---\nlicense: other\nlicense_name: 'my-terms'\n---\n", encoding="utf-8")
    assert _card_license(tmp_path) == "my-terms"
    (tmp_path / "README.md").write_text("---\nlicense: cc-by-4.0\n", encoding="utf-8")  # never closed
    assert _card_license(tmp_path) is None
