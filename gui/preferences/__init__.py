"""The Settings dialog and its sections."""
