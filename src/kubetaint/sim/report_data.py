"""What the HTML report shows, worked out from a timeline document: each record's mark, nodes
in zone and numeric order, marks per node or per zone in time buckets, pods per zone, evictions
per interval, pending pods as a min/max band, the pending pods' last scheduling messages, and the
records packed for the page's table (`pack_records`)."""

from __future__ import annotations

import base64
import gzip
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubetaint.core.durations import format_duration

ZONE_LABEL = "topology.kubernetes.io/zone"
NO_ZONE = "(no zone)"


@dataclass(frozen=True, slots=True)
class Mark:
    """A kind of record drawn on the node chart: its colour (Okabe–Ito, readable with colour
    blindness), its shape (so no category is told by colour alone) and its legend text."""

    key: str
    color: str
    shape: str
    label: str


#: In drawing order: a later mark is drawn over an earlier one at the same instant, so the
#: evictions are never hidden under the deletions they cause.
MARKS: tuple[Mark, ...] = (
    Mark("Deleted", "#8c8c8c", "tick", "pod deleted"),
    Mark("TaintRemoved", "#009e73", "triangle-up", "taint removed"),
    Mark("TaintAdded", "#e69f00", "triangle-down", "taint added"),
    Mark("NodeNotReady", "#0072b2", "square", "node not ready"),
    Mark("Fault", "#000000", "cross", "fault"),
    Mark("Evicted", "#d55e00", "circle", "evicted (kubelet or API eviction)"),
    Mark("Eviction", "#cc79a7", "diamond", "taint manager eviction"),
)
MARK_ORDER = {mark.key: index for index, mark in enumerate(MARKS)}


def mark_of(record: Mapping[str, Any]) -> str | None:
    """The mark a record gets on the node chart, or None."""
    reason = str(record.get("reason") or "")
    if reason == "TaintManagerEviction":
        return "Eviction" if str(record.get("message", "")).startswith("Marking") else None
    if reason == "Deleted":
        return "Deleted" if record.get("kind") == "Pod" else None
    if reason == "NodeNotReady":
        return "NodeNotReady" if record.get("kind") == "Node" else None
    return reason if reason in MARK_ORDER else None


def node_of(record: Mapping[str, Any]) -> str:
    if record.get("kind") == "Node":
        return str(record.get("name") or "")
    return str(record.get("node") or "")


_DIGITS = re.compile(r"(\d+)")


def natural_key(name: str) -> tuple[Any, ...]:
    """node-2 before node-10: digit runs compare as numbers."""
    return tuple(int(part) if part.isdigit() else part for part in _DIGITS.split(name))


def node_zones(doc: Mapping[str, Any]) -> dict[str, str]:
    """Each node of the final state with its zone label (NO_ZONE when unlabelled)."""
    zones: dict[str, str] = {}
    for node in (doc.get("final") or {}).get("nodes") or []:
        meta = node.get("metadata") or {}
        zones[str(meta.get("name") or "")] = str((meta.get("labels") or {}).get(ZONE_LABEL) or NO_ZONE)
    return zones


def zone_order(zones: Iterable[str]) -> list[str]:
    return sorted(set(zones), key=lambda z: (z == NO_ZONE, natural_key(z)))


@dataclass(slots=True)
class NodeMarks:
    """The marks of the timeline by node: (t, mark key) in drawing order."""

    by_node: dict[str, list[tuple[float, str]]] = field(default_factory=dict)

    @classmethod
    def of(cls, records: Iterable[Mapping[str, Any]]) -> NodeMarks:
        marks = cls()
        for record in records:
            mark = mark_of(record)
            node = node_of(record)
            if mark is not None and node:
                marks.by_node.setdefault(node, []).append((float(record["t"]), mark))
        for entries in marks.by_node.values():
            entries.sort(key=lambda entry: MARK_ORDER[entry[1]])  # stable: time order within a mark
        return marks


def buckets(end: float, count: int) -> float:
    """The width (seconds) of `count` equal buckets over [0, end]."""
    return end / count if end > 0 and count > 0 else 1.0


def bucket_of(t: float, width: float, count: int) -> int:
    return min(count - 1, max(0, int(t // width)))


def zone_mark_counts(
    marks: NodeMarks, zones: Mapping[str, str], end: float, count: int
) -> dict[str, dict[str, list[int]]]:
    """zone -> mark key -> records per time bucket."""
    width = buckets(end, count)
    table: dict[str, dict[str, list[int]]] = {}
    for node, entries in marks.by_node.items():
        per_mark = table.setdefault(zones.get(node, NO_ZONE), {})
        for t, key in entries:
            per_mark.setdefault(key, [0] * count)[bucket_of(t, width, count)] += 1
    return table


def pods_per_zone(
    doc: Mapping[str, Any], zones: Mapping[str, str], end: float, count: int
) -> dict[str, list[int]]:
    """zone -> pods bound to its nodes at the end of each time bucket. Worked backwards from
    the final state (pods bound before the run have no record of their own): a Created or
    Scheduled record naming a node adds the pod to its zone, a Deleted one takes it away."""
    width = buckets(end, count)
    final: dict[str, int] = {}
    for pod in (doc.get("final") or {}).get("pods") or []:
        node = (pod.get("spec") or {}).get("nodeName")
        if node:
            zone = zones.get(str(node), NO_ZONE)
            final[zone] = final.get(zone, 0) + 1
    changes: dict[str, list[int]] = {}
    for record in doc.get("timeline") or []:
        if record.get("kind") != "Pod" or not record.get("node"):
            continue
        reason = record.get("reason")
        delta = 1 if reason in ("Created", "Scheduled") else -1 if reason == "Deleted" else 0
        if delta:
            zone = zones.get(str(record["node"]), NO_ZONE)
            changes.setdefault(zone, [0] * count)[bucket_of(float(record["t"]), width, count)] += delta
    series: dict[str, list[int]] = {}
    for zone in set(final) | set(changes):
        values = [0] * count
        level = final.get(zone, 0)
        steps = changes.get(zone, [0] * count)
        for bucket in range(count - 1, -1, -1):
            values[bucket] = level
            level -= steps[bucket]
        series[zone] = values
    return series


#: Intervals for counts over time, smallest first (seconds).
_INTERVALS = (1, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400)


def interval_for(end: float, most: int = 90) -> float:
    """A round interval giving at most `most` bars over [0, end], at least a minute for runs
    of half an hour or more (waves of evictions a few seconds apart read as one)."""
    floor = 60 if end >= 1800 else 1
    for interval in _INTERVALS:
        if interval >= floor and end / interval <= most:
            return float(interval)
    return float(_INTERVALS[-1])


_NAMED = {1: "second", 60: "minute", 3600: "hour", 86400: "day"}


def interval_name(interval: float) -> str:
    """ "minute" for 60 s, "10m0s" for 600 s: what follows "per" in a chart's title."""
    named = _NAMED.get(int(interval)) if interval == int(interval) else None
    if named is not None:
        return named
    return format_duration(interval)


#: The evictions' marks, as the evictions chart stacks them (bottom first).
EVICTION_MARKS = ("Eviction", "Evicted")


def evictions_per_interval(
    records: Iterable[Mapping[str, Any]], end: float, interval: float
) -> dict[str, list[int]]:
    """Evictions per interval of `interval` seconds, by mark: the taint manager's (`Eviction`)
    and the kubelet's or the Eviction API's (`Evicted`)."""
    count = max(1, -int(-end // interval))
    counts = {mark: [0] * count for mark in EVICTION_MARKS}
    for record in records:
        mark = mark_of(record)
        if mark in counts:
            counts[mark][min(count - 1, int(float(record["t"]) // interval))] += 1
    return counts


def pending_series(doc: Mapping[str, Any]) -> list[tuple[float, int]]:
    """(t, pending pods) after every change: created unbound or failing → pending;
    scheduled or deleted → not."""
    pending: set[tuple[str, str]] = set()
    series: list[tuple[float, int]] = [(0.0, 0)]
    for record in doc.get("timeline") or []:
        if record.get("kind") != "Pod":
            continue
        key = (str(record.get("namespace") or ""), str(record.get("name") or ""))
        reason = record["reason"]
        before = len(pending)
        if (reason == "Created" and not record.get("node")) or reason == "FailedScheduling":
            pending.add(key)
        elif reason in ("Scheduled", "Deleted"):
            pending.discard(key)
        if len(pending) != before:
            series.append((float(record["t"]), len(pending)))
    series.append((float(doc.get("end") or 0.0), len(pending)))
    return series


def pending_band(series: Sequence[tuple[float, int]], end: float, count: int) -> list[tuple[int, int, int]]:
    """(least, most, last) pending pods in each time bucket: a count that flickers within a
    bucket shows as a band instead of a comb of lines."""
    width = buckets(end, count)
    band: list[tuple[int, int, int]] = []
    level = 0
    index = 0
    for bucket in range(count):
        low = high = level
        stop = (bucket + 1) * width
        while index < len(series) and (series[index][0] < stop or bucket == count - 1):
            level = series[index][1]
            low, high = min(low, level), max(high, level)
            index += 1
        band.append((low, high, level))
    return band


def pending_reasons(doc: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """The pods pending at the end grouped by their last FailedScheduling message (the
    scheduler's per-plugin account: "0/N nodes are available: …"), largest group first."""
    last: dict[tuple[str, str], str] = {}
    for record in doc.get("timeline") or []:
        if record.get("kind") != "Pod":
            continue
        key = (str(record.get("namespace") or ""), str(record.get("name") or ""))
        if record.get("reason") == "FailedScheduling":
            last[key] = str(record.get("message") or "")
        elif record.get("reason") == "Scheduled" or record.get("reason") == "Deleted":
            last.pop(key, None)
    pending = {
        (
            str((p.get("metadata") or {}).get("namespace") or ""),
            str((p.get("metadata") or {}).get("name") or ""),
        )
        for p in (doc.get("final") or {}).get("pods") or []
        if not (p.get("spec") or {}).get("nodeName")
        and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
    }
    groups: dict[str, list[str]] = {}
    for key in sorted(pending, key=lambda k: (k[0], natural_key(k[1]))):
        message = last.get(key, "not yet attempted by the scheduler")
        groups.setdefault(message, []).append(f"{key[0]}/{key[1]}" if key[0] else key[1])
    return sorted(groups.items(), key=lambda item: -len(item[1]))


#: Columns of the packed records, in order.
COLUMNS = ("reason", "kind", "namespace", "name", "node", "message")


def pack_records(records: Sequence[Mapping[str, Any]]) -> str:
    """The records for the page's table as base64 of gzipped JSON: times as deltas in ms, each
    text column as indexes into its table of distinct values, and a message's own pod name,
    namespace/name and node replaced by the markers \\u0001 (namespace/name), \\u0002 (name) and
    \\u0003 (node), so the thousands of "Marking for deletion Pod ns/name" become one text (a
    message holding a marker character already is kept literally behind \\u0000). Worked out
    column by column."""
    times = [round(float(record["t"]) * 1000) for record in records]
    namespaces = [str(record.get("namespace") or "") for record in records]
    names = [str(record.get("name") or "") for record in records]
    nodes = [str(record.get("node") or "") for record in records]
    messages = [str(record.get("message") or "") for record in records]
    every_message = "".join(messages)
    template = _template if any(marker in every_message for marker in _MARKERS) else _template_unmarked
    values = {
        "reason": [str(record.get("reason") or "") for record in records],
        "kind": [str(record.get("kind") or "") for record in records],
        "namespace": namespaces,
        "name": names,
        "node": nodes,
        "message": list(map(template, messages, namespaces, names, nodes)),
    }
    tables: dict[str, dict[str, int]] = {}
    columns: dict[str, list[int]] = {}
    for column in COLUMNS:
        table: dict[str, int] = {}
        add = table.setdefault
        columns[column] = [add(value, len(table)) for value in values[column]]
        tables[column] = table
    columns["dt"] = [t - previous for t, previous in zip(times, [0, *times], strict=False)]
    payload = {"columns": columns, "tables": {column: list(tables[column]) for column in COLUMNS}}
    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
    return base64.b64encode(gzip.compress(text, compresslevel=6, mtime=0)).decode("ascii")


_MARKERS = ("\x00", "\x01", "\x02", "\x03")


def _template(message: str, namespace: str, name: str, node: str) -> str:
    if any(marker in message for marker in _MARKERS):
        return "\x00" + message  # kept literally
    return _template_unmarked(message, namespace, name, node)


def _template_unmarked(message: str, namespace: str, name: str, node: str) -> str:
    """`_template` of a message without a marker character."""
    if namespace and name:
        message = message.replace(f"{namespace}/{name}", "\x01")
    if name:
        message = message.replace(name, "\x02")
    if node:
        message = message.replace(node, "\x03")
    return message
