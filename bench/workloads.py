"""The benchmark workloads: fixed English sources of exactly 20 tokens, decoded for exactly 30 target tokens.

Fixing both lengths makes every system do the same number of encoder positions and decoder steps, so the
timings compare decoders rather than how early each one happens to stop on a random model.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

SOURCE_TOKENS = 20  # including the trailing eos
NEW_TOKENS = 30
EOS_ID = 0
UNK_ID = 1

SENTENCES = (
    "The committee will publish its final report on the new railway line early next spring.",
    "Please make sure that all windows are closed before you leave the office tonight.",
    "Scientists have discovered a small planet that may have liquid water on its surface.",
    "My grandmother taught me how to cook dumplings when I was only seven years old.",
    "The museum is closed on Mondays, but guided tours are available on every other day.",
    "If the weather stays this warm, the farmers expect a very good harvest this year.",
    "He forgot his umbrella at the station and had to walk home in the pouring rain.",
    "Our new software update fixes several bugs and makes the application start faster.",
)


@dataclass(frozen=True)
class Workload:
    """One timed call: `batch` sources decoded with `beams` beams for exactly NEW_TOKENS tokens."""

    name: str
    title: str
    batch: int
    beams: int

    @property
    def target_tokens(self) -> int:
        """Target tokens produced per call (for tokens/s)."""
        return self.batch * NEW_TOKENS


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload("greedy", "greedy, 1 sentence (20 → 30 tokens)", batch=1, beams=1),
        Workload("beam4", "beam 4, 1 sentence (20 → 30 tokens)", batch=1, beams=4),
        Workload("batch8", "greedy, batch of 8 sentences (20 → 30 tokens each)", batch=8, beams=1),
        # what the app does with a pasted paragraph at its default quality: no target in issue #6, measured anyway
        Workload("batch8beam4", "beam 4, batch of 8 sentences (20 → 30 tokens each)", batch=8, beams=4),
    )
}


# Issue #16's paragraph workload: a pasted paragraph, end to end through Translator.translate (segmentation,
# tokenization, beam 4 search, streaming, detokenization), against CTranslate2 translating the same sentences' ids as
# one batch at beam 4. Real, everyday sentences of similar length, so one batch of five is what both systems run.
PARAGRAPH = (
    "The city council met on Tuesday evening to discuss the new budget for public transport.",
    "Several residents asked why the bus service to the northern suburbs had been reduced last year.",
    "The mayor promised that two new routes would open before the end of the summer holidays.",
    "Critics said the plan did not go far enough and called for cheaper tickets for students.",
    "A final decision on the proposal is expected when the council meets again next month.",
)
PARAGRAPH_BEAMS = 4
PARAGRAPH_WORKLOAD = "paragraph"
PARAGRAPH_SYSTEMS = ("ours-int8", "ours-fp32", "ct2-int8", "ct2-fp32")  # the systems the workload is defined for
PARAGRAPH_TITLE = "a pasted paragraph: 5 real sentences, beam 4, Translator.translate end to end (peers: one batch)"


def paragraph_text() -> str:
    """The paragraph as a user pastes it."""
    return " ".join(PARAGRAPH)


def peer_decoding_length(target_lengths: list[int]) -> int:
    """The one decoding length (min = max) a peer's batch runs so that it produces as many target tokens as ours
    did in total: a batched peer cannot stop each row at its own length, so every row gets the mean, rounded."""
    if not target_lengths:
        raise ValueError("no target lengths")
    return max(1, round(sum(target_lengths) / len(target_lengths)))


def source_ids(checkpoint: Path, count: int = len(SENTENCES)) -> list[list[int]]:
    """Tokenize the fixed sentences as MarianTokenizer does (source.spm, then vocab.json) and fit each to 20 ids.

    Sentences shorter than 19 pieces are continued with the next sentence, longer ones are cut; eos ends each.
    """
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(checkpoint / "source.spm"))
    vocab: dict[str, int] = json.loads((checkpoint / "vocab.json").read_text(encoding="utf-8"))
    out: list[list[int]] = []
    for i in range(count):
        ids: list[int] = []
        j = i
        while len(ids) < SOURCE_TOKENS - 1:
            pieces = sp.encode(SENTENCES[j % len(SENTENCES)], out_type=str)
            ids.extend(vocab.get(p, UNK_ID) for p in pieces)
            j += 1
        out.append([*ids[: SOURCE_TOKENS - 1], EOS_ID])
    return out


def batch_for(workload: Workload, sources: list[list[int]]) -> list[list[int]]:
    """The source batch a workload feeds to generate()."""
    return sources[: workload.batch]


def describe(sources: list[list[int]]) -> dict[str, object]:
    """JSON-ready description of the workloads and their exact inputs."""
    return {
        "source_tokens": SOURCE_TOKENS,
        "new_tokens": NEW_TOKENS,
        "workloads": [asdict(w) for w in WORKLOADS.values()],
        "source_ids": sources,
    }
