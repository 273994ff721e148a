"""The translation history and memory: a local SQLite database (stdlib sqlite3, WAL, versioned schema, FTS5).

`engine.history.records` holds the values; `engine.history.store.HistoryStore` the database (what the window's
History panel and `qiao history` read and write). Nothing here knows Qt.
"""
