"""`qiao --self-test`: prove an installed Qiao can translate, with no display, no network and no Python around it.

The frozen app runs this after every build (CI) and a user can run it when something looks wrong. It tests every
installed bundle (or the one `--model` names): verifies it, translates the pair's own self-test sentence (manifest
`languages.self_test`) in every precision the bundle has, checks the result is non-empty text in the target's script,
compares INT8 with FP32 token by token and prints timings. It passes only when every bundle passes. Pure engine: it
never imports Qt, so it works on a headless machine.
"""

from __future__ import annotations

import difflib
import platform
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TextIO, TypeVar

from engine import __version__
from engine.errors import QiaoError

T = TypeVar("T")
# INT8 may pick different tokens than FP32 (quantisation noise), but both must still say the same thing: at least
# this share of tokens in common (difflib ratio over the token ids). The build pipeline's BLEU margin is the real
# quality gate; this only catches an INT8 graph that has gone wrong (garbage, empty, another language).
MIN_TOKEN_AGREEMENT = 0.5
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff]")
# Basic Latin, Latin-1, Latin Extended-A/B and Additional letters (accented English words such as "café" count).
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f\u1e00-\u1eff]")


@dataclass(frozen=True)
class PrecisionResult:
    """One precision's run: what it said and how long each step took."""

    precision: str
    text: str
    tokens: list[int]
    load_ms: float
    first_token_ms: float | None
    total_ms: float


def in_script(text: str, script: str) -> bool:
    """Whether `text` is written in `script` (engine.languages.SCRIPTS), judged on its letters only.

    han: Han characters make up at least half of the letters. A model gone wrong can still emit one stray character
    among garbage (a random-weight model did: 'zz18618 zz45226 … 字 …'), which must not pass.
    latin: Latin letters make up at least half of the letters, and there is no Han character at all (an en target
    that echoes its Chinese source, or mixes it in, has failed).
    """
    letters = [c for c in text if c.isalpha()]
    han = sum(1 for c in letters if _HAN.match(c))
    if script == "han":
        return han > 0 and 2 * han >= len(letters)
    if script == "latin":
        latin = sum(1 for c in letters if _LATIN.match(c))
        return han == 0 and latin > 0 and 2 * latin >= len(letters)
    raise ValueError(f"unknown script {script!r}")


def token_agreement(a: list[int], b: list[int]) -> float:
    """Share of tokens two outputs have in common, in order (1.0 = identical, 0.0 = nothing shared)."""
    if not a and not b:
        return 1.0
    return difflib.SequenceMatcher(a=a, b=b, autojunk=False).ratio()


def _run_precision(bundle: Path, precision: str, sentence: str) -> PrecisionResult:
    from engine.pipeline.translator import Translator  # onnxruntime is imported here, inside the timed load

    start = time.perf_counter()
    translator = Translator(bundle, precision=precision, verify=False)  # hashes were checked once, up front
    load_ms = (time.perf_counter() - start) * 1000
    result = translator.translate(sentence)
    stats = result.stats
    return PrecisionResult(
        precision=precision,
        text=result.text,
        tokens=[t for sentence_tokens in result.tokens for t in sentence_tokens],
        load_ms=load_ms,
        first_token_ms=stats.first_token_ms if stats else None,
        total_ms=stats.total_ms if stats else 0.0,
    )


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.0f} ms"


def _bundle_path(entry: object) -> Path:
    """The folder of one engine.store.installed entry (a path, or an object that names its folder or its manifest)."""
    for owner in (entry, getattr(entry, "manifest", None)):
        for name in ("path", "bundle_dir", "bundle", "folder"):
            value = getattr(owner, name, None)
            if isinstance(value, (str, Path)):
                return Path(value)
    return Path(entry)  # type: ignore[arg-type]


def installed_bundles() -> list[Path]:
    """Every installed bundle (engine.store.installed's list), each real folder once. [] when none is installed."""
    from engine.store.installed import installed_models

    paths: list[Path] = []
    for entry in installed_models():
        path = _bundle_path(entry)
        if path.resolve() not in {p.resolve() for p in paths}:
            paths.append(path)
    return paths


def _bundles_to_test(model: str | None) -> list[Path]:
    """`--model` or QIAO_MODEL_DIR: that bundle only (final, as everywhere). Otherwise every installed bundle, or
    the locate error that lists where it looked when there is none."""
    from engine.paths import model_dir_override
    from engine.store.installed import find_bundle

    if model or model_dir_override():
        return [find_bundle(model)]
    return installed_bundles() or [find_bundle(None)]


@dataclass
class _Block:
    """One bundle's part of the report: its lines go out as they happen, its failures are collected."""

    say: Callable[[str], None]
    failures: list[str]


def _test_bundle(bundle: Path, sentence: str | None, block: _Block) -> str:
    """Verify one bundle, translate its sentence in every precision, compare them; returns the pair's key."""
    from engine.bundle.manifest import verify_bundle
    from engine.config import PRECISIONS

    say, failures = block.say, block.failures
    say(f"model:     {bundle}")
    t0 = time.perf_counter()
    manifest = verify_bundle(bundle)
    pair = manifest.pair
    precisions = [p for p in PRECISIONS if p in manifest.precisions]
    say(f"pair:      {pair.key} ({pair.source.name} → {pair.target.name})")
    say(
        f"verified:  {manifest.model_id}, {len(manifest.files_for(None))} files, sha256 checked "
        f"({_ms((time.perf_counter() - t0) * 1000)}); precisions: {', '.join(precisions) or 'none'}"
    )
    if not precisions:
        failures.append("the bundle has no INT8 or FP32 model")
    text = sentence or pair.self_test
    say(f"sentence:  {text}")
    results: dict[str, PrecisionResult] = {}
    for precision in precisions:
        r = _run_precision(bundle, precision, text)
        results[precision] = r
        say(
            f"{precision}:      {r.text}  (load {_ms(r.load_ms)}, first token {_ms(r.first_token_ms)}, "
            f"total {_ms(r.total_ms)}, {len(r.tokens)} tokens)"
        )
        if not r.text.strip():
            failures.append(f"{precision}: the translation is empty")
        elif not in_script(r.text, pair.target.script):
            failures.append(f"{precision}: the translation is not {pair.target.name}: {r.text!r}")
    if "int8" in results and "fp32" in results:
        a, b = results["int8"], results["fp32"]
        agreement = token_agreement(a.tokens, b.tokens)
        if a.tokens == b.tokens:
            say(f"agreement: INT8 = FP32, identical tokens ({len(a.tokens)}/{len(b.tokens)})")
        elif agreement >= MIN_TOKEN_AGREEMENT:
            say(f"agreement: {agreement:.0%} of tokens (INT8 differs from FP32 within quantisation noise)")
        else:
            say(f"agreement: {agreement:.0%} of tokens")
            failures.append(
                f"INT8 and FP32 disagree beyond quantisation noise ({agreement:.0%} < {MIN_TOKEN_AGREEMENT:.0%})"
            )
    elif precisions:
        say(f"agreement: not compared (only {precisions[0].upper()} is installed)")
    return pair.key


def _guarded(body: Callable[[], T], block: _Block) -> T | None:
    """Run one step of the self-test; any failure becomes a line of the report, never a traceback."""
    try:
        return body()
    except QiaoError as exc:
        block.failures.append(str(exc))
        for place in getattr(exc, "searched", None) or []:
            block.say(f"  searched: {place}")
    except Exception as exc:  # the self-test reports every failure as a result, never as a traceback
        block.failures.append(f"{type(exc).__name__}: {exc}")
    return None


def run_self_test(model: str | None = None, sentence: str | None = None, out: TextIO | None = None) -> int:
    """Self-test `model` (a bundle folder), or every installed bundle when None; print a report, return 0 or 1.

    Each bundle translates its own pair's sentence (manifest `languages.self_test`; `sentence` overrides it) and
    must answer in its target's script. The test passes only when every bundle passes.
    """
    out = out or sys.stdout

    def say(line: str = "") -> None:
        print(line, file=out, flush=True)

    how = "frozen" if getattr(sys, "frozen", False) else "from source"
    python = sys.version.split()[0]
    say(f"qiao {__version__} self-test ({how}, {platform.system()} {platform.machine()}, Python {python})")
    started = time.perf_counter()
    top = _Block(say, [])
    bundles = _guarded(lambda: _bundles_to_test(model), top) or []
    failures = list(top.failures)
    several = len(bundles) > 1
    if several:
        say(f"bundles:   {len(bundles)} installed, each tested")
    for bundle in bundles:
        if several:
            say()
        block = _Block(say, [])
        key = _guarded(partial(_test_bundle, bundle, sentence, block), block)
        name = key or bundle.name
        if several:
            say(f"result:    {name} " + ("passed" if not block.failures else "FAILED"))
        failures += [f"{name}: {f}" if several else f for f in block.failures]
    if several:
        say()
    say(f"elapsed:   {_ms((time.perf_counter() - started) * 1000)}")
    if failures:
        say("self-test FAILED: " + "; ".join(failures))
        return 1
    say("self-test passed")
    return 0
