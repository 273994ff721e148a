"""PyInstaller runtime hook (packaging/qiao.spec): runs in the frozen app before its entry script and before any
other module is imported, and switches onnxruntime's telemetry off while onnxruntime cannot have loaded yet
(engine/privacy.py says why this must precede the import). The launcher imports `engine` first too; this hook makes
the frozen app independent of the launcher's import order."""

from engine import privacy

privacy.apply()
