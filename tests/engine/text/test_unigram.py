"""engine.text.unigram segments exactly as SentencePiece does (the oracle: MarianTokenizer calls it; test_tokenizer.py
checks the whole tokenizer against MarianTokenizer), ties and float32 near-ties included, costs far less memory than
the `tokenizers` library's Unigram model, and refuses files it would not segment the same way."""

from __future__ import annotations

import ctypes
import gc
import json
import random
import sys
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from engine.text.unigram import UnigramSegmenter
from tests.conftest import BUNDLE, CHECKPOINT, ZH_EN_BUNDLE, ZH_EN_CHECKPOINT
from tests.engine.tokenizer_lines import parity_lines

FIXTURES = {"en-zh": (BUNDLE, CHECKPOINT, "en"), "zh-en": (ZH_EN_BUNDLE, ZH_EN_CHECKPOINT, "zh")}
_NORMAL, _UNKNOWN = 1, 2  # SentencePiece piece types


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


def _identity(proto):
    """`proto` (a SentencePiece ModelProto) with its normaliser turned off, serialised: it segments the text it is
    given as is, so it can segment what engine.text.unigram's normaliser produced (the normaliser is the `tokenizers`
    library's, checked against MarianTokenizer in test_tokenizer.py; this file checks the segmentation)."""
    spec = proto.normalizer_spec
    spec.name, spec.precompiled_charsmap = "identity", b""
    spec.add_dummy_prefix = spec.remove_extra_whitespaces = spec.escape_whitespaces = False
    return proto.SerializeToString()


def _sentencepiece(serialised: bytes):
    spm = pytest.importorskip("sentencepiece")
    return spm.SentencePieceProcessor(model_proto=serialised)


def _oracle_pieces(sp, text: str) -> list[tuple[str, bool]]:
    """SentencePiece's pieces of `text` (already normalised), each with whether it is an unknown run."""
    return [(p, i == sp.unk_id()) for p, i in zip(sp.encode(text, out_type=str), sp.encode(text), strict=True)]


def _our_pieces(ours: UnigramSegmenter, text: str) -> list[tuple[str, bool]]:
    return [(p, i == ours.unk_id) for p, i in ours.segment(text)]


def _differ(ours: UnigramSegmenter, sp, texts: list[str]) -> list[str]:
    return [t for t in texts if _our_pieces(ours, t) != _oracle_pieces(sp, ours.normalize(t))]


def _runs(alphabet: str, longest: int) -> list[str]:
    """Repeated characters and repeated pairs, short to long: where many segmentations tie."""
    out = [c * n for c in alphabet for n in (*range(1, 40), 50, 64, 99, 128, longest)]
    return out + [(a + b) * n for a in alphabet for b in alphabet if a != b for n in (1, 2, 3, 7, 25, longest // 2)]


@pytest.mark.parametrize("key", sorted(FIXTURES))
def test_same_pieces_as_sentencepiece_on_the_fixtures(key):
    bundle, checkpoint, source = FIXTURES[key]
    pb = pytest.importorskip("sentencepiece.sentencepiece_model_pb2")
    proto = pb.ModelProto()
    proto.ParseFromString((checkpoint / "source.spm").read_bytes())
    sp = _sentencepiece(_identity(proto))
    ours = UnigramSegmenter(bundle / "tokenizer.json")
    lines = parity_lines(source=source)
    joined = [" ".join(lines[i : i + 6]) for i in range(0, len(lines), 6)]
    digits = ["5" * n for n in range(1, 30)] + ["x" * 50, "哈" * 40, "555-1234", "1234567890" * 5]
    texts = lines + _junk(random.Random(7), 1500) + joined + digits
    differ = _differ(ours, sp, texts)
    assert not differ, f"{len(differ)}/{len(texts)} differ, first: {differ[:3]!r}"
    assert ours.size == 1 + sum(p.type == _NORMAL for p in proto.pieces)


def test_a_float32_near_tie_on_the_chinese_fixture():
    """ "5"+"55" and "55"+"5" sum to the same float64 but not the same float32: SentencePiece (float32) puts "55"
    first, where the `tokenizers` library (float64, the earlier oracle) put "5" first."""
    ours = UnigramSegmenter(ZH_EN_BUNDLE / "tokenizer.json")
    assert [p for p, _ in ours.segment("请拨打555-1234联系我。")][3:5] == ["55", "5"]


def _pair(tmp_path: Path, vocab: list[tuple[str, float]], name: str = "pair"):
    """The same unigram vocabulary as a SentencePiece model (normaliser off) and as a tokenizer.json (none)."""
    pb = pytest.importorskip("sentencepiece.sentencepiece_model_pb2")
    proto = pb.ModelProto()
    proto.trainer_spec.model_type = 1  # unigram
    proto.trainer_spec.unk_id, proto.trainer_spec.bos_id, proto.trainer_spec.eos_id = 0, -1, -1
    proto.trainer_spec.pad_id = -1
    proto.pieces.add(piece="<unk>", score=0.0, type=_UNKNOWN)
    for piece, score in vocab:
        proto.pieces.add(piece=piece, score=score, type=_NORMAL)
    sp = _sentencepiece(_identity(proto))
    stored = [[p.piece, p.score] for p in proto.pieces[1:]]  # the float32 scores, as the converter writes them
    spec = json.loads((BUNDLE / "tokenizer.json").read_text(encoding="utf-8"))
    spec["normalizer"] = None
    spec["model"]["vocab"] = [["\x01", 0.0], *stored]
    spec["model"]["unk_id"] = 0
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    return UnigramSegmenter(path), sp


def test_fifty_xs_split_as_sentencepiece_splits_them(tmp_path):
    """The issue's case: "x", "xx", "xxxx", "xxxxxxxx" score 1, 2, 4, 8 times "x", so in exact arithmetic every
    split of a run ties; in float32 the sums round, and SentencePiece keeps the first path that scores strictly
    higher. The float64 search put "xx" first and then 8-piece runs."""
    a = -3.7
    ours, sp = _pair(tmp_path, [("▁", -2.0), ("x", a), ("xx", 2 * a), ("xxxx", 4 * a), ("xxxxxxxx", 8 * a)])
    pieces = [p for p, _ in ours.segment("▁" + "x" * 50)]
    assert pieces == sp.encode("▁" + "x" * 50, out_type=str)
    assert pieces[:4] == ["▁", "xxxx", "xxxx", "xxxxxxxx"]
    differ = _differ(ours, sp, ["x" * n for n in range(1, 300)] + ["▁" + "x" * n for n in range(1, 300)])
    assert not differ, f"{len(differ)} runs differ, first: {differ[:3]!r}"


def _tied_vocab(rng: random.Random, alphabet: str, size: int, longest: int, step: float, proportional: bool):
    """Pieces whose scores come from a few values (`step` × 1..6), or `step` × length: many exact and float32-near
    ties. A `step` that is no power of two makes float32 sums round."""
    pieces: set[str] = set(alphabet[:-1])  # the last character has no piece of its own: unknown runs
    while len(pieces) < size:
        pieces.add("".join(rng.choice(alphabet) for _ in range(rng.randint(2, longest))))
    return [(p, step * (len(p) if proportional else rng.randint(1, 6))) for p in sorted(pieces)]


@pytest.mark.parametrize(
    ("seed", "alphabet", "step", "proportional"),
    [
        (1, "ab▁z", -0.5, False),
        (2, "ab▁的了z", -1.3, False),
        (3, "abc▁z", -3.7, True),
        (4, "01▁z", -0.1, True),
        (5, "abz", -0.1, False),
        (6, "a▁z", -2.9, True),
        (7, "abcdefgh▁z", -1.7, False),
        (8, "xyz", -5.3, True),
    ],
)
def test_ties_break_as_sentencepiece_breaks_them(tmp_path, seed, alphabet, step, proportional):
    rng = random.Random(seed)
    vocab = _tied_vocab(rng, alphabet, 40, 9, step, proportional)
    ours, sp = _pair(tmp_path, vocab, f"tied-{seed}")
    pieces = [p for p, _ in vocab]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60))) for _ in range(1500)]
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randint(2, 40))) for _ in range(300)]
    texts += [rng.choice(pieces) * rng.randint(2, 60) for _ in range(300)] + _runs(alphabet, 400)
    differ = _differ(ours, sp, texts)
    assert not differ, f"{len(differ)}/{len(texts)} differ, first: {differ[:3]!r}"
    fused = [t for t in texts if any(unknown and len(p) > 1 for p, unknown in _our_pieces(ours, t))]
    assert fused, "the texts should include runs of unknown characters (fused into one piece)"


@pytest.mark.parametrize(("seed", "alphabet", "step"), [(11, "ab", -0.5), (12, "abc的", -1.3), (13, "01", -3.7)])
def test_whitespace_split_vocabularies_tie_as_sentencepiece(tmp_path, seed, alphabet, step):
    """A trained vocabulary holds `▁` only at a piece's start (SentencePiece splits by whitespace): then the search
    tries no piece past the next `▁`. Tied scores and words that run up to, start at and repeat `▁` check that
    bound against SentencePiece."""
    rng = random.Random(seed)
    pieces: set[str] = {*alphabet, "▁"}
    while len(pieces) < 60:
        word = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8)))
        pieces.add(("▁" + word) if rng.random() < 0.5 else word)
    vocab = [(p, step * rng.randint(1, 6)) for p in sorted(pieces)]
    ours, sp = _pair(tmp_path, vocab, f"spaced-{seed}")
    assert ours._bounded, "no piece has an inner `▁`: the bound applies"
    words = [p.lstrip("▁") or "▁" for p in pieces] + [rng.choice(alphabet) * rng.randint(1, 30) for _ in range(20)]
    texts = ["▁" + "▁".join(rng.choice(words) for _ in range(rng.randint(1, 12))) for _ in range(1500)]
    texts += ["".join(rng.choice(alphabet + "▁z") for _ in range(rng.randint(1, 60))) for _ in range(1500)]
    differ = _differ(ours, sp, texts)
    assert not differ, f"{len(differ)}/{len(texts)} differ, first: {differ[:3]!r}"


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
        (lambda s: s["model"].update(vocab=[["a", -1e39]]), "piece, score"),  # no float32, as SentencePiece's
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
