"""The manifest's schema, checked once in one place: every field the engine reads, with the type and range it needs.

A bundle is untrusted input (downloaded, imported, restored from a backup), so nothing after this check may index
the manifest blindly. Hand-written typed checks rather than jsonschema: jsonschema is not a runtime dependency (it
would add it and its Rust-backed `rpds` dependency chain to the frozen app), its messages would still need
rewording for a person, and half of what matters here is cross-field (vocabulary size = embedding rows = tokenizer
size, graph names per layer, embedding bytes inside the listed file size), which a schema language cannot say.

`validate(raw)` returns one FileProblem per problem, each naming the field path and what was expected.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

from engine.config import MAX_BEAMS, PRECISIONS
from engine.errors import FileProblem
from engine.families import BERGAMOT
from engine.languages import MAX_VARIANTS, SCRIPTS

MANIFEST = "manifest.json"
SEAL = "manifest_sha256"  # sha256 of the manifest's canonical content (engine.bundle.manifest.canonical_sha256)
MAX_DIM = 8192
MAX_LAYERS = 256
MAX_POSITIONS = 8192
MAX_VOCAB = 10_000_000
MAX_FILE = 1 << 40
_HEX64 = re.compile(r"[0-9a-f]{64}")
# How a `derived` file is computed (engine.families.marian.head_cache): the INT8 head's 7-bit per-token copy from
# the precision's 8-bit block embedding table (engine.runtime.derived.columns_head_file).
DERIVED_METHODS = ("int8-columns-from-blocks",)
_CODE = re.compile(r"[a-z][a-z0-9_-]{0,15}")
_MISSING = object()


def kv_names(prefix: str, layers: int) -> list[str]:
    """The per-layer cache names the pipeline writes (engine.families.marian.converter.graphs.kv_names)."""
    return [f"{prefix}_{kind}.{i}" for i in range(layers) for kind in ("k", "v")]


def path_problem(rel: Any, where: str) -> FileProblem | None:
    """Why `rel` is not a plain bundle-relative path (None when it is): no absolute paths, drives, `..`, `.`,
    empty parts or backslashes. Checked on the text alone, before anything on disk is touched."""
    if not isinstance(rel, str) or not rel:
        return FileProblem("manifest", MANIFEST, f"{MANIFEST}: {where}: expected a file path, found {_show(rel)}")
    parts = rel.split("/")
    if rel.startswith("/") or "\\" in rel or ":" in rel or ".." in parts:
        return FileProblem("outside", rel, f"{rel}: {where} points outside the model folder")
    if any(p in ("", ".") for p in parts) or "\0" in rel or len(rel) > 400:
        return FileProblem("manifest", MANIFEST, f"{MANIFEST}: {where}: {rel!r} is not a plain relative path")
    return None


def _show(value: Any) -> str:
    if value is _MISSING:
        return "nothing"
    kind = {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
        type(None): "null",
    }.get(type(value), type(value).__name__)
    if isinstance(value, dict | list):
        return f"{kind} of {len(value)}"
    text = repr(value) if not isinstance(value, str) else '"' + value[:40] + ('…"' if len(value) > 40 else '"')
    return kind if value is None else f"{text} ({kind})"


class _Checker:
    """Collects problems; each getter returns the value when it is valid, else None (and records why)."""

    def __init__(self) -> None:
        self.problems: list[FileProblem] = []

    def fail(self, where: str, expected: str, value: Any = _MISSING) -> None:
        self.problems.append(
            FileProblem("manifest", MANIFEST, f"{MANIFEST}: {where}: expected {expected}, found {_show(value)}")
        )

    def field(self, obj: dict | None, key: str, where: str, expected: str, ok, optional: bool = False) -> Any:
        if obj is None:
            return None
        value = obj.get(key, _MISSING)
        if value is _MISSING and optional:
            return None
        if value is _MISSING or not ok(value):
            self.fail(f"{where}.{key}" if where else key, expected, value)
            return None
        return value

    def obj(self, obj: dict | None, key: str, where: str = "", optional: bool = False) -> dict | None:
        return self.field(obj, key, where, "an object", lambda v: isinstance(v, dict), optional)

    def integer(self, obj, key, where, lo: int, hi: int, optional: bool = False) -> int | None:
        return self.field(
            obj, key, where, f"an integer from {lo} to {hi}", lambda v: _is_int(v) and lo <= v <= hi, optional
        )

    def text(self, obj, key, where, optional: bool = False, nonempty: bool = False) -> str | None:
        expected = "a non-empty string" if nonempty else "a string"
        return self.field(obj, key, where, expected, lambda v: isinstance(v, str) and (v or not nonempty), optional)

    def flag(self, obj, key, where, optional: bool = False) -> bool | None:
        return self.field(obj, key, where, "true or false", lambda v: isinstance(v, bool), optional)

    def number(self, obj, key, where, lo: float, hi: float, optional: bool = False) -> float | None:
        return self.field(
            obj, key, where, f"a number from {lo:g} to {hi:g}", lambda v: _is_number(v) and lo <= v <= hi, optional
        )

    def strings(self, obj, key, where, optional: bool = False) -> list[str] | None:
        return self.field(
            obj,
            key,
            where,
            "a list of strings",
            lambda v: isinstance(v, list) and all(isinstance(s, str) for s in v),
            optional,
        )

    def path(self, obj, key, where, optional: bool = False) -> str | None:
        if obj is None:
            return None
        value = obj.get(key, _MISSING)
        if value is _MISSING and optional:
            return None
        problem = path_problem(value, f"{where}.{key}")
        if problem is not None:
            self.problems.append(problem)
            return None
        return value

    def names(self, obj, key, where, expected: list[str]) -> None:
        value = self.strings(obj, key, where)
        if value is None or value == expected:
            return
        for i, (got, want) in enumerate(zip(value, expected)):
            if got != want:
                self.fail(f"{where}.{key}[{i}]", f'"{want}"', got)
                return
        self.fail(f"{where}.{key}", f"{len(expected)} names ({', '.join(expected)})", value)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_code(v: Any) -> bool:
    return isinstance(v, str) and _CODE.fullmatch(v) is not None


def _never(v: Any) -> bool:
    return False


def _is_number(v: Any) -> bool:
    return (isinstance(v, int | float) and not isinstance(v, bool)) and math.isfinite(v)


def validate(raw: dict) -> list[FileProblem]:
    """Every schema problem of a parsed manifest (format version already checked); [] when it is usable."""
    c = _Checker()
    model = c.obj(raw, "model")
    c.text(model, "id", "model", nonempty=True)
    for key in ("revision", "license", "attribution"):
        c.text(model, key, "model")
    c.text(model, "architecture", "model", optional=True)
    c.obj(raw, "tools", optional=True)
    c.text(raw, "created", "", optional=True)
    marian_only = raw.get("format_version") == 4  # engine.bundle.manifest.MARIAN_ONLY_FORMAT
    if marian_only:
        c.field(raw, "family", "", "nothing (a format-4 bundle is Marian; format 5 names its family)", _never, True)
    else:
        c.field(raw, "family", "", "the name of a model family", _is_code)

    cfg = c.obj(raw, "config")
    d_model = c.integer(cfg, "d_model", "config", 1, MAX_DIM)
    layers = c.integer(cfg, "decoder_layers", "config", 1, MAX_LAYERS)
    heads = c.integer(cfg, "decoder_attention_heads", "config", 1, MAX_DIM)
    c.integer(cfg, "encoder_layers", "config", 1, MAX_LAYERS)
    c.integer(cfg, "encoder_attention_heads", "config", 1, MAX_DIM)
    c.integer(cfg, "ffn_dim", "config", 1, 16 * MAX_DIM)
    vocab = c.integer(cfg, "vocab_size", "config", 2, MAX_VOCAB)  # the target's: logits, decoder lookups
    source_vocab = c.integer(cfg, "source_vocab_size", "config", 2, MAX_VOCAB, optional=True)  # separate only
    positions = c.integer(cfg, "max_position_embeddings", "config", 1, MAX_POSITIONS)
    c.text(cfg, "activation", "config", optional=True)
    c.number(cfg, "embed_scale", "config", 1e-6, 1e6, optional=True)
    if marian_only and source_vocab is not None:
        c.fail(
            "config.source_vocab_size",
            "nothing in a format-4 bundle (separate vocabularies need format 5)",
            source_vocab,
        )
    if d_model and heads and d_model % heads:
        c.fail("config.d_model", f"a multiple of config.decoder_attention_heads ({heads})", d_model)

    files = _files(c, raw)
    _generation(c, raw, vocab, positions)
    if raw.get("family") == BERGAMOT:  # its own tokenizer, graphs and files (engine.families.bergamot)
        _bergamot(c, raw, vocab, source_vocab, d_model, layers)
    else:
        _tokenizer(c, raw, vocab, source_vocab)
        _graphs(c, raw, layers)
        _precisions(c, raw, vocab, d_model, files, source_vocab)
    _derived(c, raw, files, marian_only)
    validation = c.obj(raw, "validation", optional=True)
    c.path(validation, "file", "validation", optional=True)

    _languages(c, raw)
    if not c.problems and files is not None:
        for where, rel in named_loads(raw):
            if rel not in files:
                c.problems.append(
                    FileProblem(
                        "unlisted",
                        rel,
                        f"{rel}: {where} is loaded but not listed in the manifest's files (it would never be verified)",
                    )
                )
    return c.problems


def _language(c: _Checker, obj: dict | None, where: str) -> None:
    c.field(obj, "code", where, 'a language code such as "en"', _is_code)
    c.text(obj, "name", where, nonempty=True)
    c.field(obj, "script", where, f"one of {', '.join(SCRIPTS)}", lambda v: v in SCRIPTS)


def _languages(c: _Checker, raw: dict) -> None:
    """`languages` (engine.languages): the pair, its variants (tokens the tokenizer knows), joiner, segmenter."""
    langs = c.obj(raw, "languages")
    _language(c, c.obj(langs, "source", "languages"), "languages.source")
    _language(c, c.obj(langs, "target", "languages"), "languages.target")
    c.text(langs, "joiner", "languages")
    c.field(langs, "segmenter", "languages", "a sentencex language code", _is_code)
    c.text(langs, "self_test", "languages", nonempty=True)
    variants = c.field(
        langs,
        "variants",
        "languages",
        f"a list of at most {MAX_VARIANTS} variants",
        lambda v: isinstance(v, list) and len(v) <= MAX_VARIANTS,
    )
    tok_raw = raw.get("tokenizer")
    tok: dict = tok_raw if isinstance(tok_raw, dict) else {}
    ids_raw = tok.get("language_ids")
    language_ids: dict = ids_raw if isinstance(ids_raw, dict) else {}
    keys: list[str] = []
    for i, variant in enumerate(variants or []):
        where = f"languages.variants[{i}]"
        if not isinstance(variant, dict):
            c.fail(where, "an object with key, token and name", variant)
            continue
        key = c.field(variant, "key", where, 'a short name such as "hans"', _is_code)
        c.text(variant, "name", where, nonempty=True)
        token = c.field(variant, "token", where, "a language token or null", lambda v: v is None or isinstance(v, str))
        if isinstance(token, str) and token not in language_ids:
            c.fail(f"{where}.token", "a token listed in tokenizer.language_ids", token)
        if key is not None:
            if key in keys:
                c.fail(f"{where}.key", "a key not used by another variant", key)
            keys.append(key)
    if langs is not None and variants is not None:
        default = langs.get("default_variant", _MISSING)
        if keys and default not in keys:
            c.fail("languages.default_variant", f"one of {', '.join(keys)}", default)
        elif not keys and default not in (None, _MISSING):
            c.fail("languages.default_variant", "null (the pair has no variants)", default)


def _files(c: _Checker, raw: dict) -> dict | None:
    files = c.field(
        raw,
        "files",
        "",
        "an object of file → {size, sha256} with at least one file",
        lambda v: isinstance(v, dict) and len(v) > 0,
    )
    if files is None:
        return None
    ok = True
    for rel, entry in files.items():
        problem = path_problem(rel, "files")
        if problem is not None:
            c.problems.append(problem)
            ok = False
            continue
        where = f'files["{rel}"]'
        if not isinstance(entry, dict):
            c.fail(where, "an object with size and sha256", entry)
            ok = False
            continue
        size = c.integer(entry, "size", where, 0, MAX_FILE)
        digest = c.field(
            entry,
            "sha256",
            where,
            "64 lowercase hex digits",
            lambda v: isinstance(v, str) and _HEX64.fullmatch(v) is not None,
        )
        ok = ok and size is not None and digest is not None
    return files if ok else None


def _token_id(vocab: int | None):
    hi = (vocab or MAX_VOCAB) - 1
    return hi, lambda v: _is_int(v) and 0 <= v <= hi


def _generation(c: _Checker, raw: dict, vocab: int | None, positions: int | None) -> None:
    gen = c.obj(raw, "generation")
    hi, is_id = _token_id(vocab)
    ids = f"a token id from 0 to {hi}"
    c.field(
        gen,
        "eos_token_id",
        "generation",
        f"{ids} (or a non-empty list of them)",
        lambda v: is_id(v) or (isinstance(v, list) and len(v) > 0 and all(is_id(t) for t in v)),
    )
    c.field(gen, "pad_token_id", "generation", ids, is_id)
    c.field(gen, "decoder_start_token_id", "generation", ids, is_id)
    c.field(gen, "forced_eos_token_id", "generation", f"{ids} or null", lambda v: v is None or is_id(v), optional=True)
    c.field(
        gen,
        "bad_words_ids",
        "generation",
        "a list of non-empty token id lists",
        lambda v: isinstance(v, list) and all(isinstance(w, list) and w and all(is_id(t) for t in w) for w in v),
        optional=True,
    )
    c.integer(gen, "num_beams", "generation", 1, MAX_BEAMS, optional=True)
    max_length = c.integer(gen, "max_length", "generation", 1, positions or MAX_POSITIONS, optional=True)
    c.integer(gen, "min_length", "generation", 0, max_length or MAX_POSITIONS, optional=True)
    c.number(gen, "length_penalty", "generation", -100, 100, optional=True)
    c.field(
        gen,
        "early_stopping",
        "generation",
        'true, false or "never"',
        lambda v: isinstance(v, bool) or v == "never",
        optional=True,
    )
    c.flag(gen, "renormalize_logits", "generation", optional=True)


def _tokenizer(c: _Checker, raw: dict, vocab: int | None, source_vocab: int | None = None) -> None:
    """Source-side ids (special tokens, language tokens) index the source vocabulary when it is separate; unk, eos
    and pad are one id on both sides."""
    tok = c.obj(raw, "tokenizer")
    separate = source_vocab is not None
    source = source_vocab if separate else vocab
    hi, is_id = _token_id(source)
    ids = f"a token id from 0 to {hi}"
    both_hi, is_both = _token_id(min(vocab, source_vocab) if vocab and source_vocab else vocab)
    c.path(tok, "file", "tokenizer")
    c.path(tok, "pieces_file", "tokenizer")
    c.path(tok, "source_ids_file", "tokenizer")
    size = c.integer(tok, "vocab_size", "tokenizer", 2, MAX_VOCAB)
    if size is not None and vocab is not None and size != vocab:
        c.fail("tokenizer.vocab_size", f"config.vocab_size ({vocab})", size)
    if separate:
        c.path(tok, "source_pieces_file", "tokenizer")
        got = c.integer(tok, "source_vocab_size", "tokenizer", 2, MAX_VOCAB)
        if got is not None and got != source_vocab:
            c.fail("tokenizer.source_vocab_size", f"config.source_vocab_size ({source_vocab})", got)
    else:
        for key in ("source_pieces_file", "source_vocab_size"):
            c.field(tok, key, "tokenizer", "nothing (config has no source_vocab_size)", lambda v: False, optional=True)
    for key in ("unk_id", "eos_id", "pad_id"):
        c.field(tok, key, "tokenizer", f"a token id from 0 to {both_hi}", is_both)
    specials = c.field(tok, "special_tokens", "tokenizer", "a list of objects", lambda v: isinstance(v, list))
    for i, spec in enumerate(specials or []):
        where = f"tokenizer.special_tokens[{i}]"
        if not isinstance(spec, dict):
            c.fail(where, "an object with content, id, lstrip and rstrip", spec)
            continue
        c.text(spec, "content", where, nonempty=True)
        c.field(spec, "id", where, ids, is_id)
        c.flag(spec, "lstrip", where)
        c.flag(spec, "rstrip", where)
    c.strings(tok, "control_pieces", "tokenizer", optional=True)
    c.strings(tok, "language_tokens", "tokenizer", optional=True)
    c.field(
        tok,
        "language_ids",
        "tokenizer",
        f"an object of token → {ids}",
        lambda v: isinstance(v, dict) and all(is_id(t) for t in v.values()),
        optional=True,
    )
    c.flag(tok, "clean_up_tokenization_spaces", "tokenizer", optional=True)
    c.text(tok, "marker", "tokenizer", optional=True)
    c.integer(tok, "source_only_pieces", "tokenizer", 0, MAX_VOCAB, optional=True)


def _graphs(c: _Checker, raw: dict, layers: int | None) -> None:
    graphs = c.obj(raw, "graphs")
    enc = c.obj(graphs, "encoder", "graphs")
    dec = c.obj(graphs, "decoder", "graphs")
    if layers is None:
        return
    past, cross, present = kv_names("past", layers), kv_names("cross", layers), kv_names("present", layers)
    c.names(enc, "inputs", "graphs.encoder", ["inputs_embeds", "attention_mask"])
    c.names(enc, "outputs", "graphs.encoder", cross)
    c.names(dec, "inputs", "graphs.decoder", ["inputs_embeds", "encoder_attention_mask", *past, *cross, "past_length"])
    c.names(dec, "outputs", "graphs.decoder", ["logits", *present])
    c.flag(dec, "beams_share_cross", "graphs.decoder", optional=True)  # absent: cross K/V rows = decoder rows
    scorer = c.obj(graphs, "scorer", "graphs", optional=True)
    c.path(scorer, "file", "graphs.scorer")
    c.names(scorer, "inputs", "graphs.scorer", ["logits", "mask", "k"])
    c.names(scorer, "outputs", "graphs.scorer", ["logprobs", "ids"])
    c.flag(scorer, "renormalize", "graphs.scorer", optional=True)


# A Bergamot bundle converted before the shortlisted output rows became the decoder step's inputs (`output_w`,
# `output_b`, gathered once per batch): its step takes the shortlist's ids (`shortlist`) and gathers them itself.
BERGAMOT_STEP_GATHERS = (
    f"{MANIFEST}: the decoder step takes the shortlist's ids: this Firefox Translations model was converted by an "
    "older Qiao, whose graphs this Qiao does not run; convert the model again (qiao model build --from its folder, "
    "or import its folder or archive again)"
)

# A Bergamot bundle converted before the encoder computed on the batch's real tokens only (`ids` [T], `positions`
# [T,E], `pad_index`, `pack_index`): its encoder takes the padded rows (`ids` [B,S], `mask_bias`, `positions` [S,E]).
BERGAMOT_PADDED_ENCODER = (
    f"{MANIFEST}: the encoder takes padded rows: this Firefox Translations model was converted by an older Qiao, "
    "whose graphs this Qiao does not run; convert the model again (qiao model build --from its folder, or import its "
    "folder or archive again)"
)


def bergamot_cross_names(layers: int) -> list[str]:
    """The encoder's outputs of a Bergamot bundle (engine.families.bergamot.converter.graphs.cross_names)."""
    return [f"cross_{kind}.{i}" for i in range(layers) for kind in ("k", "v")]


def _bergamot(
    c: _Checker, raw: dict, vocab: int | None, source_vocab: int | None, d_model: int | None, layers: int | None
) -> None:
    """A Bergamot bundle's own sections: `architecture` (widths and tying flags, matching config), a SentencePiece
    `tokenizer` (one file, or a source and a target file), an optional lexical `shortlist`, the encoder and SSRU
    decoder-step `graphs` (engine.families.bergamot.converter.graphs), and `precisions` of two graphs each (the weights
    live inside them: no embedding file)."""
    arch = c.obj(raw, "architecture")
    for key, value in (("dim", d_model), ("target_vocab", vocab), ("decoder_layers", layers)):
        got = c.integer(arch, key, "architecture", 1, MAX_VOCAB)
        if got is not None and value is not None and got != value:
            c.fail(f"architecture.{key}", f"the config's {value}", got)
    for key in ("ffn", "heads", "encoder_layers", "source_vocab"):
        c.integer(arch, key, "architecture", 1, MAX_VOCAB)
    for key in ("tied_all", "tied_src", "tied"):
        c.flag(arch, key, "architecture")

    tok = c.obj(raw, "tokenizer")
    c.field(tok, "kind", "tokenizer", '"sentencepiece"', lambda v: v == "sentencepiece")
    c.path(tok, "source_file", "tokenizer")
    c.path(tok, "target_file", "tokenizer")
    shared = c.flag(tok, "shared", "tokenizer")
    if tok is not None and shared is not None and shared != (tok.get("source_file") == tok.get("target_file")):
        c.fail("tokenizer.shared", "true exactly when source_file and target_file are one file", shared)
    if shared is not None and shared == (source_vocab is not None):
        c.fail("config.source_vocab_size", "present exactly when the tokenizer has two files", source_vocab)
    size = c.integer(tok, "vocab_size", "tokenizer", 2, MAX_VOCAB)
    if size is not None and vocab is not None and size != vocab:
        c.fail("tokenizer.vocab_size", f"config.vocab_size ({vocab})", size)
    source_size = c.integer(tok, "source_vocab_size", "tokenizer", 2, MAX_VOCAB)
    expected_source = source_vocab if source_vocab is not None else vocab
    if source_size is not None and expected_source is not None and source_size != expected_source:
        c.fail("tokenizer.source_vocab_size", f"the config's {expected_source}", source_size)
    _, is_id = _token_id(min(v for v in (vocab, source_vocab, MAX_VOCAB) if v))
    for key in ("unk_id", "eos_id", "pad_id"):
        c.field(tok, key, "tokenizer", "a token id of both vocabularies", is_id)

    short = c.obj(raw, "shortlist", optional=True)
    c.path(short, "file", "shortlist")
    c.integer(short, "first_num", "shortlist", 0, MAX_VOCAB)
    c.integer(short, "best_num", "shortlist", 0, MAX_VOCAB)

    graphs = c.obj(raw, "graphs")
    enc = c.obj(graphs, "encoder", "graphs")
    dec = c.obj(graphs, "decoder", "graphs")
    if layers is not None:
        cross = bergamot_cross_names(layers)
        states = [f"state.{i}" for i in range(layers)]
        inputs = ["tokens", "embed_scale", "position", "mask_bias", *cross, *states]
        older = []  # graphs of an older Qiao: one "convert again" problem, however many changes it predates
        if enc is not None and enc.get("inputs") == ["ids", "mask_bias", "positions"]:
            older.append(BERGAMOT_PADDED_ENCODER)
        else:
            c.names(enc, "inputs", "graphs.encoder", ["ids", "positions", "pad_index", "pack_index", "mask_bias"])
        c.names(enc, "outputs", "graphs.encoder", cross)
        if short is not None and dec is not None and dec.get("inputs") == [*inputs, "shortlist"]:
            older.append(BERGAMOT_STEP_GATHERS)
        else:
            c.names(dec, "inputs", "graphs.decoder", [*inputs, "output_w", "output_b"] if short is not None else inputs)
        if older:
            c.problems.append(FileProblem("format", MANIFEST, older[0]))
        c.names(dec, "outputs", "graphs.decoder", ["logits", *(f"next_state.{i}" for i in range(layers)), "alignment"])

    list(_precision_specs(c, raw, "an object with encoder and decoder"))  # a Bergamot precision names only those
    if "derived" in raw:
        c.fail("derived", "nothing in a Bergamot bundle (it derives no files)", raw["derived"])


def _precision_specs(c: _Checker, raw: dict, shape: str) -> Iterator[tuple[str, dict]]:
    """Each well-formed `precisions.<name>` object (its encoder, decoder and quantization checked), with its place;
    what a family adds to a precision is checked by the caller."""
    precisions = c.field(
        raw,
        "precisions",
        "",
        f"an object with one or more of {', '.join(PRECISIONS)}",
        lambda v: isinstance(v, dict) and len(v) > 0,
    )
    for name, spec in (precisions or {}).items():
        where = f"precisions.{name}"
        if name not in PRECISIONS:
            c.fail("precisions", f"only {', '.join(PRECISIONS)}", name)
            continue
        if not isinstance(spec, dict):
            c.fail(where, shape, spec)
            continue
        c.path(spec, "encoder", where)
        c.path(spec, "decoder", where)
        c.text(spec, "quantization", where, optional=True)
        yield where, spec


def _precisions(
    c: _Checker, raw: dict, vocab: int | None, d_model: int | None, files: dict | None, source_vocab: int | None = None
) -> None:
    for where, spec in _precision_specs(c, raw, "an object with encoder, decoder and embedding"):
        c.path(spec, "head", where, optional=True)  # the decoder's own output projection file, when not the table
        _embedding(c, c.obj(spec, "embedding", where), f"{where}.embedding", vocab, d_model, files)
        if source_vocab is not None:  # the encoder's own table (separate vocabularies)
            table = c.obj(spec, "source_embedding", where)
            _embedding(c, table, f"{where}.source_embedding", source_vocab, d_model, files, "config.source_vocab_size")
        else:
            c.field(spec, "source_embedding", where, "nothing (config has no source_vocab_size)", lambda v: False, True)


def _embedding(
    c: _Checker,
    emb: dict | None,
    where: str,
    vocab: int | None,
    d_model: int | None,
    files: dict | None,
    rows_name: str = "config.vocab_size",
) -> None:
    if emb is None:
        return
    rel = c.path(emb, "file", where)
    dtype = c.field(emb, "dtype", where, '"float32" or "uint8"', lambda v: v in ("float32", "uint8"))
    offset = c.integer(emb, "offset", where, 0, MAX_FILE)
    if vocab is None or d_model is None:
        return  # already reported at config; a shape to compare with is missing
    shape = c.field(
        emb,
        "shape",
        where,
        f"[{rows_name}, config.d_model] = [{vocab}, {d_model}]",
        lambda v: v == [vocab, d_model] and all(_is_int(x) for x in v),
    )
    if dtype is None or shape is None or offset is None:
        return
    rows, dim = shape
    block = scales = None
    if dtype == "float32":
        for key in ("block_size", "scales_offset", "zero_point"):
            c.field(emb, key, where, "null (float32 has no blocks)", lambda v: v is None, optional=True)
    else:
        block = c.field(
            emb, "block_size", where, f"a divisor of d_model ({dim})", lambda v: _is_int(v) and v > 0 and dim % v == 0
        )
        scales = c.integer(emb, "scales_offset", where, 0, MAX_FILE)
        c.number(emb, "zero_point", where, 0, 255)
        if block is not None and scales is not None and offset + rows * dim > scales:
            c.fail(f"{where}.scales_offset", f"at least offset + {rows * dim} (after the 8-bit rows)", scales)
    regions = embedding_regions(dtype, shape, offset, scales, block)
    if rel is None or files is None or rel not in files:
        return
    size = files[rel]["size"]
    for key, start, length in regions:
        if start + length > size:
            c.fail(f"{where}.{key}", f"a table of {length} bytes inside {rel} ({size} bytes)", start)


def _bergamot_loads(raw: dict, precision: str | None) -> list[tuple[str, str]]:
    """named_loads of a Bergamot bundle: its vocabularies, shortlist and each precision's two graphs."""
    tok = raw["tokenizer"]
    out = [("tokenizer.source_file", tok["source_file"]), ("tokenizer.target_file", tok["target_file"])]
    if "shortlist" in raw:
        out.append(("shortlist.file", raw["shortlist"]["file"]))
    for name, spec in raw["precisions"].items():
        if precision is None or name == precision:
            out += [(f"precisions.{name}.encoder", spec["encoder"]), (f"precisions.{name}.decoder", spec["decoder"])]
    return out


def embedding_regions(
    dtype: str, shape: list[int], offset: int, scales_offset: int | None, block_size: int | None
) -> list[tuple[str, int, int]]:
    """(field, start, length) of each byte range the embedding table occupies in its file: the rows, and for
    uint8 the per-block float32 scales (left out while scales_offset or block_size is unknown)."""
    rows, dim = shape
    if dtype == "float32":
        return [("offset", offset, rows * dim * 4)]
    regions = [("offset", offset, rows * dim)]
    if block_size is not None and scales_offset is not None:
        regions.append(("scales_offset", scales_offset, rows * (dim // block_size) * 4))
    return regions


def named_loads(raw: dict, precision: str | None = None) -> list[tuple[str, str]]:
    """(field, path) of every file the engine opens by name: the shared tokenizer files and scorer, and each
    precision's graphs and embedding (only `precision`'s when given). Call after `validate` found no problem."""
    if raw.get("family") == BERGAMOT:
        return _bergamot_loads(raw, precision)
    tok = raw["tokenizer"]
    out = [
        ("tokenizer.file", tok["file"]),
        ("tokenizer.pieces_file", tok["pieces_file"]),
        ("tokenizer.source_ids_file", tok["source_ids_file"]),
    ]
    if "source_pieces_file" in tok:
        out.append(("tokenizer.source_pieces_file", tok["source_pieces_file"]))
    scorer = raw["graphs"].get("scorer")
    if scorer is not None:
        out.append(("graphs.scorer.file", scorer["file"]))
    for name, spec in raw["precisions"].items():
        if precision is None or name == precision:
            out += [
                (f"precisions.{name}.encoder", spec["encoder"]),
                (f"precisions.{name}.decoder", spec["decoder"]),
                (f"precisions.{name}.embedding.file", spec["embedding"]["file"]),
            ]
            if "source_embedding" in spec:
                out.append((f"precisions.{name}.source_embedding.file", spec["source_embedding"]["file"]))
    return out


def _derived(c: _Checker, raw: dict, files: dict | None, marian_only: bool) -> None:
    """`derived`: files the engine computes from listed ones instead of reading them from the bundle (format 5).
    Each is a precision's `head`, computed by a known method from that precision's 8-bit embedding table, with the
    size and sha256 the engine checks its result against."""
    derived = raw.get("derived", _MISSING)
    if derived is _MISSING:
        return
    if marian_only:
        c.fail("derived", "nothing in a format-4 bundle (derived files need format 5)", derived)
        return
    if not isinstance(derived, dict):
        c.fail("derived", "an object of file → {size, sha256, from, method}", derived)
        return
    specs = [s for s in (raw.get("precisions") or {}).values() if isinstance(s, dict)]
    for rel, entry in derived.items():
        problem = path_problem(rel, "derived")
        if problem is not None:
            c.problems.append(problem)
            continue
        where = f'derived["{rel}"]'
        if not isinstance(entry, dict):
            c.fail(where, "an object with size, sha256, from and method", entry)
            continue
        if files is not None and rel in files:
            c.fail(where, "a file the bundle does not list in files (it is derived, not shipped)", rel)
        c.integer(entry, "size", where, 0, MAX_FILE)
        c.field(
            entry,
            "sha256",
            where,
            "64 lowercase hex digits",
            lambda v: isinstance(v, str) and bool(_HEX64.fullmatch(v)),
        )
        c.field(
            entry,
            "method",
            where,
            f"one of {', '.join(DERIVED_METHODS)} (a newer Qiao made it)",
            lambda v: v in DERIVED_METHODS,
        )
        source = c.path(entry, "from", where)
        owners = [s for s in specs if s.get("head") == rel]
        tables: list[dict] = [t for s in owners if isinstance(t := s.get("embedding"), dict)]
        if not owners:
            c.fail(where, "the head of a precision (precisions.*.head)", rel)
        elif source is not None and not any(t.get("file") == source and t.get("dtype") == "uint8" for t in tables):
            c.fail(f"{where}.from", "the 8-bit embedding table of the precision whose head it is", source)
        if source is not None and files is not None and source not in files:
            c.fail(f"{where}.from", "a file listed in files", source)
