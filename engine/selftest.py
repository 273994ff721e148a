"""`qiao --self-test`: prove an installed Qiao can translate, with no display, no network and no Python around it.

The frozen app runs this after every build (CI) and a user can run it when something looks wrong. It loads the
located model in every precision the bundle has, translates one fixed sentence in each, checks the result is
non-empty Chinese, compares INT8 with FP32 token by token and prints timings. Pure engine: it never imports Qt,
so it works on a headless machine.
"""

from __future__ import annotations

import difflib
import platform
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from engine import __version__
from engine.errors import QiaoError

# Known to the committed tiny fixture model ("非常感谢。") and translated the same way by opus-mt-en-zh.
SENTENCE = "Thank you very much."
# INT8 may pick different tokens than FP32 (quantisation noise), but both must still say the same thing: at least
# this share of tokens in common (difflib ratio over the token ids). The build pipeline's BLEU margin is the real
# quality gate; this only catches an INT8 graph that has gone wrong (garbage, empty, another language).
MIN_TOKEN_AGREEMENT = 0.5
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff]")


@dataclass(frozen=True)
class PrecisionResult:
    """One precision's run: what it said and how long each step took."""

    precision: str
    text: str
    tokens: list[int]
    load_ms: float
    first_token_ms: float | None
    total_ms: float


def is_chinese(text: str) -> bool:
    """True when Han characters make up at least half of the letters: a model gone wrong can still emit one stray
    character among garbage (a random-weight model did: 'zz18618 zz45226 … 字 …'), which must not pass."""
    letters = [c for c in text if c.isalpha()]
    han = sum(1 for c in letters if _CJK.match(c))
    return han > 0 and 2 * han >= len(letters)


def token_agreement(a: list[int], b: list[int]) -> float:
    """Share of tokens two outputs have in common, in order (1.0 = identical, 0.0 = nothing shared)."""
    if not a and not b:
        return 1.0
    return difflib.SequenceMatcher(a=a, b=b, autojunk=False).ratio()


def _run_precision(bundle: Path, precision: str, sentence: str) -> PrecisionResult:
    from engine.translator import Translator  # onnxruntime is imported here, inside the timed load

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


def run_self_test(model: str | None = None, sentence: str = SENTENCE, out: TextIO | None = None) -> int:
    """Run the self-test against the model `engine.locate` finds (or `model`); print a report, return 0 or 1."""
    from engine.locate import find_bundle
    from engine.manifest import verify_bundle
    from engine.translator import PRECISIONS

    out = out or sys.stdout
    failures: list[str] = []

    def say(line: str = "") -> None:
        print(line, file=out, flush=True)

    how = "frozen" if getattr(sys, "frozen", False) else "from source"
    python = sys.version.split()[0]
    say(f"qiao {__version__} self-test ({how}, {platform.system()} {platform.machine()}, Python {python})")
    started = time.perf_counter()
    results: dict[str, PrecisionResult] = {}
    precisions: list[str] = []
    try:
        bundle = find_bundle(model)
        say(f"model:     {bundle}")
        t0 = time.perf_counter()
        manifest = verify_bundle(bundle)
        precisions = [p for p in PRECISIONS if p in manifest.precisions]
        say(
            f"verified:  {manifest.model_id}, {len(manifest.files_for(None))} files, sha256 checked "
            f"({_ms((time.perf_counter() - t0) * 1000)}); precisions: {', '.join(precisions) or 'none'}"
        )
        if not precisions:
            failures.append("the bundle has no INT8 or FP32 model")
        say(f"sentence:  {sentence}")
        for precision in precisions:
            r = _run_precision(bundle, precision, sentence)
            results[precision] = r
            say(
                f"{precision}:      {r.text}  (load {_ms(r.load_ms)}, first token {_ms(r.first_token_ms)}, "
                f"total {_ms(r.total_ms)}, {len(r.tokens)} tokens)"
            )
            if not r.text.strip():
                failures.append(f"{precision}: the translation is empty")
            elif not is_chinese(r.text):
                failures.append(f"{precision}: the translation is not Chinese: {r.text!r}")
    except QiaoError as exc:
        failures.append(str(exc))
        for place in getattr(exc, "searched", None) or []:
            say(f"  searched: {place}")
    except Exception as exc:  # the self-test reports every failure as a result, never as a traceback
        failures.append(f"{type(exc).__name__}: {exc}")
    else:
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
    say(f"elapsed:   {_ms((time.perf_counter() - started) * 1000)}")
    if failures:
        say("self-test FAILED: " + "; ".join(failures))
        return 1
    say("self-test passed")
    return 0
