"""≥500 varied lines for tokenizer parity: hand-picked edge cases plus seeded random mixtures."""

from __future__ import annotations

import random
from pathlib import Path

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "tiny_marian"

EDGE_CASES = [
    "",
    " ",
    "   leading and trailing   ",
    "\t tabs\tinside\t",
    "line one\nline two\r\nline three\rfour",
    "multiple     spaces     between",
    "Hello, world!",
    "He said “hi” and ‘bye’.",
    "\"Straight quotes\" and 'single'",
    "It's, don't, can't, we'll, they're",
    "3.14159 and 2,000,000 and -42 and 1e10",
    "Call 555-1234 or +1 (800) 555-0199.",
    "Visit https://example.org/path?q=1&r=2#frag now.",
    "Mail me: someone.name+tag@example.co.uk",
    "Emoji 😀😃🎉 and flags 🇨🇳🇺🇸 and ZWJ 👩‍💻",
    "你好世界",
    "The word 你好 means hello.",
    "Mixed 中文 and English 混合 text",
    "日本語のテキスト",
    "한국어 텍스트",
    "Ελληνικά κείμενο",
    "Русский текст",
    "عربى",
    "café naïve résumé Zoë",
    "e\u0301 combining accent",
    "ＦＵＬＬＷＩＤＴＨ　ｔｅｘｔ",
    "ligature ﬁ and ﬂ",
    "superscript x² and ½",
    "Supercalifragilisticexpialidocious" * 3,
    "a" * 300,
    "antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis",
    "</s>",
    "a</s>b",
    "text </s> more </s>",
    "<unk> <pad> <s>",
    "<unk>inside<pad>",
    ">>cmn_Hans<< Hello there.",
    ">>cmn_Hant<<Hello",
    ">>unknown_code<< text",
    ">>not closed",
    "text >>cmn_Hans<< in the middle",
    " >>cmn_Hans<< leading space",
    ">><<",
    ">>cmn_Hans<<",
    "</s>>>cmn_Hans<< after special",
    "▁already▁has▁meta",
    "▁",
    "control\x00chars\x01here\x07and\x1f",
    "zero\u200bwidth\u200cjoin\u200d",
    "bom\ufeffhere",
    "nbsp\u00a0space\u2009thin\u3000ideographic",
    "line\u2028separator\u2029para",
    "\x85next line",
    "soft\u00adhyphen",
    "tab\t\t\tmany",
    "ALL CAPS SENTENCE WITH NUMBERS 123",
    "mIxEd CaSe WoRdS",
    "hyphen-ated and en–dash and em—dash",
    "ellipsis… and ... dots",
    "brackets (round) [square] {curly} <angle>",
    "math: 2+2=4, 3*3=9, 10/2=5, 5%",
    "currency $5, €10, £7, ¥100",
    "#hashtag @mention",
    "C:\\path\\to\\file.txt and /usr/bin/env",
    'JSON {"key": [1, 2, 3]}',
    "\ud7ff\ue000private\uf8ff",
    "￼replacement\ufffd",
]


def _words() -> list[str]:
    words: list[str] = []
    for name in ("english_extra.txt",):
        for line in (FIXTURE / name).read_text(encoding="utf-8").splitlines():
            words.extend(line.split())
    return words


def parity_lines(n_random: int = 300, seed: int = 1234) -> list[str]:
    corpus = [row.split("\t")[0] for row in (FIXTURE / "corpus.tsv").read_text(encoding="utf-8").splitlines()]
    extra = (FIXTURE / "english_extra.txt").read_text(encoding="utf-8").splitlines()
    chinese = (FIXTURE / "chinese_extra.txt").read_text(encoding="utf-8").splitlines()
    rng = random.Random(seed)
    words = _words()
    junk = ["😀", "你好", "</s>", "<unk>", "\t", "  ", "\n", "é", "ß", "ﬁ", "½", "\x00", "\x01", "—", "“", "”", "»"]
    randoms = []
    for _ in range(n_random):
        parts = []
        for _ in range(rng.randint(1, 25)):
            r = rng.random()
            if r < 0.75:
                parts.append(rng.choice(words))
            elif r < 0.85:
                parts.append(rng.choice(junk))
            elif r < 0.95:
                parts.append(rng.choice(chinese)[: rng.randint(1, 6)])
            else:
                parts.append(str(rng.randint(0, 10**6)))
        sep = rng.choice([" ", " ", " ", "", "  ", "\t"])
        randoms.append(sep.join(parts))
    return EDGE_CASES + corpus[:120] + extra[:150] + randoms
