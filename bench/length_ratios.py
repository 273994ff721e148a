"""Target ÷ source token lengths of real English ↔ Chinese parallel text: the figures behind
engine.pipeline.length_limits.

The parallel text is what the machine already has (no download): every (msgid, msgstr) pair of the Chinese gettext
catalogues under /usr/share/locale and vim's (printf placeholders and mnemonics removed, as bench/real_tokenizer.py
cleans them), English on one side, Chinese on the other. Each side is tokenised by a unigram SentencePiece model of
up to 32k pieces trained on the catalogues' own lines (OPUS-MT's recipe, as bench/real_tokenizer.py builds its
models; about 20 s), and by the tiny fixture's models as a check. Prints, per direction and tokenizer, the ratio's
percentiles over pairs with at least 8 source tokens, what a pair needs beyond `ratio × n`, and how many pairs
engine.pipeline.length_limits' rule (and the old 3 × (n + 1) + 10) would cut.

    python bench/length_ratios.py [--work /tmp/length-ratios]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from bench.real_tokenizer import (  # noqa: E402
    _HAN,
    _LATIN_WORD,
    CHINESE_LOCALES,
    SYSTEM_DIRS,
    _catalogues,
    clean_line,
    is_chinese,
    is_english,
    parse_mo,
)
from engine.pipeline.length_limits import LengthRule, length_rule  # noqa: E402

FIXTURES = REPO_ROOT / "tests" / "fixtures"
OLD_RULE = LengthRule(3.0, 11)  # 3 × (n + 1) + 10 counted the start and end tokens: 3n + 11 tokens of room


def parallel_pairs() -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """(distinct English/Chinese pairs, English lines, Chinese lines) of the machine's gettext catalogues."""
    pairs: dict[tuple[str, str], None] = {}
    english: dict[str, None] = {}
    chinese: dict[str, None] = {}
    for locale, mo in _catalogues(SYSTEM_DIRS):
        try:
            entries = parse_mo(mo.read_bytes())
        except OSError:
            continue
        zh_locale = locale.split(".")[0] in CHINESE_LOCALES
        for msgid, msgstr in entries:
            english.update((line, None) for line in map(clean_line, msgid.splitlines()) if is_english(line))
            if not zh_locale:
                continue
            chinese.update((line, None) for line in map(clean_line, msgstr.splitlines()) if is_chinese(line))
            en, zh = clean_line(msgid), clean_line(msgstr)
            if en and zh and _HAN.search(zh) and not _HAN.search(en) and _LATIN_WORD.search(en):
                pairs[(en, zh)] = None
    return list(pairs), list(english), list(chinese)


def train(lines: list[str], prefix: Path, coverage: float):
    import sentencepiece as spm

    spm.set_random_generator_seed(0)
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_prefix=str(prefix),
        model_type="unigram",
        vocab_size=32000,
        character_coverage=coverage,
        eos_id=0,
        unk_id=1,
        bos_id=-1,
        pad_id=-1,
        hard_vocab_limit=False,
        num_threads=1,
        minloglevel=2,
    )
    return spm.SentencePieceProcessor(model_file=f"{prefix}.model")


def report(name: str, direction: str, src: np.ndarray, tgt: np.ndarray) -> None:
    long = src >= 8
    ratio = tgt[long] / src[long]
    p = np.percentile(ratio, [50, 90, 99, 99.9])
    print(f"{name} {direction}: {len(src)} pairs, mean {src.mean():.1f} source tokens; ratio over {long.sum()} pairs")
    print(f"  with ≥ 8 source tokens: p50 {p[0]:.2f}, p90 {p[1]:.2f}, p99 {p[2]:.2f}, p99.9 {p[3]:.2f}")
    for a in (2.0, 3.0, 4.0):
        beyond = tgt - np.ceil(a * src)
        print(f"  beyond {a} × n: p99.9 {np.percentile(beyond, 99.9):.0f}, p99.99 {np.percentile(beyond, 99.99):.0f}")
    for label, rule in (("rule", length_rule(direction)), ("old rule", OLD_RULE)):
        room = np.array([rule.room(int(n)) for n in src])
        print(f"  {label} {rule.ratio} × n + {rule.slack}: {int((tgt > room).sum())} pairs over")


def main(argv: list[str] | None = None) -> int:
    import sentencepiece as spm

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=None, help="where the trained models go (default: a temp dir)")
    args = parser.parse_args(argv)
    pairs, english, chinese = parallel_pairs()
    if not pairs:
        print("no Chinese gettext catalogues on this machine", file=sys.stderr)
        return 1
    work = args.work or Path(tempfile.mkdtemp(prefix="length-ratios-"))
    work.mkdir(parents=True, exist_ok=True)
    fixture = FIXTURES / "tiny_marian" / "checkpoint"
    tokenizers = {
        "32k": (train(english, work / "en", 1.0), train(chinese, work / "zh", 0.9995)),
        "fixture": tuple(spm.SentencePieceProcessor(model_file=str(fixture / f)) for f in ("source.spm", "target.spm")),
    }
    for name, (en_tok, zh_tok) in tokenizers.items():
        en = np.array([len(t) for t in en_tok.encode([p[0] for p in pairs])])
        zh = np.array([len(t) for t in zh_tok.encode([p[1] for p in pairs])])
        print(f"{name}: {en_tok.get_piece_size()} English pieces, {zh_tok.get_piece_size()} Chinese pieces")
        report(name, "en-zh", en, zh)
        report(name, "zh-en", zh, en)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
