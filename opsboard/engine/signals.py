"""Signals the engine sends, so that other apps can follow it without being imported here."""

from __future__ import annotations

from django.dispatch import Signal

# Sent after each reconcile run is stored (or folded into the last identical run), with
# sender=ReconcileRun, run=<the ReconcileRun row>, started_at=<when this run started>.
reconcile_run_recorded = Signal()
