"""A session run over buffers bound once, through ONNX Runtime's native binding objects.

Why: a decoder step is run hundreds of times per request over the same buffers, and onnxruntime's Python wrappers
(1.2x-1.3x) add checks to every call that a CPU step never needs: `InferenceSession.run_with_iobinding` asks for a
WebGPU graph id and capture state, `IOBinding.bind_ortvalue_input` validates session compatibility and pinning,
`OrtValue.ortvalue_from_numpy` makes an `OrtDevice` per value. The native objects behind them (`session._sess`,
`binding._iobinding`, `onnxruntime.capi._pybind_state.OrtValue`) bind the same memory and run the same graph.
Measured on the Bergamot full-shape model (INT8, 1 thread, AMD EPYC Zen 4, a loaded host): -0.07 ms of thread CPU
a sentence request (paired medians of 120 alternating rounds; the paragraph's difference was within the noise), about
half a percent. Where an onnxruntime release lacks those attributes, the public API is used
(`Binder.fast` says which one runs; a test holds the pinned release to the fast path).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnxruntime as ort

try:  # the native module every onnxruntime wheel ships; its OrtValue is what the Python wrapper holds
    from onnxruntime.capi import _pybind_state as _native

    _CPU = ort.OrtDevice.make("cpu", 0)._get_c_device()
except (ImportError, AttributeError):  # pragma: no cover - an onnxruntime without them: the public API
    _native, _CPU = None, None


class Binder:
    """Binds buffers to one session's inputs and outputs: through the native objects where this onnxruntime has
    them (`fast`), else through the public API."""

    def __init__(self, session: ort.InferenceSession) -> None:
        self.session = session
        native = getattr(session, "_sess", None)
        self.fast = (
            _native is not None
            and native is not None
            and hasattr(native, "run_with_iobinding")
            and hasattr(session.io_binding(), "_iobinding")
        )
        self._native = native

    def value(self, array: np.ndarray) -> object:
        """`array` wrapped once for any number of this binder's steps (no copy: CPU memory is bound as it is; the
        caller keeps the array alive and unresized while a step that binds it runs)."""
        if self.fast:
            return _native.OrtValue.ortvalue_from_numpy(array, _CPU)
        return ort.OrtValue.ortvalue_from_numpy(array)

    def step(self, inputs: Sequence[tuple[str, object]], outputs: Sequence[tuple[str, object]]) -> BoundStep:
        """A run of the session over `inputs` and `outputs` (name, `value()` or numpy array), bound once."""
        public = self.session.io_binding()
        binding = public._iobinding if self.fast else public
        for name, item in inputs:
            binding.bind_ortvalue_input(name, self._wrapped(item))
        for name, item in outputs:
            binding.bind_ortvalue_output(name, self._wrapped(item))
        return BoundStep(self, binding)

    def _wrapped(self, item: object) -> object:
        return self.value(item) if isinstance(item, np.ndarray) else item


class BoundStep:
    """One binding of a Binder's session: `run()` runs the graph over the bound buffers (the caller writes the
    inputs in place before, reads the outputs after)."""

    def __init__(self, binder: Binder, binding: object) -> None:
        self._binder = binder
        self._binding = binding

    def run(self, options: ort.RunOptions | None = None) -> None:
        if self._binder.fast:
            self._binder._native.run_with_iobinding(self._binding, options)  # type: ignore[union-attr]
        else:
            self._binder.session.run_with_iobinding(self._binding, options)
