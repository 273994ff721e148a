"""The MarianMT family (opus-mt): runtime model, tokenizer and, under build/, the converter."""
