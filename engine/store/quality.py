"""What a person weighs when choosing between models of one direction: published quality and measured speed.

A bundle's manifest and a catalogue entry may carry

    "quality": {"metric": "COMET-22", "test_set": "FLORES devtest", "score": 86.31, "source": "<citation>"}
    "speed": {"tokens_per_s": 410.0, "threads": 2, "precision": "int8", "machine": "<CPU>"}

Models are ranked only on one benchmark (REFERENCE): scores of another metric or test set are shown, never compared.
`PUBLISHED` holds the scores Mozilla published for the models Qiao offers (COMET-22 × 100 on FLORES devtest, the
`flores-test` column of evaluation/comet-results.md in mozilla/firefox-translations-models), so an opus-mt bundle
built before manifests carried quality still has its score, and the window can offer a better model without asking
any server.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from typing import Any

REFERENCE_METRIC = "COMET-22"
REFERENCE_TEST_SET = "FLORES devtest"
MAX_TEXT = 300
_TEXT = re.compile(r"[^\x00-\x1f\x7f]{1,300}")
MOZILLA_COMET = (
    "Mozilla's evaluation of Firefox Translations, COMET-22 × 100 on FLORES devtest (flores-test): "
    "evaluation/comet-results.md in github.com/mozilla/firefox-translations-models at e7957fc"
)


@dataclass(frozen=True)
class Quality:
    """A published score: which metric, on which test set, the score, and where it was published."""

    metric: str
    test_set: str
    score: float
    source: str

    @property
    def comparable(self) -> bool:
        """Whether it is on the benchmark models are ranked by."""
        return self.metric == REFERENCE_METRIC and self.test_set == REFERENCE_TEST_SET

    def short(self) -> str:
        """ "COMET-22 86.31" (the metric and score only: the test set is in `describe`)."""
        return f"{self.metric} {self.score:.2f}"

    def describe(self) -> str:
        return f"{self.metric} {self.score:.2f} on {self.test_set} ({self.source})"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Speed:
    """A measured translation speed: target tokens a second, with the threads, precision and CPU it was measured on."""

    tokens_per_s: float
    threads: int
    precision: str
    machine: str

    def short(self) -> str:
        return f"{self.tokens_per_s:,.0f} tok/s"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _text(value: Any) -> bool:
    return isinstance(value, str) and _TEXT.fullmatch(value) is not None


def _number(value: Any, lo: float, hi: float) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and lo <= value <= hi


def quality_problem(raw: Any) -> str | None:
    """Why `raw` is not a quality block (None when it is one)."""
    if not isinstance(raw, dict):
        return "expected an object with metric, test_set, score and source"
    for key in ("metric", "test_set", "source"):
        if not _text(raw.get(key)):
            return f"{key}: expected a text of 1 to {MAX_TEXT} printable characters"
    if not _number(raw.get("score"), -1e6, 1e6):
        return "score: expected a number"
    return None


def speed_problem(raw: Any) -> str | None:
    """Why `raw` is not a speed block (None when it is one)."""
    if not isinstance(raw, dict):
        return "expected an object with tokens_per_s, threads, precision and machine"
    if not _number(raw.get("tokens_per_s"), 0, 1e9) or raw["tokens_per_s"] <= 0:
        return "tokens_per_s: expected a positive number"
    threads = raw.get("threads")
    if not isinstance(threads, int) or isinstance(threads, bool) or not 0 <= threads <= 4096:
        return "threads: expected a whole number from 0 to 4096"
    for key in ("precision", "machine"):
        if not _text(raw.get(key)):
            return f"{key}: expected a text of 1 to {MAX_TEXT} printable characters"
    return None


def parse_quality(raw: Any) -> Quality:
    """A Quality from a checked block; ValueError (the reason) for anything else."""
    problem = quality_problem(raw)
    if problem is not None:
        raise ValueError(problem)
    return Quality(str(raw["metric"]), str(raw["test_set"]), float(raw["score"]), str(raw["source"]))


def parse_speed(raw: Any) -> Speed:
    """A Speed from a checked block; ValueError (the reason) for anything else."""
    problem = speed_problem(raw)
    if problem is not None:
        raise ValueError(problem)
    return Speed(float(raw["tokens_per_s"]), int(raw["threads"]), str(raw["precision"]), str(raw["machine"]))


def _published(score: float) -> Quality:
    return Quality(REFERENCE_METRIC, REFERENCE_TEST_SET, score, MOZILLA_COMET)


@dataclass(frozen=True)
class Published:
    """A model Qiao knows the published score of: its model id (the bundle's), catalogue id, pair and name."""

    model_id: str
    catalogue_id: str
    pair: str
    name: str
    family: str
    quality: Quality


def _firefox(architecture: str, pair: str, name: str, score: float) -> Published:
    """A Firefox model under the id Qiao's converter gives it (engine.families.bergamot.converter.convert: the folder's
    pair and metadata.json's architecture), so a folder imported by hand and the catalogue's download are one model."""
    model_id = f"mozilla/firefox-translations-{pair.replace('-', '')}-{architecture}"
    return Published(model_id, model_id.split("/", 1)[1], pair, name, "bergamot", _published(score))


PUBLISHED: tuple[Published, ...] = (
    _firefox("base-memory", "en-zh", "Firefox base-memory", 86.31),
    _firefox("base", "en-zh", "Firefox base", 85.56),
    Published("Helsinki-NLP/opus-mt-en-zh", "opus-mt-en-zh", "en-zh", "opus-mt-en-zh", "marian", _published(82.44)),
    _firefox("base", "zh-en", "Firefox base", 86.22),
    _firefox("base-memory", "zh-en", "Firefox base-memory", 86.04),
    Published("Helsinki-NLP/opus-mt-zh-en", "opus-mt-zh-en", "zh-en", "opus-mt-zh-en", "marian", _published(84.39)),
)


def published_for(model_id: str, pair: str | None = None) -> Published | None:
    """The published model of that id, and of that pair ("en-zh") when one is given."""
    return next((p for p in PUBLISHED if p.model_id == model_id and pair in (None, p.pair)), None)


def _manifest_pair(raw: dict) -> str | None:
    """ "en-zh" from a manifest's `languages` block; None when it has none that can be read."""
    languages = raw.get("languages")
    if not isinstance(languages, dict):
        return None
    codes = [
        side.get("code") if isinstance(side, dict) else None
        for side in (languages.get("source"), languages.get("target"))
    ]
    return "-".join(codes) if all(isinstance(code, str) for code in codes) else None  # type: ignore[arg-type]


def quality_of(raw: dict, model_id: str, pair: str | None = None) -> Quality | None:
    """A manifest's (or catalogue entry's) quality block, else the published score of its model id when it translates
    the published pair (`pair`, "en-zh", else the manifest's `languages`), else None: a model built as another pair
    under a published id (`qiao model build --model-id`) is not the published model. A malformed block counts as
    none: a score is advice, never a reason to refuse a model."""
    block = raw.get("quality")
    if block is not None and quality_problem(block) is None:
        return parse_quality(block)
    pair = pair or _manifest_pair(raw)
    if pair is None:
        return None
    known = published_for(model_id, pair)
    return known.quality if known is not None else None


def speed_of(raw: dict) -> Speed | None:
    """A manifest's speed block, or None (none recorded, or malformed)."""
    block = raw.get("speed")
    return parse_speed(block) if block is not None and speed_problem(block) is None else None


def rank(quality: Quality | None) -> float:
    """Higher is better: the score on the reference benchmark; -inf when unknown or on another benchmark."""
    return quality.score if quality is not None and quality.comparable else -math.inf


def best_published(pair: str) -> Published | None:
    """The best model Qiao knows of for `pair` ("en-zh")."""
    candidates = [p for p in PUBLISHED if p.pair == pair]
    return max(candidates, key=lambda p: rank(p.quality)) if candidates else None
