"""How long a translation may grow (the decoder's length limit per direction), and whether an output hit it.

The limit stops runaway output on odd input, but one set too low cuts a good translation short; such a cut is
reported (`SentenceOutput.cut`, the FLAG_CUT flag: a CLI note, `"kind": "cut"` in `--json`, a margin mark in the
window). The rule per direction is `room = ceil(ratio × n) + slack` target tokens for `n` source tokens, plus the
decoder start token and the end token: `limit = room + 2`, counted as transformers' `max_length` counts (start
token included), never beyond the model's positions. `n` is the source row less its end token (the en→zh language
token counts, 3 tokens of extra room).

The figures come from real parallel text, measured by `bench/length_ratios.py`: the 70,190 distinct English ↔
Chinese pairs of the gettext catalogues on the development machine (zh_CN, zh_TW, zh_HK, zh_Hans, zh_Hant: UI strings
and messages, mean 8.9 English / 7.3 Chinese tokens), tokenised by 32k-piece unigram SentencePiece models trained on
the same catalogues as OPUS-MT's are (and, as a check, by the tiny fixture's 0.7k/1.2k-piece ones). Target ÷ source
tokens over the pairs with at least 8 source tokens (p50 / p99 / p99.9):

- en→zh: 0.80 / 1.38 / 1.86 (fixture tokenizers 0.61 / 1.20 / 1.50). Ratio 3.0 (1.6 × the 99.9th percentile, rounded
  up) and slack 12 (the 99.99th percentile of what a pair needs beyond 3 × n is 8): 1 pair of 70,190 over the limit
  (a catalogue whose "Report bugs to:" is translated as two sentences and a URL); 3 with the fixture's tokenizers.
- zh→en: 1.10 / 2.00 / 2.50 (fixture tokenizers 1.54 / 3.09 / 3.88). Ratio 4.0 (1.6 × 2.50, and above the fixture's
  3.88) and slack 12 (99.99th percentile beyond 4 × n: 10): 3 pairs over, all misaligned (a long English tooltip
  whose msgstr is a four-character label); 48 with the fixture's 700-piece English vocabulary, which splits English
  about twice as finely (the old rule: 10 and 122). A memorising checkpoint's 63-token English for a 17-token
  Chinese sentence (ratio 3.7) now has room for 80.

The old rule, `3 × (n + 1) + 10` counting the start and end tokens, left zh→en 3n + 11 tokens: 62 for that sentence,
one short of what generate() wrote with the model's own limit (512). Other directions take the larger rule.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class LengthRule:
    """`room = ceil(ratio × source tokens) + slack` target tokens (start and end tokens not counted)."""

    ratio: float
    slack: int

    def room(self, source_tokens: int) -> int:
        return math.ceil(self.ratio * max(0, source_tokens)) + self.slack


# Read at call time (tests lower them to force a cut), keyed like LanguagePair.key.
LENGTH_RULES: dict[str, LengthRule] = {"en-zh": LengthRule(3.0, 12), "zh-en": LengthRule(4.0, 12)}
DEFAULT_RULE = LengthRule(4.0, 12)  # a direction not measured: the more generous of the two


def length_rule(pair_key: str | None) -> LengthRule:
    """The rule for a direction ("en-zh"); DEFAULT_RULE for one not measured (or None)."""
    return LENGTH_RULES.get(pair_key or "", DEFAULT_RULE)


def length_limit(source_len: int, model_max: int, rule: LengthRule | None = None) -> int:
    """Decoder length limit (start token included, as generate()'s `max_length`) for a source row of `source_len`
    ids (its end token included): the rule's room, the start and the end token, never beyond the model's positions."""
    rule = rule if rule is not None else DEFAULT_RULE
    return int(min(model_max, rule.room(source_len - 1) + 2))


def reached_limit(tokens: int, limit: int, forced_eos: bool) -> bool:
    """Whether an output of `tokens` generated tokens (end token excluded, a forced prefix included) stopped at the
    length limit `limit` (start token included) rather than ending by itself.

    Without a forced end token the search stops a row at the limit with `limit - 1` tokens and no end. With one (the
    opus-mt generation config's `forced_eos_token_id`) the last position is the end token whatever the model wanted:
    an output of `limit - 2` tokens counts as cut, though the model may rarely have chosen to end there itself."""
    return tokens >= limit - 1 - bool(forced_eos)
