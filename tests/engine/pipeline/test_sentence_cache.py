"""The sentence cache's bounds: entries, bytes, least recently used first out."""

from __future__ import annotations

from engine.pipeline.sentence_cache import SentenceCache


def key(n: int, beams: int = 1, precision: str = "int8") -> tuple:
    return SentenceCache.key([n, n + 1, 0], beams, precision)


def test_round_trip_and_distinct_keys():
    cache = SentenceCache()
    cache.put(key(1), [10, 11, 65000], "你好")
    assert cache.get(key(1)) == ([10, 11, 65000], "你好")
    assert cache.get(key(1, beams=4)) is None and cache.get(key(1, precision="fp32")) is None
    assert cache.get(key(2)) is None


def test_least_recently_used_goes_first():
    cache = SentenceCache(max_entries=3)
    for n in range(3):
        cache.put(key(n), [n], str(n))
    cache.get(key(0))  # used: now the newest
    cache.put(key(3), [3], "3")
    assert len(cache) == 3
    assert cache.get(key(1)) is None
    assert cache.get(key(0)) is not None and cache.get(key(3)) is not None


def test_bounded_by_bytes_whatever_the_entry_count():
    cache = SentenceCache(max_entries=1_000_000, max_bytes=64 * 1024)
    for n in range(5000):
        cache.put(key(n), list(range(50)), "这是一个很长的句子。" * 5)
        assert cache.nbytes <= 64 * 1024
    assert 0 < len(cache) < 5000
    assert cache.get(key(4999)) is not None and cache.get(key(0)) is None
    cache.put(key(-1), list(range(100_000)), "x")  # larger than the whole cache: not kept, nothing evicted
    assert cache.get(key(-1)) is None and cache.get(key(4999)) is not None


def test_replacing_an_entry_keeps_the_byte_count_right():
    cache = SentenceCache()
    cache.put(key(1), [1, 2, 3], "a")
    size = cache.nbytes
    cache.put(key(1), [1, 2, 3], "a")
    assert cache.nbytes == size and len(cache) == 1
    cache.clear()
    assert cache.nbytes == 0 and len(cache) == 0


def test_the_model_is_part_of_the_key():
    cache = SentenceCache()
    ids = [5, 6, 0]
    cache.put(SentenceCache.key(ids, 1, "int8", "en-zh:a"), [1], "你好")
    assert cache.get(SentenceCache.key(ids, 1, "int8", "zh-en:b")) is None
    assert cache.get(SentenceCache.key(ids, 1, "int8", "en-zh:a")) == ([1], "你好")
