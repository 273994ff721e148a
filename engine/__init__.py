"""Qiao's translation engine: ONNX Runtime + tokenizers + numpy, no torch, no Qt.

Importing this package is cheap on purpose (the CLI and the GUI import it at start-up); the heavy modules
(`engine.pipeline.translator`, which pulls onnxruntime) are imported where they are used. It does one thing first:
switch
off the telemetry of onnxruntime (and of the build pipeline's libraries) before any of them can load, so that every
entry point — CLI, window, frozen app, build pipeline, bench, tests — gets it (see engine/privacy.py).
"""

from engine import privacy as _privacy

_privacy.apply()

__version__ = "0.1.0"
