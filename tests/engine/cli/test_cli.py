"""The `qiao` command line: tokenize contract, translate output, verify exit codes, and clear errors."""

from __future__ import annotations

import io
import json
import os
import shutil
import sys

import pytest

from engine.cli.main import build_parser, main


def run(monkeypatch, capsys, argv, stdin=""):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8"))
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_tokenize_round_trip(monkeypatch, capsys, bundle_dir):
    lines = ["Hello world.", "The word 你好 means hello.", "", ">>cmn_Hant<< Hi"]
    code, out, _ = run(
        monkeypatch,
        capsys,
        ["tokenize", "--model", str(bundle_dir)],
        "\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n",
    )
    assert code == 0
    ids = [json.loads(line) for line in out.splitlines()]
    assert len(ids) == 4 and all(row[-1] == 0 for row in ids)
    assert ids[2] == [0]  # the empty string is just </s>, like MarianTokenizer
    code, out, _ = run(
        monkeypatch,
        capsys,
        ["tokenize", "--model", str(bundle_dir), "--decode"],
        "\n".join(json.dumps(x) for x in ids) + "\n",
    )
    assert code == 0
    decoded = [json.loads(line) for line in out.splitlines()]
    assert decoded[0] == "Hello world."


def test_tokenize_rejects_non_json(monkeypatch, capsys, bundle_dir):
    code, _, err = run(monkeypatch, capsys, ["tokenize", "--model", str(bundle_dir)], "not json\n")
    assert code == 1 and "line 1: not JSON" in err


def test_translate_json_lines(monkeypatch, capsys, bundle_dir):
    code, out, _ = run(
        monkeypatch,
        capsys,
        ["translate", "--model", str(bundle_dir), "--json", "--beams", "1"],
        "Thank you very much.\nGood morning, everyone!\n",
    )
    assert code == 0
    records = [json.loads(line) for line in out.splitlines()]
    assert len(records) == 2
    for rec in records:
        assert rec["text"] and rec["tokens"] and rec["tokens"][0]
        assert rec["stats"]["precision"] == "int8" and rec["stats"]["beams"] == 1
        assert rec["stats"]["target_tokens"] == len(rec["tokens"][0])


def test_translate_argument_and_stream(monkeypatch, capsys, bundle_dir):
    code, plain, err = run(monkeypatch, capsys, ["translate", "--model", str(bundle_dir), "Thank you very much."])
    assert code == 0 and plain.strip() and "INT8" in err
    code, streamed, _ = run(
        monkeypatch, capsys, ["translate", "--model", str(bundle_dir), "--stream", "Thank you very much."]
    )
    assert code == 0 and streamed == plain


def test_verify_reports_problems(monkeypatch, capsys, bundle_dir, tmp_path):
    code, out, _ = run(monkeypatch, capsys, ["model", "verify", str(bundle_dir)])
    assert code == 0 and "OK" in out
    broken = tmp_path / "b"
    shutil.copytree(bundle_dir, broken)
    (broken / "int8" / "embedding.bin").write_bytes(b"x")
    code, _, err = run(monkeypatch, capsys, ["model", "verify", str(broken)])
    assert code == 1 and "int8/embedding.bin: size 1 bytes" in err
    code, _, _ = run(monkeypatch, capsys, ["model", "verify", str(broken), "--precision", "fp32"])
    assert code == 0


def test_missing_model_says_where_it_looked(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("QIAO_MODEL_DIR", str(tmp_path / "none"))
    code, _, err = run(monkeypatch, capsys, ["translate", "Hello"])
    assert code == 1
    assert "no model bundle" in err and str(tmp_path / "none") in err and "qiao model build" in err


def test_build_with_a_bad_checkpoint_is_a_clear_error(monkeypatch, capsys, tmp_path):
    pytest.importorskip("torch")
    (tmp_path / "ckpt").mkdir()
    (tmp_path / "ckpt" / "tokenizer_config.json").write_text("{}")
    code, _, err = run(
        monkeypatch,
        capsys,
        ["model", "build", "--from", str(tmp_path / "ckpt"), "--out", str(tmp_path / "out"), "--quiet"],
    )
    assert code == 1 and "not a complete Marian checkpoint" in err and "config.json" in err
    (tmp_path / "empty").mkdir()  # nothing at all: said as such, whichever kind of folder was meant
    argv = ["model", "build", "--from", str(tmp_path / "empty"), "--out", str(tmp_path / "out"), "--quiet"]
    code, _, err = run(monkeypatch, capsys, argv)
    assert code == 1 and "empty is empty" in err and "Marian checkpoint folder" in err and "config.json" not in err


def test_build_passes_the_int8_head_choice_and_refuses_others(monkeypatch, capsys, tmp_path):
    import engine.convert.pipeline as pipeline

    seen = {}

    def fake_build(source, out, **kwargs):
        seen.update(kwargs)
        raise SystemExit(0)  # stop before the size report: only the arguments are under test

    monkeypatch.setattr(pipeline, "build_bundle", fake_build)
    (tmp_path / "config.json").write_text("{}")  # a folder the Marian pipeline is handed (an empty one is refused)
    for extra, want in (([], "columns"), (["--int8-head", "blocks"], "blocks")):
        with pytest.raises(SystemExit):
            main(["model", "build", "--from", str(tmp_path), "--out", str(tmp_path / "o"), *extra])
        assert seen["int8_head"] == want
    with pytest.raises(SystemExit) as exc:
        main(["model", "build", "--from", str(tmp_path), "--out", str(tmp_path / "o"), "--int8-head", "nibbles"])
    assert exc.value.code == 2 and "invalid choice: 'nibbles'" in capsys.readouterr().err


def test_bench_hands_its_options_to_the_bench_script(capfd):
    # `qiao bench` runs bench/run.py in a child process; its own options pass through untouched.
    assert main(["bench", "--help"]) == 0
    out = capfd.readouterr().out
    assert "usage: run.py" in out and "--wait-idle" in out


def test_unknown_options_of_other_commands_are_still_errors(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["translate", "hello", "--bogus"])
    assert exc.value.code == 2
    assert "unrecognized arguments: --bogus" in capsys.readouterr().err


# -- arguments --------------------------------------------------------------------------------------------------


@pytest.fixture
def echo(monkeypatch):
    from tests.engine.cli_fakes import EchoTranslator, install

    return install(monkeypatch, EchoTranslator)


def test_top_level_model_serves_every_command(monkeypatch, capsys, bundle_dir, tmp_path):
    monkeypatch.setenv("QIAO_MODEL_DIR", str(tmp_path / "none"))  # would be the error if --model were ignored
    code, out, err = run(monkeypatch, capsys, ["--model", str(bundle_dir), "translate", "The weather is nice today."])
    assert code == 0 and out.strip(), err
    code, out, err = run(monkeypatch, capsys, ["--model", str(bundle_dir), "tokenize"], '"Hello world."\n')
    assert code == 0 and json.loads(out)[-1] == 0, err
    # The command's own --model wins over the top-level one.
    argv = ["--model", str(tmp_path / "none"), "translate", "--model", str(bundle_dir), "Thank you very much."]
    code, out, err = run(monkeypatch, capsys, argv)
    assert code == 0 and out.strip(), err


@pytest.mark.parametrize("value", ["-3", "-1", "999", "65", "two", "1.5"])
def test_thread_counts_out_of_range_are_refused(capsys, value):
    if value == "65":
        value = str((os.cpu_count() or 64) + 1)
    with pytest.raises(SystemExit) as exc:
        main(["translate", "--threads", value, "Hello"])
    assert exc.value.code == 2
    assert "argument --threads" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "-1", "9", "x"])
def test_beam_counts_out_of_range_are_refused(capsys, value):
    with pytest.raises(SystemExit) as exc:
        main(["translate", "--beams", value, "Hello"])
    assert exc.value.code == 2
    assert "argument --beams" in capsys.readouterr().err


def test_request_options_reach_the_engine(monkeypatch, capsys, bundle_dir, echo):
    from engine.options import TranslationOptions

    argv = ["translate", "--model", str(bundle_dir), "--threads", "0", "--beams", "2", "--script", "hant"]
    code, out, _ = run(monkeypatch, capsys, [*argv, "--no-join-lines", "--raw-punctuation", "Hi"])
    assert code == 0 and out == "Hi\n"
    engine = echo.instances[-1]
    assert engine.threads is None  # 0 = automatic
    assert engine.options == [TranslationOptions(2, "hant", join_wrapped_lines=False, normalize_punctuation=False)]
    code, _, _ = run(monkeypatch, capsys, ["translate", "--model", str(bundle_dir), "--threads", "1", "--json"], "a\n")
    assert code == 0 and echo.instances[-1].threads == 1
    assert echo.instances[-1].options == [TranslationOptions()]


def test_frozen_app_does_not_list_bench(monkeypatch, capsys):
    assert "bench" in build_parser().format_help()  # from source it is listed …
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert "bench" not in build_parser().format_help()  # … the frozen app has none
    assert main(["bench"]) == 1
    assert "the benchmark runs from a source checkout" in capsys.readouterr().err


# -- reading limits ---------------------------------------------------------------------------------------------


def test_endless_file_is_refused_at_the_limit(monkeypatch, capsys, bundle_dir, echo):
    from engine.pipeline.requests import MAX_CHARS

    if not os.path.exists("/dev/zero"):
        pytest.skip("needs /dev/zero")
    code, out, err = run(monkeypatch, capsys, ["translate", "--model", str(bundle_dir), "--file", "/dev/zero"])
    assert code == 1 and out == ""
    assert f"/dev/zero is over {MAX_CHARS * 4:,} bytes" in err and "Split it" in err


def test_input_at_the_limit_still_reaches_the_engine(monkeypatch, capsys, bundle_dir, echo, tmp_path):
    from engine.pipeline.requests import MAX_CHARS

    big = tmp_path / "big.txt"
    big.write_bytes("字".encode() * (MAX_CHARS * 4 // 3))  # 3 bytes each: just under the byte limit
    code, out, _ = run(monkeypatch, capsys, ["translate", "--model", str(bundle_dir), "--file", str(big)])
    assert code == 0 and len(out) == MAX_CHARS * 4 // 3 + 1
    big.write_bytes(b"a" * (MAX_CHARS * 4 + 1))
    code, out, err = run(monkeypatch, capsys, ["translate", "--model", str(bundle_dir), "--file", str(big)])
    assert code == 1 and "over 4,000,000 bytes" in err


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_a_text_ending_in_a_line_end_gets_no_second_one(monkeypatch, capsys, bundle_dir, tmp_path, stream):
    """`qiao translate --file notes.txt > out.txt` wrote the translation, which keeps the file's final "\\n", then a
    second "\\n": a blank last line, one more each round trip."""
    notes = tmp_path / "notes.txt"
    notes.write_text("Good morning.\nThank you very much.\n", encoding="utf-8")
    extra = ["--stream"] if stream else []
    code, out, _ = run(monkeypatch, capsys, ["translate", "--model", str(bundle_dir), "--file", str(notes), *extra])
    assert code == 0 and out.endswith("\n") and not out.endswith("\n\n") and len(out.splitlines()) == 2
    stdin = "Good morning.\n"
    code, out, _ = run(monkeypatch, capsys, ["translate", "--model", str(bundle_dir), *extra], stdin=stdin)
    assert code == 0 and out.count("\n") == 1 and out.endswith("\n") and out.strip()
    code, out, _ = run(monkeypatch, capsys, ["translate", "--model", str(bundle_dir), *extra, "Good morning."])
    assert code == 0 and out.count("\n") == 1 and out.endswith("\n")  # a text without one still ends its line


def test_a_damaged_bundle_says_how_to_check_repair_or_avoid_it(monkeypatch, capsys, bundle_dir, tmp_path):
    broken = tmp_path / "b"
    shutil.copytree(bundle_dir, broken)
    (broken / "int8" / "embedding.bin").write_bytes(b"x")
    code, out, err = run(monkeypatch, capsys, ["translate", "--model", str(broken), "Thank you very much."])
    assert code == 1 and out == "" and "failed verification" in err and "int8/embedding.bin" in err
    assert "qiao model verify b" in err and "qiao model import PATH --force" in err and "qiao model list" in err
    code, _, err = run(monkeypatch, capsys, ["model", "verify", str(broken)])
    assert code == 1 and "qiao model import PATH --force" in err and "qiao model verify" not in err
