"""Helpers for the text-based format tests (txt, Markdown, SRT, WebVTT): made-up translations, a real one through
the tiny fixture model, and fuzzing a parser."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping

from engine.documents.inline import distribute
from engine.documents.model import DocumentError, Extracted
from tests.conftest import FIXTURE_DIR

CORPUS = dict(line.split("\t")[:2] for line in (FIXTURE_DIR / "corpus.tsv").read_text(encoding="utf-8").splitlines())


def identity(doc: Extracted) -> list[list[str]]:
    """Each run's own text: rendering it must give back the very same bytes."""
    return [[run.text for run in unit.runs] for unit in doc.units]


def upper(doc: Extracted) -> list[list[str]]:
    """A made-up translation that shows exactly which text was translatable."""
    return [[run.text if run.fixed else run.text.upper() for run in unit.runs] for unit in doc.units]


def mapped(doc: Extracted, table: Mapping[str, str]) -> list[list[str] | None]:
    """Units whose source is in `table` translated to it (shared among the runs), the others left alone."""
    return [distribute(unit, table[unit.source]) if unit.source in table else None for unit in doc.units]


def translated(doc: Extracted, translator) -> list[list[str] | None]:
    """What the document job does: every translatable unit's source through the engine, shared back."""
    todo = [i for i, unit in enumerate(doc.units) if unit.translatable]
    out: list[list[str] | None] = [None] * len(doc.units)
    results = translator.translate_segments([doc.units[i].source for i in todo])
    for i, result in zip(todo, results):
        out[i] = distribute(doc.units[i], result.text)
    return out


def fuzz_inputs(valid: bytes, seed: int) -> Iterator[bytes]:
    """Garbage, truncations and damaged copies of `valid`, and huge lines."""
    rng = random.Random(seed)
    for size in (1, 2, 3, 7, 64, 512, 4096):
        yield rng.randbytes(size)
    step = max(1, len(valid) // 60)
    for cut in range(0, len(valid), step):
        yield valid[:cut]
    for _ in range(40):
        damaged = bytearray(valid)
        for _ in range(rng.randint(1, 8)):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        yield bytes(damaged)
    for _ in range(20):
        chunk = valid[rng.randrange(len(valid)) :][: rng.randint(1, 200)]
        yield valid[: rng.randrange(len(valid))] + chunk * rng.randint(1, 50)
    yield valid + b"x" * 300_000
    yield b"word " * 200_000
    yield valid[:40] + bytes(rng.choice(b"[]()`*_<>&!\\ -|#\n") for _ in range(200_000))


def assert_fuzz_safe(read: Callable[[bytes], Extracted], valid: bytes, seed: int) -> int:
    """Every fuzzed input is refused with a DocumentError or read into a document that renders (identity: the
    same bytes back); never another exception. Returns how many were read."""
    accepted = 0
    for data in fuzz_inputs(valid, seed):
        try:
            doc = read(data)
        except DocumentError:
            continue
        accepted += 1
        assert doc.render(identity(doc), target="zh") == data
        try:
            doc.render(upper(doc), target="zh")
            doc.render([None] * len(doc.units), target="en")
        except DocumentError:
            pass
    return accepted
