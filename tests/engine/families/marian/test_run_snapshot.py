"""DecoderRun.snapshot/restore on a Marian run (the review window's shared start): a restore continues exactly as
the run did from there, another run's one row fills every row, and a snapshot whose positions were decoded again
is refused instead of silently read."""

from __future__ import annotations

import numpy as np
import pytest

from engine.bundle.manifest import load_manifest
from engine.families.marian.model import OnnxMarian

TOKENS = [1881, 40, 41, 42, 43]  # the start token (pad), then any ids


@pytest.fixture(scope="module")
def model(bundle_dir):
    return OnnxMarian(load_manifest(bundle_dir), "fp32", threads=1)


def _enc(model):
    ids = np.array([[5, 6, 7, 0]], dtype=np.int64)
    return model.encode(ids, np.ones_like(ids))


def _steps(run, tokens):
    return [run.step(np.full(run.rows, t, dtype=np.int64)).copy() for t in tokens]


def test_restore_goes_back_and_continues_as_before(model):
    run = model.start(_enc(model), 8)
    _steps(run, TOKENS[:2])
    mark = run.snapshot()
    want = _steps(run, TOKENS[2:])
    run.restore(mark)
    assert run.length == 2
    got = _steps(run, TOKENS[2:])
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_one_rows_snapshot_starts_every_row_of_another_run(model):
    enc = _enc(model)
    single = model.start(enc, 8)
    _steps(single, TOKENS[:3])
    mark = single.snapshot()
    want = _steps(single, TOKENS[3:])
    wide = model.start(enc.repeated(3), 8)
    wide.restore(mark)
    got = _steps(wide, TOKENS[3:])
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, np.repeat(b, 3, axis=0), rtol=1e-5, atol=1e-5)


def test_a_snapshot_overwritten_since_is_refused(model):
    run = model.start(_enc(model), 8)
    _steps(run, TOKENS[:1])
    early = run.snapshot()
    _steps(run, TOKENS[1:4])
    late = run.snapshot()
    run.restore(early)
    _steps(run, [50, 51])  # positions 1 and 2 now hold another history
    with pytest.raises(ValueError, match="decoded again"):
        run.restore(late)
    run.restore(early)  # still its own positions
    assert run.length == 1
