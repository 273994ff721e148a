"""The Bergamot tokenizer reproduces SentencePiece id for id (encoding) and character for character (decoding and
normalising), on SentencePiece models trained here the way Marian and Mozilla train theirs: `</s>` 0, `<unk>` 1, no
BOS; nmt_nfkc (the default), identity, nmt_nfkc_cf; byte fallback with Mozilla's user-defined symbols; whitespace
flags off; one shared English+Chinese vocabulary and separate English / Chinese ones.

Two SentencePieces: the `sentencepiece` 0.2 package (the build extra; without it every test here is skipped) is the
oracle for everything, run against the tokenizer in its PACKAGE mode; Marian's own (0.1.9x, what bergamot-translator
runs, the tokenizer's default MARIAN mode) splits some near ties and hand-made user-defined scores otherwise, checked
against bergamot-translator itself where that oracle can run (marker `bergamot`)."""

from __future__ import annotations

import gzip
import io
import json
import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from engine.errors import BuildError
from engine.families.bergamot.converter import tokenizer as build
from engine.families.bergamot.tokenizer import BergamotTokenizer
from engine.families.bergamot.vocabulary import MARIAN, PACKAGE, Vocabulary, complete_bytes, decode_bytes
from tests.engine.tokenizer_lines import parity_lines

spm = pytest.importorskip("sentencepiece")
pb = pytest.importorskip("sentencepiece.sentencepiece_model_pb2")

ROOT = Path(__file__).resolve().parents[4]
FIXTURE = ROOT / "tests" / "fixtures" / "tiny_marian"
MOZILLA_SYMBOLS = ["__source__", "__target__", "__done__", "__start__", "__end__", "__sep__", "__misc0__"]


def _corpus() -> tuple[list[str], list[str]]:
    rows = [r.split("\t") for r in (FIXTURE / "corpus.tsv").read_text(encoding="utf-8").splitlines()]
    english = [r[0] for r in rows] + (FIXTURE / "english_extra.txt").read_text(encoding="utf-8").splitlines()
    chinese = [c for r in rows for c in r[1:]] + (FIXTURE / "chinese_extra.txt").read_text(
        encoding="utf-8"
    ).splitlines()
    return english, chinese


def train(lines: list[str], **options) -> bytes:
    """A unigram SentencePiece model with Marian's ids (`spm_train --bos_id=-1 --eos_id=0 --unk_id=1`)."""
    out = io.BytesIO()
    options = {
        "vocab_size": 1600,
        "hard_vocab_limit": False,
        "bos_id": -1,
        "eos_id": 0,
        "unk_id": 1,
        "num_threads": 1,
        **options,
    }
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=out, minloglevel=2, **options)
    return out.getvalue()


@dataclass(frozen=True)
class Variant:
    lines: str  # "both", "en", "zh": which text it is trained on
    options: dict


VARIANTS = {
    "nmt_nfkc": Variant("both", {}),
    # Mozilla's spm-vocab.sh: byte fallback, its placeholders as user-defined symbols, digits split
    "bytes_user": Variant(
        "both",
        {
            "byte_fallback": True,
            "user_defined_symbols": MOZILLA_SYMBOLS,
            "split_digits": True,
            "character_coverage": 0.98,
        },
    ),
    "identity": Variant("both", {"normalization_rule_name": "identity", "character_coverage": 0.98}),
    "nfkc_cf_bytes": Variant("both", {"normalization_rule_name": "nmt_nfkc_cf", "byte_fallback": True}),
    "no_whitespace_rules": Variant("both", {"remove_extra_whitespaces": False, "add_dummy_prefix": False}),
    "english": Variant("en", {"vocab_size": 600}),
    "chinese": Variant("zh", {"byte_fallback": True, "user_defined_symbols": MOZILLA_SYMBOLS}),
}


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, tuple[bytes, Path]]:
    """Each variant's model bytes and its .spm file."""
    english, chinese = _corpus()
    texts = {"both": english + chinese, "en": english, "zh": chinese}
    folder = tmp_path_factory.mktemp("spm")
    out = {}
    for name, variant in VARIANTS.items():
        blob = train(texts[variant.lines], **variant.options)
        path = folder / f"{name}.spm"
        path.write_bytes(blob)
        out[name] = (blob, path)
    return out


def _tokenizer(
    models, tmp_path: Path, source: str, target: str | None = None, sentencepiece: str = PACKAGE
) -> BergamotTokenizer:
    info = build.build_tokenizer(models[source][1], models[target][1] if target else None, tmp_path)
    return BergamotTokenizer(info.as_dict(), tmp_path, sentencepiece=sentencepiece)


@pytest.fixture(scope="module")
def shared(models, tmp_path_factory) -> dict[str, BergamotTokenizer]:
    """A shared-vocabulary tokenizer per variant, built through the build step, as the sentencepiece package
    computes (the oracle here)."""
    return {name: _tokenizer(models, tmp_path_factory.mktemp(name), name) for name in VARIANTS}


@pytest.fixture(scope="module")
def marian(models, tmp_path_factory) -> dict[str, BergamotTokenizer]:
    """The same, as bergamot-translator computes (the runtime's default)."""
    return {name: _tokenizer(models, tmp_path_factory.mktemp(name), name, None, MARIAN) for name in VARIANTS}


def _oracle(models, name: str):
    return spm.SentencePieceProcessor(model_proto=models[name][0])


def _junk(rng: random.Random, count: int) -> list[str]:
    """Strings no sentence list has: Hangul jamo (the character map's multi-character keys), combining marks,
    emoji, control characters, full-width forms, odd spacing."""
    pools = [
        (0x20, 0x7E),
        (0x4E00, 0x9FFF),
        (0x80, 0x2FFF),
        (0x1F300, 0x1F6FF),
        (0x0300, 0x036F),
        (0x00, 0x1F),
        (0x3000, 0x303F),
        (0xFF00, 0xFFEF),
        (0x1100, 0x11FF),
        (0x3130, 0x318F),
        (0xAC00, 0xD7A3),
    ]
    out = []
    for _ in range(count):
        chars = []
        for _ in range(rng.randint(1, 60)):
            lo, hi = rng.choice(pools)
            chars.append(chr(rng.randint(lo, hi)))
        out.append("".join(chars))
    return out


SPECIAL_LINES = [
    "",
    " ",
    "\t\n ",
    "__source__ hello __target__ 你好 __done__",
    "a__sep__b__misc0__c",
    "__source____target__",
    "  __end__  ",
    "▁▁a ▁",
    "\u3000\u3000全角空格\u3000",
    "ＡＢＣ１２３，。！？",
    "e\u0301 a\u0308 ﬁ ① ㈱ ㍿",
    "\u1100\u1161\u11a8 \u3131\u314f \uffa1\uffc2",  # conjoining and compatibility jamo: one syllable each
    "🇨🇳🇺🇸 👩‍💻 👍🏽",
    "x" * 300,
    "555-1234 and 2024年3月12日",
    "</s> <unk> <s> <0x41>",
]


def _lines(rng_seed: int = 3) -> tuple[list[str], list[str], list[str]]:
    english = parity_lines(source="en")
    chinese = parity_lines(source="zh")
    return english, chinese, _junk(random.Random(rng_seed), 600) + SPECIAL_LINES


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_encode_equals_sentencepiece(models, shared, name):
    """Source ids = SentencePiece's Encode(line) + `</s>`, on ≥ 500 English, ≥ 500 Chinese and ≥ 500 other lines
    (mixed, punctuation, full-width, emoji, whitespace runs, empty, jamo, control characters)."""
    sp, ours = _oracle(models, name), shared[name]
    for lines in _lines():
        assert len(lines) >= 500
        differ = [line for line in lines if ours.encode(line) != [*sp.encode(line), 0]]
        assert not differ, f"{len(differ)}/{len(lines)} lines differ, first: {differ[:3]!r}"
        assert ours.encode_batch(lines[:50], add_eos=False) == [sp.encode(line) for line in lines[:50]]


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_normalizer_equals_sentencepiece(models, shared, name):
    sp, ours = _oracle(models, name), shared[name].source
    lines = [line for group in _lines(11) for line in group]
    differ = [line for line in lines if ours.normalize(line) != sp.normalize(line)]
    assert not differ, f"{len(differ)}/{len(lines)} lines differ, first: {differ[:3]!r}"


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_plain_ascii_normalises_without_walking_the_character_map(models, shared, name, monkeypatch):
    """Printable ASCII whose every character stays itself takes the whitespace rules alone: the same text as
    SentencePiece's, spaces anywhere, user-defined pieces (which start with `_`) still found by the full walk."""
    sp, ours = _oracle(models, name), shared[name].source.normalizer
    rng = random.Random(5)
    pool = [chr(c) for c in range(0x20, 0x7F)] + [" "] * 20 + ["__source__", "__misc0__", "ab", "Hello"] * 3
    texts = ["", " ", "   ", " a", "a ", "a  b", "  Hello,  world!  "]
    texts += ["".join(rng.choice(pool) for _ in range(rng.randrange(0, 25))) for _ in range(3000)]
    differ = [text for text in texts if ours(text) != sp.normalize(text)]
    assert not differ, differ[:3]
    assert " " in ours._inert and "a" in ours._inert

    def walked(*args):
        raise AssertionError("the character map was walked")

    monkeypatch.setattr(ours, "_prefix", walked)
    assert ours("  the weather, at 5 p.m.,   is (still) fine!  ") == sp.normalize(
        "  the weather, at 5 p.m.,   is (still) fine!  "
    )


def _sequences(sp, rng: random.Random, lines: list[str]) -> list[list[int]]:
    """Random id sequences (every piece type, bytes cut short), the ids of real lines, and edge cases."""
    size = sp.get_piece_size()
    ids = [[rng.randrange(size) for _ in range(rng.randint(0, 25))] for _ in range(2000)]
    ids += [sp.encode(line) for line in lines] + [[*sp.encode(line), 0] for line in lines[:100]]
    space = sp.piece_to_id("▁")
    ids += [[], [0], [1], [0, 0], [1, 1, 5], [space], [space, space, 7], [0, space, 9], [1, space]]
    if sp.piece_to_id("<0xE4>") != sp.unk_id():
        b = [sp.piece_to_id(f"<0x{x:02X}>") for x in (0xE4, 0xBD, 0xA0, 0x20, 0xFF, 0xF0, 0x9F)]
        ids += [b[:3], b[:2], b[:1], [b[0], 5, b[1]], [b[3], 9], [b[4], b[0]], b[5:], [space, *b[:2], 10]]
    return ids


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_decode_equals_sentencepiece(models, shared, name):
    """Decoding = SentencePiece's Decode: control pieces vanish, `<unk>` is " ⁇ ", byte runs decode as UTF-8 with
    U+FFFD per bad byte, `▁` is a space and the dummy prefix goes."""
    sp, ours = _oracle(models, name), shared[name]
    english, chinese, other = _lines()
    sequences = _sequences(sp, random.Random(5), english[:200] + chinese[:200] + other[:200])
    differ = [ids for ids in sequences if ours.decode(ids) != sp.decode(ids)]
    assert not differ, f"{len(differ)}/{len(sequences)} differ, first: {differ[:3]!r}"


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_marian_and_the_package_differ_only_on_near_ties(models, shared, marian, name):
    """Marian's SentencePiece compares float64 path sums, the package float32 ones: the few lines they split
    differently are near ties (the two segmentations' scores agree to float32 precision), decode to the same text,
    and everything else (normalising, decoding) is the same."""
    package, ours = shared[name], marian[name]
    vocab = ours.source
    scores = json.loads(json.dumps(build.model_json(build.parse_model(models[name][0]))))["scores"]
    lines = [line for group in _lines() for line in group]
    differ = [line for line in lines if ours.encode(line) != package.encode(line)]
    assert len(differ) <= len(lines) // 100
    if name == "nmt_nfkc":  # this vocabulary has some (bergamot itself splits them Marian's way)
        assert differ
    for line in differ:
        a, b = ours.encode(line, add_eos=False), package.encode(line, add_eos=False)
        assert ours.decode(a) == package.decode(b)
        total = [sum(scores[i] for i in ids if vocab.piece_type(i) == 1) for ids in (a, b)]
        assert total[0] == pytest.approx(total[1], rel=1e-6, abs=1e-5), line
    sequences = _sequences(_oracle(models, name), random.Random(9), lines[:300])
    assert [ours.decode(ids) for ids in sequences] == [package.decode(ids) for ids in sequences]


def test_the_dummy_prefix_goes_from_every_piece_while_the_text_is_empty(models, tmp_path):
    """Where SentencePiece versions differ, the tokenizer follows bergamot-translator's (browsermt/sentencepiece,
    0.1.9x: one leading `▁` dropped from each piece while nothing is written): with `add_dummy_prefix` on and
    `remove_extra_whitespaces` off, SentencePiece 0.2 drops only the first. Firefox's models keep the default
    (both on), where the two agree (test_decode_equals_sentencepiece)."""
    blob = train(_corpus()[0], vocab_size=600, remove_extra_whitespaces=False)
    (tmp_path / "m.spm").write_bytes(blob)
    info = build.build_tokenizer(tmp_path / "m.spm", None, tmp_path).as_dict()
    ours = BergamotTokenizer(info, tmp_path)
    package = BergamotTokenizer(info, tmp_path, sentencepiece=PACKAGE)
    sp = spm.SentencePieceProcessor(model_proto=blob)
    space, word = sp.piece_to_id("▁"), sp.piece_to_id("▁the")
    assert sp.id_to_piece(space) == "▁" and sp.id_to_piece(word) == "▁the"
    assert ours.decode([space, word]) == "the"  # "" + "the": the text was still empty
    assert package.decode([space, word]) == sp.decode([space, word]) == " the"
    assert ours.decode([word, word]) == sp.decode([word, word]) == "the the"


def test_separate_vocabularies_encode_with_the_source_model_and_write_with_the_target_model(models, tmp_path):
    ours = _tokenizer(models, tmp_path, "english", "chinese")
    en, zh = _oracle(models, "english"), _oracle(models, "chinese")
    assert ours.separate_vocabularies and ours.source_vocab_size == en.get_piece_size()
    assert ours.vocab_size == zh.get_piece_size() and (ours.eos_id, ours.unk_id, ours.pad_id) == (0, 1, 0)
    english, chinese, other = _lines()
    for line in english + other:
        assert ours.encode(line) == [*en.encode(line), 0]
        assert ours.pieces(line) == en.encode(line, out_type=str)
    for line in chinese + other:
        assert ours.encode_target(line) == zh.encode(line)
        ids = zh.encode(line)
        assert ours.decode(ids) == zh.decode(ids)
    assert ours.id_to_piece(5) == zh.id_to_piece(5) and ours.id_to_piece(5) != en.id_to_piece(5)
    normal = next(i for i in range(300, zh.get_piece_size()) if not (zh.is_byte(i) or zh.is_control(i)))
    piece = zh.id_to_piece(normal)
    assert ours.token_to_id(piece) == ours.target_token_to_id(piece) == normal
    assert ours.source_token_to_id(en.id_to_piece(normal)) == normal
    assert ours.token_to_id("<0xE4>") == zh.piece_to_id("<0xE4>") != ours.target_token_to_id("<0xE4>") == 1
    assert ours.source_token_to_id(piece) == en.piece_to_id(piece)


def test_shared_vocabulary_is_one_model(shared):
    ours = shared["nmt_nfkc"]
    assert not ours.separate_vocabularies and ours.source is ours.target
    assert ours.vocab_size == ours.source_vocab_size


def test_byte_fallback_spells_what_the_vocabulary_lacks(models, shared):
    """A character the model lacks becomes the byte pieces of its UTF-8 (no `<unk>`), and decodes back."""
    ours, sp = shared["bytes_user"], _oracle(models, "bytes_user")
    line = "hello 𝄞 世界 ☃"  # a musical symbol and a snowman: no piece has them
    ids = ours.encode(line, add_eos=False)
    assert ours.unk_id not in ids
    assert [ours.id_to_piece(i) for i in ids if ours.id_to_piece(i).startswith("<0x")][:4] == [
        "<0xF0>",
        "<0x9D>",
        "<0x84>",
        "<0x9E>",
    ]
    assert ours.decode(ids) == sp.decode(ids) == line
    plain = shared["nmt_nfkc"]
    assert plain.unk_id in plain.encode("𝄞")  # without byte fallback: one <unk>


def test_user_defined_symbols_stay_whole(shared):
    ours = shared["bytes_user"]
    for symbol in MOZILLA_SYMBOLS:
        ids = ours.encode(f"x{symbol}y", add_eos=False)
        assert ours.target.piece_to_id(symbol) in ids
        assert ours.decode(ids) == f"x{symbol}y"


def _crafted(pieces: list[tuple[str, int, float]], byte_fallback: bool = False) -> bytes:
    """A hand-made unigram model: `</s>` 0, `<unk>` 1, then `pieces` (piece, type, score); no normaliser rules."""
    m = pb.ModelProto()
    m.trainer_spec.model_type = pb.TrainerSpec.UNIGRAM
    m.trainer_spec.bos_id, m.trainer_spec.eos_id, m.trainer_spec.unk_id = -1, 0, 1
    m.trainer_spec.byte_fallback = byte_fallback
    m.normalizer_spec.name = "identity"
    m.normalizer_spec.add_dummy_prefix = False
    m.normalizer_spec.remove_extra_whitespaces = False
    for piece, kind, score in [("</s>", 3, 0.0), ("<unk>", 2, 0.0), *pieces]:
        m.pieces.add(piece=piece, type=kind, score=score)
    return m.SerializeToString()


def _vocabulary(blob: bytes, sentencepiece: str = MARIAN) -> Vocabulary:
    return Vocabulary(json.loads(json.dumps(build.model_json(build.parse_model(blob)))), sentencepiece=sentencepiece)


def test_user_defined_pieces_score_as_marians_sentencepiece_scores_them():
    """A user-defined piece scores `bytes × max(FLT_MIN, highest normal score) − 0.1` in Marian's SentencePiece
    (unigram_model.cc; bergamot agrees, test_marian_segmentation_equals_bergamot): the two-byte "ud" against
    "u" + "d" scores 9.9 against 4 when "u" scores 5 and "d" −1, 9.9 against 10 when both score 5, and −0.1 (the
    floor is FLT_MIN, not the highest score −1) against −2 when both score −1. The 0.2 package agrees on the last
    two and splits the first."""
    for u, d, expected in ((5.0, -1.0, ["ud"]), (5.0, 5.0, ["u", "d"]), (-1.0, -1.0, ["ud"])):
        blob = _crafted([("u", 1, u), ("d", 1, d), ("ud", 4, 0.0), ("z", 1, -3.0)])
        sp, ours = spm.SentencePieceProcessor(model_proto=blob), _vocabulary(blob)
        assert ours.pieces("ud") == expected
        if (u, d) != (5.0, -1.0):
            assert ours.encode("ud") == sp.encode("ud")
    assert sp.encode("ud", out_type=str) == ["ud"]


def test_a_float32_near_tie_falls_as_each_sentencepiece_lets_it():
    """ "a" + "b" sums to just above "ab" in float64 but to the same float32: Marian's SentencePiece (float64
    comparison) takes "a" + "b", the 0.2 package (float32) keeps "ab"."""
    blob = _crafted([("a", 1, -1.0), ("b", 1, -(2**-23 - 2**-30)), ("ab", 1, -(1 + 2**-23)), ("z", 1, -5.0)])
    sp = spm.SentencePieceProcessor(model_proto=blob)
    assert sp.encode("ab", out_type=str) == ["ab"]
    package = _vocabulary(blob, PACKAGE)
    assert package.encode("ab") == sp.encode("ab") and package.encode("abab") == sp.encode("abab")
    assert _vocabulary(blob).pieces("abab") == ["a", "b", "a", "b"]


def test_unused_pieces_are_never_matched_but_decode_as_text():
    blob = _crafted([("a", 1, -1.0), ("b", 1, -1.0), ("ab", 5, -0.5)])
    sp, ours = spm.SentencePieceProcessor(model_proto=blob), _vocabulary(blob)
    assert ours.encode("ab") == sp.encode("ab") == [2, 3]
    assert ours.decode([4]) == sp.decode([4]) == "ab"
    assert ours.text_piece_to_id("ab") == 4 and ours.piece_to_id("</s>") == 0
    assert ours.text_piece_to_id("</s>") == ours.text_piece_to_id("<unk>") == 1  # never spelled by name


def test_bytes_decode_as_sentencepiece_decodes_them():
    assert decode_bytes(b"\xe4\xbd\xa0") == "你"
    assert decode_bytes(b"\xe4\xbd") == "\ufffd\ufffd"  # one per byte (Python's decoder would give one)
    assert decode_bytes(b"\xe4\xbdA\xff\xed\xa0\x80") == "\ufffd\ufffdA\ufffd\ufffd\ufffd\ufffd"  # a surrogate too
    assert decode_bytes(b"\xef\xbf\xbd") == "\ufffd"
    assert complete_bytes(b"A\xe4\xbd") == 1 and complete_bytes(b"\xe4\xbd\xa0") == 3
    assert complete_bytes(b"\xf0\x9f\x98") == 0 and complete_bytes(b"\xff\xe4") == 1
    assert complete_bytes(b"\xe4\xe4\xbd") == 1  # the first E4 can no longer start a character


def test_streamed_text_is_how_the_decoding_starts(shared, models):
    """pieces_text of every prefix of a sentence's ids, stripped, is how the whole sentence's decoding starts (no
    U+FFFD for a character whose bytes are still coming), and a piece's own text is its surface."""
    ours = shared["bytes_user"]
    english, chinese, other = _lines()
    checked = 0
    for line in chinese[:150] + english[:100] + other[:150]:
        ids = ours.encode_target(line)
        final = ours.decode(ids)
        if final[:1].isspace():
            continue
        for k in range(len(ids) + 1):
            partial = ours.pieces_text(ids[:k]).strip()
            assert final.startswith(partial), (line, k, partial, final)
            checked += 1
    assert checked > 5000
    word = ours.target.text_piece_to_id("▁the")
    assert ours.pieces_text([word]) == " the" and ours.decode([word]) == "the"
    cut = [ours.token_to_id(f"<0x{b:02X}>") for b in "𝄞".encode()]
    assert ours.pieces_text(cut[:3]) == "" and ours.pieces_text(cut) == "𝄞" == ours.decode(cut)
    assert not ours.cleans_up


def test_a_streamed_surface_renders_only_the_ids_after_its_last_settled_piece(shared, monkeypatch):
    """A stream asks for the surface of one more id each step: the remembered text of the settled ids (up to the
    last piece no later id changes: bytes wait for their character) gives the same text as rendering them all,
    whatever comes (byte runs, control pieces, <unk>, ids outside the vocabulary, another sentence), and each step
    renders a few ids, not the whole sentence again."""
    vocab = shared["bytes_user"].target
    rng = random.Random(11)
    ids_by_kind = [[i for i in range(vocab.size) if vocab.piece_type(i) == kind] for kind in (1, 2, 3, 6)]
    rendered: list[int] = []
    text_of = vocab._text

    def counting(ids, strip_dummy, whole):
        ids = tuple(ids)
        rendered.append(len(ids))
        return text_of(ids, strip_dummy, whole)

    monkeypatch.setattr(vocab, "_text", counting)
    for _ in range(300):
        weights = [rng.random() for _ in ids_by_kind]
        length = rng.randrange(0, 40)
        ids = [rng.choice(rng.choices(ids_by_kind, weights)[0]) for _ in range(length)]
        if ids and rng.random() < 0.2:
            ids[rng.randrange(len(ids))] = rng.choice([-1, vocab.size, vocab.size + 7])
        for k in range(len(ids) + 1):
            prefix = ids[:k] if k % 2 else tuple(ids[:k])  # a list or a tuple
            assert vocab.surface(prefix) == text_of(tuple(ids[:k]), False, False)[0], (ids, k)
    sentence = [i for i in range(vocab.size) if vocab.piece_type(i) == 1][:30]
    rendered.clear()
    for k in range(len(sentence) + 1):
        vocab.surface(sentence[:k])
    assert sum(rendered) < 3 * len(sentence)  # linear: every step rendered the whole prefix before (~15 ids a step)


@pytest.mark.parametrize("name", ["bytes_user", "english"])
def test_text_pieces_decode_and_stream_without_the_piece_by_piece_rules(shared, monkeypatch, name):
    """A sentence of text pieces only (the usual output) decodes, and a stream adds its next such piece, without
    the piece-by-piece renderer (~4x slower right after a model run); the text is the renderer's. Anything else (a
    byte, control or unknown piece, an id outside the vocabulary) still goes through it."""
    vocab = shared[name].target
    text_of = vocab._text
    plain = [i for i in range(vocab.size) if vocab.piece_type(i) in (1, 4, 5)]
    space = vocab.text_piece_to_id("▁")
    rng = random.Random(13)
    sentences = [[rng.choice(plain) for _ in range(rng.randint(1, 40))] for _ in range(300)]
    sentences += [[space], [space, space], [space, *sentences[0]], [space, space, *sentences[1]]]
    expected = [text_of(ids, True, True)[0] for ids in sentences]
    streamed = [[text_of(ids[:k], False, False)[0] for k in range(1, len(ids) + 1)] for ids in sentences]
    calls: list[int] = []

    def counting(ids, strip_dummy, whole):
        calls.append(1)
        return text_of(ids, strip_dummy, whole)

    monkeypatch.setattr(vocab, "_text", counting)
    assert [vocab.decode(ids) for ids in sentences] == expected
    vocab._streamed = ((), "")
    assert [[vocab.surface(ids[:k]) for k in range(1, len(ids) + 1)] for ids in sentences] == streamed
    assert len(calls) <= len(sentences)  # at most each stream's first id (another sentence's ids before it)
    calls.clear()
    others = [[*ids, 0] for ids in sentences[:50]] + [[vocab.unk_id, *ids] for ids in sentences[50:100]]
    others += [[*ids, vocab.size] for ids in sentences[100:150]] + [[-1, *ids] for ids in sentences[150:200]]
    assert [vocab.decode(ids) for ids in others] == [text_of(ids, True, True)[0] for ids in others]
    assert len(calls) == len(others)


def test_glossary_and_forced_prefix_spell_with_the_target_vocabulary(models, tmp_path):
    """The target side's spelling (engine.pipeline.glossary_match, engine.text.target_prefix) reads the target
    model's pieces: with separate vocabularies source ids would spell other pieces."""
    from engine.pipeline.glossary_match import target_options
    from engine.text.target_prefix import encode_target_prefix

    ours = _tokenizer(models, tmp_path, "english", "chinese")
    zh = _oracle(models, "chinese")
    prefixes = 0
    for text in ("你好世界", "我们今天去北京", "中国人民", "谢谢你的帮助"):  # 世界, 民: byte pieces in this model
        options = target_options(text, ours)
        assert options and all(ours.decode(seq) == text for seq in options)
        assert tuple(ours.encode_target(text)) in options
        if all(not zh.is_byte(i) for i in zh.encode(text)):  # the forced prefix spells with whole pieces only
            assert ours.decode(encode_target_prefix(ours, text)) == text
            prefixes += 1
    assert prefixes == 2


def test_the_runtime_never_imports_sentencepiece(models, tmp_path):
    """The bundle's files are read and used with sentencepiece (and protobuf) unimportable."""
    info = build.build_tokenizer(models["english"][1], models["chinese"][1], tmp_path).as_dict()
    line, target = "The committee met on 3 March. Über-naïve ＡＢＣ!", "他们说：你好世界。"
    en, zh = _oracle(models, "english"), _oracle(models, "chinese")
    script = (
        "import json, sys\n"
        "sys.modules['sentencepiece'] = None\n"
        "sys.modules['google.protobuf'] = None\n"
        "from engine.families.bergamot.tokenizer import BergamotTokenizer\n"
        f"tok = BergamotTokenizer(json.loads({json.dumps(json.dumps(info))}), {str(tmp_path)!r})\n"
        f"ids = tok.encode({line!r})\n"
        f"target = tok.encode_target({target!r})\n"
        "print(json.dumps([ids, target, tok.decode(target)]))\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert run.returncode == 0, run.stderr
    ids, target_ids, text = json.loads(run.stdout)
    assert ids == [*en.encode(line), 0] and target_ids == zh.encode(target) and text == zh.decode(zh.encode(target))


# -- the build step ----------------------------------------------------------------------------------------------


def test_build_writes_one_file_when_shared_and_two_when_separate(models, tmp_path):
    shared_info = build.build_tokenizer(models["nmt_nfkc"][1], None, tmp_path / "shared")
    assert shared_info.shared and shared_info.source_file == shared_info.target_file == build.SHARED_FILE
    assert sorted(p.name for p in (tmp_path / "shared").iterdir()) == [build.SHARED_FILE]
    separate = build.build_tokenizer(models["english"][1], models["chinese"][1], tmp_path / "separate")
    assert not separate.shared and (separate.source_file, separate.target_file) == (
        build.SOURCE_FILE,
        build.TARGET_FILE,
    )
    assert separate.as_dict() == {
        "source_file": build.SOURCE_FILE,
        "target_file": build.TARGET_FILE,
        "kind": "sentencepiece",
        "source_vocab_size": _oracle(models, "english").get_piece_size(),
        "vocab_size": _oracle(models, "chinese").get_piece_size(),
        "eos_id": 0,
        "unk_id": 1,
        "pad_id": 0,
        "shared": False,
    }


def test_build_reads_gzipped_models(models, tmp_path):
    """Firefox's published files are gzipped (`vocab.zhen.spm.gz`); the name does not matter, the content does."""
    (tmp_path / "vocab.zhen.spm.gz").write_bytes(gzip.compress(models["bytes_user"][0]))
    (tmp_path / "plain.spm").write_bytes(models["bytes_user"][0])
    a = build.build_tokenizer(tmp_path / "vocab.zhen.spm.gz", None, tmp_path / "a")
    b = build.build_tokenizer(tmp_path / "plain.spm", None, tmp_path / "b")
    assert (tmp_path / "a" / a.source_file).read_bytes() == (tmp_path / "b" / b.source_file).read_bytes()
    (tmp_path / "broken.spm.gz").write_bytes(gzip.compress(models["bytes_user"][0])[:-20])
    with pytest.raises(BuildError, match="gzip"):
        build.read_model_bytes(tmp_path / "broken.spm.gz")


def test_build_refuses_what_it_cannot_reproduce(models, tmp_path):
    english, _ = _corpus()
    bpe = train(english, vocab_size=500, model_type="bpe")
    with pytest.raises(BuildError, match="not a unigram model"):
        build.model_json(build.parse_model(bpe))
    suffix = train(english, vocab_size=500, treat_whitespace_as_suffix=True)
    with pytest.raises(BuildError, match="suffix"):
        build.model_json(build.parse_model(suffix))
    no_eos = pb.ModelProto()
    no_eos.ParseFromString(models["english"][0])
    no_eos.trainer_spec.eos_id = -1
    with pytest.raises(BuildError, match="</s>"):
        build.model_json(build.parse_model(no_eos.SerializeToString()))
    with pytest.raises(BuildError, match="not a SentencePiece model"):
        build.parse_model(b"\x00\x01 definitely not a model")
    broken = pb.ModelProto()
    broken.ParseFromString(models["english"][0])
    blob = bytearray(broken.normalizer_spec.precompiled_charsmap)
    blob[:4] = (len(blob) + 10).to_bytes(4, "little")
    broken.normalizer_spec.precompiled_charsmap = bytes(blob)
    with pytest.raises(BuildError, match="character map"):
        build.model_json(build.parse_model(broken.SerializeToString()))
    other = pb.ModelProto()
    other.ParseFromString(train(english, vocab_size=500, bos_id=-1, eos_id=1, unk_id=0))
    (tmp_path / "src.spm").write_bytes(models["english"][0])
    (tmp_path / "trg.spm").write_bytes(other.SerializeToString())
    with pytest.raises(BuildError, match="one id for it on both sides"):
        build.build_tokenizer(tmp_path / "src.spm", tmp_path / "trg.spm", tmp_path / "out")


def test_a_damaged_vocabulary_is_a_build_error_not_a_traceback(models, tmp_path):
    """A byte flipped inside a piece made it invalid UTF-8: protobuf handed the piece over as bytes and the build
    ended in `TypeError: Object of type bytes is not JSON serializable`; a NaN score went into the JSON."""
    proto = pb.ModelProto()
    proto.ParseFromString(models["english"][0])
    piece = next(p.piece for p in proto.pieces if p.type == 1 and len(p.piece.encode()) > 3).encode()
    data = models["english"][0]
    at = data.index(b"\n" + bytes([len(piece)]) + piece) + 2  # the field's tag and length, then the text
    damaged = data[:at] + b"\xff" + data[at + 1 :]
    (tmp_path / "srcvocab.enzh.spm").write_bytes(damaged)
    with pytest.raises(BuildError, match=r"is damaged: piece \d+ is not UTF-8 text"):
        build.build_tokenizer(tmp_path / "srcvocab.enzh.spm", None, tmp_path / "out")
    proto.pieces[5].score = float("nan")
    with pytest.raises(BuildError, match="not a finite number"):
        build.model_json(build.parse_model(proto.SerializeToString()))


def test_the_runtime_refuses_a_file_that_does_not_match_the_manifest(models, tmp_path):
    from engine.bundle.load_guard import LoadFailure

    info = build.build_tokenizer(models["english"][1], models["chinese"][1], tmp_path).as_dict()
    with pytest.raises(LoadFailure, match="the manifest says"):
        BergamotTokenizer({**info, "vocab_size": info["vocab_size"] + 1}, tmp_path)
    (tmp_path / build.TARGET_FILE).write_text('{"format": "something else"}', encoding="utf-8")
    with pytest.raises(LoadFailure, match=build.TARGET_FILE):
        BergamotTokenizer(info, tmp_path)


def test_the_interface_the_pipeline_uses(shared):
    """Every member of engine.families.base.Tokenizer, and the target-side spelling glossary constraints and the
    forced prefix call."""
    from engine.families import base

    wanted = {n for n in vars(base.Tokenizer) if not n.startswith("_")} | set(base.Tokenizer.__annotations__)
    wanted |= {"encode_target", "target_token_to_id", "language_id", "separate_vocabularies", "from_manifest"}
    ours = shared["nmt_nfkc"]
    assert {name for name in wanted if not hasattr(ours, name)} == set()
    with pytest.raises(KeyError):
        ours.language_id(">>cmn_Hans<<")


# -- against bergamot-translator itself --------------------------------------------------------------------------


def _bergamot_source_words(source_vocab: Path, lines: list[str]) -> list[list[str]]:
    """bergamot's source pieces of each line, as spans of the line (`</s>`'s empty word dropped), through a tiny
    synthetic model whose source vocabulary has the size of `source_vocab`."""
    from dataclasses import replace

    from tests.fixtures.bergamot import make
    from tests.oracles import bergamot

    reason = bergamot.unavailable_reason()
    if reason:
        pytest.skip(f"bergamot oracle unavailable: {reason}")
    size = spm.SentencePieceProcessor(model_file=str(source_vocab)).get_piece_size()
    folder = make.cached_folder(replace(make.TINY, src_vocab_size=size), "npz")
    settings = {**bergamot.FIREFOX_OPTIONS, "gemm-precision": "float32"}
    yaml = [
        f"models: [{json.dumps(str(folder.model))}]",
        f"vocabs: [{json.dumps(str(source_vocab))}, {json.dumps(str(folder.trg_vocab))}]",
    ]
    yaml += [
        f"{k}: {json.dumps(v) if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else v}"
        for k, v in settings.items()
    ]
    request = {"module": str(bergamot.native_module()), "config": "\n".join(yaml) + "\n", "lines": lines}
    worker = Path(__file__).with_name("bergamot_source_worker.py")
    done = subprocess.run(
        [str(bergamot.venv_python()), str(worker)],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # a line over max-length-break (128 pieces) comes back cut into several sentences, each ending in `</s>`
    return [
        [w for words in line for w in (words[:-1] if words[-1:] == [""] else words)] for line in json.loads(done.stdout)
    ]


def _spans(vocab: Vocabulary, line: str) -> list[str]:
    """Our pieces of `line` as spans of it, for a line SentencePiece normalises to "▁" + line with spaces as "▁"
    (the dummy "▁" spans nothing)."""
    assert vocab.normalize(line) == "▁" + line.replace(" ", "▁")
    out, at = [], 0
    for piece in vocab.pieces(line):
        out.append(line[max(at - 1, 0) : at + len(piece) - 1])
        at += len(piece)
    return out


@pytest.mark.bergamot
def test_marian_segmentation_equals_bergamot(models, tmp_path):
    """bergamot-translator's source pieces of every line equal the tokenizer's (MARIAN mode), near ties included,
    where the sentencepiece package's split differs; and on hand-made vocabularies, a float64 near tie and a
    user-defined piece scored against a high normal score fall as Marian's SentencePiece has them."""
    name = "nmt_nfkc"
    vocab_path = models[name][1]
    ours, package = _vocabulary(models[name][0]), _vocabulary(models[name][0], PACKAGE)
    lines = [
        line
        for group in _lines()
        for line in group
        if line and line == line.strip() and "  " not in line and ours.normalize(line) == "▁" + line.replace(" ", "▁")
    ]
    assert len(lines) >= 500
    theirs = _bergamot_source_words(vocab_path, lines)
    differ = [line for line, words in zip(lines, theirs, strict=True) if _spans(ours, line) != words]
    assert not differ, f"{len(differ)}/{len(lines)} differ, first: {differ[:3]!r}"
    assert any(_spans(package, line) != words for line, words in zip(lines, theirs, strict=True))

    crafted = pb.ModelProto()
    crafted.ParseFromString(models[name][0])  # same size; a few pieces replaced
    normal = [i for i, p in enumerate(crafted.pieces) if p.type == 1 and len(p.piece) > 2][-6:]
    a, b, u, d = "Ꙁ", "ꙁ", "Ꙃ", "ꙃ"
    for i, (piece, score, kind) in zip(
        normal,
        [
            (a, -1.0, 1),
            (b, -(2**-23 - 2**-30), 1),
            (a + b, -(1 + 2**-23), 1),
            (u, 5.0, 1),
            (d, -1.0, 1),
            (u + d, 0.0, 4),
        ],
    ):
        crafted.pieces[i].piece, crafted.pieces[i].score, crafted.pieces[i].type = piece, score, kind
    crafted.normalizer_spec.add_dummy_prefix = False  # the near tie needs a path that starts at 0
    (tmp_path / "crafted.spm").write_bytes(crafted.SerializeToString())
    lines = [a + b, a + b + a + b, u + d, f"x{u}{d}x"]
    ours = _vocabulary(crafted.SerializeToString())
    assert _bergamot_source_words(tmp_path / "crafted.spm", lines) == [ours.pieces(line) for line in lines]
    assert [ours.pieces(line) for line in lines[:3]] == [[a, b], [a, b, a, b], [u + d]]
