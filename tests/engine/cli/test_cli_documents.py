"""`qiao translate-file`: one line per file, results beside the inputs, exit statuses, Ctrl+C and resuming; end to
end with the tiny en→zh model. The documents are the test-only "lines" format (tests/engine/documents/fakes.py)."""

from __future__ import annotations

import io
import os
import re
import signal
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import ClassVar

import pytest

from engine.cli.main import main
from engine.languages import default_pair
from tests.engine.documents import fakes

SENTENCES = ["Thank you very much.", "See you tomorrow.", "I like green tea."]


@pytest.fixture(autouse=True)
def lines_format(monkeypatch):
    fakes.install(monkeypatch)


def run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def doc(path, lines=SENTENCES):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


class FakeEngine(fakes.SpyTranslator):
    """The Translator the command builds (its signature), translating like SpyTranslator."""

    instances: ClassVar[list] = []
    on_call = None

    def __init__(self, bundle_dir, config=None, *, precision=None, threads=None, verify=True) -> None:
        super().__init__(on_call=type(self).on_call)
        self.config = config
        self.precision = config.precision
        self.manifest = SimpleNamespace(
            pair=default_pair("en", "zh", (">>cmn_Hans<<", ">>cmn_Hant<<")), model_id="fake/model"
        )
        FakeEngine.instances.append(self)


@pytest.fixture
def fake_engine(monkeypatch):
    FakeEngine.instances = []
    monkeypatch.setattr(FakeEngine, "on_call", None)
    monkeypatch.setattr("engine.pipeline.translator.Translator", FakeEngine)
    return FakeEngine


def test_end_to_end_with_the_tiny_model(capsys, tmp_path, bundle_dir):
    from engine.pipeline.translator import Translator

    source = doc(tmp_path / "talk.lines")
    code, out, err = run(capsys, ["translate-file", "--model", str(bundle_dir), "--beams", "1", str(source)])
    assert code == 0, err
    result = tmp_path / "talk.zh.lines"
    assert re.fullmatch(rf"{re.escape(str(source))} -> {re.escape(str(result))} \(3 units, \d+\.\d s\)\n", out)
    assert err == ""  # no terminal: no progress bar
    translator = Translator(bundle_dir)
    expected = [translator.translate(s, beams=1).text for s in SENTENCES]
    assert result.read_text(encoding="utf-8").splitlines() == expected
    assert "非常感谢" in expected[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["talk.lines", "talk.zh.lines"]


def test_a_sentence_over_several_runs_is_translated_as_one(capsys, tmp_path, bundle_dir):
    from engine.pipeline.translator import Translator

    source = doc(tmp_path / "styled.lines", ["Please open |the window|.", "I like {green} tea."])
    code, _, err = run(capsys, ["translate-file", "--model", str(bundle_dir), str(source)])
    assert code == 0, err
    first, second = (tmp_path / "styled.zh.lines").read_text(encoding="utf-8").splitlines()
    translator = Translator(bundle_dir)
    assert first.count("|") == 2  # three runs still
    assert first.replace("|", "") == translator.translate("Please open the window.").text
    assert second == translator.translate("I like {green} tea.").text  # one run: braces only mark a whole run


def test_folders_out_dir_and_name(capsys, tmp_path, bundle_dir, fake_engine):
    doc(tmp_path / "in" / "a.lines")
    doc(tmp_path / "in" / "sub" / "b.lines")
    out_dir = tmp_path / "out"
    argv = ["translate-file", "--model", str(bundle_dir), str(tmp_path / "in"), "--out", str(out_dir)]
    code, out, _ = run(capsys, [*argv, "--name", "{stem}-{lang}{suffix}"])
    assert code == 0
    assert [line.split(" -> ")[1].split(" (")[0] for line in out.splitlines()] == [
        str(out_dir / "a-zh.lines"),
        str(out_dir / "b-zh.lines"),
    ]
    assert (out_dir / "b-zh.lines").read_text(encoding="utf-8") == "".join(f"<{s}>\n" for s in SENTENCES)


def test_options_reach_the_engine(capsys, tmp_path, bundle_dir, fake_engine):
    from engine.options import TranslationOptions

    source = doc(tmp_path / "a.lines")
    argv = ["translate-file", "--model", str(bundle_dir), str(source), "--precision", "fp32", "--threads", "1"]
    code, _, _ = run(capsys, [*argv, "--beams", "2", "--variant", "hant", "--no-join-lines"])
    assert code == 0
    engine = fake_engine.instances[-1]
    assert engine.config.precision == "fp32" and engine.config.threads == 1
    assert engine.calls == [SENTENCES]
    assert engine.options == [TranslationOptions(beams=2, variant="hant", join_wrapped_lines=False)]


def test_one_failed_file_makes_the_exit_status_1(capsys, tmp_path, bundle_dir, fake_engine):
    first = doc(tmp_path / "a.lines")
    second = doc(tmp_path / "b.lines")
    (tmp_path / "a.zh.lines").write_text("mine\n", encoding="utf-8")
    code, out, _ = run(capsys, ["translate-file", "--model", str(bundle_dir), str(first), str(second)])
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith(f"{first} -> failed: ") and "exists already" in lines[0]
    assert lines[1].startswith(f"{second} -> {tmp_path / 'b.zh.lines'} (3 units")
    assert (tmp_path / "a.zh.lines").read_text(encoding="utf-8") == "mine\n"
    code, out, _ = run(capsys, ["translate-file", "--model", str(bundle_dir), str(first), "--overwrite"])
    assert code == 0 and (tmp_path / "a.zh.lines").read_text(encoding="utf-8") != "mine\n"


def test_units_left_untranslated_are_reported(capsys, tmp_path, bundle_dir, fake_engine):
    source = doc(tmp_path / "a.lines", ["Hello.", "REFUSE me"])
    code, out, err = run(capsys, ["translate-file", "--model", str(bundle_dir), str(source)])
    assert code == 1
    assert out.startswith(f"{source} -> {tmp_path / 'a.zh.partial.lines'} (INCOMPLETE: 2 units, 1 left untranslated,")
    assert f"qiao: {source}: unit 2" in err and "left untranslated" in err
    assert "written as a.zh.partial.lines" in err
    assert not (tmp_path / "a.zh.lines").exists()  # nothing that looks finished


def test_a_file_nothing_of_which_translates_leaves_no_output(capsys, tmp_path, bundle_dir, fake_engine):
    """Issue 27: a 5 MB one-paragraph .txt (over the engine's limit) exited 1 yet left x.zh.txt, a copy of the
    English."""
    source = doc(tmp_path / "x.lines", ["REFUSE " + "word " * 1000])
    code, out, _ = run(capsys, ["translate-file", "--model", str(bundle_dir), str(source)])
    assert code == 1 and "failed: nothing in x.lines could be translated" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.lines"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
@pytest.mark.timeout(30)
def test_devices_and_fifos_are_refused_without_reading(capsys, tmp_path, bundle_dir, fake_engine):
    """A FIFO document hung in the language sample before the job could refuse it; /dev/zero was read without end."""
    fifo_doc = tmp_path / "b.lines"
    os.mkfifo(fifo_doc)
    code, out, _ = run(capsys, ["translate-file", "--model", str(bundle_dir), str(fifo_doc)])
    assert code == 1 and f"{fifo_doc} -> failed: {fifo_doc}: not a regular file" in out
    if Path("/dev/zero").exists():
        code, out, _ = run(capsys, ["translate-file", "--model", str(bundle_dir), "--format", "lines", "/dev/zero"])
        assert code == 1 and "/dev/zero -> failed: /dev/zero: not a regular file" in out


@pytest.mark.parametrize("template", ["{stem:>9999999999}", "{stem:>99999}{suffix}", "{stem!s}", "{suffix.upper}"])
def test_result_name_templates_with_formats_are_refused_clearly(capsys, tmp_path, bundle_dir, fake_engine, template):
    """Issue 27: `--name '{stem:>9999999999}'` was killed by the kernel at 24 GB; smaller widths printed a
    traceback."""
    source = doc(tmp_path / "a.lines")
    code, out, err = run(capsys, ["translate-file", "--model", str(bundle_dir), str(source), "--name", template])
    assert code == 1 and out == "" and "not a valid template" in err and "Traceback" not in err
    assert fake_engine.instances == []


def test_clear_errors_for_paths_and_templates(capsys, tmp_path, bundle_dir, fake_engine):
    code, out, err = run(capsys, ["translate-file", "--model", str(tmp_path / "no-model"), str(tmp_path / "nope")])
    assert code == 1 and out == "" and "nope: no such file or folder" in err  # said before looking for a model
    assert fake_engine.instances == []
    code, _, err = run(capsys, ["translate-file", "--model", str(bundle_dir), str(tmp_path)])
    assert code == 1 and "no documents to translate" in err
    source = doc(tmp_path / "a.lines")
    code, _, err = run(capsys, ["translate-file", "--model", str(bundle_dir), str(source), "--name", "{nope}"])
    assert code == 1 and "not a valid template" in err
    assert len(fake_engine.instances) == 1  # the empty folder's run loaded it; the bad template's did not
    with pytest.raises(SystemExit) as exc:
        main(["translate-file", "--from", "en", str(source)])
    assert exc.value.code == 2 and "--from and --to go together" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["translate-file", "--format", "pdf", str(source)])
    assert "invalid choice" in capsys.readouterr().err


@pytest.mark.skipif(not hasattr(signal, "SIGINT") or os.name == "nt", reason="POSIX signals")
def test_ctrl_c_cancels_cleanly_and_the_same_command_continues(capsys, tmp_path, bundle_dir, fake_engine, monkeypatch):
    from engine.documents import job as job_module

    monkeypatch.setattr(job_module, "STEP_UNITS", 2)
    source = doc(tmp_path / "a.lines", [f"Sentence {i}." for i in range(7)])
    fake_engine.on_call = staticmethod(lambda n: os.kill(os.getpid(), signal.SIGINT) if n == 2 else None)
    argv = ["translate-file", "--model", str(bundle_dir), str(source)]
    code, out, err = run(capsys, argv)
    assert code == 130
    assert out == f"{source} -> cancelled (2 of 7 units done)\n"
    assert "run the same command again to continue" in err
    assert not (tmp_path / "a.zh.lines").exists()
    assert (tmp_path / ".a.zh.lines.qiao-partial").exists()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handler is put back
    fake_engine.on_call = None
    code, out, _ = run(capsys, argv)
    assert code == 0 and "(7 units, 2 from the earlier run," in out
    assert fake_engine.instances[-1].texts == [f"Sentence {i}." for i in range(2, 7)]
    assert (tmp_path / "a.zh.lines").read_text(encoding="utf-8") == "".join(f"<Sentence {i}.>\n" for i in range(7))


def test_no_resume_starts_over(capsys, tmp_path, bundle_dir, fake_engine, monkeypatch):
    from engine.documents import job as job_module

    monkeypatch.setattr(job_module, "STEP_UNITS", 2)
    source = doc(tmp_path / "a.lines", [f"Sentence {i}." for i in range(4)])
    fake_engine.on_call = staticmethod(lambda n: os.kill(os.getpid(), signal.SIGINT) if n == 2 else None)
    assert main(["translate-file", "--model", str(bundle_dir), str(source)]) == 130
    fake_engine.on_call = None
    capsys.readouterr()
    code, _, err = run(capsys, ["translate-file", "--model", str(bundle_dir), str(source), "--no-resume"])
    assert code == 0 and "resume is off" in err
    assert len(fake_engine.instances[-1].texts) == 4


def test_progress_bar_on_a_terminal(capsys, tmp_path, bundle_dir, fake_engine, monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stderr = Terminal()
    monkeypatch.setattr(sys, "stderr", stderr)
    source = doc(tmp_path / "a.lines")
    assert main(["translate-file", "--model", str(bundle_dir), str(source)]) == 0
    assert "a.lines" in stderr.getvalue() and "3/3 units" in stderr.getvalue()
