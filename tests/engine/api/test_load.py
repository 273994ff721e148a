"""50 concurrent clients against `qiao serve` (the tiny model): nothing lost, every answer its request's.

Half the clients are libretranslatepy (a new connection per request, form-encoded), half keep one connection and
send JSON batches of two or three sentences. Each answer is compared with the sentence's translation on its own.
The default run lasts about 10 s; the `slow` one a minute. Latency (median, p95) and the server's memory are
printed (pytest -s shows them).
"""

from __future__ import annotations

import http.client
import json
import random
import statistics
import sys
import threading
import time

import pytest

from .serving import ROOT, Served, allow_loopback

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and /proc")
libretranslatepy = pytest.importorskip("libretranslatepy")
CLIENTS = 50


def corpus_sentences() -> list[str]:
    rows = (ROOT / "tests" / "fixtures" / "tiny_marian" / "corpus.tsv").read_text(encoding="utf-8").splitlines()
    return [row.split("\t")[0] for row in rows if row.strip()][:60]


def expected_for(server: Served, sentences: list[str]) -> dict[str, str]:
    """Each sentence translated alone, one request at a time, before the load."""
    lt = libretranslatepy.LibreTranslateAPI(server.url)
    return {s: lt.translate(s, "en", "zh") for s in sentences}


def run_load(monkeypatch, seconds: float) -> dict:
    allow_loopback(monkeypatch)
    server = Served([])
    try:
        sentences = corpus_sentences()
        expected = expected_for(server, sentences)
        stop_at = time.monotonic() + seconds
        latencies: list[float] = []
        problems: list[str] = []
        sent = [0]
        answered = [0]
        lock = threading.Lock()
        rss_peak = [server.rss_kb()]

        def record(ms: float, ok: bool, problem: str = "") -> None:
            with lock:
                latencies.append(ms)
                answered[0] += ok
                if not ok:
                    problems.append(problem)

        def form_client(seed: int) -> None:
            rnd = random.Random(seed)
            lt = libretranslatepy.LibreTranslateAPI(server.url)
            while time.monotonic() < stop_at:
                s = rnd.choice(sentences)
                with lock:
                    sent[0] += 1
                began = time.perf_counter()
                try:
                    got = lt.translate(s, "en", "zh", timeout=60)
                except Exception as exc:
                    record((time.perf_counter() - began) * 1000, False, f"{type(exc).__name__}: {exc}")
                    continue
                record((time.perf_counter() - began) * 1000, got == expected[s], f"{s!r} -> {got!r}")

        def batch_client(seed: int) -> None:
            rnd = random.Random(seed)
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
            try:
                while time.monotonic() < stop_at:
                    batch = rnd.sample(sentences, rnd.choice((2, 3)))
                    body = json.dumps({"q": batch, "source": "en", "target": "zh"})
                    with lock:
                        sent[0] += 1
                    began = time.perf_counter()
                    try:
                        conn.request("POST", "/translate", body=body, headers={"Content-Type": "application/json"})
                        reply = conn.getresponse()
                        data = json.loads(reply.read())
                    except Exception as exc:
                        record((time.perf_counter() - began) * 1000, False, f"{type(exc).__name__}: {exc}")
                        conn.close()
                        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
                        continue
                    ok = reply.status == 200 and data.get("translatedText") == [expected[s] for s in batch]
                    record((time.perf_counter() - began) * 1000, ok, f"{reply.status} {batch!r} -> {data!r}")
            finally:
                conn.close()

        def watch_memory() -> None:
            while time.monotonic() < stop_at:
                rss_peak[0] = max(rss_peak[0], server.rss_kb())
                time.sleep(0.2)

        threads = [
            threading.Thread(target=form_client if i % 2 else batch_client, args=(i,), daemon=True)
            for i in range(CLIENTS)
        ]
        watcher = threading.Thread(target=watch_memory, daemon=True)
        watcher.start()
        for t in threads:
            t.start()
        for t in threads:
            t.join(seconds + 120)
        watcher.join(5)
        hwm = server.rss_kb("VmHWM")
    finally:
        code = server.stop()
    assert code == 0
    ordered = sorted(latencies)
    figures = {
        "clients": CLIENTS,
        "seconds": seconds,
        "requests": sent[0],
        "answered_correctly": answered[0],
        "median_ms": round(statistics.median(ordered), 1),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 1),
        "max_ms": round(ordered[-1], 1),
        "rss_peak_mib": round(rss_peak[0] / 1024, 1),
        "rss_hwm_mib": round(hwm / 1024, 1),
    }
    print("\nqiao serve under load:", json.dumps(figures))
    assert problems == [], problems[:5]
    assert sent[0] == answered[0] == len(latencies)
    assert sent[0] >= CLIENTS * 3, "each client sent several requests"
    return figures


def test_fifty_clients_nothing_lost(monkeypatch):
    run_load(monkeypatch, 10.0)


@pytest.mark.slow
def test_fifty_clients_for_a_minute(monkeypatch):
    run_load(monkeypatch, 60.0)
