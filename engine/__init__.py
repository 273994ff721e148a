"""Qiao's translation engine: ONNX Runtime + tokenizers + numpy, no torch, no Qt.

Importing this package is cheap on purpose (the CLI and the GUI import it at start-up); the heavy modules
(`engine.translator`, which pulls onnxruntime) are imported where they are used.
"""

__version__ = "0.1.0"
