"""bergamot-translator itself (the PyPI wheel bergamot==0.4.5, what Firefox Translations runs) as a test oracle.

The wheel is CPython 3.10 only, so it lives in its own venv (.cache/bergamot-venv, made on first use from pyenv's
3.10 with `pip install bergamot==0.4.5`; git-ignored). Each call runs tests/oracles/bergamot_worker.py in a
subprocess: the worker loads the wheel's native module by path (the package's __init__ fetches a model index from
the network), and a model bergamot cannot load aborts only that process, reported here as OracleError.

Settings are Firefox's (translationWorker.js, as firefox-translations-models' evals/translators/bergamot.config.yml
copies them): beam 1, max-length-factor 2, soft alignment, plus `ssplit-mode: sentence` so one line is one sentence.
Each line is its own request by default: the length limit and the shortlist are per batch, so batching lines together
would change single-sentence results.

What comes back per line: the text and bergamot's target tokens as surface strings (AnnotatedText words: one per
emitted token, the final </s> as an empty word, none when the length limit stopped the sentence). Scores and
alignments are not reachable through the wheel's bindings (Response.alignments has no converter).

The shortlist is checked (checksum and bounds) only under `check-bytearray: true`: bergamot loads it into memory
first, and the second element of `shortlist: [file, check]` is not what decides then.
"""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache"
VENV = CACHE / "bergamot-venv"
PACKAGE = "bergamot==0.4.5"
WORKER = Path(__file__).with_name("bergamot_worker.py")
MARKER = VENV / ".qiao-installed"


# How the int8 agreement with bergamot was measured, per CPU kind. Both int8 paths multiply activations shifted to
# uint8 by int8 weights with kernels chosen by CPUID: intgemm in bergamot, MLAS in ONNX Runtime. With AVX-512 VNNI
# (intgemm; MLAS also with AVX-VNNI) the products are summed exactly; without it both use vpmaddubsw, which sums
# each adjacent pair (k, k+1) into an int16 that saturates. Measured on an AMD Zen 4 (AVX-512 VNNI) and on the
# kinds emulated there by masking CPUID bits for both processes (tests/tools/cpuid_mask: `avx2` = Zen 3, no AVX-512;
# `avx512bw` = Skylake-X, AVX-512 without VNNI; MLAS, intgemm and MKL all chose their kernels by the masked bits:
# a product of 254s by 127s saturated in ORT, and bergamot's outputs changed). Sentences identical, Qiao INT8 vs
# bergamot int8 (tiny separate/tied, tiny shared/tied-all, full shape):
#   VNNI      196/200 195/200 200/200
#   avx2      196/200 195/200 200/200
#   avx512bw  196/200 195/200 200/200
# MLAS and intgemm saturate the same pairs (Qiao's INT8 gave the numpy reference's saturating imitation's tokens on
# 199-200/200 and 40/40). The full-shape figures are those of its pair-safe weights (tests/fixtures/bergamot/make.py
# Spec.pair_safe: no two same-signed ±127 weights side by side on the marker and code dims, whose activations are the
# largest), with no sentence at the length limit; the build's own INT8 check (Qiao's INT8 against the numpy
# reference's imitation of the kernel ORT takes) gave 40/40 on every kind. Before, 2.4 % of its adjacent weight pairs
# could overflow int16 (0.45 % in the tiny ones), almost all on those dims, and saturated it never emitted </s> (199 of
# bergamot's 200 outputs ran to the length limit): 162/200 on avx2 and avx512bw, and the build's check 35/40.
# On the tiny models the build's check gives 37-40/40 under every kind. (Before the imitation saturated, it gave
# 16-17/40 on the tiny models and 0/40 on the full-shape one.)
# Where only ORT has VNNI (AVX-VNNI without AVX-512 VNNI: Intel's Alder Lake and later client CPUs) ORT sums exactly
# and intgemm saturates: Qiao unmasked against bergamot masked to avx2 gave 110/200 and 90/200 on the tiny models.


def cpu_flags() -> set[str] | None:
    """The CPU's feature flags as Linux names them (/proc/cpuinfo), or None where they cannot be read."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return {flag for line in text.splitlines() if line.startswith("flags") for flag in line.split(":", 1)[1].split()}


def int8_kernels_differ() -> str | None:
    """Why Qiao's INT8 and bergamot's int8 cannot agree as measured on this CPU (ORT sums exactly where intgemm
    saturates, or the flags are unknown), or None: both take exact kernels, or both saturating ones."""
    flags = cpu_flags()
    if flags is None:
        return "cannot read the CPU's flags (/proc/cpuinfo) to tell which int8 kernels ORT and intgemm take"
    if "avx_vnni" in flags and "avx512_vnni" not in flags:
        return (
            "AVX-VNNI without AVX-512 VNNI: ONNX Runtime sums u8·s8 products exactly, intgemm saturates int16 pairs "
            "(emulated: 110/200 and 90/200 sentences identical on the tiny models)"
        )
    return None


def int8_kernels_saturate() -> bool:
    """Whether both int8 paths take the int16-saturating u8·s8 kernel here (no VNNI of either width); False where
    the flags cannot be read."""
    flags = cpu_flags()
    return flags is not None and not {"avx512_vnni", "avx_vnni"} & flags


PYTHON310 = ("/root/.pyenv/versions/3.10.13/bin/python3.10",)

# Firefox's decoder settings (bergamot-format.md §1.3); gemm-precision is chosen per model file below.
FIREFOX_OPTIONS = {
    "beam-size": 1,
    "normalize": 1.0,
    "word-penalty": 0,
    "max-length-break": 128,
    "mini-batch-words": 1024,
    "workspace": 128,
    "max-length-factor": 2.0,
    "skip-cost": True,
    "cpu-threads": 0,
    "quiet": True,
    "quiet-translation": True,
    "alignment": "soft",
    "ssplit-mode": "sentence",
}


class OracleUnavailable(RuntimeError):
    """The bergamot venv cannot be made here (no Python 3.10, the package registry unreachable, ...)."""


class OracleError(RuntimeError):
    """bergamot refused or crashed on the model (its process aborted); the message carries its stderr."""


@dataclass(frozen=True)
class Translation:
    """One input line as bergamot translated it: the text and the surface string of each emitted token ('' for a
    final </s>), and how many sentences bergamot saw in it (1 with ssplit-mode: sentence)."""

    text: str
    tokens: list[str]
    sentences: int = 1


_failure: str | None = None


def _python310() -> str | None:
    candidates = [os.environ.get("QIAO_PYTHON310", ""), *PYTHON310, shutil.which("python3.10") or ""]
    return next((c for c in candidates if c and Path(c).exists()), None)


@contextlib.contextmanager
def _lock() -> Iterator[None]:
    CACHE.mkdir(exist_ok=True)
    with open(CACHE / "bergamot-venv.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def venv_python() -> Path:
    """The venv's interpreter, making the venv on first use; OracleUnavailable (remembered for the session) when it
    cannot be made."""
    global _failure
    python = VENV / "bin" / "python"
    if MARKER.exists() and MARKER.read_text().strip() == PACKAGE and python.exists():
        return python
    if _failure is not None:
        raise OracleUnavailable(_failure)
    with _lock():
        if MARKER.exists() and MARKER.read_text().strip() == PACKAGE and python.exists():
            return python
        base = _python310()
        if base is None:
            _failure = "no Python 3.10 interpreter (bergamot==0.4.5 is a CPython 3.10 wheel); set QIAO_PYTHON310"
            raise OracleUnavailable(_failure)
        shutil.rmtree(VENV, ignore_errors=True)
        steps = [
            [base, "-m", "venv", str(VENV)],
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", PACKAGE],
        ]
        for step in steps:
            try:
                done = subprocess.run(step, capture_output=True, text=True, timeout=900)
            except (OSError, subprocess.TimeoutExpired) as exc:
                done = None
                detail = str(exc)
            else:
                detail = (done.stderr or done.stdout)[-600:]
            if done is None or done.returncode != 0:
                shutil.rmtree(VENV, ignore_errors=True)
                _failure = f"could not make the bergamot venv ({' '.join(step[-2:])}): {detail.strip()}"
                raise OracleUnavailable(_failure)
        if not list((VENV / "lib").glob("python3.10/site-packages/bergamot/_bergamot*.so")):
            _failure = "the bergamot wheel installed but holds no native module"
            raise OracleUnavailable(_failure)
        MARKER.write_text(PACKAGE + "\n")
    return python


def unavailable_reason() -> str | None:
    """None when the oracle can run, else why not (for pytest.skip)."""
    try:
        venv_python()
    except OracleUnavailable as exc:
        return str(exc)
    return None


def native_module() -> Path:
    venv_python()
    return next((VENV / "lib").glob("python3.10/site-packages/bergamot/_bergamot*.so"))


def _yaml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value) if isinstance(value, str) else str(value)


def _plain(path: Path, scratch: Path) -> Path:
    """`path`, or its gunzipped copy in `scratch` (bergamot reads plain files)."""
    if path.suffix != ".gz":
        return path
    target = scratch / path.name[:-3]
    target.write_bytes(gzip.decompress(path.read_bytes()))
    return target


def precision_for(model: Path) -> str:
    """The gemm-precision bergamot runs a model file with: float32 for float models (with an int8 setting Marian
    would quantise them on the fly), int8shiftAlphaAll for .intgemm.alphas.bin, int8shiftAll for .intgemm8.bin."""
    name = model.name.removesuffix(".gz")
    if name.endswith(".intgemm.alphas.bin"):
        return "int8shiftAlphaAll"
    if name.endswith(".intgemm8.bin"):
        return "int8shiftAll"
    return "float32"


def translate(
    model: Path,
    src_vocab: Path,
    trg_vocab: Path,
    lines: Sequence[str],
    *,
    shortlist: Path | None = None,
    verify_shortlist: bool = True,
    precision: str | None = None,
    per_line: bool = True,
    options: dict[str, object] | None = None,
    timeout: float = 600,
) -> list[Translation]:
    """Translate `lines` with bergamot (one request per line unless `per_line` is False). For a shared vocabulary
    pass the same path twice: Marian then shares one vocabulary object (the shortlist adds source ids)."""
    python = venv_python()
    with tempfile.TemporaryDirectory(prefix="bergamot-oracle-") as tmp:
        scratch = Path(tmp)
        settings: dict[str, object] = dict(FIREFOX_OPTIONS)
        settings["gemm-precision"] = precision or precision_for(model)
        settings.update(options or {})
        src = _plain(Path(src_vocab), scratch)
        trg = src if Path(trg_vocab) == Path(src_vocab) else _plain(Path(trg_vocab), scratch)
        text = [f"models: [{json.dumps(str(_plain(Path(model), scratch)))}]"]
        text.append(f"vocabs: [{json.dumps(str(src))}, {json.dumps(str(trg))}]")
        if shortlist is not None:
            short = _plain(Path(shortlist), scratch)
            text.append(f"shortlist: [{json.dumps(str(short))}, {_yaml_value(verify_shortlist)}]")
            # bergamot loads the shortlist into memory first, and then checks it only under check-bytearray
            settings.setdefault("check-bytearray", verify_shortlist)
        text += [f"{key}: {_yaml_value(value)}" for key, value in settings.items()]
        request = {"module": str(native_module()), "config": "\n".join(text) + "\n", "lines": list(lines)}
        request["per_line"] = per_line
        try:
            done = subprocess.run(
                [str(python), str(WORKER)],
                input=json.dumps(request),
                capture_output=True,
                text=True,
                timeout=timeout,
                env={**os.environ, "OMP_NUM_THREADS": "1"},
            )
        except subprocess.TimeoutExpired as exc:
            raise OracleError(f"bergamot did not finish in {timeout:.0f} s") from exc
    if done.returncode != 0:
        how = f"signal {-done.returncode}" if done.returncode < 0 else f"exit code {done.returncode}"
        raise OracleError(f"bergamot failed ({how}): {done.stderr.strip()[-2000:]}")
    results = json.loads(done.stdout)["results"]
    out = []
    for result in results:
        tokens = [token for sentence in result["sentences"] for token in sentence]
        out.append(Translation(result["text"], tokens, len(result["sentences"])))
    return out


def translate_folder(
    folder: object, lines: Sequence[str], *, use_shortlist: bool = True, **kwargs: object
) -> list[Translation]:
    """translate() for an engine.families.bergamot.converter.reader.ModelFolder (its shortlist used when it has one)."""
    model, src, trg = folder.model, folder.src_vocab, folder.trg_vocab  # type: ignore[attr-defined]
    short = folder.shortlist if use_shortlist else None  # type: ignore[attr-defined]
    return translate(model, src, trg, lines, shortlist=short, **kwargs)  # type: ignore[arg-type]
