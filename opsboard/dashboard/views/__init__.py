"""Views split by area: overview, crs (lists and detail), changes (patch, reconcile), audit."""
