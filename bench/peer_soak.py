"""CTranslate2's side of the memory soak (issue #16): the same varied texts as our engine's soak, translated the way an
app built on CTranslate2 would, in a process that imports only CTranslate2, SentencePiece and the standard library.

Per text: split into sentences (a simple end-punctuation rule; our engine segments on its own), SentencePiece-encode
each with the checkpoint's source.spm, translate the sentences as one batch (odd requests beam 4, even greedy, as
ours alternate), each row limited as our engine limits it (soak_texts.peer_decoding_limit:
engine.pipeline.length_limits'
en→zh room plus the end token), and decode the pieces with target.spm. VmHWM / VmRSS are read at the same
checkpoints as ours.

    python bench/peer_soak.py --model .cache/full-random-real/ct2-int8 --checkpoint .cache/full-random-real/checkpoint \
        --threads 2 --translations 500 --result soak-ct2.json
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/ only: no `engine` import in this process
from child_result import write_result
from soak_texts import SOAK_CHECKPOINTS, SOAK_SEED, memory_mb, peer_decoding_limit, varied_texts

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def split_sentences(text: str) -> list[str]:
    """Sentences of a soak text: split after . ! ? followed by whitespace; empty pieces dropped."""
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


def soak(args: argparse.Namespace) -> dict[str, object]:
    """Load CTranslate2 int8 and the tokenizer, translate the varied texts, read memory at the checkpoints."""
    import ctranslate2
    import sentencepiece as spm

    checkpoint = Path(args.checkpoint)
    translator = ctranslate2.Translator(
        args.model, device="cpu", compute_type=args.compute_type, intra_threads=args.threads, inter_threads=1
    )
    source = spm.SentencePieceProcessor(model_file=str(checkpoint / "source.spm"))
    target = spm.SentencePieceProcessor(model_file=str(checkpoint / "target.spm"))
    after_load = memory_mb()
    texts = varied_texts(args.translations, args.seed)
    marks = sorted({max(1, round(f * len(texts))) for f in SOAK_CHECKPOINTS})
    checkpoints = []
    totals = {"source_tokens": 0, "target_tokens": 0, "sentences": 0}
    t0 = time.perf_counter()
    for i, text in enumerate(texts, 1):
        batch = [[*source.encode(s, out_type=str), "</s>"] for s in split_sentences(text)]
        limit = peer_decoding_limit(max(len(b) for b in batch))  # the room ours gives the longest row
        results = translator.translate_batch(batch, beam_size=4 if i % 2 else 1, max_decoding_length=limit)
        for r in results:
            target.decode_pieces(r.hypotheses[0])
            totals["target_tokens"] += len(r.hypotheses[0])
        totals["source_tokens"] += sum(map(len, batch))
        totals["sentences"] += len(batch)
        if i in marks:
            checkpoints.append({"translations": i, "elapsed_s": time.perf_counter() - t0, **memory_mb()})
    return {
        "status": "ok",
        "system": f"ct2-{args.compute_type}",
        "threads": args.threads,
        "translations": len(texts),
        "seed": args.seed,
        "after_load": after_load,
        "checkpoints": checkpoints,
        "totals": totals,
    }


def main(argv: list[str] | None = None) -> int:
    """CLI entry point: writes the result JSON to --result."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="the CTranslate2 model folder")
    p.add_argument("--checkpoint", required=True, help="the checkpoint whose source.spm / target.spm to use")
    p.add_argument("--compute-type", default="int8")
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--translations", type=int, default=500)
    p.add_argument("--seed", type=int, default=SOAK_SEED)
    p.add_argument("--result", required=True)
    args = p.parse_args(argv)
    return write_result(args.result, lambda: soak(args))


if __name__ == "__main__":
    sys.exit(main())
