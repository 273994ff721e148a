"""Beam search drops a finished sentence's beams from the batch (GenerationParams.drop_finished): the rows left
decode exactly as before at FP32 (rows are independent there), and every sentence's output and stream agree."""

from __future__ import annotations

import numpy as np
import pytest

from engine.families.marian.model import DecoderRun
from engine.pipeline.batching import length_limit
from engine.pipeline.translator import Translator
from tests.conftest import FIXTURE_DIR


@pytest.fixture(scope="module")
def fp32(bundle_dir):
    return Translator(bundle_dir, precision="fp32", threads=1)


def _batch(translator: Translator) -> list[list[int]]:
    """Sentences of very different lengths, so they finish on different steps."""
    lines = (FIXTURE_DIR / "english_extra.txt").read_text(encoding="utf-8").splitlines()
    by_length = sorted(lines[:40], key=len)
    texts = [by_length[0], by_length[-1], by_length[5], by_length[-3], by_length[1]]
    return [translator.tokenizer.encode(f">>cmn_Hans<< {t}") for t in texts]


def _decode(translator: Translator, batch, drop: bool):
    """One beam-4 search of `batch`: every step's (committed tokens, done) copied as it came, and the last update."""
    limits = np.array([length_limit(len(r), 512) for r in batch], dtype=np.int64)
    params = translator.params(4).replace(drop_finished=drop, max_length=int(limits.max()))
    stream = []
    for update in translator._search(batch, params, limits):  # committed lists grow in place: copied per step
        stream.append(([list(c) for c in update.committed], list(update.done)))
    return stream, update


def _run(translator: Translator, batch, drop: bool, monkeypatch):
    """`_decode`, and the rows each decoder step ran."""
    rows_per_step: list[int] = []
    step = DecoderRun.step

    def counted(self, tokens):
        rows_per_step.append(len(tokens))
        return step(self, tokens)

    monkeypatch.setattr(DecoderRun, "step", counted)
    stream, last = _decode(translator, batch, drop)
    monkeypatch.setattr(DecoderRun, "step", step)
    return stream, last, rows_per_step


def test_dropping_finished_sentences_changes_nothing_at_fp32(fp32, monkeypatch):
    batch = _batch(fp32)
    kept_updates, kept, kept_rows = _run(fp32, batch, False, monkeypatch)
    drop_updates, dropped, drop_rows = _run(fp32, batch, True, monkeypatch)
    assert dropped.tokens == kept.tokens
    for a, b in zip(dropped.outputs, kept.outputs):
        assert a.best.tokens == b.best.tokens and a.best.score == b.best.score
        assert [h.tokens for h in a.nbest] == [h.tokens for h in b.nbest]
    assert drop_updates == kept_updates, "the same stream, step by step"
    # the finished sentences really left: fewer rows per step at the end, the same number of steps
    assert len(drop_rows) == len(kept_rows) and set(kept_rows) == {4 * len(batch)}
    assert drop_rows[0] == 4 * len(batch) and drop_rows[-1] < drop_rows[0]
    assert drop_rows == sorted(drop_rows, reverse=True) and all(r % 4 == 0 for r in drop_rows)


def test_int8_agreement_with_the_full_batch_is_at_least_99_percent(bundle_dir):
    """INT8 quantises each step's activations with one scale for all rows, so a smaller batch may change a later
    token (issue #16's rule: such a path is on by default only with ≥ 99 % of sentences identical). Measured here
    on the fixture's memorised and unseen sentences in batches of 5 and 8 at beam 4: 1,256 of 1,260 identical with
    batches of 2, 5 and 8 when it was written."""
    int8 = Translator(bundle_dir, precision="int8", threads=1)
    corpus = [r.split("\t")[0] for r in (FIXTURE_DIR / "corpus.tsv").read_text(encoding="utf-8").splitlines()]
    extra = (FIXTURE_DIR / "english_extra.txt").read_text(encoding="utf-8").splitlines()
    ids = [int8.tokenizer.encode(f">>cmn_Hans<< {t}") for t in corpus + extra]
    same = total = 0
    for size in (5, 8):
        for i in range(0, len(ids), size):
            batch = ids[i : i + size]
            kept, dropped = (_decode(int8, batch, drop)[1].tokens for drop in (False, True))
            same += sum(a == b for a, b in zip(kept, dropped))
            total += len(batch)
    assert total >= 800
    assert same / total >= 0.99, f"{same} of {total} identical"
