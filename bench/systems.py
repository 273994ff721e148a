"""The systems under test, each behind one small adapter: load a model, turn source ids into generated ids.

Every adapter imports its runtime lazily, so a worker process pays only for the runtime it measures (that cost is
part of its cold start) and a missing optional runtime makes that one system unavailable instead of breaking all.
All adapters take source ids that already end with eos (0) and return only the generated target ids.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
CACHE_DIR = REPO_ROOT / ".cache" / "full-random"
# `--tokenizer real` (issue #16): the same random model with the real-scale tokenizer, and everything built from it
REAL_TOKENIZER_CACHE_DIR = REPO_ROOT / ".cache" / "full-random-real"

# ORT's intra-op threads spin between ops by default. On a 2-core machine that spin steals the core the other
# thread (or PyTorch's pool in the same process) needs: optimum INT8 measured ~2x slower with spinning on. We turn
# it off for the ORT-based peers; `--ort-spinning 1` measures the default instead.
ORT_ALLOW_SPINNING_DEFAULT = "0"

Generate = Callable[[list[list[int]], int, int], list[list[int]]]
# The paragraph workload (workloads.PARAGRAPH): (reset before a timed call, the timed call) → what it produced
ParagraphCall = tuple[Callable[[], None], Callable[[], dict[str, object]]]


@dataclass(frozen=True)
class SystemSpec:
    """What run.py needs to know about a system without importing its runtime."""

    name: str
    label: str
    model_subdir: str  # under the cache dir
    is_ours: bool = False
    default: bool = True
    needs: tuple[str, ...] = ()  # top-level modules that must be importable


SYSTEMS: dict[str, SystemSpec] = {
    s.name: s
    for s in (
        SystemSpec("ours-int8", "Qiao engine INT8", "bundle", is_ours=True),
        SystemSpec("ours-fp32", "Qiao engine FP32", "bundle", is_ours=True),
        SystemSpec("transformers-fp32", "transformers generate() FP32", "checkpoint", needs=("torch", "transformers")),
        SystemSpec(
            "optimum-int8",
            "optimum ORTModelForSeq2SeqLM INT8",
            "optimum-int8",
            needs=("optimum.onnxruntime", "onnxruntime", "torch"),
        ),
        SystemSpec(
            "optimum-fp32",
            "optimum ORTModelForSeq2SeqLM FP32",
            "optimum-fp32",
            default=False,
            needs=("optimum.onnxruntime", "onnxruntime", "torch"),
        ),
        SystemSpec("ct2-int8", "CTranslate2 int8", "ct2-int8", needs=("ctranslate2",)),
        SystemSpec("ct2-fp32", "CTranslate2 float32", "ct2-float32", needs=("ctranslate2",)),
    )
}


def model_dir(name: str, cache_dir: Path = CACHE_DIR) -> Path:
    """Where a system's model lives inside the benchmark cache."""
    return cache_dir / SYSTEMS[name].model_subdir


def disk_mb(name: str, cache_dir: Path = CACHE_DIR) -> float | None:
    """Size on disk of what a system loads (what a user would have to ship or download), in MB.

    Our bundle holds both precisions in int8/ and fp32/ subfolders; each row counts only its own plus shared files.
    """
    path = model_dir(name, cache_dir)
    if not path.exists():
        return None
    skip = {"ours-int8": "fp32", "ours-fp32": "int8"}.get(name)
    files = [
        p
        for p in path.rglob("*")
        if p.is_file() and not p.name.startswith(".") and (skip is None or p.relative_to(path).parts[0] != skip)
    ]
    return sum(p.stat().st_size for p in files) / 1e6


# --- adapters -----------------------------------------------------------------------------------------------------


def _load_ours(path: Path, threads: int, precision: str) -> Generate:
    from engine.pipeline.translator import Translator  # the project's engine; absent until it is written

    translator = Translator(path, precision=precision, threads=threads)

    def generate(batch: list[list[int]], beams: int, new_tokens: int) -> list[list[int]]:
        # forced_eos=False like the generate() peers below: 30 real tokens, not 29 and a forced eos
        return translator.generate_ids(
            batch, beams=beams, min_new_tokens=new_tokens, max_new_tokens=new_tokens, forced_eos=False
        )

    return generate


def _hf_generate(model: object, torch: object) -> Generate:
    """Shared by transformers and optimum: both decode through transformers' generate()."""

    def generate(batch: list[list[int]], beams: int, new_tokens: int) -> list[list[int]]:
        ids = torch.tensor(batch, dtype=torch.long)  # type: ignore[attr-defined]
        with torch.inference_mode():  # type: ignore[attr-defined]
            out = model.generate(  # type: ignore[attr-defined]
                input_ids=ids,
                attention_mask=torch.ones_like(ids),  # type: ignore[attr-defined]
                num_beams=beams,
                do_sample=False,
                min_new_tokens=new_tokens,
                max_new_tokens=new_tokens,
                # The real config forces eos at max_length (512); with a 30-token cap that would turn the 30th token
                # into a forced eos, which no other system does. The work per step is the same either way.
                forced_eos_token_id=None,
            )
        return [row[1:] for row in out.tolist()]  # drop decoder_start

    return generate


def _load_transformers(path: Path, threads: int) -> Generate:
    import torch

    torch.set_num_threads(threads)
    torch.set_num_interop_threads(1)
    from transformers import MarianMTModel

    model = MarianMTModel.from_pretrained(path).eval()
    return _hf_generate(model, torch)


def _load_optimum(path: Path, threads: int) -> Generate:
    import onnxruntime as ort
    import torch

    # The ORT session owns the cores; generate()'s own torch ops (logits processing) are tiny, and a second
    # thread pool would only contend with ORT's.
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    from optimum.onnxruntime import ORTModelForSeq2SeqLM

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.add_session_config_entry(
        "session.intra_op.allow_spinning", os.environ.get("QIAO_BENCH_ORT_SPINNING", ORT_ALLOW_SPINNING_DEFAULT)
    )
    model = ORTModelForSeq2SeqLM.from_pretrained(
        path, session_options=options, provider="CPUExecutionProvider", use_cache=True
    )
    return _hf_generate(model, torch)


def _load_ct2(path: Path, threads: int, compute_type: str) -> Generate:
    import ctranslate2

    translator = ctranslate2.Translator(
        str(path), device="cpu", compute_type=compute_type, intra_threads=threads, inter_threads=1
    )
    # CTranslate2 speaks tokens, not ids. Its converter drops Marian's <pad> (id 65000, only a decoder-start
    # placeholder) and keeps every other id, so its own vocabulary file maps ids both ways.
    tokens: list[str] = json.loads((path / "shared_vocabulary.json").read_text(encoding="utf-8"))
    index = {tok: i for i, tok in enumerate(tokens)}

    def generate(batch: list[list[int]], beams: int, new_tokens: int) -> list[list[int]]:
        results = translator.translate_batch(
            [[tokens[i] for i in row] for row in batch],
            beam_size=beams,
            min_decoding_length=new_tokens,
            max_decoding_length=new_tokens,
        )
        return [[index[t] for t in r.hypotheses[0]] for r in results]

    return generate


def load_system(name: str, threads: int, cache_dir: Path = CACHE_DIR) -> Generate:
    """Load one system's model for `threads` intra-op threads; raises ImportError if its runtime is missing."""
    path = model_dir(name, cache_dir)
    if not path.exists():
        raise FileNotFoundError(f"{name}: model not found at {path}")
    loaders: dict[str, Callable[[], Generate]] = {
        "ours-int8": lambda: _load_ours(path, threads, "int8"),
        "ours-fp32": lambda: _load_ours(path, threads, "fp32"),
        "transformers-fp32": lambda: _load_transformers(path, threads),
        "optimum-int8": lambda: _load_optimum(path, threads),
        "optimum-fp32": lambda: _load_optimum(path, threads),
        "ct2-int8": lambda: _load_ct2(path, threads, "int8"),
        "ct2-fp32": lambda: _load_ct2(path, threads, "float32"),
    }
    return loaders[name]()


# --- the paragraph workload (issue #16) -----------------------------------------------------------------------------


def _paragraph_ours(path: Path, threads: int, precision: str) -> ParagraphCall:
    """Translator.translate on the pasted paragraph at beam 4: segmentation, tokenization, search, streaming."""
    from workloads import PARAGRAPH_BEAMS, paragraph_text

    from engine.pipeline.translator import Translator

    translator = Translator(path, precision=precision, threads=threads)
    text = paragraph_text()
    lang = translator.language_token(None)
    lang_ids = [translator.tokenizer.token_to_id(lang)] if lang else []
    eos = translator.tokenizer.eos_id

    def call() -> dict[str, object]:
        events: list[int] = []
        result = translator.translate(text, beams=PARAGRAPH_BEAMS, on_event=lambda e: events.append(len(e.delta)))
        return {
            "sentences": len(result.sentences),
            "source_ids": [
                [*lang_ids, *translator.tokenizer.encode(s.source, add_eos=False), eos] for s in result.sentences
            ],
            "target_lengths": [len(s.tokens) for s in result.sentences],
            "stream_events": len(events),
            "chars": len(result.text),
        }

    # The sentence cache would answer every call after the first without decoding: emptied before each one
    return translator.clear_cache, call


def _paragraph_ct2(path: Path, threads: int, compute_type: str, spec: dict[str, object]) -> ParagraphCall:
    """translate_batch of ours' source ids as one batch at beam 4, every row decoding spec's length (min = max)."""
    import ctranslate2
    from workloads import PARAGRAPH_BEAMS

    translator = ctranslate2.Translator(
        str(path), device="cpu", compute_type=compute_type, intra_threads=threads, inter_threads=1
    )
    tokens: list[str] = json.loads((path / "shared_vocabulary.json").read_text(encoding="utf-8"))
    batch = [[tokens[i] for i in row] for row in spec["source_ids"]]  # type: ignore[union-attr]
    length = int(spec["decoding_length"])  # type: ignore[call-overload]

    def call() -> dict[str, object]:
        results = translator.translate_batch(
            batch, beam_size=PARAGRAPH_BEAMS, min_decoding_length=length, max_decoding_length=length
        )
        return {
            "sentences": len(results),
            "source_ids": spec["source_ids"],
            "target_lengths": [len(r.hypotheses[0]) for r in results],
        }

    return (lambda: None), call


def load_paragraph(name: str, threads: int, cache_dir: Path, spec: dict[str, object] | None) -> ParagraphCall:
    """The paragraph workload of one system; peers need `spec` (ours' source ids and the decoding length)."""
    path = model_dir(name, cache_dir)
    if not path.exists():
        raise FileNotFoundError(f"{name}: model not found at {path}")
    if name in ("ours-int8", "ours-fp32"):
        return _paragraph_ours(path, threads, name.removeprefix("ours-"))
    if name in ("ct2-int8", "ct2-fp32") and spec is not None:
        return _paragraph_ct2(path, threads, "int8" if name == "ct2-int8" else "float32", spec)
    raise ValueError(f"{name}: no paragraph workload" + ("" if spec else " without ours' source ids and lengths"))
