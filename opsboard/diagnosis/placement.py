"""Why the scheduler placed a pod on no node, read from its message (pure): its node selector
matched none, or nodes cordoned or with a taint the pod does not tolerate, beside those the
selector rules out; the mirrored Nodes (nodes.py) name them where the mirror has them.

kube-scheduler v1.28 counts the nodes each filter ruled out, and kubesim writes the same:
"0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) had untolerated taint
{example.com/maintenance: yes}. preemption: 0/3 nodes are available: 3 Preemption is not
helpful for scheduling.." The message counts what the scheduler saw at its last try; the
mirror, what the nodes are now: the counts come from the one and the names from the other.
"""

from __future__ import annotations

import re
from collections import Counter

from controllers.base import Body
from controllers.wording import count
from opsboard.diagnosis.nodes import KeptOff, keeping_off, listed, named, remedy

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


def kept_off(message: str, pod: Body, mirrored: list[Body] | None = None) -> tuple[str, str] | None:
    """(what, todo) when cordons or taints keep `pod` off every node its selector allows;
    None if another reason rules a node out (a resource, a volume: told elsewhere).
    `mirrored`: the Nodes, which name those nodes where the mirror has them."""
    cordoned, mismatched = 0, 0
    taints: Counter[tuple[str, str]] = Counter()  # ("key=value", key) → nodes
    for n, reason in ruled_out(message):
        if reason == CORDONED:
            cordoned += n
        elif reason == MISMATCH:
            mismatched += n
        elif taint := _TAINT.fullmatch(reason):
            key, value = taint[1], taint[2].strip()
            taints[(f"{key}={value}" if value else key, key)] += n
        else:
            return None
    if not cordoned and not taints:
        return None
    off = keeping_off(mirrored, pod) if mirrored is not None else KeptOff([], [], {}, {})
    parts = [f"{count(cordoned, 'node')} cordoned{_which(off.cordoned)}"] if cordoned else []
    if mismatched:
        parts.append(f"{count(mismatched, 'node')} not matching its node selector")
    with_key = {key: _with(off, key) for _, key in taints}
    parts += [f"{count(n, 'node')} tainted {shown}{_which(with_key[key])}"
              for (shown, key), n in taints.items()]  # fmt: skip
    steps = [f"uncordon them (kubectl uncordon {named(off.cordoned) or 'NODE'}; kubectl get "
             "nodes shows them SchedulingDisabled)"] if cordoned else []  # fmt: skip
    steps += [remedy(shown, key, with_key[key], mirrored) for shown, key in taints]
    which = (", which the pods do not tolerate" if len(taints) == 1 else
             ", taints the pods do not tolerate") if taints else ""  # fmt: skip
    return (
        f"every node is ruled out: {', '.join(parts)}{which}",
        f"On the nodes that should run them: {'; '.join(steps)}; or add nodes that may take them.",
    )


def _with(off: KeptOff, key: str) -> list[str]:
    """The nodes tainted with `key`, by any value or effect, each once."""
    return list(dict.fromkeys(n for text, names in off.tainted.items()
                              if off.keys[text] == key for n in names))  # fmt: skip


def _which(names: list[str]) -> str:
    return f" ({listed(names)})" if names else ""
