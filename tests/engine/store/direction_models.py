"""Several installed models of one direction, made from the committed fixture (weights unchanged, resealed with
another model id and, when asked, a published quality and a measured speed)."""

from __future__ import annotations

import shutil
from pathlib import Path

from engine.store.quality import MOZILLA_COMET, REFERENCE_METRIC, REFERENCE_TEST_SET
from tests.conftest import BUNDLE
from tests.engine.bundles import rewrite


def quality_block(score: float, metric: str = REFERENCE_METRIC, test_set: str = REFERENCE_TEST_SET) -> dict:
    return {"metric": metric, "test_set": test_set, "score": score, "source": MOZILLA_COMET}


def speed_block(tokens_per_s: float = 420.0) -> dict:
    return {"tokens_per_s": tokens_per_s, "threads": 2, "precision": "int8", "machine": "test CPU"}


def model_copy(
    dest: Path,
    model_id: str,
    *,
    score: float | None = None,
    speed: float | None = None,
    bundle: Path = BUNDLE,
    quality: dict | None = None,
) -> Path:
    """A copy of `bundle` at `dest` whose manifest names `model_id` and carries the given quality and speed."""
    shutil.copytree(bundle, dest)

    def change(raw: dict) -> None:
        raw["model"]["id"] = model_id
        if quality is not None:
            raw["quality"] = quality
        elif score is not None:
            raw["quality"] = quality_block(score)
        if speed is not None:
            raw["speed"] = speed_block(speed)

    rewrite(dest, change)
    return dest
