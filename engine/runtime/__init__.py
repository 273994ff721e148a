"""ONNX Runtime and numpy plumbing every family shares: sessions, the scorer, embedding reads, memory."""
