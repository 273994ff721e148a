"""Text in and out of the model: segmentation, wrapping, punctuation, spans, prefixes, language."""
