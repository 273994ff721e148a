"""The window's word count on megabytes against `len(text.split())`, alternating round by round, in one process.

The count runs on the UI thread each time the source text changes, so it must stay far below `str.split()`'s
0.5-1.8 s on a 20 MB paste. The unit tests check why it is fast (no object per word, memory follows the text's size);
the speed itself is measured here, where a busy machine cannot fail a build.

    python bench/word_count.py [--words 1000000] [--rounds 15]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.machine import describe_cpu, read_cpu  # noqa: E402
from gui.window.word_count import count_characters, count_words  # noqa: E402


def texts(words: int) -> dict[str, str]:
    """An English/Chinese mix with every kind of separator the window sees, and plain ASCII."""
    rnd = random.Random(5)
    vocabulary = ["the", "weather", "is", "nice", "today.", "桥", "naïve"]
    separators = [" ", "\n", "\n\n", "\u3000"]
    mixed = " ".join(rnd.choice(vocabulary) + rnd.choice(separators) for _ in range(words))
    ascii_only = " ".join(rnd.choice(vocabulary[:5]) for _ in range(words))
    return {"mixed": mixed, "ascii": ascii_only}


def timed(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--words", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)
    print(f"host: {describe_cpu(read_cpu())}")
    for name, text in texts(args.words).items():
        assert count_words(text) == len(text.split())
        split_s, words_s, chars_s = [], [], []
        for _ in range(args.rounds):
            fresh = text[:-1] + text[-1]  # an equal string but a new object: count_words' kept answer does not apply
            split_s.append(timed(text.split))
            words_s.append(timed(lambda fresh=fresh: count_words(fresh)))
            chars_s.append(timed(lambda text=text: count_characters(text)))
        split, words, chars = (statistics.median(s) for s in (split_s, words_s, chars_s))
        print(
            f"{name}: {len(text) / 1e6:.1f} M characters, {args.words:,} words; median of {args.rounds} rounds: "
            f"str.split {split * 1e3:.1f} ms, count_words {words * 1e3:.1f} ms ({words / split:.2f}x), "
            f"count_characters {chars * 1e3:.1f} ms"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
