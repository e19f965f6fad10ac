"""`controllers.base.Reporter` for one run: collects its log lines and the Events to post.

One Event per run that changed something in the cluster, summing up its actions, as a
Kubernetes controller posts one "ScalingReplicaSet" and not one per field; status writes
stay in the reconcile log only. Warnings a controller reports are posted as they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SUMMARY_REASON = "Reconciled"  # when a run's actions do not share one verb


@dataclass
class RunReporter:
    actions: list[str] = field(default_factory=list)  # the run log's lines, in order
    changes: list[str] = field(default_factory=list)  # what was done to other objects
    reported: list[tuple[str, str, str]] = field(default_factory=list)  # (type, reason, message)

    def action(self, message: str) -> None:
        self.actions.append(message)
        self.changes.append(message)

    def status_change(self, message: str) -> None:
        self.actions.append(message)

    def event(self, type_: str, reason: str, message: str) -> None:
        self.reported.append((type_, reason, message))

    @property
    def events(self) -> list[tuple[str, str, str]]:
        """The run's summary Event, then those reported, as (type, reason, message)."""
        if not self.changes:
            return list(self.reported)
        # "Scaled Deployment x replicas 3→5" → reason "Scaled"; mixed verbs → "Reconciled".
        verbs = {change.split(" ", 1)[0] for change in self.changes}
        reason = verbs.pop() if len(verbs) == 1 and "" not in verbs else SUMMARY_REASON
        return [("Normal", reason, "; ".join(self.changes)), *self.reported]
