"""bench/soak_peaks.py on the tiny fixture: texts chosen by planned cache size, each one's peak read after a reset."""

from __future__ import annotations

import json
import sys

import pytest

from tests.bench.test_bench_helpers import bench  # noqa: F401 - the fixture

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status, clear_refs")


def test_cache_positions_plans_without_decoding_and_restores_the_model(bench, bundle_dir):  # noqa: F811
    peaks = bench("soak_peaks")
    from engine.families.marian.model import OnnxMarian
    from engine.pipeline.translator import Translator

    start = OnnxMarian.start
    translator = Translator(bundle_dir, precision="int8", threads=1)
    text = "The bus was late because the road near the river was closed."
    beam, greedy = peaks.cache_positions(translator, [text, text])  # odd: default beams (4), even: greedy
    assert greedy > 0 and beam == 4 * greedy
    assert OnnxMarian.start is start
    assert translator.translate(text, beams=1).text  # the model decodes again


def test_main_reports_the_largest_texts_peaks(bench, bundle_dir, tmp_path):  # noqa: F811
    peaks = bench("soak_peaks")
    out = tmp_path / "peaks.json"
    assert peaks.main(["--bundle", str(bundle_dir), "--threads", "1", "--translations", "6", "--top", "2", "--json",
                       str(out)]) == 0  # fmt: skip
    result = json.loads(out.read_text())
    texts = result["texts"]
    assert len(texts) == 2 and texts[0]["cache_positions"] >= texts[1]["cache_positions"] > 0
    # In a test process that has run others, RSS after the load may be below the figure after the imports (memory
    # freed meanwhile), so only the load's own high-water mark is ordered here.
    assert result["load_peak_mb"] >= result["after_load_mb"] > 0 and result["imports_mb"] > 0
    for row in texts:
        assert row["peak_mb"] >= row["rss_mb"] > 0 and row["cpu_s"] > 0
    assert result["max_peak_mb"] == max(row["peak_mb"] for row in texts)
