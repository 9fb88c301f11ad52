"""The conversion of pkg/apis/events/v1 (conversion.go) between an events.k8s.io/v1 Event and the
core Event kube-apiserver stores: `regarding` is `involvedObject`, `note` is `message`,
`reportingController` is `reportingComponent`, the deprecated fields are `source`,
`firstTimestamp`, `lastTimestamp` and `count`. The API server serves events.k8s.io/v1 through
it; a client writing events.k8s.io/v1 (kube-scheduler's broadcaster) converts its Events with it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

JSON = dict[str, Any]
GROUP = "events.k8s.io"
API_VERSION = "events.k8s.io/v1"


def to_served(event: Mapping[str, Any]) -> JSON:
    """A stored core Event as events.k8s.io/v1 serves it (Convert_core_Event_To_v1_Event), in the
    order of the Go struct's fields."""
    out: JSON = {
        "kind": "Event",
        "apiVersion": API_VERSION,
        "metadata": event.get("metadata") or {},
        "eventTime": event.get("eventTime"),
    }
    if event.get("series") is not None:
        out["series"] = event["series"]
    for served, stored in (
        ("reportingController", "reportingComponent"),
        ("reportingInstance", "reportingInstance"),
        ("action", "action"),
        ("reason", "reason"),
    ):
        if event.get(stored):
            out[served] = event[stored]
    out["regarding"] = event.get("involvedObject") or {}
    if event.get("related") is not None:
        out["related"] = event["related"]
    if event.get("message"):
        out["note"] = event["message"]
    if event.get("type"):
        out["type"] = event["type"]
    out["deprecatedSource"] = event.get("source") or {}
    out["deprecatedFirstTimestamp"] = event.get("firstTimestamp")
    out["deprecatedLastTimestamp"] = event.get("lastTimestamp")
    if event.get("count"):
        out["deprecatedCount"] = event["count"]
    return out


def to_stored(event: Mapping[str, Any]) -> JSON:
    """An events.k8s.io/v1 Event as the core Event stored (Convert_v1_Event_To_core_Event), in the
    order of the core Go struct's fields."""
    out: JSON = {
        "kind": "Event",
        "apiVersion": "v1",
        "metadata": event.get("metadata") or {},
        "involvedObject": event.get("regarding") or {},
        "reason": event.get("reason") or "",
        "message": event.get("note") or "",
        "source": event.get("deprecatedSource") or {},
        "firstTimestamp": event.get("deprecatedFirstTimestamp"),
        "lastTimestamp": event.get("deprecatedLastTimestamp"),
    }
    if event.get("deprecatedCount"):
        out["count"] = event["deprecatedCount"]
    out["type"] = event.get("type") or ""
    out["eventTime"] = event.get("eventTime")
    if event.get("series") is not None:
        out["series"] = event["series"]
    if event.get("action"):
        out["action"] = event["action"]
    if event.get("related") is not None:
        out["related"] = event["related"]
    out["reportingComponent"] = event.get("reportingController") or ""
    out["reportingInstance"] = event.get("reportingInstance") or ""
    return out
