"""The worker thread that owns the engine: the UI thread never runs it."""
