"""Qiao's desktop window (PySide6).

The GUI never imports the heavy engine modules on the UI thread: `gui.worker.scheduler` owns the `Translator` on its own
QThread and the widgets talk to it only through queued signals.
"""
