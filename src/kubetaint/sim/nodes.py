"""Scenario node groups: each group expanded into `NAME-0..` round-robin over its zones, every
member registered by a hollow kubelet of the control plane's fleet
(`kubetaint.controlplane.fleet`)."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from kubetaint.controlplane.fleet import HOSTNAME_LABEL, NodeFleet
from kubetaint.sim.scenario import ZONE_LABEL, NodeGroup
from kubetaint.store.interface import JSON


def group_nodes(group: NodeGroup) -> list[tuple[str, str, dict[str, Any]]]:
    """(name, zone, template) of each node of a group: zones assigned round robin."""
    out: list[tuple[str, str, dict[str, Any]]] = []
    for i, name in enumerate(group.node_names()):
        zone = group.zones[i % len(group.zones)] if group.zones else ""
        out.append((name, zone, group.template))
    return out


def node_manifest(name: str, zone: str, template: Mapping[str, Any]) -> JSON:
    """The Node a group member registers as (template labels/taints/capacity, hostname, zone)."""
    meta = dict(template.get("metadata") or {})
    labels = {**(meta.get("labels") or {}), HOSTNAME_LABEL: name}
    if zone:
        labels[ZONE_LABEL] = zone
    meta.update({"name": name, "labels": labels})
    spec = copy.deepcopy(dict(template.get("spec") or {}))
    if not spec.get("taints"):
        spec.pop("taints", None)
    status = copy.deepcopy(dict(template.get("status") or {}))
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": spec, "status": status}


def load_groups(fleet: NodeFleet, groups: Sequence[NodeGroup]) -> None:
    """A hollow kubelet for every member of every group (registered when the fleet starts)."""
    for group in groups:
        for name, zone, template in group_nodes(group):
            fleet.add(node_manifest(name, zone, template))
