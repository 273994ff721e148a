"""The bench's pure helpers from issue #16, fast: the real-scale tokenizer's corpus readers and joint vocabulary, the
CPU identity every result records, the robust GEMM-only floor (least of medians, rounds combined, a floor above ours
flagged), the paragraph workload's peer length, the CTranslate2 soak's sentence split and the new targets rows."""

from __future__ import annotations

import importlib
import struct
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture
def bench(monkeypatch):
    """Import bench modules as `python bench/X.py` sees them (bench/ first on sys.path)."""
    monkeypatch.syspath_prepend(str(BENCH))
    loaded = {}

    def load(name: str):
        if name not in loaded:
            sys.modules.pop(name, None)
            loaded[name] = importlib.import_module(name)
        return loaded[name]

    yield load
    for name in loaded:
        sys.modules.pop(name, None)


def _mo(pairs: list[tuple[str, str]], order: str = "<") -> bytes:
    """A GNU .mo catalogue holding `pairs` (the header entry first, as msgfmt writes it)."""
    entries = sorted([("", "Content-Type: text/plain; charset=UTF-8\n"), *pairs])
    ids = [k.encode() for k, _ in entries]
    strs = [v.encode() for _, v in entries]
    n = len(entries)
    ids_at, strs_at = 28, 28 + 8 * n
    data_at = strs_at + 8 * n
    blob, id_table, str_table = b"", b"", b""
    for raw in ids:
        id_table += struct.pack(order + "2I", len(raw), data_at + len(blob))
        blob += raw + b"\0"
    for raw in strs:
        str_table += struct.pack(order + "2I", len(raw), data_at + len(blob))
        blob += raw + b"\0"
    header = struct.pack(order + "7I", 0x950412DE, 0, n, ids_at, strs_at, 0, 0)
    return header + id_table + str_table + blob


@pytest.mark.parametrize("order", ["<", ">"])
def test_parse_mo_reads_pairs_plurals_and_contexts(bench, order):
    rt = bench("real_tokenizer")
    data = _mo(
        [
            ("Open the file", "打开文件"),
            ("%d file\0%d files", "%d 个文件"),
            ("menu\x04Quit", "退出"),
        ],
        order,
    )
    pairs = rt.parse_mo(data)
    assert ("Open the file", "打开文件") in pairs
    assert ("%d file", "%d 个文件") in pairs  # plural forms split on NUL, zip to the shorter side
    assert ("Quit", "退出") in pairs  # msgctxt dropped
    assert all(mid for mid, _ in pairs)  # the header (empty msgid) is not text
    assert rt.parse_mo(b"not a catalogue at all") == []


def test_corpus_lines_are_cleaned_and_sorted_by_language(bench):
    rt = bench("real_tokenizer")
    assert rt.clean_line("  _Open %s   in &new window %1$d ") == "Open in new window"
    assert rt.is_english("Remove the selected files from the list")
    assert not rt.is_english("删除 selected 文件")
    assert rt.is_chinese("无效的 tar 头部")
    assert not rt.is_chinese("tar")
    page = '.TH LS 1\n.\\" a comment\n.SH NAME\nls \\- list \\fBdirectory\\fR contents\n.B bold words here\n'
    assert rt.strip_roff(page) == ["ls - list directory contents", "bold words here"]


def test_joint_vocab_is_marian_shaped(bench):
    rt = bench("real_tokenizer")
    vocab = rt.joint_vocab(["</s>", "<unk>", "▁the", "▁a", "s"], ["</s>", "<unk>", "的", "s", "▁a"])
    assert vocab["</s>"] == 0 and vocab["<unk>"] == 1
    assert list(vocab)[2 : 2 + len(rt.LANGUAGE_TOKENS)] == list(rt.LANGUAGE_TOKENS)
    assert sorted(vocab.values()) == list(range(len(vocab)))  # dense ids
    assert [p for p in vocab if not p.startswith(">>")][2:] == ["▁the", "▁a", "s", "的"]  # shared pieces once
    full_model = bench("full_model")
    padded = full_model.build_vocab_from(vocab)
    assert len(padded) == full_model.VOCAB_SIZE and padded["<pad>"] == full_model.PAD_ID
    assert all(padded[p] == i for p, i in vocab.items())


CPUINFO_AMD = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 17
model name\t: AMD EPYC 9R14
stepping\t: 1
flags\t\t: fpu avx2 fma avx512f avx512bw avx512_vnni

processor\t: 1
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 9R14
"""
LSCPU_INTEL = """Architecture:            x86_64
Vendor ID:               GenuineIntel
Model name:              Intel(R) Xeon(R) Platinum 8488C
CPU family:              6
Model:                   143
Stepping:                8
Hypervisor vendor:       KVM
Flags:                   fpu avx2 fma avx512f amx_int8 amx_bf16 avx_vnni
"""


def test_cpu_identity_from_cpuinfo_or_lscpu(bench):
    machine = bench("machine")
    amd = machine.cpu_identity(CPUINFO_AMD)
    assert amd["model"] == "AMD EPYC 9R14" and amd["vendor"] == "AMD" and amd["vendor_id"] == "AuthenticAMD"
    assert amd["family_model_stepping"] == "25/17/1"
    assert amd["simd"] == ["avx2", "fma", "avx512f", "avx512bw", "avx512_vnni"]
    intel = machine.cpu_identity("", LSCPU_INTEL)
    assert intel["vendor"] == "Intel" and intel["hypervisor"] == "KVM" and "amx_int8" in intel["simd"]
    line = machine.describe_cpu(intel)
    assert line.startswith("Intel(R) Xeon(R) Platinum 8488C (Intel, GenuineIntel 6/143/8, KVM; ")
    assert machine.describe_cpu(machine.cpu_identity("", "")) == "unknown CPU"


def test_floor_keeps_the_least_disturbed_median_and_combines_rounds(bench):
    floor = bench("floor")
    cell = floor.robust_median([[5.0, 5.2, 9.0], [4.0, 4.1, 4.2], [30.0, 31.0, 3.0]])
    assert cell["median_ms"] == 4.1 and cell["min_ms"] == 3.0 and cell["samples"] == 9
    assert cell["pass_medians_ms"] == [5.2, 4.1, 30.0]

    def round_(enc: float, step: float) -> dict:
        return {"status": "ok", "encoder_ms": {"20": {"median_ms": enc}}, "step_ms": {"1": {"median_ms": step}}}

    merged = floor.combine_rounds([round_(2.0, 1.5), {"status": "failed"}, round_(3.0, 1.0)])
    assert merged["rounds"] == 2
    assert merged["encoder_ms"]["20"]["median_ms"] == 2.0 and merged["step_ms"]["1"]["median_ms"] == 1.0
    assert merged["step_ms"]["1"]["round_medians_ms"] == [1.5, 1.0]
    assert floor.combine_rounds([{"status": "failed", "reason": "x"}])["status"] == "failed"


def _results(ours_ms: dict[str, float], floor_ms: dict[str, float], **extra) -> dict:
    return {
        "settings": {"threads": [2], "tokenizer": "real"},
        "warm": {"ours-int8": {"2": {w: {"median_ms": ms} for w, ms in ours_ms.items()}}},
        "floor": {"int8": {"2": {"status": "ok", "workloads": floor_ms}}},
        **extra,
    }


def test_a_floor_above_ours_is_a_measurement_error_not_a_ratio(bench):
    run = bench("run")
    targets = bench("targets")
    ok = _results({"greedy": 60.0, "batch8": 250.0}, {"greedy": 50.0, "batch8": 200.0})
    assert run.floor_above_ours(ok) == []
    rows = {r["workload"]: r for r in targets.targets_table(ok)[0]}
    assert rows["every workload, INT8, 2 threads"]["result"] == "PASS"  # worst 1.25×
    bad = _results({"greedy": 60.0, "batch8": 250.0}, {"greedy": 50.0, "batch8": 489.0})
    assert run.floor_above_ours(bad) == [
        {"system": "ours-int8", "threads": 2, "workload": "batch8", "floor_ms": 489.0, "ours_ms": 250.0}
    ]
    row = {r["workload"]: r for r in targets.targets_table(bad)[0]}["every workload, INT8, 2 threads"]
    assert row["result"] == "n/a" and "measurement error" in row["measured"]


def test_paragraph_and_soak_targets(bench):
    targets = bench("targets")
    para = {
        "ours-int8": {"2": {"status": "ok", "median_ms": 700.0, "target_tokens": 300}},
        "ct2-int8": {"2": {"status": "ok", "median_ms": 1000.0, "target_tokens": 300}},
    }
    soak = {"status": "ok", "translations": 500, "checkpoints": [{"translations": 500, "VmHWM": 150.0, "VmRSS": 140.0}]}
    peer = {"status": "ok", "checkpoints": [{"VmHWM": 145.0, "VmRSS": 120.0}]}
    r = _results({}, {}, paragraph=para, engine_checks={"status": "ok", "soak": soak, "peer_soak": {"ct2-int8": peer}})
    rows = {row["workload"]: row for row in targets.targets_table(r)[0]}
    assert rows["pasted paragraph, 5 sentences, beam 4, Translator.translate end to end, INT8"]["result"] == "PASS"
    memory = rows["peak RSS, INT8 engine, 500 varied translations, real-scale tokenizer"]
    assert memory["result"] == "MISS" and "ours 150 MB vs CTranslate2 int8 145 MB" in memory["measured"]
    r["settings"]["tokenizer"] = "fixture"
    rows = {row["workload"]: row for row in targets.targets_table(r)[0]}
    assert rows["peak RSS, INT8 engine, 500 varied translations, real-scale tokenizer"]["result"] == "n/a"


def test_peer_length_and_sentence_split(bench):
    workloads = bench("workloads")
    assert workloads.peer_decoding_length([60, 62, 65]) == 62
    assert workloads.peer_decoding_length([1]) == 1
    with pytest.raises(ValueError):
        workloads.peer_decoding_length([])
    assert len(workloads.PARAGRAPH) == 5
    peer_soak = bench("peer_soak")
    assert peer_soak.split_sentences("One two. Three four? Five!  ") == ["One two.", "Three four?", "Five!"]


@pytest.mark.parametrize("source_len", [1, 2, 20, 60, 170])
def test_the_peer_soak_decodes_as_far_as_ours_may(bench, source_len):
    """CTranslate2's max_decoding_length in the soak (generated tokens, eos included) is the room
    engine.pipeline.length_limits
    gives the same en→zh row plus its end token, so both engines may decode the same number of tokens."""
    from engine.pipeline.length_limits import length_limit, length_rule

    soak_texts = bench("soak_texts")
    ours = length_limit(source_len, 10_000, length_rule("en-zh"))  # start token included, as generate() counts
    assert soak_texts.peer_decoding_limit(source_len) == ours - 1
