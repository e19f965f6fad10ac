"""The mirror: a database copy of the watched cluster objects, written only by the watcher.

Read it through selectors.py (the UI) or opsboard.engine.cache.MirrorCache (controllers).
"""
