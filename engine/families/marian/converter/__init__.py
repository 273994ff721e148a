"""Building a Marian bundle from a checkpoint (torch/transformers: the build extra only)."""
