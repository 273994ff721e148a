"""Helpers shared by the score, n-best and prefix parity tests: run our search on rows, run generate() with scores."""

from __future__ import annotations

import numpy as np

from engine.search.types import RowExtras, SentenceOutput

TOL = 1e-4  # absolute, on log-probabilities and scores (FP32 ONNX vs torch: observed differences ~1e-6)


def search_outputs(tr, rows, beams, max_length=512, extras=None, **overrides) -> list[SentenceOutput]:
    """Our search on source id rows; every sentence's SentenceOutput, checked to appear on the step it was done
    and to stay the same object until the end."""
    params = tr.params(beams, max_length=max_length, **overrides)
    limits = np.full(len(rows), max_length, dtype=np.int64)
    extras = None if extras is None else [RowExtras(prefix=tuple(p)) if p else None for p in extras]
    seen: list[SentenceOutput | None] = [None] * len(rows)
    last = None
    for update in tr._search(rows, params, limits, extras):
        assert len(update.best) == len(rows)
        for b, out in enumerate(update.outputs):
            assert (out is not None) == update.done[b]
            if seen[b] is not None:
                assert out is seen[b]
            seen[b] = out
        last = update
    assert last is not None and all(o is not None for o in last.outputs)
    assert [list(o.best.tokens) for o in last.outputs] == last.tokens
    return list(last.outputs)


def hf_scored(hf, texts, beams, max_length=512, prompt=None, **kwargs):
    """generate() with scores: per returned sequence (tokens after the prompt, eos excluded; per-step transition
    scores, eos included; sequences_scores or None for greedy)."""
    import torch

    tok, model = hf
    enc = tok(texts, return_tensors="pt", padding=True)
    extra = {}
    if prompt is not None:
        extra["decoder_input_ids"] = torch.tensor([prompt])
    with torch.no_grad():
        out = model.generate(
            **enc,
            num_beams=beams,
            max_length=max_length,
            do_sample=False,
            output_scores=True,
            return_dict_in_generate=True,
            **extra,
            **kwargs,
        )
        if beams == 1:
            trans = model.compute_transition_scores(out.sequences, out.scores, normalize_logits=True)
        else:
            trans = model.compute_transition_scores(out.sequences, out.scores, out.beam_indices)
    skip = 1 if prompt is None else len(prompt)
    rows = []
    for i, seq in enumerate(out.sequences.tolist()):
        gen = seq[skip:]
        n = (
            gen.index(tok.eos_token_id) + 1
            if tok.eos_token_id in gen
            else len([t for t in gen if t != tok.pad_token_id])
        )
        ended = tok.eos_token_id in gen[:n]
        tokens = gen[: n - 1] if ended else gen[:n]
        steps = trans[i, :n].tolist()
        score = None if beams == 1 else float(out.sequences_scores[i])
        rows.append((tokens, steps, ended, score))
    return rows


def ours_steps(out_hyp) -> list[float]:
    """Our per-step log-probabilities in generate()'s layout: the tokens, then eos when it ended."""
    tail = [] if out_hyp.eos_logprob is None else [out_hyp.eos_logprob]
    return [*out_hyp.logprobs, *tail]


def generate_rows(model, batch: list[list[int]], beams: int, max_length: int) -> list[list[int]]:
    """generate() on source id rows (padded into one batch), trimmed as the engine returns its outputs."""
    import torch

    width = max(len(r) for r in batch)
    pad = model.config.pad_token_id
    ids = torch.tensor([r + [pad] * (width - len(r)) for r in batch])
    mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in batch])
    with torch.no_grad():
        out = model.generate(input_ids=ids, attention_mask=mask, num_beams=beams, max_length=max_length)
    return trim_generated(out.tolist(), pad)


def trim_generated(rows: list[list[int]], pad: int) -> list[list[int]]:
    """generate()'s rows as the engine returns them: no start token, nothing from </s> (id 0) on, no padding."""
    trimmed = []
    for row in rows:
        row = row[1:]
        trimmed.append([t for t in (row[: row.index(0)] if 0 in row else row) if t != pad])
    return trimmed
