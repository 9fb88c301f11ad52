"""`whatif`: run a snapshot twice with the same seed — without and with a change applied at t=0
through the Simulation API — and report the difference (docs/cli.md, `kubetaint whatif`). The
change comes before the scheduler's first cycle: pods Pending in the snapshot are scheduled with
the change in force.

In-flight evictions. Upstream's taint eviction controller starts a pod's timer when it processes
the pod on a tainted node (processing time, not the taint's `timeAdded`); a restarted controller
starts every timer from zero. A snapshot is modelled as a cluster that keeps running, whose
controller has had the timer since the NoExecute taint was added: right after t=0 every pending
timer on a node that already had NoExecute taints in the snapshot is moved to
`timeAdded(earliest such taint) + tolerationSeconds` (due ones fire at once). The report says so.
Without a capture time (a hand-saved List) timers start at t=0, as after a controller restart.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubetaint.core.heap import collector_paused
from kubetaint.scheduler.explain import ExplainError, explain
from kubetaint.sim.doccopy import copy_document
from kubetaint.sim.scenario import Scenario, parse_scenario
from kubetaint.sim.simulation import Simulation
from kubetaint.sim.snapshot import SnapshotInfo
from kubetaint.sim.snapshot_run import run_to_start
from kubetaint.sim.source import Source
from kubetaint.sim.whatif_change import Change, WhatIfError
from kubetaint.store.changes import each_event
from kubetaint.store.interface import JSON, WatchEvent

DEFAULT_FOR = 3600.0
CONTINUE_NOTE = (
    "In-flight NoExecute evictions continue from the snapshot's taint timeAdded, as in a cluster whose "
    "taint-eviction controller keeps running; a real controller restart would start every timer from zero."
)

Key = tuple[str, str]


def _key(pod: Mapping[str, Any]) -> Key:
    meta = pod.get("metadata") or {}
    return (str(meta.get("namespace") or "default"), str(meta.get("name") or ""))


def _node(pod: Mapping[str, Any]) -> str:
    return str((pod.get("spec") or {}).get("nodeName") or "")


def _owner(pod: Mapping[str, Any]) -> str | None:
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return f"{ref.get('kind')}/{ref.get('name')}"
    return None


class Run:
    """One simulated run of the snapshot (with or without the change)."""

    def __init__(
        self, scenario: Scenario, info: SnapshotInfo, change: Change | None, duration: float, seed: int | None
    ) -> None:
        source = scenario.source
        if source is not None and isinstance(source.data, Mapping):
            with collector_paused():  # as load_scenario; the copy keeps the file's name and lines
                fresh = parse_scenario(Source(source.name, copy_document(dict(source.data)), source.text))
        else:
            fresh = copy.deepcopy(scenario)
        self.sim = Simulation(fresh, seed=seed, until=duration)
        self.kubectl_output: list[str] = []
        self.initial = {_key(p): p for p in self.sim.objects("pods")}
        #: The owner each pod last had (controllers adopt snapshot pods at t=0).
        self.owners: dict[Key, str] = {}
        self.sim.cluster.store.subscribe(each_event(self._track_owner))
        # t=0: controllers adopt the snapshot's pods and start their timers, then the change,
        # then the scheduler's first cycle: a pod Pending in the snapshot is placed with the
        # change in force, as after a cordon, drain or taint made now.
        scheduler = self.sim.cluster.scheduler_host
        scheduler.stop()
        scheduler.leading = False
        run_to_start(self.sim, info)
        if change is not None:
            self.kubectl_output = change.apply(self.sim)
        scheduler.lead()
        self.sim.run_until(duration)
        self.final = {_key(p): p for p in self.sim.objects("pods")}

    def _track_owner(self, event: WatchEvent) -> None:
        if event.resource == "pods":
            owner = _owner(event.object)
            if owner is not None:
                self.owners[_key(event.object)] = owner

    def owner(self, key: Key) -> str | None:
        """The pod's controller; for a snapshot pod no controller adopted, the ReplicaSet or
        DaemonSet of the snapshot whose matchLabels select it."""
        owner = self.owners.get(key)
        pod = self.initial.get(key)
        if owner is None and pod is not None:
            labels = (pod.get("metadata") or {}).get("labels") or {}
            for obj in self.sim.scenario.objects:
                meta = obj.get("metadata") or {}
                wanted = ((obj.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
                same_namespace = (meta.get("namespace") or "default") == key[0]
                selects = bool(wanted) and all(labels.get(k) == v for k, v in wanted.items())
                if obj.get("kind") in ("ReplicaSet", "DaemonSet") and same_namespace and selects:
                    return f"{obj['kind']}/{meta.get('name')}"
        return owner

    def deleted(self) -> dict[Key, JSON]:
        """Pod deletions of the run by pod (the first one), each a timeline record."""
        out: dict[Key, JSON] = {}
        for record in self.sim.timeline:
            if record.get("kind") == "Pod" and record.get("reason") == "Deleted":
                key = (str(record.get("namespace") or "default"), str(record.get("name")))
                out.setdefault(key, record)
        return out

    def created_after_start(self) -> list[Key]:
        return [
            (str(r.get("namespace") or "default"), str(r.get("name")))
            for r in self.sim.timeline
            if r.get("kind") == "Pod" and r.get("reason") == "Created"
        ]

    def pending(self) -> list[JSON]:
        return [p for p in self.final.values() if not _node(p)]


@dataclass(frozen=True, slots=True)
class Comparison:
    """A whatif's document and the timeline documents of its two runs (for the HTML report's
    before/after charts)."""

    document: JSON
    without: JSON
    with_change: JSON


def compare(
    scenario: Scenario,
    info: SnapshotInfo,
    change: Change,
    *,
    duration: float = DEFAULT_FOR,
    seed: int | None = None,
) -> Comparison:
    """`whatif`, keeping the timeline documents of the run without and the run with the change."""
    change.check(scenario)
    without = Run(scenario, info, None, duration, seed)
    with_change = Run(scenario, info, change, duration, seed)
    document = _report(
        scenario, info=info, change=change, duration=duration, without=without, run=with_change
    )
    return Comparison(document, without.sim.document(), with_change.sim.document())


def whatif(
    scenario: Scenario,
    info: SnapshotInfo,
    change: Change,
    *,
    duration: float = DEFAULT_FOR,
    seed: int | None = None,
) -> JSON:
    """The whatif JSON document: the change's effect over `duration` seconds."""
    return compare(scenario, info, change, duration=duration, seed=seed).document


def _report(
    scenario: Scenario, *, info: SnapshotInfo, change: Change, duration: float, without: Run, run: Run
) -> JSON:
    deleted, deleted_without = run.deleted(), without.deleted()
    replacements = _pair_replacements(run)
    evictions: list[JSON] = []
    in_flight: list[JSON] = []
    for key, record in deleted.items():
        pod = run.initial.get(key)
        if pod is None:
            continue  # a pod created during the run (a replacement deleted again)
        entry = {
            "namespace": key[0],
            "name": key[1],
            "node": record.get("node") or _node(pod),
            "t": record["t"],
            "when": "at once" if record["t"] == 0 else "later",
            "owner": run.owner(key),
            "replacement": replacements.get(key),
        }
        if key in deleted_without:
            in_flight.append({**entry, "tWithout": deleted_without[key]["t"]})
        else:
            evictions.append(entry)
    affected = set(change.affected_nodes(run.sim))
    not_evicted = [
        {"namespace": k[0], "name": k[1], "node": _node(p), "owner": run.owner(k)}
        for k, p in sorted(run.initial.items())
        if _node(p) in affected and k in run.final and _node(run.final[k]) == _node(p)
    ]
    pending = _explain_pending(run, scenario)
    daemon = [
        {**e, "daemonSet": e["owner"].split("/", 1)[1], "outcome": _daemon_outcome(e)}
        for e in evictions + in_flight
        if (e["owner"] or "").startswith("DaemonSet/")
    ]
    evictions.sort(key=lambda e: (e["t"], e["namespace"], e["name"]))
    in_flight.sort(key=lambda e: (e["t"], e["namespace"], e["name"]))
    blocked = _pdb_blocked(run)
    pending_without = len(without.pending())
    return {
        "snapshot": {
            "name": scenario.name,
            "capturedAt": info.captured_at,
            "serverVersion": info.server_version,
        },
        "change": change.as_json(),
        "for": duration,
        "seed": run.sim.seed,
        "evictions": evictions,
        "inFlight": in_flight,
        "notEvicted": not_evicted,
        "pending": pending,
        "pdbBlocked": blocked,
        "daemonSets": daemon,
        "kubectl": run.kubectl_output,
        "summary": {
            "evictedAtOnce": sum(1 for e in evictions if e["when"] == "at once"),
            "evictedLater": sum(1 for e in evictions if e["when"] == "later"),
            "inFlight": len(in_flight),
            "notEvicted": len(not_evicted),
            "pending": len(pending),
            "pendingWithout": pending_without,
            "pdbBlocked": len(blocked),
        },
        "notes": ([CONTINUE_NOTE] if info.captured_at else []) + _not_modelled(without, run),
    }


def _not_modelled(*runs: Run) -> list[str]:
    """The scheduler's NotModelled warnings of either run, once per pod: what it did not judge."""
    seen: dict[tuple[str, str], str] = {}
    for run in runs:
        for record in run.sim.timeline:
            if record.get("reason") == "NotModelled":
                key = (str(record.get("namespace") or ""), str(record.get("name") or ""))
                seen.setdefault(key, str(record.get("message") or ""))
    return [f"not modelled for pod {ns}/{name}: {message}" for (ns, name), message in seen.items()]


def _pair_replacements(run: Run) -> dict[Key, JSON]:
    """Each deleted pod's replacement: the owner's next new pod, in creation order."""
    new_by_owner: dict[str, list[Key]] = {}
    for key in run.created_after_start():
        owner = run.owner(key)
        if owner is not None and key not in run.initial:
            new_by_owner.setdefault(owner, []).append(key)
    out: dict[Key, JSON] = {}
    for key, _record in sorted(run.deleted().items(), key=lambda kv: kv[1]["t"]):
        owner = run.owner(key)
        queue = new_by_owner.get(owner or "", [])
        if (owner or "").startswith("StatefulSet/") and key in run.final:
            new = key  # a StatefulSet recreates the ordinal under the same name
        elif queue:
            new = queue.pop(0)
        else:
            continue
        if new not in run.final:
            # The replacement was deleted again (e.g. evicted from the same tainted node).
            out[key] = {"namespace": new[0], "name": new[1], "node": None, "pending": False, "deleted": True}
            continue
        node = _node(run.final[new])
        out[key] = {"namespace": new[0], "name": new[1], "node": node or None, "pending": not node}
    return out


def _explain_pending(run: Run, scenario: Scenario) -> list[JSON]:
    pending = run.pending()
    if not pending:
        return []
    objects = [*run.sim.objects("nodes"), *run.final.values(), *run.sim.objects("priorityclasses")]
    try:
        reports = explain(objects, feature_gates=scenario.feature_gates)["pods"]
    except ExplainError as err:
        return [
            {"namespace": k[0], "name": k[1], "message": str(err), "nodes": []} for k in map(_key, pending)
        ]
    out: list[JSON] = []
    for report in reports:
        nodes = [
            {
                "name": n["name"],
                **(
                    {"plugin": n["filter"]["plugin"], "reason": n["filter"]["reason"]}
                    if n.get("filter")
                    else {}
                ),
                **{k: n[k] for k in ("untoleratedTaint", "suggestedToleration") if k in n},
            }
            for n in report.get("nodes") or []
            if not n.get("feasible")
        ]
        out.append(
            {
                "namespace": report["namespace"],
                "name": report["name"],
                "owner": run.owner((report["namespace"], report["name"])),
                "message": report.get("message") or "",
                "nodes": nodes,
            }
        )
    return out


def _pdb_blocked(run: Run) -> list[JSON]:
    out: list[JSON] = []
    seen: set[str] = set()
    for line in run.kubectl_output:
        if "disruption budget" in line and line.startswith('error when evicting pods/"'):
            name = line.split('"')[1]
            namespace = line.split('"')[3]
            if f"{namespace}/{name}" not in seen:
                seen.add(f"{namespace}/{name}")
                out.append({"namespace": namespace, "name": name, "message": line.split(": ", 1)[-1]})
    return out


def _daemon_outcome(entry: Mapping[str, Any]) -> str:
    replacement = entry.get("replacement")
    if replacement is None:
        return "not recreated on the node (the DaemonSet no longer tolerates it)"
    if replacement.get("deleted"):
        return "recreated, then deleted again"
    if replacement.get("pending"):
        return "recreated but Pending"
    return f"recreated on {replacement['node']}"


__all__ = ["CONTINUE_NOTE", "DEFAULT_FOR", "Change", "Run", "WhatIfError", "whatif"]
