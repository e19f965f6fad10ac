"""Why the scheduler placed a pod on no node, read from its message (pure): its node selector
matched none, or nodes cordoned or with a taint the pod does not tolerate, beside those the
selector rules out.

kube-scheduler v1.28 counts the nodes each filter ruled out, and kubesim writes the same:
"0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) had untolerated taint
{example.com/maintenance: yes}. preemption: 0/3 nodes are available: 3 Preemption is not
helpful for scheduling.." Nodes are not mirrored, so the message is all there is to go on.
"""

from __future__ import annotations

import re
from collections import Counter

from controllers.wording import count

_DETAIL = re.compile(r"0/\d+ nodes are available: (.*?)\.(?: preemption:|$)")
_NODES = re.compile(r"0/(\d+) nodes are available")
_TAINT = re.compile(r"node\(s\) had untolerated taint \{(.*?): (.*?)\}")
CORDONED = "node(s) were unschedulable"
MISMATCH = "node(s) didn't match Pod's node affinity/selector"
_MISMATCH = re.compile(rf"(?:(\d+) )?{re.escape(MISMATCH)}")


def matches_no_node(message: str) -> bool:
    """Every node was excluded by the node selector or affinity, none for another reason."""
    mismatch, nodes = _MISMATCH.search(message), _NODES.search(message)
    if mismatch is None:
        return False
    if mismatch[1] is None or nodes is None:  # no counts: judge by the reason alone
        return True
    return mismatch[1] == nodes[1]


def ruled_out(message: str) -> list[tuple[int, str]]:
    """(nodes, reason) for each reason the scheduler gives; [] if it gives none."""
    found = _DETAIL.search(message)
    if found is None:
        return []
    counted = []
    for part in re.split(r", (?=\d+ )", found[1]):
        number, _, reason = part.partition(" ")
        if number.isdigit():
            counted.append((int(number), reason))
    return counted


def kept_off(message: str) -> tuple[str, str] | None:
    """(what, todo) when cordons or taints keep the pod off every node its selector allows;
    None if another reason rules a node out (a resource, a volume: told elsewhere)."""
    cordoned, mismatched = 0, 0
    taints: Counter[tuple[str, str]] = Counter()  # ("key=value", key) → nodes
    for nodes, reason in ruled_out(message):
        if reason == CORDONED:
            cordoned += nodes
        elif reason == MISMATCH:
            mismatched += nodes
        elif taint := _TAINT.fullmatch(reason):
            key, value = taint[1], taint[2].strip()
            taints[(f"{key}={value}" if value else key, key)] += nodes
        else:
            return None
    if not cordoned and not taints:
        return None
    parts = [f"{count(cordoned, 'node')} cordoned"] if cordoned else []
    if mismatched:
        parts.append(f"{count(mismatched, 'node')} not matching its node selector")
    parts += [f"{count(n, 'node')} tainted {shown}" for (shown, _), n in taints.items()]
    steps = ["uncordon them (kubectl uncordon NODE; kubectl get nodes shows them "
             "SchedulingDisabled)"] if cordoned else []  # fmt: skip
    steps += [f"remove the taint {shown} (kubectl taint nodes NODE {key}-)"
              for shown, key in taints]  # fmt: skip
    which = (", which the pods do not tolerate" if len(taints) == 1 else
             ", taints the pods do not tolerate") if taints else ""  # fmt: skip
    return (
        f"every node is ruled out: {', '.join(parts)}{which}",
        f"On the nodes that should run them: {'; '.join(steps)}; or add nodes that may take them.",
    )
