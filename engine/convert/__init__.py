"""Offline model-build pipeline: Marian checkpoint → verified ONNX bundle.

Only `qiao model build` and the tests import this package. It may import torch, transformers, onnx and
sentencepiece, but only inside functions or in its own submodules, never from the runtime (`engine.*` outside
`engine.convert`), so the frozen app never needs them.
"""
