"""Qiao's composition root: the only package that imports both the engine and the GUI.

engine/ knows no Qt and gui/ talks to the engine through its worker; what ties them into one product, the `qiao`
command (the window without a command, the engine's commands with one), lives here.
"""
