"""The memory soak's inputs and readings, shared by our engine's soak (engine_checks.py) and CTranslate2's
(peer_soak.py); standard library only, so neither process pays for the other's imports."""

from __future__ import annotations

import random
from pathlib import Path

SOAK_CHECKPOINTS = (0.2, 0.5, 1.0)  # of the translations: 100, 250, 500 by default
SOAK_SEED = 6

# Everyday English words for the soak texts: enough variety that tokens, lengths and batch shapes keep changing.
_WORD_LIST = """
the a an this that these those my your our their his her its some every each many few several all no one two three
ten hundred first last next other same new old big small long short early late young good bad great little high low
important different possible public local social national free full strong clear simple hard easy quiet busy warm
cold bright dark green red blue yellow white black time year day week month morning evening night people man woman
child friend family mother father teacher doctor student worker farmer driver city town village country house home
room office school hospital station market shop street road bridge river lake sea mountain forest garden park field
window door table chair book letter paper report story song picture photo computer phone program system problem
question answer idea plan reason result change price cost money bank company business government law rule team game
water food bread rice tea coffee milk fruit train bus car plane ship bicycle weather rain snow wind sun moon star
is was are were has had have will would can could should must may might do does did make makes made take took give
gave find found think thought know knew see saw come came go went get got say said tell told ask asked work worked
call called try tried need needed feel felt leave left keep kept begin began help helped show showed hear heard play
played run ran move moved live lived believe bring brought happen happened write wrote sit sat stand stood lose lost
pay paid meet met include continue learn learned open opened close closed build built read understand spend spent
and or but because while before after when where although if since until so then also only very really quite often
always never sometimes already still again soon together almost perhaps probably of in on at by for with about
from into over under between through during without around near across behind beyond
"""
WORDS = tuple(_WORD_LIST.split())


def varied_texts(count: int, seed: int = SOAK_SEED) -> list[str]:
    """`count` texts of 1-3 sentences, each 5-40 words, from a fixed seed (the same texts every run)."""
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        sentences = []
        for _ in range(rng.randint(1, 3)):
            words = [rng.choice(WORDS) for _ in range(rng.randint(5, 40))]
            if len(words) > 8 and rng.random() < 0.4:
                words[rng.randrange(3, len(words) - 3)] += ","
            if rng.random() < 0.15:
                words.insert(rng.randrange(len(words)), str(rng.randint(2, 2030)))
            words[0] = words[0].capitalize()
            sentences.append(" ".join(words) + rng.choice(".....?!"))
        texts.append(" ".join(sentences))
    return texts


# engine.pipeline.length_limits' en→zh rule (room = 3 × n + 12 for n source tokens before eos), as CTranslate2's
# max_decoding_length (generated tokens, eos included, the start token not counted): the peer soak may not import
# `engine`; tests/bench/test_bench_helpers.py checks the two agree.
SOAK_RATIO, SOAK_SLACK = 3, 12


def peer_decoding_limit(source_len: int) -> int:
    """CTranslate2's max_decoding_length for a source row of `source_len` pieces (its eos included): the room ours
    gives the same row, plus its end token."""
    return SOAK_RATIO * max(0, source_len - 1) + SOAK_SLACK + 1


def memory_mb() -> dict[str, float]:
    """VmHWM (peak resident set) and VmRSS (resident now) of this process, in MB (10^6 bytes)."""
    status = Path("/proc/self/status")
    if status.exists():
        fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
        return {k: int(fields[k].split()[0]) * 1024 / 1e6 for k in ("VmHWM", "VmRSS")}
    import psutil  # macOS / Windows: the closest equivalents

    info = psutil.Process().memory_info()
    peak = getattr(info, "peak_wset", None)
    if peak is None:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # bytes on macOS
    return {"VmHWM": peak / 1e6, "VmRSS": info.rss / 1e6}
