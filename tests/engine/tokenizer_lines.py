"""≥500 varied lines for tokenizer parity: hand-picked edge cases plus seeded random mixtures, for an English or a
Chinese source side."""

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


# Chinese-side edge cases: full-width punctuation and digits, Traditional forms, Latin and digits inside Han text.
ZH_EDGE_CASES = [
    "你好，世界！",
    "“引号”和‘单引号’、顿号；分号：冒号？",
    "《书名号》【方括号】（圆括号）",
    "全角数字１２３和半角数字456",
    "我在2024年3月12日上午9:30到达。",
    "他说hello，我说你好。",
    "请访问 https://example.org 了解更多。",
    "邮箱：someone@example.com",
    "繁體中文與简体中文混合",
    "這是一個測試句子。",
    "省略号……和破折号——",
    "　全角空格　在中间　",
    "中文\n换行\r\n再换行",
    "表情😀和符号©®™",
    "</s>中文<unk>标记<pad>",
    ">>cmn_Hans<< 你好",
    ">>eng<<谢谢",
    "你" * 200,
    "日本語のテキストと한국어",
]


def _corpus_column(column: int) -> list[str]:
    return [row.split("\t")[column] for row in (FIXTURE / "corpus.tsv").read_text(encoding="utf-8").splitlines()]


def parity_lines(n_random: int = 300, seed: int = 1234, source: str = "en") -> list[str]:
    """Lines for a model that reads `source` ("en" or "zh"): edge cases, the corpus, unseen text, random mixtures
    that are mostly `source` with the other language, junk and numbers mixed in."""
    english = _corpus_column(0)
    extra = (FIXTURE / "english_extra.txt").read_text(encoding="utf-8").splitlines()
    chinese = (FIXTURE / "chinese_extra.txt").read_text(encoding="utf-8").splitlines()
    rng = random.Random(seed)
    words = _words()
    junk = ["😀", "你好", "</s>", "<unk>", "\t", "  ", "\n", "é", "ß", "ﬁ", "½", "\x00", "\x01", "—", "“", "”", "»"]
    if source == "zh":
        # Chinese has no spaces: fragments of real sentences stand in for words
        native = [s[i : i + rng.randint(1, 6)] for s in chinese + _corpus_column(1) for i in range(0, len(s), 4)]
        foreign = words
        separators = ["", "", "", " ", "，", "\t"]
    else:
        native, foreign, separators = words, chinese, [" ", " ", " ", "", "  ", "\t"]
    randoms = []
    for _ in range(n_random):
        parts = []
        for _ in range(rng.randint(1, 25)):
            r = rng.random()
            if r < 0.75:
                parts.append(rng.choice(native))
            elif r < 0.85:
                parts.append(rng.choice(junk))
            elif r < 0.95:
                parts.append(rng.choice(foreign)[: rng.randint(1, 6)])
            else:
                parts.append(str(rng.randint(0, 10**6)))
        randoms.append(rng.choice(separators).join(parts))
    if source == "zh":
        return EDGE_CASES + ZH_EDGE_CASES + _corpus_column(1) + _corpus_column(2) + chinese[:150] + randoms
    return EDGE_CASES + english[:120] + extra[:150] + randoms
