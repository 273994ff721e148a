"""A person's search words → one SQL condition over the entries; never raises on what they type.

Every word of the query must occur in the source or the output (words in any order; the last one may be the
start of a word, as the user is still typing it). No character of the query is FTS5 syntax: each word becomes a
quoted FTS5 string (a `"` inside doubled), so `NEAR`, `*`, `-`, `AND`, `(` or a lone `"` are plain text.

By search mode (engine.history.schema):
- trigram: a word of 3+ characters is an indexed substring match (so Chinese, which has no spaces, matches
  inside a sentence, and prefixes need no `*`); a shorter word (a 2-character Chinese word like 喜欢, "a") cannot
  use a trigram index and is matched by LIKE.
- unicode61: Latin words by FTS5 with the last one as a prefix; a word with CJK characters (unicode61 keeps a whole
  run of Chinese as one token, so 喜欢 would not match inside 我喜欢桥) or without letters or digits by LIKE.
- like: every word by LIKE (no FTS5 in this SQLite).
LIKE here is case-insensitive for ASCII only, as SQLite's LIKE is; the FTS5 tokenizers fold case more widely.
"""

from __future__ import annotations

import re

from engine.history.schema import FTS_TABLE, MODE_LIKE, MODE_TRIGRAM

MAX_WORDS = 16  # a pasted paragraph is not a query: its first words are
_CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\U00020000-\U0003ffff]")
_WORDISH = re.compile(r"\w")


def words(query: str) -> list[str]:
    """The query's words (split on white space), at most MAX_WORDS."""
    return query.split()[:MAX_WORDS]


def fts_string(word: str) -> str:
    """`word` as an FTS5 string literal: plain text whatever it holds."""
    return '"' + word.replace('"', '""') + '"'


def like_pattern(word: str) -> str:
    """`%word%` for LIKE … ESCAPE '\\', with the word's own %, _ and \\ taken literally."""
    return "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def condition(query: str, mode: str) -> tuple[str, list[str]]:
    """The WHERE condition over `entries e` for `query` in `mode`, and its parameters; ("", []) for no words."""
    found = words(query)
    fts_terms: list[str] = []
    likes: list[str] = []
    for i, word in enumerate(found):
        last = i == len(found) - 1
        if mode == MODE_LIKE:
            likes.append(word)
        elif mode == MODE_TRIGRAM:
            (fts_terms.append(fts_string(word)) if len(word) >= 3 else likes.append(word))
        elif _CJK.search(word) or not _WORDISH.search(word):
            likes.append(word)
        else:
            fts_terms.append(fts_string(word) + ("*" if last else ""))
    parts: list[str] = []
    params: list[str] = []
    if fts_terms:
        parts.append(f"e.id IN (SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH ?)")
        params.append(" AND ".join(fts_terms))
    for word in likes:
        parts.append("(e.source LIKE ? ESCAPE '\\' OR e.output LIKE ? ESCAPE '\\')")
        params.extend([like_pattern(word)] * 2)
    return " AND ".join(parts), params


def like_condition(query: str) -> tuple[str, list[str]]:
    """The LIKE-only condition: what search falls back to if the index refuses a query."""
    return condition(query, MODE_LIKE)
