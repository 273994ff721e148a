"""engine.unigram segments exactly as the `tokenizers` library's Unigram model does (the library is the oracle here;
test_tokenizer.py checks the whole tokenizer against transformers' MarianTokenizer), costs far less memory, and
refuses files it would not segment the same way."""

from __future__ import annotations

import ctypes
import gc
import json
import random
import sys
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from engine.unigram import UnigramSegmenter
from tests.conftest import BUNDLE, ZH_EN_BUNDLE
from tests.engine.tokenizer_lines import parity_lines

FIXTURES = {"en-zh": (BUNDLE, "en"), "zh-en": (ZH_EN_BUNDLE, "zh")}


def _library(path: Path) -> Tokenizer:
    tok = Tokenizer.from_file(str(path))
    tok.model._resize_cache(0)
    return tok


def _library_pieces(tok: Tokenizer, text: str) -> list[tuple[str, int]]:
    enc = tok.encode(text, add_special_tokens=False)
    return list(zip(enc.tokens, enc.ids, strict=True))


def _junk(rng: random.Random, count: int) -> list[str]:
    """Strings no sentence list has: unknown runs, emoji, control and combining characters, odd spacing."""
    pools = [
        (0x20, 0x7E),
        (0x4E00, 0x9FFF),
        (0x80, 0x2FFF),
        (0x1F300, 0x1F6FF),
        (0x0300, 0x036F),
        (0x00, 0x1F),
        (0x3000, 0x303F),
        (0xFF00, 0xFFEF),
    ]
    out = []
    for _ in range(count):
        chars = []
        for _ in range(rng.randint(1, 80)):
            lo, hi = rng.choice(pools)
            chars.append(chr(rng.randint(lo, hi)))
        out.append("".join(chars))
    return [*out, "", " ", "   ", "\t\n", "a" * 3000, "的" * 500, "▁▁", "\x01", "x\x01y"]


@pytest.mark.parametrize("key", sorted(FIXTURES))
def test_same_pieces_as_the_library_on_the_fixtures(key):
    bundle, source = FIXTURES[key]
    path = bundle / "tokenizer.json"
    ours, theirs = UnigramSegmenter(path), _library(path)
    lines = parity_lines(source=source)
    texts = lines + _junk(random.Random(7), 1500) + [" ".join(lines[i : i + 6]) for i in range(0, len(lines), 6)]
    differ = [t for t in texts if ours.segment(t) != _library_pieces(theirs, t)]
    assert not differ, f"{len(differ)}/{len(texts)} differ, first: {differ[:3]!r}"
    assert ours.size == theirs.get_vocab_size(with_added_tokens=False)


def _synthetic(tmp_path: Path, seed: int, size: int, alphabet: str, score_step: float) -> Path:
    """A tokenizer.json over a small alphabet with coarse scores: many segmentations score exactly the same, so the
    tie-breaking must be the library's, not merely a good one."""
    rng = random.Random(seed)
    pieces = {"\x01"}
    while len(pieces) < size:
        pieces.add("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 7))))
    vocab = [["\x01", 0.0]] + [[p, -score_step * rng.randint(1, 12)] for p in sorted(pieces - {"\x01"})]
    spec = json.loads((BUNDLE / "tokenizer.json").read_text(encoding="utf-8"))
    spec["model"]["vocab"] = vocab
    path = tmp_path / f"synthetic-{seed}.json"
    path.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("seed", "alphabet", "step"), [(1, "abc▁", 0.5), (2, "ab▁的了", 1.0), (3, "abcdefgh▁", 0.25), (4, "01▁", 2.0)]
)
def test_ties_break_as_the_library_breaks_them(tmp_path, seed, alphabet, step):
    path = _synthetic(tmp_path, seed, 60, alphabet, step)
    ours, theirs = UnigramSegmenter(path), _library(path)
    rng = random.Random(seed)
    texts = ["".join(rng.choice(alphabet + "xyz ") for _ in range(rng.randint(1, 40))) for _ in range(3000)]
    differ = [t for t in texts if ours.segment(t) != _library_pieces(theirs, t)]
    assert not differ, f"{len(differ)}/{len(texts)} differ, first: {differ[:3]!r}"
    fused = [t for t in texts if any(i == ours.unk_id and len(p) > 1 for p, i in ours.segment(t))]
    assert fused, "the texts should include runs of unknown characters (fused into one piece)"


def test_duplicate_pieces_keep_the_last_entry_like_the_library(tmp_path):
    spec = json.loads((BUNDLE / "tokenizer.json").read_text(encoding="utf-8"))
    spec["model"]["vocab"] = [["\x01", 0.0], ["▁a", -1.0], ["b", -1.0], ["▁a", -9.0], ["▁", -2.0], ["a", -2.0]]
    path = tmp_path / "dup.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    ours, theirs = UnigramSegmenter(path), _library(path)
    for text in ("a", "ab", "a a", "ba"):
        assert ours.segment(text) == _library_pieces(theirs, text)
    assert ours.segment("a") == [("▁", 4), ("a", 5)]  # "▁a" is id 3 at -9: two pieces at -4 win


def _rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc and glibc's malloc_trim")
def test_a_real_scale_vocabulary_costs_a_fraction_of_the_librarys_memory(tmp_path):
    """32,000 pieces like a real opus-mt side: the library's trie holds a hash map per node (~31 MB at real
    scale); the dict this module keeps is a few MB. Measured as resident memory after each load, trimmed."""
    rng = random.Random(5)
    letters = "abcdefghijklmnopqrstuvwxyz"
    pieces = {"\x01"}
    while len(pieces) < 32_000:
        word = "".join(rng.choice(letters) for _ in range(rng.randint(1, 12)))
        pieces.add(("▁" + word) if rng.random() < 0.5 else word)
    vocab = [["\x01", 0.0]] + [[p, -rng.uniform(2, 16)] for p in sorted(pieces - {"\x01"})]
    spec = json.loads((BUNDLE / "tokenizer.json").read_text(encoding="utf-8"))
    spec["model"]["vocab"] = vocab
    path = tmp_path / "big.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    del vocab, pieces, spec
    trim = ctypes.CDLL("libc.so.6").malloc_trim

    def cost(load) -> int:
        gc.collect()
        trim(0)
        before = _rss_kib()
        kept = load()
        gc.collect()
        trim(0)
        after = _rss_kib()
        assert kept is not None
        return after - before

    ours = cost(lambda: UnigramSegmenter(path))
    theirs = cost(lambda: _library(path))
    assert ours * 2 < theirs, f"ours {ours} KiB, the library's {theirs} KiB"


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda s: s["model"].update(type="BPE"), "no unigram model"),
        (lambda s: s["model"].update(byte_fallback=True), "byte fallback"),
        (lambda s: s.update(pre_tokenizer={"type": "Whitespace"}), "pre-tokenizer"),
        (lambda s: s.update(added_tokens=[{"id": 0, "content": "x"}]), "added tokens"),
        (lambda s: s["model"].update(vocab=[]), "empty"),
        (lambda s: s["model"].update(vocab=[["a", "high"]]), "piece, score"),
        (lambda s: s["model"].update(vocab=[["a", float("nan")]]), "piece, score"),
        (lambda s: s["model"].update(vocab=[["", 0.0]]), "piece, score"),
        (lambda s: s["model"].update(vocab=[["a", True]]), "piece, score"),
        (lambda s: s["model"].update(unk_id=99_999), "unk_id"),
        (lambda s: s["model"].update(unk_id=None), "unk_id"),
    ],
)
def test_files_it_would_not_segment_the_same_are_refused(tmp_path, edit, message):
    spec = json.loads((BUNDLE / "tokenizer.json").read_text(encoding="utf-8"))
    edit(spec)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        UnigramSegmenter(path)


@pytest.mark.parametrize("content", [b"", b"[]", b"{}", b'{"model": 3}', b"\xff\xfe junk", b'{"model": {"type": "Uni'])
def test_damaged_files_raise_value_error(tmp_path, content):
    path = tmp_path / "t.json"
    path.write_bytes(content)
    with pytest.raises(ValueError):
        UnigramSegmenter(path)
