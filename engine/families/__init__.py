"""Model families: each one folder (reader and graph builder, tokenizer, generation spec)."""
