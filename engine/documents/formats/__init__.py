"""One module per document format, each defining FORMAT (engine.documents.model.DocumentFormat)."""
