"""Reviewing a translation: alternatives, confidence, edits."""
