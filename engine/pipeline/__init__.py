"""Requests → sentences → searches → streamed results: the Translator facade and its parts."""
