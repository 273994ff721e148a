"""The searches (greedy, beam, constrained): they see a model only through start/step/reorder/select."""
