"""The timeline: records built from the store's committed changes (Created/Deleted of pods and
nodes, TaintAdded/TaintRemoved) and from the Events components record (Scheduled, FailedScheduling,
Preempted, TaintManagerEviction, NodeNotReady, Evicted, ...): the core/v1 ones as written, each
repeat counted on the first; kube-scheduler's (events.k8s.io/v1) from its broadcaster, one record
per event recorded. In commit order, with `t` relative to the scenario start. Also the summary and
the JSON document (docs/output-formats.md, "Timeline")."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kubetaint.core.matching import taint_to_string
from kubetaint.sim.halves import TextSink
from kubetaint.sim.jsontext import dumps_indented, write_indented
from kubetaint.store.interface import JSON, WatchEvent

#: Event reasons kept in the timeline (upstream spellings). Others are dropped to keep it readable.
EVENT_REASONS = frozenset(
    {
        "Scheduled",
        "FailedScheduling",
        "Preempted",
        "TaintManagerEviction",
        "NodeNotReady",
        "NodeReady",
        "Evicted",
        "NodeNotSchedulable",
        "NodeSchedulable",
        "OutOfcpu",
        "OutOfmemory",
        "OutOfpods",
        "TaintToleration",
        "FailedCreate",
        "NotModelled",
    }
)


class ChangeHandler:
    """A TimelineRecorder's store subscriber: the changes of each committed batch (`__call__`),
    or one change (`one`)."""

    __slots__ = ("_recorder",)

    def __init__(self, recorder: TimelineRecorder) -> None:
        self._recorder = recorder

    def one(self, event: WatchEvent) -> None:
        """The records of one committed change."""
        resource = event.resource
        if resource == "pods":
            self._recorder._pod(event)
        elif resource == "events":
            if event.object.get("eventTime"):
                return  # recorded through tools/events: each one comes from its broadcaster (`recorded`)
            if event.type == "ADDED" or (event.type == "MODIFIED" and _counted_again(event)):
                self._recorder._event(event.object)
        elif resource == "nodes":
            self._recorder._node(event)

    def __call__(self, events: Iterable[WatchEvent]) -> None:
        """`one(event)` of each event in turn. A pod update (the usual event of a pod group: an
        adoption's, a kubelet's status posts) makes no record, it only notes the pod's node as
        `_pod` does; a node change (a group of status posts) goes to `_node` at once."""
        recorder = self._recorder
        pod_node, node_change = recorder._pod_node, recorder._node
        for event in events:
            resource = event.resource
            if resource == "nodes":
                node_change(event)
                continue
            if resource != "pods" or event.type != "MODIFIED":
                self.one(event)
                continue
            obj = event.object
            meta = obj["metadata"]
            node = (obj.get("spec") or {}).get("nodeName") or ""
            if node:
                pod_node[(meta.get("namespace") or "default", meta.get("name", ""))] = node


def _counted_again(event: WatchEvent) -> bool:
    """Whether an Event update is a repeat of the event (client-go's EventLogger bumps `count` of
    the first occurrence instead of creating another): each occurrence is a timeline record."""
    old = event.old_object or {}
    return int(event.object.get("count") or 0) > int(old.get("count") or 0)


def _taint_id(taint: Mapping[str, Any]) -> tuple[str, str, str]:
    return (str(taint.get("key") or ""), str(taint.get("value") or ""), str(taint.get("effect") or ""))


class TimelineRecorder:
    """Subscribes to a store and turns committed changes into timeline records."""

    def __init__(self, now: Callable[[], float], start: float) -> None:
        self._now = now
        self.start = start
        self.records: list[JSON] = []
        self.record_creates = True
        self._pod_node: dict[tuple[str, str], str] = {}
        self.listeners: list[Callable[[JSON], None]] = []
        #: The store handler: the records of each change, groups taken at once.
        self.on_change = ChangeHandler(self)

    def t(self) -> float:
        return round(self._now() - self.start, 6)

    def add(self, record: JSON) -> None:
        self.records.append(record)
        for listener in self.listeners:
            listener(record)

    #: The resources whose changes make records (`on_change` ignores every other one).
    RESOURCES = ("pods", "events", "nodes")

    def recorded(self, event: Mapping[str, Any]) -> None:
        """A watcher of an events.k8s.io/v1 broadcaster (kube-scheduler's): each event recorded is a
        record, as each core/v1 event written is (the Event stored counts repeats in a series
        written later, so the store's changes do not show each one)."""
        self._event(event)

    def _pod(self, event: WatchEvent) -> None:
        obj = event.object
        meta = obj["metadata"]
        key = (meta.get("namespace") or "default", meta.get("name", ""))
        node = (obj.get("spec") or {}).get("nodeName") or ""
        if node:
            self._pod_node[key] = node
        if event.type == "ADDED":
            if self.record_creates:
                self.add(self._record("Created", "Pod", key[0], key[1], node))
        elif event.type == "DELETED":
            self.add(self._record("Deleted", "Pod", key[0], key[1], node))

    def _node(self, event: WatchEvent) -> None:
        obj = event.object
        name = obj["metadata"].get("name", "")
        if event.type == "ADDED":
            if self.record_creates:
                self.add(self._record("Created", "Node", "", name))
            return
        if event.type == "DELETED":
            self.add(self._record("Deleted", "Node", "", name))
            return
        old = (event.old_object or {}).get("spec") or {}
        new = obj.get("spec") or {}
        old_taints = old.get("taints") or []
        new_taints = new.get("taints") or []
        if old_taints == new_taints:
            return
        before = {_taint_id(t) for t in old_taints}
        after = {_taint_id(t) for t in new_taints}
        for taint in old_taints:
            if _taint_id(taint) not in after:
                self.add(self._record("TaintRemoved", "Node", "", name, message=taint_to_string(taint)))
        for taint in new_taints:
            if _taint_id(taint) not in before:
                self.add(self._record("TaintAdded", "Node", "", name, message=taint_to_string(taint)))

    def _event(self, event: Mapping[str, Any]) -> None:
        reason = str(event.get("reason") or "")
        if reason not in EVENT_REASONS:
            return
        involved = event.get("involvedObject") or {}
        kind = str(involved.get("kind") or "")
        name = str(involved.get("name") or "")
        if kind == "Pod":
            namespace = str(involved.get("namespace") or "default")
            node = self._pod_node.get((namespace, name), "")
            self.add(
                self._record(reason, kind, namespace, name, node, message=str(event.get("message") or ""))
            )
        else:
            self.add(self._record(reason, kind, "", name, message=str(event.get("message") or "")))

    def _record(
        self, reason: str, kind: str, namespace: str, name: str, node: str = "", *, message: str | None = None
    ) -> JSON:
        record: JSON = {"t": self.t(), "reason": reason, "kind": kind}
        if namespace:
            record["namespace"] = namespace
        record["name"] = name
        if node:
            record["node"] = node
        if message is not None:
            record["message"] = message
        return record


def summarize(records: Iterable[Mapping[str, Any]], pending_at_end: int) -> dict[str, int]:
    """Counts: scheduled, failedScheduling, evicted (taint manager and kubelet), preempted,
    pendingAtEnd."""
    counts = {
        "scheduled": 0,
        "failedScheduling": 0,
        "evicted": 0,
        "preempted": 0,
        "pendingAtEnd": pending_at_end,
    }
    for record in records:
        reason = record["reason"]
        if reason == "Scheduled":
            counts["scheduled"] += 1
        elif reason == "FailedScheduling":
            counts["failedScheduling"] += 1
        elif reason == "Preempted":
            counts["preempted"] += 1
        elif reason == "Evicted" or (
            reason == "TaintManagerEviction" and str(record.get("message", "")).startswith("Marking")
        ):
            counts["evicted"] += 1
    return counts


def document(
    scenario: str, seed: int, end: float, records: list[JSON], *, nodes: list[JSON], pods: list[JSON]
) -> JSON:
    """The timeline JSON document."""
    pending = sum(
        1
        for p in pods
        if not (p.get("spec") or {}).get("nodeName")
        and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
    )
    return {
        "scenario": scenario,
        "seed": seed,
        "end": float(end),
        "timeline": records,
        "summary": summarize(records, pending),
        "final": {"nodes": nodes, "pods": pods},
    }


def dumps(doc: Mapping[str, Any], *, indent: int | None = 2) -> str:
    """Byte-stable JSON: keys in the (deterministic) order they were built, fixed separators,
    Python's shortest round-trip float repr."""
    if indent:
        return dumps_indented(doc, indent)  # json.dumps(doc, indent=indent, ensure_ascii=False)
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


def write_json(doc: Mapping[str, Any], stream: TextSink) -> None:
    """`dumps(doc)` and a line break, written to `stream` in chunks (a 5,000-node timeline's text
    is hundreds of megabytes: it is never held whole)."""
    write_indented(doc, stream, 2)
    stream.write("\n")
