"""Helpers shared by every test package: waiting (waiting.py), per-worker names (workers.py),
a snippet run in a fresh interpreter (probe.py)."""
