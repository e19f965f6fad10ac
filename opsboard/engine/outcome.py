"""How one reconcile ended: controller-runtime's (Result, error) as one typed value."""

from __future__ import annotations

from dataclasses import dataclass

from opsboard.engine.models import ReconcileRun

Outcome = ReconcileRun.Outcome  # success, requeue, error (retried), permanent (waits)
FAILED = (Outcome.ERROR, Outcome.PERMANENT)


def outcome_label(value: str) -> str:
    """How pages and the console name an outcome ("Permanent error"): a run with none
    has not ended."""
    return Outcome(value).label if value else "Running"


@dataclass(frozen=True)
class RunOutcome:
    status: Outcome
    error: str = ""  # what went wrong, as the run log and the Event show it
    requeue_after: float | None = None  # seconds until the next run; None: on change only
    # A 409: the run read an object older than the server's (the mirror had not yet caught
    # up with the last write). Retried with the key's backoff (5 ms first) and no Warning
    # Event: nothing is wrong.
    conflict: bool = False
    # A TemporaryError (a conflict among them): its backoff stops growing at
    # OPSBOARD_BACKOFF_TEMPORARY_MAX (queue.backoff).
    temporary: bool = False
    # A 403: waits for a grant, so its backoff starts at OPSBOARD_DENIED_RETRY (queue.backoff).
    denied: bool = False
    # The controller told the error itself (Forbidden.told): no Warning Event of the engine's.
    told: bool = False

    @property
    def metric_result(self) -> str:
        """The `result` label of controller_runtime_reconcile_total."""
        if self.status in FAILED:
            return "error"
        return "requeue_after" if self.status == Outcome.REQUEUE else "success"
