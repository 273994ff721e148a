"""A model bundle on disk: its manifest and schema, safe paths, verified hashes, loading failures."""
