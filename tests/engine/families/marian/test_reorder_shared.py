"""Beam search's cache reorder skips the positions a row already shares with its new parent
(engine.families.marian.model):
that is exact only because equal token prefixes leave bitwise equal cache rows. Checked here on real beam searches
of the fixture, at both precisions and at 1 and 2 threads: after every reorder the cache equals a full copy."""

from __future__ import annotations

import numpy as np
import pytest

from engine.families.marian.model import DecoderRun
from engine.pipeline.translator import Translator
from tests.conftest import FIXTURE_DIR


def _source_ids(translator: Translator, count: int) -> list[list[int]]:
    lines = (FIXTURE_DIR / "english_extra.txt").read_text(encoding="utf-8").splitlines()
    return [translator.tokenizer.encode(f">>cmn_Hans<< {line}") for line in lines[:count]]


@pytest.mark.parametrize("precision", ["fp32", "int8"])
@pytest.mark.parametrize("threads", [1, 2])
def test_skipped_positions_equal_a_full_reorder(bundle_dir, monkeypatch, precision, threads):
    translator = Translator(bundle_dir, precision=precision, threads=threads)
    reorder = DecoderRun.reorder
    seen = {"skipped": 0, "copied": 0}

    def checked(self, index, shared=None):
        assert shared is not None, "beam search passes what each row shares"
        n = self.length
        expected = [array[index, :, :n].copy() for array in self.cache]
        moved = index != np.arange(len(index))
        seen["skipped"] += int(np.minimum(shared, n)[moved].sum())
        seen["copied"] += int((n - np.minimum(shared, n))[moved].sum())
        reorder(self, index, shared)
        for want, array in zip(expected, self.cache):
            np.testing.assert_array_equal(array[:, :, :n], want)  # bitwise: the skipped positions were equal

    monkeypatch.setattr(DecoderRun, "reorder", checked)
    out = translator.generate_ids(_source_ids(translator, 6), beams=4, max_new_tokens=24)
    assert len(out) == 6 and all(out)
    # the search both skipped shared positions and copied diverging ones: the check above compared both kinds
    assert seen["skipped"] > 0 and seen["copied"] > 0, seen
