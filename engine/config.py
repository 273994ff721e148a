"""How the engine runs (precision, threads, provider) as one value, and the choices it offers.

Settings, the Settings dialog, the CLI and the model manager read the choices from here instead of re-declaring
"int8"/"fp32" or a beams range; `EngineConfig` travels whole from the window or CLI to the Translator, whose
sessions and scorer read it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from engine.errors import InputError

PRECISIONS = ("int8", "fp32")  # the order the UI offers them; INT8 first: the default
DEFAULT_PRECISION = "int8"
MIN_BEAMS, MAX_BEAMS = 1, 8
PROVIDERS = ("cpu",)  # execution providers Qiao ships; ONNX Runtime's name in `ORT_PROVIDERS`
ORT_PROVIDERS = {"cpu": "CPUExecutionProvider"}


@dataclass(frozen=True)
class EngineConfig:
    """Per-engine choices (changing one reloads sessions); per-request choices are engine.options."""

    precision: str = DEFAULT_PRECISION
    threads: int | None = None  # None: engine.runtime.sessions.default_threads()
    provider: str = "cpu"

    def replace(self, **changes: object) -> EngineConfig:
        return replace(self, **changes)  # type: ignore[arg-type]

    def validate(self) -> EngineConfig:
        """One clear InputError for the first bad field; returns self."""
        if self.precision not in PRECISIONS:
            raise InputError(f"precision must be one of {', '.join(PRECISIONS)}, not {self.precision!r}")
        t = self.threads
        if t is not None and (isinstance(t, bool) or not isinstance(t, int) or t < 1):
            raise InputError(f"threads must be a whole number of at least 1 (or automatic), not {t!r}")
        if self.provider not in PROVIDERS:
            raise InputError(f"provider must be one of {', '.join(PROVIDERS)}, not {self.provider!r}")
        return self

    @property
    def ort_providers(self) -> list[str]:
        return [ORT_PROVIDERS[self.provider]]
