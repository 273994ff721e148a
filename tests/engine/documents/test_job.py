"""The document job: bounded steps, interleaving, atomic writes, result names, resume (after a cancel and after a
kill -9), unit errors and the estimate. Formats are the test-only "lines" format (tests/engine/documents/fakes.py):
the job knows nothing of any format, so what holds here holds for every real one."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from engine.documents import job as job_module
from engine.documents import progress_file
from engine.documents.job import DocumentJob, DocumentOptions, DocumentResult
from engine.documents.model import DocumentError
from engine.options import TranslationOptions
from tests.engine.documents import fakes
from tests.engine.documents.fakes import SpyTranslator, translated

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def lines_format(monkeypatch):
    fakes.install(monkeypatch)


def write_doc(path: Path, count: int, prefix: str = "Sentence") -> Path:
    path.write_text("".join(f"{prefix} number {i}.\n" for i in range(count)), encoding="utf-8")
    return path


def make_job(source: Path, **options) -> DocumentJob:
    return DocumentJob(source, DocumentOptions(**options), TranslationOptions(), target_lang="zh", model_key="m1")


def expected_lines(source: Path) -> str:
    return "".join(translated(line) + "\n" for line in source.read_text(encoding="utf-8").splitlines())


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_translates_every_unit_and_writes_the_result_beside_the_input(tmp_path):
    source = write_doc(tmp_path / "report.lines", 5)
    job = make_job(source)
    assert job.output == tmp_path / "report.zh.lines"
    assert job.result is None
    result = job.run(SpyTranslator())
    assert result == DocumentResult(
        source=source, output=job.output, format="lines", units=5, translated=5, resumed=0, seconds=result.seconds
    )
    assert job.output.read_text(encoding="utf-8") == expected_lines(source)
    assert leftovers(tmp_path) == []  # no progress file, no temporary file


def test_only_text_changes_fixed_runs_and_untranslatable_units_stay(tmp_path):
    source = tmp_path / "d.lines"
    source.write_text("Hello |world|{code}\n\n1234\r\nBye\n", encoding="utf-8")
    spy = SpyTranslator()
    result = make_job(source).run(spy)
    assert result.units == 2  # the blank line and the number have nothing to translate
    # The align unit is translated whole and its translatable runs alone, in the same call; fixed runs never alone.
    assert spy.calls == [["Hello world{code}", "Hello ", "world", "Bye"]]
    lines = (tmp_path / "d.zh.lines").read_bytes().decode("utf-8").split("\n")
    assert lines[1:] == ["", "1234\r", "<Bye>", ""]
    first = lines[0].split("|")
    assert len(first) == 3 and first[2] == "{code}"  # the fixed run verbatim, in its place
    # Every translated character kept: the shares are the translation less the fixed run's copy.
    assert "".join(first[:2]) == translated("Hello world{code}").replace("{code}", "", 1)


def test_steps_are_bounded_by_units(tmp_path, monkeypatch):
    source = write_doc(tmp_path / "long.lines", 150)
    spy = SpyTranslator()
    progress = list(make_job(source).steps(spy))
    assert [len(call) for call in spy.calls] == [64, 64, 22]
    assert len(progress) == 4  # reading, then one per step
    assert [p.units_done for p in progress] == [0, 64, 128, 150]
    assert all(p.units_total == 150 for p in progress)


def test_steps_are_bounded_by_sentences(tmp_path, monkeypatch):
    monkeypatch.setattr(job_module, "STEP_SENTENCES", 10)
    source = tmp_path / "s.lines"
    source.write_text("One. Two. Three.\n" * 12 + "Ab. Bc. Cd. De. Ef. Fg. Gh. Hi. Ij. Jk. Kl. Lm.\n", encoding="utf-8")
    spy = SpyTranslator()
    make_job(source).run(spy)
    sentences = [sum(t.count(".") for t in call) for call in spy.calls]
    assert sentences[:-1] == [9, 9, 9, 9]  # three units of three sentences each fit under 10
    assert sentences[-1] == 12 and len(spy.calls[-1]) == 1  # a unit over the bound goes alone, whole
    assert sum(len(c) for c in spy.calls) == 13


def test_the_translator_is_not_held_between_steps(tmp_path, monkeypatch, bundle_dir):
    """With the real engine: between two steps the same thread translates something else (the window's typing),
    which Translator refuses while one of its generators holds the model."""
    from engine.pipeline.translator import Translator

    monkeypatch.setattr(job_module, "STEP_UNITS", 2)
    sentences = ["Thank you very much.", "See you tomorrow.", "I like green tea.", "Please open the window."]
    source = tmp_path / "talk.lines"
    source.write_text("".join(s + "\n" for s in sentences), encoding="utf-8")
    translator = Translator(bundle_dir)
    between = []
    job = make_job(source)
    for _ in job.steps(translator):
        between.append(translator.translate("Good morning, everyone!").text)
    assert len(between) == 3 and len(set(between)) == 1 and between[0]
    expected = [translator.translate(s).text for s in sentences]
    assert job.output.read_text(encoding="utf-8").splitlines() == expected
    assert "非常感谢" in expected[0]


def test_each_step_is_consumed_before_it_returns(tmp_path, monkeypatch):
    monkeypatch.setattr(job_module, "STEP_UNITS", 3)
    spy = SpyTranslator()
    for _ in make_job(write_doc(tmp_path / "x.lines", 10)).steps(spy):
        assert not spy.holding


def test_a_failed_render_writes_nothing(tmp_path):
    source = tmp_path / "bad.lines"
    source.write_text("Hello.\nFAILRENDER\n", encoding="utf-8")
    job = make_job(source)
    result = job.run(SpyTranslator())
    assert result.output is None and "cannot render" in result.error
    assert not job.output.exists()
    assert leftovers(tmp_path) == [job.progress_path.name]  # the translation work is kept for a re-run


def test_a_failed_write_leaves_no_output_and_no_temporary_file(tmp_path, monkeypatch):
    source = write_doc(tmp_path / "a.lines", 3)

    def full_disk(src, dst):
        raise OSError(28, "No space left on device", str(dst))

    monkeypatch.setattr(job_module.os, "replace", full_disk)
    job = make_job(source)
    result = job.run(SpyTranslator())
    assert result.output is None and "No space left on device" in result.error
    assert not job.output.exists()
    assert leftovers(tmp_path) == [job.progress_path.name]


@pytest.mark.skipif(os.name == "nt", reason="POSIX file modes")
def test_the_result_has_the_mode_the_umask_gives_an_ordinary_file(tmp_path):
    """The temporary file is private (0600) while it is written; the result a user opens, shares or mails is not."""
    previous = os.umask(0o027)
    try:
        result = make_job(write_doc(tmp_path / "a.lines", 2)).run(SpyTranslator())
    finally:
        os.umask(previous)
    assert result.output is not None and (result.output.stat().st_mode & 0o777) == 0o640


def test_never_over_the_input(tmp_path):
    source = write_doc(tmp_path / "a.lines", 2)
    before = source.read_bytes()
    for options in ({"name_template": "{stem}{suffix}"}, {"name_template": "{stem}{suffix}", "overwrite": True}):
        result = make_job(source, **options).run(SpyTranslator())
        assert result.output is None and "replace the input" in result.error
    link = tmp_path / "a.zh.lines"
    os.link(source, link)  # the result's name is a hard link to the input: still the input
    result = make_job(source, overwrite=True).run(SpyTranslator())
    assert "replace the input" in result.error
    assert source.read_bytes() == before


def test_an_existing_result_is_replaced_only_with_overwrite(tmp_path):
    source = write_doc(tmp_path / "a.lines", 2)
    (tmp_path / "a.zh.lines").write_text("mine\n", encoding="utf-8")
    spy = SpyTranslator()
    result = make_job(source).run(spy)
    assert "exists already" in result.error and result.output is None
    assert spy.calls == []  # refused before any work
    assert (tmp_path / "a.zh.lines").read_text(encoding="utf-8") == "mine\n"
    result = make_job(source, overwrite=True).run(spy)
    assert result.error is None and (tmp_path / "a.zh.lines").read_text(encoding="utf-8") == expected_lines(source)


def test_result_names(tmp_path):
    source = tmp_path / "My Report.v2.lines"
    assert make_job(source).output == tmp_path / "My Report.v2.zh.lines"
    assert make_job(source, out_dir=tmp_path / "out").output == tmp_path / "out" / "My Report.v2.zh.lines"
    assert make_job(source, name_template="{lang}-{stem}{suffix}").output == tmp_path / "zh-My Report.v2.lines"
    for bad in ("{stem}.{language}{suffix}", "{stem", "../{stem}{suffix}", "{stem}/x", "", "{0}", "{}"):
        with pytest.raises(DocumentError, match=r"template|not a file name"):
            make_job(source, name_template=bad)


@pytest.mark.parametrize(
    "template",
    [
        "{stem:>9999999999}",  # asked str.format for a 10 GB string: killed by the kernel at 24 GB
        "{stem:>99999999}",  # 100 MB: a traceback (OSError: File name too long) after building it
        "{stem!r}{suffix}",
        "{stem.__class__}",
        "{stem[0]}{suffix}",
        "{stem:{lang}}",
        "{lang}" * 300,
        "x" * 250 + "{suffix}",
    ],
)
def test_result_name_templates_are_checked_before_anything_is_built(tmp_path, template):
    import tracemalloc

    tracemalloc.start()
    try:
        with pytest.raises(DocumentError, match=r"template|at most|bytes"):
            make_job(tmp_path / "a.lines", name_template=template)
        assert tracemalloc.get_traced_memory()[1] < 1 << 20  # refused without building the name
    finally:
        tracemalloc.stop()


def test_results_go_into_a_new_out_folder(tmp_path):
    source = write_doc(tmp_path / "a.lines", 2)
    job = make_job(source, out_dir=tmp_path / "new" / "deeper")
    assert job.run(SpyTranslator()).output == tmp_path / "new" / "deeper" / "a.zh.lines"
    assert job.output.read_text(encoding="utf-8") == expected_lines(source)


def cancel_after_steps(job: DocumentJob, translator, steps: int) -> DocumentResult:
    cancel = threading.Event()
    for n, _ in enumerate(job.steps(translator, cancel)):
        if n == steps:  # progress 0 is the reading; n is the n-th translation step
            cancel.set()
    assert job.result is not None
    return job.result


def test_resume_after_cancel_translates_only_what_was_left(tmp_path, monkeypatch):
    monkeypatch.setattr(job_module, "STEP_UNITS", 4)
    source = write_doc(tmp_path / "a.lines", 10)
    first = SpyTranslator()
    job = make_job(source)
    result = cancel_after_steps(job, first, 2)
    assert result.cancelled and result.output is None and result.translated == 8
    assert len(first.calls) == 2 and not job.output.exists()
    assert job.progress_path.exists()
    second = SpyTranslator()
    result = make_job(source).run(second)
    assert second.texts == ["Sentence number 8.", "Sentence number 9."]
    assert (result.resumed, result.translated, result.units) == (8, 2, 10)
    assert job.output.read_text(encoding="utf-8") == expected_lines(source)
    assert not job.progress_path.exists()  # deleted on success


def test_cancel_inside_a_step_keeps_only_finished_units(tmp_path, monkeypatch):
    monkeypatch.setattr(job_module, "STEP_UNITS", 4)
    source = write_doc(tmp_path / "a.lines", 10)
    cancel = threading.Event()
    spy = SpyTranslator(on_call=lambda n: cancel.set() if n == 2 else None)
    job = make_job(source)
    result = job.run(spy, cancel)
    assert result.cancelled and result.translated == 4 and len(spy.calls) == 2
    second = SpyTranslator()
    assert make_job(source).run(second).resumed == 4
    assert len(second.texts) == 6


def test_cancel_before_the_first_step_translates_nothing(tmp_path):
    cancel = threading.Event()
    cancel.set()
    spy = SpyTranslator()
    result = make_job(write_doc(tmp_path / "a.lines", 3)).run(spy, cancel)
    assert result.cancelled and spy.calls == []


def test_closing_the_steps_early_is_a_cancel(tmp_path):
    job = make_job(write_doc(tmp_path / "a.lines", 3))
    steps = job.steps(SpyTranslator())
    next(steps)
    steps.close()
    assert job.result is not None and job.result.cancelled and job.result.output is None


def test_resume_ignores_a_torn_last_line(tmp_path, monkeypatch):
    monkeypatch.setattr(job_module, "STEP_UNITS", 3)
    source = write_doc(tmp_path / "a.lines", 9)
    job = make_job(source)
    cancel_after_steps(job, SpyTranslator(), 2)
    with open(job.progress_path, "ab") as stream:
        stream.write(b'{"i":6,"runs":["<Sent')  # what a kill -9 in the middle of a write leaves
    spy = SpyTranslator()
    result = make_job(source).run(spy)
    assert result.resumed == 6 and len(spy.texts) == 3
    assert job.output.read_text(encoding="utf-8") == expected_lines(source)


def test_a_different_input_or_setting_starts_over(tmp_path, monkeypatch):
    monkeypatch.setattr(job_module, "STEP_UNITS", 2)
    source = write_doc(tmp_path / "a.lines", 6)
    changes = [
        lambda: DocumentJob(source, DocumentOptions(), TranslationOptions(beams=2), target_lang="zh", model_key="m1"),
        lambda: DocumentJob(source, DocumentOptions(), TranslationOptions(), target_lang="zh", model_key="m2"),
        lambda: write_doc(source, 6, prefix="Phrase") and make_job(source),
    ]
    for change in changes:
        cancel_after_steps(make_job(source), SpyTranslator(), 1)
        job = change()
        spy = SpyTranslator()
        result = job.run(spy)
        assert result.resumed == 0 and len(spy.texts) == 6
        assert any("starting over" in w for w in result.warnings)
        assert job.output.read_text(encoding="utf-8") == expected_lines(source)
        job.output.unlink()


def test_no_resume_starts_over(tmp_path, monkeypatch):
    monkeypatch.setattr(job_module, "STEP_UNITS", 2)
    source = write_doc(tmp_path / "a.lines", 4)
    cancel_after_steps(make_job(source), SpyTranslator(), 1)
    spy = SpyTranslator()
    result = make_job(source, resume=False).run(spy)
    assert result.resumed == 0 and len(spy.texts) == 4 and "resume is off" in result.warnings[0]


KILLED_RUN = """
import sys, time
sys.path.insert(0, {repo!r})
from pathlib import Path
from engine.documents import job as job_module
from engine.documents.job import DocumentJob, DocumentOptions
from engine.options import TranslationOptions
from tests.engine.documents import fakes
fakes.install()
job_module.STEP_UNITS = 3
job = DocumentJob(Path({source!r}), DocumentOptions(), TranslationOptions(), target_lang="zh", model_key="m1")
job.run(fakes.SpyTranslator(delay_s=0.3))
"""


def test_resume_after_kill_9(tmp_path):
    source = write_doc(tmp_path / "a.lines", 150)  # 50 steps of 0.3 s: ample time to kill it mid-job
    partial = progress_file.path_for(tmp_path / "a.zh.lines")
    script = textwrap.dedent(KILLED_RUN.format(repo=str(REPO), source=str(source)))
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=REPO)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if partial.exists() and partial.read_bytes().count(b"\n") >= 7:  # the header and two steps
                break
            time.sleep(0.02)
        assert proc.poll() is None, "the job ended before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert not (tmp_path / "a.zh.lines").exists()
    with open(partial, "ab") as stream:
        stream.write(b'{"i":149,"ru')  # and as if the kill had landed mid-line
    done = partial.read_bytes().count(b"\n") - 1
    spy = SpyTranslator()
    result = make_job(source).run(spy)
    assert result.resumed == done >= 6
    assert len(spy.texts) == 150 - done  # nothing finished before the kill is translated again
    assert not set(spy.texts) & {f"Sentence number {i}." for i in range(done)}
    assert (tmp_path / "a.zh.lines").read_text(encoding="utf-8") == expected_lines(source)
    assert not partial.exists()


def test_unit_errors_are_counted_and_the_result_is_named_partial(tmp_path):
    """A result with units left untranslated never looks finished: it is NAME.zh.partial.EXT, not NAME.zh.EXT; the
    progress file stays, and a later run retries only the failed units, writes the real result and drops the
    partial one."""
    source = tmp_path / "a.lines"
    source.write_text("Hello.\nREFUSE this one\nBye.\n", encoding="utf-8")
    job = make_job(source)
    result = job.run(SpyTranslator())
    assert (result.units, result.translated, result.failed_units) == (3, 2, 1)
    assert result.partial and result.error is None
    assert result.output == tmp_path / "a.zh.partial.lines"
    assert not (tmp_path / "a.zh.lines").exists()
    assert "unit 2" in result.warnings[0] and "REFUSE this one" in result.warnings[0]
    assert "refused" in result.warnings[0]
    assert "incomplete" in result.warnings[-1] and "a.zh.partial.lines" in result.warnings[-1]
    assert result.output.read_text(encoding="utf-8") == "<Hello.>\nREFUSE this one\n<Bye.>\n"
    assert job.progress_path.exists()

    class Accepting(SpyTranslator):  # the engine now translates the refused unit (a fix, another setting…)
        def translate_segments(self, segments, options=None, *, cancel=None):
            segments = [s.replace("REFUSE", "Accept") for s in segments]
            return super().translate_segments(segments, options, cancel=cancel)

    spy = Accepting()
    again = make_job(source).run(spy)
    assert spy.texts == ["Accept this one"]  # only the failed unit
    assert (again.resumed, again.translated, again.failed_units, again.partial) == (2, 1, 0, False)
    assert again.output == tmp_path / "a.zh.lines"
    assert again.output.read_text(encoding="utf-8") == "<Hello.>\n<Accept this one>\n<Bye.>\n"
    assert not (tmp_path / "a.zh.partial.lines").exists() and leftovers(tmp_path) == []


def test_nothing_translated_writes_nothing(tmp_path):
    """Every unit refused (a 5 MB one-paragraph .txt over the engine's limit): no copy of the input under a result's
    name, partial or not, and no progress file; the error names the reason."""
    source = tmp_path / "a.lines"
    source.write_text("REFUSE one\n42\nREFUSE two\n", encoding="utf-8")
    result = make_job(source).run(SpyTranslator())
    assert result.output is None and not result.partial and result.failed_units == 2
    assert "nothing in a.lines could be translated" in result.error and "refused: REFUSE one" in result.error
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.lines"]


def test_a_partial_result_is_not_taken_for_an_input_and_never_replaces_the_input(tmp_path):
    from engine.documents import discover

    source = tmp_path / "a.lines"
    source.write_text("Hello.\nREFUSE\n", encoding="utf-8")
    assert make_job(source).run(SpyTranslator()).partial
    assert discover.expand([tmp_path], "zh") == [source]
    assert job_module.partial_name("report.zh.docx") == "report.zh.partial.docx"
    assert job_module.partial_name("report") == "report.partial"


def test_many_unit_errors_are_summed_up(tmp_path):
    source = tmp_path / "a.lines"
    source.write_text("Hello.\n" + "REFUSE me\n" * 30, encoding="utf-8")
    result = make_job(source).run(SpyTranslator())
    assert result.failed_units == 30
    assert len(result.warnings) == job_module.MAX_WARNINGS + 2 and "10 more" in result.warnings[-2]


def test_eta_follows_the_characters(tmp_path, monkeypatch):
    """A fake clock that moves 10 ms per source character translated: the estimate is then exact."""
    monkeypatch.setattr(job_module, "STEP_UNITS", 5)
    clock = [100.0]
    monkeypatch.setattr(job_module.time, "perf_counter", lambda: clock[0])

    class Timed(SpyTranslator):
        def translate_segments(self, segments, options=None, *, cancel=None):
            texts = list(segments)
            clock[0] += 0.01 * sum(len(t) for t in texts)
            return super().translate_segments(texts, options, cancel=cancel)

    source = tmp_path / "a.lines"
    source.write_text("".join(f"Line {'x' * i}.\n" for i in range(1, 101)), encoding="utf-8")
    progress = list(make_job(source).steps(Timed()))
    total = progress[0].chars_total
    assert total == sum(len(f"Line {'x' * i}.") for i in range(1, 101))
    assert progress[0].eta_s is None and progress[0].chars_done == 0
    assert progress[1].eta_s is None  # one step, under 5% of the characters
    for p in progress[2:]:
        assert p.eta_s == pytest.approx((total - p.chars_done) * 0.01)
    assert progress[-1].eta_s == 0 and progress[-1].chars_done == total
    assert [p.elapsed_s for p in progress] == sorted(p.elapsed_s for p in progress)


def test_eta_after_one_big_step(tmp_path, monkeypatch):
    monkeypatch.setattr(job_module, "STEP_UNITS", 10)
    progress = list(make_job(write_doc(tmp_path / "a.lines", 20)).steps(SpyTranslator()))
    assert progress[1].eta_s is not None and progress[1].eta_s >= 0  # half the work is behind it


def test_too_large_input_is_refused_before_reading(tmp_path, monkeypatch):
    monkeypatch.setattr(job_module, "MAX_BYTES", 2**20)
    source = tmp_path / "big.lines"
    source.write_bytes(b"Hello.\n" * 300_000)
    spy = SpyTranslator()
    result = make_job(source).run(spy)
    assert "up to 1 MB" in result.error and spy.calls == []


def test_unreadable_and_unsupported_inputs_are_clear_errors(tmp_path):
    missing = make_job(tmp_path / "missing.lines").run(SpyTranslator())
    assert "no such file" in missing.error
    pdf = make_job(tmp_path / "scan.pdf").run(SpyTranslator())
    assert "PDF is not supported" in pdf.error
    other = make_job(tmp_path / "notes.xyz").run(SpyTranslator())
    assert "does not translate .xyz files; it reads " in other.error
    bare = make_job(tmp_path / "README").run(SpyTranslator())
    assert "does not translate files without an extension; it reads " in bare.error
    (tmp_path / "bin.lines").write_bytes(b"\xff\xfe\x00garbage")
    garbage = make_job(tmp_path / "bin.lines").run(SpyTranslator())
    assert garbage.error.startswith("bin.lines: not UTF-8")
    (tmp_path / "bug.lines").write_text("CRASH\n", encoding="utf-8")
    bug = make_job(tmp_path / "bug.lines").run(SpyTranslator())
    assert "cannot read this line file (ValueError" in bug.error
    for result in (missing, pdf, other, bare, garbage, bug):
        assert result.output is None
    assert leftovers(tmp_path) == []


def test_forced_format_reads_any_extension(tmp_path):
    source = tmp_path / "notes.xyz"
    source.write_text("Hello.\n", encoding="utf-8")
    result = make_job(source, format="lines").run(SpyTranslator())
    assert result.output == tmp_path / "notes.zh.xyz" and result.format == "lines"


def test_the_progress_file_records_each_step_durably(tmp_path, monkeypatch):
    monkeypatch.setattr(job_module, "STEP_UNITS", 2)
    source = write_doc(tmp_path / "a.lines", 5)
    job = make_job(source)
    seen = []
    for n, _ in enumerate(job.steps(SpyTranslator())):
        if n and job.progress_path.exists():
            seen.append(len(job.progress_path.read_bytes().splitlines()) - 1)
    assert seen == [2, 4, 5]
    assert not job.progress_path.exists()


def test_the_render_gets_run_texts_only_for_translated_units(tmp_path, monkeypatch):
    docs = []
    real_read = fakes.read

    def spying_read(data):
        docs.append(real_read(data))
        return docs[-1]

    monkeypatch.setattr(sys.modules[fakes.MODULE], "FORMAT", dataclasses.replace(fakes.FORMAT, read=spying_read))
    source = tmp_path / "a.lines"
    source.write_text("Hi |there\n\nREFUSE\n", encoding="utf-8")
    make_job(source).run(SpyTranslator())
    (translations,) = docs[0].rendered_with
    assert translations[1] is None and translations[2] is None and len(translations[0]) == 2


def test_progress_file_lines_are_json(tmp_path, monkeypatch):
    monkeypatch.setattr(job_module, "STEP_UNITS", 1)
    source = tmp_path / "a.lines"
    source.write_text("Ünïcode line\u2028with a separator\nSecond\n", encoding="utf-8")
    job = make_job(source)
    cancel_after_steps(job, SpyTranslator(), 1)
    header, entry = (json.loads(line) for line in job.progress_path.read_bytes().splitlines())
    assert header["fingerprint"]["format"] == "lines" and header["fingerprint"]["model_key"] == "m1"
    assert entry == {"i": 0, "runs": [translated("Ünïcode line\u2028with a separator")]}


def test_a_folder_that_cannot_be_written_stops_at_once(tmp_path, monkeypatch):
    source = write_doc(tmp_path / "a.lines", 3)

    def read_only(self, finished):
        raise OSError(30, "Read-only file system", str(self.path))

    monkeypatch.setattr(progress_file.Writer, "append", read_only)
    spy = SpyTranslator()
    result = make_job(source).run(spy)
    assert result.error.startswith(f"cannot write in {tmp_path}: Read-only file system")
    assert len(spy.calls) == 1 and result.output is None


def test_a_failed_replace_keeps_the_previous_result(tmp_path, monkeypatch):
    source = write_doc(tmp_path / "a.lines", 2)
    (tmp_path / "a.zh.lines").write_text("previous\n", encoding="utf-8")
    monkeypatch.setattr(job_module.os, "replace", lambda src, dst: (_ for _ in ()).throw(OSError(5, "I/O error")))
    result = make_job(source, overwrite=True).run(SpyTranslator())
    assert result.error == f"cannot write {tmp_path / 'a.zh.lines'}: I/O error"
    assert (tmp_path / "a.zh.lines").read_text(encoding="utf-8") == "previous\n"
    assert leftovers(tmp_path) == [".a.zh.lines.qiao-partial"]


def test_a_folder_given_as_the_input_is_refused(tmp_path):
    (tmp_path / "dir.lines").mkdir()
    result = make_job(tmp_path / "dir.lines").run(SpyTranslator())
    assert result.error == f"{tmp_path / 'dir.lines'}: not a file"


def test_a_document_at_the_size_limit_is_read_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(job_module, "MAX_BYTES", 700)
    source = tmp_path / "a.lines"
    source.write_bytes(b"Hello.\n" * 100)  # exactly 700 bytes
    result = make_job(source).run(SpyTranslator())
    assert result.error is None and result.units == 100
    source.write_bytes(b"Hello.\n" * 100 + b"x")
    assert "up to 0 MB" in make_job(source, overwrite=True).run(SpyTranslator()).error


def test_an_empty_document_gives_an_empty_result(tmp_path):
    source = tmp_path / "empty.lines"
    source.write_bytes(b"")
    spy = SpyTranslator()
    result = make_job(source).run(spy)
    assert (result.units, result.error, spy.calls) == (0, None, [])
    assert result.output.read_bytes() == b""


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux's /proc")
def test_a_file_without_a_size_is_read_to_its_end(tmp_path):
    """/proc files and the like report size 0: they are read in pieces, still up to the limit."""
    source = tmp_path / "status.lines"
    source.symlink_to("/proc/self/status")
    result = make_job(source).run(SpyTranslator())
    assert result.error is None and result.units > 5
    assert job_module._read_pieces(io.BytesIO(b"x" * 5000), 3000) == b"x" * 3000


def test_eta_leaves_the_first_steps_warm_up_out(tmp_path, monkeypatch):
    monkeypatch.setattr(job_module, "STEP_UNITS", 10)
    clock = [0.0]
    monkeypatch.setattr(job_module.time, "perf_counter", lambda: clock[0])

    class WarmingUp(SpyTranslator):
        def translate_segments(self, segments, options=None, *, cancel=None):
            clock[0] += 30.0 if not self.calls else 1.0  # the first call loads sessions: 30 s; then 1 s a step
            return super().translate_segments(segments, options, cancel=cancel)

    source = tmp_path / "a.lines"
    source.write_text("".join(f"Sentence {i:03d}.\n" for i in range(100)), encoding="utf-8")  # all one length
    progress = list(make_job(source).steps(WarmingUp()))
    assert progress[1].eta_s == pytest.approx(9 * 30.0)  # one step (10%): all there is to go by
    assert progress[2].eta_s == pytest.approx(8 * 1.0)  # then the pace of the steps after it
    assert progress[5].eta_s == pytest.approx(5 * 1.0)


def test_answers_missing_without_a_cancel_are_failures_not_silence(tmp_path):
    class Short(SpyTranslator):
        def translate_segments(self, segments, options=None, *, cancel=None):
            yield from list(super().translate_segments(segments, options, cancel=cancel))[:-1]

    source = write_doc(tmp_path / "a.lines", 3)
    result = make_job(source).run(Short())
    assert (result.translated, result.failed_units) == (2, 1)
    assert "no translation" in result.warnings[0]


def test_a_translation_cancelled_by_the_engine_is_not_written(tmp_path):
    """The engine may end a request cancelled on its own: those units stay to do, and nothing partial is written."""

    class Stopping(SpyTranslator):
        def translate_segments(self, segments, options=None, *, cancel=None):
            answers = list(super().translate_segments(segments, options, cancel=cancel))
            yield from [*answers[:1], *(dataclasses.replace(a, cancelled=True) for a in answers[1:])]

    source = write_doc(tmp_path / "a.lines", 3)
    job = make_job(source)
    result = job.run(Stopping())
    assert result.cancelled and result.output is None and result.translated == 1
    assert make_job(source).run(SpyTranslator()).resumed == 1


def test_a_job_can_run_again(tmp_path):
    source = write_doc(tmp_path / "a.lines", 2)
    (tmp_path / "a.zh.lines").write_text("old\n", encoding="utf-8")
    job = make_job(source)
    assert job.run(SpyTranslator()).error is not None
    (tmp_path / "a.zh.lines").unlink()
    assert job.run(SpyTranslator()).error is None and job.result.output == job.output


def test_model_key_names_model_direction_and_precision(bundle_dir):
    from engine.pipeline.translator import Translator

    translator = Translator(bundle_dir)
    key = job_module.model_key(translator)
    assert key == f"{translator.manifest.model_id}:en-zh:int8"


def test_resume_twice_keeps_every_earlier_run(tmp_path, monkeypatch):
    monkeypatch.setattr(job_module, "STEP_UNITS", 2)
    source = write_doc(tmp_path / "a.lines", 9)
    assert cancel_after_steps(make_job(source), SpyTranslator(), 1).translated == 2
    second = cancel_after_steps(make_job(source), SpyTranslator(), 2)
    assert (second.resumed, second.translated) == (2, 4)
    third = SpyTranslator()
    result = make_job(source).run(third)
    assert (result.resumed, result.translated) == (6, 3)
    assert third.texts == [f"Sentence number {i}." for i in range(6, 9)]
    assert (tmp_path / "a.zh.lines").read_text(encoding="utf-8") == expected_lines(source)


class LockedMemory:
    """What the window passes as `TranslationOptions.memory` (gui.records.memory_chain.MemoryChain): a live lookup
    behind a
    thread lock, which cannot be copied or pickled."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.asked: list[str] = []

    def lookup(self, source: str) -> str | None:
        with self._lock:
            self.asked.append(source)
        return None


def test_options_holding_a_live_memory_are_used_not_copied(tmp_path, monkeypatch):
    # The window's options always carry its memory; deep-copying them for the progress file raised "cannot pickle
    # '_thread.lock' object" and every document queued from the window failed.
    monkeypatch.setattr(job_module, "STEP_UNITS", 2)
    memory = LockedMemory()
    options = TranslationOptions(beams=2, memory=memory)
    source = write_doc(tmp_path / "a.lines", 3)
    job = DocumentJob(source, DocumentOptions(), options, target_lang="zh", model_key="m1")
    spy = SpyTranslator()
    cancel_after_steps(job, spy, 1)
    assert spy.options[0] is options  # the very value the caller gave, memory and all
    header = json.loads(job.progress_path.read_bytes().splitlines()[0])
    assert header["fingerprint"]["options"] == job_module.settings_of(options)
    assert "memory" not in header["fingerprint"]["options"] and header["fingerprint"]["options"]["beams"] == 2
    # Another memory (the window's grows as the user edits) does not make the work another's: it resumes.
    again = DocumentJob(source, DocumentOptions(), options.replace(memory=LockedMemory()), target_lang="zh")
    again.model_key = "m1"
    result = again.run(SpyTranslator())
    assert (result.error, result.resumed, result.translated) == (None, 2, 1)


def test_resume_with_a_glossary(tmp_path, monkeypatch):
    # The glossary's tuples were recorded as JSON lists and never compared equal again: every run started over.
    from engine.glossary import Glossary, GlossaryEntry

    monkeypatch.setattr(job_module, "STEP_UNITS", 2)
    glossary = Glossary((GlossaryEntry("number", "号"), GlossaryEntry("Qiao")))
    options = TranslationOptions(glossary=glossary)
    source = write_doc(tmp_path / "a.lines", 5)
    cancel_after_steps(
        DocumentJob(source, DocumentOptions(), options, target_lang="zh", model_key="m1"), SpyTranslator(), 1
    )
    spy = SpyTranslator()
    result = DocumentJob(source, DocumentOptions(), options, target_lang="zh", model_key="m1").run(spy)
    assert (result.resumed, result.translated, result.warnings) == (2, 3, ())
    other = options.replace(glossary=Glossary((GlossaryEntry("number", "数"),)))
    cancel_after_steps(
        DocumentJob(source, DocumentOptions(overwrite=True), options, target_lang="zh", model_key="m1"),
        SpyTranslator(),
        1,
    )
    result = DocumentJob(source, DocumentOptions(overwrite=True), other, target_lang="zh", model_key="m1").run(
        SpyTranslator()
    )
    assert result.resumed == 0 and any("starting over" in w for w in result.warnings)
