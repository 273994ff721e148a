"""A real-scale stand-in for opus-mt-en-zh's tokenizer, built only from text already on this machine (issue #16).

The bench's default checkpoint copies the tiny fixture's tokenizer and pads its vocabulary to 65001 ids with
synthetic pieces, so tokenizer memory and speed are not measured at the real scale. OPUS-MT's real en→zh model has
two SentencePiece unigram models of 32k pieces (English source, Chinese target) and one joint Marian vocabulary
(vocab.json) of their pieces. This module builds the same thing, the same way:

- English corpus: gettext msgids of every catalogue under /usr/share/locale (and vim's), /usr/share/doc text
  (plain and .gz: READMEs, changelogs, copyright files) and the English man pages (roff stripped).
- Chinese corpus: msgstrs of the zh_CN, zh_TW, zh_HK, zh_Hans and zh_Hant catalogues (system and vim), and the
  zh_CN / zh_TW man pages; only lines with Han characters are kept.
- Each side: a 32000-piece unigram SentencePiece model (what OPUS-MT uses; character coverage 1.0 for English,
  0.9995 for Chinese as Marian's recipe does), trained on at most MAX_SENTENCES lines (fixed seed).
- vocab.json: ``</s>`` 0, ``<unk>`` 1, then the English pieces, then the Chinese pieces the English side lacks
  (the joint vocabulary); ``<pad>`` is added by full_model.build_vocab at id 65000, which also fills the ids
  between with synthetic pieces so the model keeps opus-mt-en-zh's exact shape.

On the development container (Debian 13 with its doc, man and locale packages) the corpora come to 2,206,165 English
lines (133 M characters: 71,820 msgids, 1,653,769 doc lines, 480,576 man-page lines; 400k of them sampled) and 79,860
Chinese lines (1.25 M characters: 78,908 msgstrs, 952 man-page lines); each model reached its full 32,000 pieces and
the joint vocabulary is 60,663 entries (stats.json beside the models records the figures of each build). Another
machine's corpus gives other pieces at the same scale, which is what the bench needs.

    python bench/real_tokenizer.py [--out .cache/real-tokenizer] [--force]
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import shutil
import struct
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / ".cache" / "real-tokenizer"
PIECES_PER_SIDE = 32000
MAX_SENTENCES = 400_000  # per side: SentencePiece's input_sentence_size (sampled with a fixed seed)
MAX_DOC_BYTES = 2_000_000  # one /usr/share/doc file at most (a few huge changelogs would crowd out the rest)
MAX_LINE_CHARS = 2000
CHINESE_LOCALES = ("zh_CN", "zh_TW", "zh_HK", "zh_Hans", "zh_Hant")
# opus-mt-en-zh's target-language tokens that the engine's variants use (the tiny fixture has the same ones)
LANGUAGE_TOKENS = (">>cmn<<", ">>cmn_Hans<<", ">>cmn_Hant<<", ">>yue_Hans<<", ">>yue_Hant<<", ">>zho_Hans<<")
SYSTEM_DIRS = {
    "locale": Path("/usr/share/locale"),
    "vim_lang": Path("/usr/share/vim"),
    "doc": Path("/usr/share/doc"),
    "man": Path("/usr/share/man"),
}

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
_ROFF_ESCAPE = re.compile(r"\\(?:f[BIRP1-4]|f\(..|f\[[^\]]*\]|s[-+]?\d|\(..|\[[^\]]*\]|\*\(..|\*\[[^\]]*\]|\*.|.)")
_FORMAT_SPEC = re.compile(r"%(?:\d+\$)?[-+ #0]*\d*(?:\.\d+)?[hlLqjzt]*[diouxXeEfgGcspn%]")


def parse_mo(data: bytes) -> list[tuple[str, str]]:
    """(msgid, msgstr) pairs of a GNU .mo catalogue, either byte order; plural forms split on NUL, the header
    (empty msgid) dropped, undecodable entries skipped."""
    if len(data) < 20:
        return []
    magic = struct.unpack("<I", data[:4])[0]
    order = "<" if magic == 0x950412DE else ">" if magic == 0xDE120495 else None
    if order is None:
        return []
    _, count, ids_at, strs_at = struct.unpack(order + "4I", data[4:20])
    pairs: list[tuple[str, str]] = []
    for i in range(count):
        try:
            id_len, id_off = struct.unpack(order + "2I", data[ids_at + 8 * i : ids_at + 8 * i + 8])
            s_len, s_off = struct.unpack(order + "2I", data[strs_at + 8 * i : strs_at + 8 * i + 8])
            msgid = data[id_off : id_off + id_len].decode("utf-8")
            msgstr = data[s_off : s_off + s_len].decode("utf-8")
        except (struct.error, UnicodeDecodeError):
            continue
        if not msgid:
            continue
        msgid = msgid.split("\x04", 1)[-1]  # drop a msgctxt
        for one_id, one_str in zip(msgid.split("\0"), msgstr.split("\0")):
            pairs.append((one_id, one_str))
    return pairs


def clean_line(text: str) -> str:
    """One corpus line: printf placeholders, mnemonics (_File, &Open) and runs of whitespace removed."""
    text = _FORMAT_SPEC.sub(" ", text)
    text = re.sub(r"(?<![\w&])[_&](?=\w)", "", text)
    return " ".join(text.split())[:MAX_LINE_CHARS]


def strip_roff(source: str) -> list[str]:
    """The running text of a man page: requests and comments dropped, inline escapes removed."""
    lines = []
    for raw in source.splitlines():
        if raw.startswith(("'", '.\\"', "'\\\"")) or (raw.startswith(".") and not raw.startswith((".B ", ".I "))):
            continue
        text = raw[3:] if raw.startswith((".B ", ".I ")) else raw
        text = _ROFF_ESCAPE.sub("", text.replace("\\-", "-")).replace('"', "")
        if text.strip():
            lines.append(text)
    return lines


def is_english(line: str) -> bool:
    """Mostly Latin words, no Han: a line worth training the English model on."""
    return not _HAN.search(line) and len(_LATIN_WORD.findall(line)) >= 2


def is_chinese(line: str) -> bool:
    """Has at least two Han characters: a line worth training the Chinese model on."""
    return len(_HAN.findall(line)) >= 2


def _read_text(path: Path, limit: int = MAX_DOC_BYTES) -> str | None:
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as fh:
                data = fh.read(limit)
        else:
            with path.open("rb") as fh:
                data = fh.read(limit)
    except (OSError, EOFError, gzip.BadGzipFile):
        return None
    if b"\0" in data[:4096]:
        return None
    return data.decode("utf-8", errors="ignore")


def _catalogues(dirs: dict[str, Path]) -> Iterator[tuple[str, Path]]:
    """(locale, .mo path) for every catalogue, sorted (the corpus must not depend on directory order)."""
    for root in (dirs["locale"], dirs["vim_lang"]):
        if not root.is_dir():
            continue
        for mo in sorted(root.rglob("*.mo")):
            parts = mo.relative_to(root).parts
            locale = parts[parts.index("LC_MESSAGES") - 1] if "LC_MESSAGES" in parts else parts[0]
            yield locale, mo


def collect(dirs: dict[str, Path] = SYSTEM_DIRS) -> tuple[list[str], list[str], dict[str, int]]:
    """(English lines, Chinese lines, line counts per source), each side deduplicated, in a deterministic order."""
    english: dict[str, None] = {}
    chinese: dict[str, None] = {}
    counts = {"en_msgid": 0, "zh_msgstr": 0, "en_doc": 0, "en_man": 0, "zh_man": 0}

    def add(target: dict[str, None], lines: Iterable[str], keep, key: str) -> None:  # type: ignore[no-untyped-def]
        for line in lines:
            line = clean_line(line)
            if keep(line) and line not in target:
                target[line] = None
                counts[key] += 1

    for locale, mo in _catalogues(dirs):
        try:
            pairs = parse_mo(mo.read_bytes())
        except OSError:
            continue
        add(english, (line for mid, _ in pairs for line in mid.splitlines()), is_english, "en_msgid")
        if locale.split(".")[0] in CHINESE_LOCALES:
            add(chinese, (line for _, ms in pairs for line in ms.splitlines()), is_chinese, "zh_msgstr")
    doc = dirs["doc"]
    if doc.is_dir():
        for path in sorted(p for p in doc.rglob("*") if p.is_file() and not p.is_symlink()):
            text = _read_text(path)
            if text:
                add(english, text.splitlines(), is_english, "en_doc")
    man = dirs["man"]
    if man.is_dir():
        for path in sorted(p for p in man.rglob("*") if p.is_file() and not p.is_symlink()):
            lang = path.relative_to(man).parts[0]
            if lang.startswith("man"):
                side, keep, key = english, is_english, "en_man"
            elif lang in CHINESE_LOCALES:
                side, keep, key = chinese, is_chinese, "zh_man"
            else:
                continue
            text = _read_text(path)
            if text:
                add(side, strip_roff(text), keep, key)
    return list(english), list(chinese), counts


def joint_vocab(source_pieces: list[str], target_pieces: list[str]) -> dict[str, int]:
    """Marian's joint vocabulary: ``</s>`` 0, ``<unk>`` 1, the target-language tokens (``>>cmn_Hans<<`` …, which
    the tokenizer splits off before SentencePiece, as opus-mt-en-zh's vocab.json has them), then every source piece,
    then the target pieces the source lacks, in model order (control pieces not repeated)."""
    vocab = {"</s>": 0, "<unk>": 1}
    for piece in (*LANGUAGE_TOKENS, *source_pieces, *target_pieces):
        if piece not in vocab and piece not in ("<s>", "<pad>"):
            vocab[piece] = len(vocab)
    return vocab


SYNTHETIC_PIECE = re.compile(r"▁zz\d+")  # full_model.build_vocab's fillers up to 65001 ids


def describe_tokenizer(checkpoint: Path, kind: str, tokenizer_from: Path | None = None) -> dict[str, object]:
    """What a checkpoint's tokenizer is, for the result JSON and the report header: piece counts per side, the real
    entries of vocab.json (synthetic fillers excluded) and its total size, plus the corpus figures when it is ours."""
    import sentencepiece as spm

    vocab: dict[str, int] = json.loads((checkpoint / "vocab.json").read_text(encoding="utf-8"))
    real = sum(1 for piece in vocab if not SYNTHETIC_PIECE.fullmatch(piece))
    sizes = {
        side: spm.SentencePieceProcessor(model_file=str(checkpoint / f"{side}.spm")).get_piece_size()
        for side in ("source", "target")
    }
    info: dict[str, object] = {
        "kind": kind,
        "source_pieces": sizes["source"],
        "target_pieces": sizes["target"],
        "vocab_entries": len(vocab),
        "vocab_real_entries": real,
        "summary": (
            f"source.spm {sizes['source']:,} + target.spm {sizes['target']:,} pieces, vocab.json {real:,} real "
            f"entries of {len(vocab):,}"
        ),
    }
    stats = Path(tokenizer_from or checkpoint) / "stats.json"
    if stats.is_file():
        info["corpus"] = json.loads(stats.read_text(encoding="utf-8"))
    return info


def _train(lines: list[str], prefix: Path, coverage: float, seed: int) -> list[str]:
    import sentencepiece as spm

    rng = random.Random(seed)
    spm.set_random_generator_seed(seed)
    sample = lines if len(lines) <= MAX_SENTENCES else rng.sample(lines, MAX_SENTENCES)
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sample),
        model_prefix=str(prefix),
        model_type="unigram",
        vocab_size=PIECES_PER_SIDE,
        character_coverage=coverage,
        # Marian's SentencePiece models: </s> 0, <unk> 1, no <s>, no pad
        eos_id=0,
        unk_id=1,
        bos_id=-1,
        pad_id=-1,
        hard_vocab_limit=False,  # a small machine's corpus may not reach 32k pieces; take what it gives
        num_threads=2,
        minloglevel=2,
    )
    proc = spm.SentencePieceProcessor(model_file=str(prefix) + ".model")
    return [proc.id_to_piece(i) for i in range(proc.get_piece_size())]


def build_real_tokenizer(out: str | Path = DEFAULT_OUT, seed: int = 0, force: bool = False) -> Path:
    """Write source.spm, target.spm, vocab.json, tokenizer_config.json and stats.json into `out` (once)."""
    out = Path(out)
    if not force and all((out / n).is_file() for n in ("source.spm", "target.spm", "vocab.json", "stats.json")):
        return out
    english, chinese, counts = collect()
    if len(english) < 10_000 or len(chinese) < 2_000:
        raise RuntimeError(f"too little text on this machine: {len(english)} English, {len(chinese)} Chinese lines")
    tmp = out.with_name(out.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    print(
        f"[real-tokenizer] training 2 × {PIECES_PER_SIDE} unigram pieces ({len(english)} en, {len(chinese)} zh lines)"
    )
    src = _train(english, tmp / "source", 1.0, seed)
    tgt = _train(chinese, tmp / "target", 0.9995, seed)
    for side in ("source", "target"):
        (tmp / f"{side}.model").rename(tmp / f"{side}.spm")
        (tmp / f"{side}.vocab").unlink(missing_ok=True)
    vocab = joint_vocab(src, tgt)
    (tmp / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False, indent=1), encoding="utf-8")
    config = {"source_lang": "eng", "target_lang": "zho", "tokenizer_class": "MarianTokenizer"}
    (tmp / "tokenizer_config.json").write_text(json.dumps(config, indent=1), encoding="utf-8")
    stats = {
        "english_lines": len(english),
        "english_chars": sum(map(len, english)),
        "chinese_lines": len(chinese),
        "chinese_chars": sum(map(len, chinese)),
        "lines_by_source": counts,
        "source_pieces": len(src),
        "target_pieces": len(tgt),
        "joint_vocab": len(vocab),
        "seed": seed,
    }
    (tmp / "stats.json").write_text(json.dumps(stats, indent=1), encoding="utf-8")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    print(f"[real-tokenizer] wrote {out}: {json.dumps(stats)}")
    return out


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--force", action="store_true", help="rebuild even if the models are there")
    args = parser.parse_args(argv)
    build_real_tokenizer(args.out, seed=args.seed, force=args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
