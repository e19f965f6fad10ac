"""`controllers.base.Reporter` for one run: collects actions; Events are posted afterwards."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RunReporter:
    actions: list[str] = field(default_factory=list)
    events: list[tuple[str, str, str]] = field(default_factory=list)  # (type, reason, message)

    def action(self, message: str) -> None:
        self.actions.append(message)
        # "Scaled Deployment x replicas 3→5" → reason "Scaled", as controllers do.
        self.events.append(("Normal", message.split(" ", 1)[0] or "Reconciled", message))

    def event(self, type_: str, reason: str, message: str) -> None:
        self.events.append((type_, reason, message))
