"""The Models dialog and model tasks."""
