"""BergamotRun.snapshot/restore (base.DecoderRun; the review window's shared start): the SSRU cells kept per
position let a run go back to any prefix and continue exactly, and a batch-1 run's snapshot start every row of a
wider run; BergamotEncoderState.allowing adds forced ids to the shortlist, through take() as well."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")  # the graphs are built here (the build extra)

from tests.engine.families.bergamot.direct import random_architecture, random_params
from tests.engine.families.bergamot.test_model import Rule, batch, lexicon, make

TOKENS = [0, 7, 9, 11, 13, 5]


def _model():
    arch = random_architecture()
    return make(arch, random_params(arch, seed=3, scale=2.0), rule=Rule(lexicon(arch)))


def _steps(run, tokens):
    return [run.step(np.full(run.rows, t, dtype=np.int64)).copy() for t in tokens]


def test_restore_goes_back_and_continues_as_before():
    model = _model()
    run = model.start(model.encode(*batch([[5, 6, 7, 0]])), 16)
    marks = [run.snapshot()]
    for t in TOKENS:
        _steps(run, [t])
        marks.append(run.snapshot())
    for n in (4, 0, 2):
        run.restore(marks[n])
        assert run.length == n
        again = _steps(run, TOKENS[n:])
        fresh = model.start(model.encode(*batch([[5, 6, 7, 0]])), 16)
        want = _steps(fresh, TOKENS)[n:]
        for a, b in zip(again, want):
            np.testing.assert_array_equal(a, b)


def test_one_rows_snapshot_starts_every_row_of_another_run():
    model = _model()
    enc = model.encode(*batch([[5, 6, 7, 0]]))
    single = model.start(enc, 16)
    _steps(single, TOKENS[:3])
    mark = single.snapshot()
    want = _steps(single, TOKENS[3:])
    wide = model.start(enc.repeated(4), 16)
    wide.restore(mark)
    for a, b in zip(_steps(wide, TOKENS[3:]), want):
        np.testing.assert_allclose(a, np.repeat(b, 4, axis=0), rtol=1e-6, atol=1e-6)


def test_allowing_adds_ids_to_the_shortlist_and_keeps_them_for_row_subsets():
    model = _model()
    enc = model.encode(*batch([[5, 6, 0], [8, 9, 10, 0]]))
    assert enc.shortlist is not None
    outside = [i for i in range(2, model.vocab_size) if i not in set(enc.shortlist.tolist())][:2]
    assert enc.allowing([]) is enc and enc.allowing(enc.shortlist[:3]) is enc
    wider = enc.allowing(outside)
    assert set(outside) <= set(wider.shortlist.tolist()) and set(enc.shortlist.tolist()) <= set(
        wider.shortlist.tolist()
    )
    assert set(outside) <= set(wider.take([1]).shortlist.tolist())
    assert set(outside) <= set(wider.repeated(2).shortlist.tolist())
    run = model.start(wider, 8)
    logits = run.step(np.zeros(2, dtype=np.int64))
    assert np.isfinite(logits[:, outside]).all()
