"""Zones of the node lifecycle controller: GetZoneKey (component-helpers/node/topology),
isNodeExcludedFromDisruptionChecks, ComputeZoneState and the rate each zone state calls for
(HealthyQPSFunc, ReducedQPSFunc), as node_lifecycle_controller.go has them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any

from kubetaint.controllers.nodelifecycle.rate_limited_queue import float32

LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
LABEL_TOPOLOGY_REGION = "topology.kubernetes.io/region"
LABEL_FAILURE_DOMAIN_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_FAILURE_DOMAIN_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
#: Nodes with this label are left out of zone disruption counting.
LABEL_NODE_DISRUPTION_EXCLUSION = "node.kubernetes.io/exclude-disruption"


class ZoneState(StrEnum):
    INITIAL = "Initial"
    NORMAL = "Normal"
    FULL_DISRUPTION = "FullDisruption"
    PARTIAL_DISRUPTION = "PartialDisruption"


def get_zone_key(node: Mapping[str, Any]) -> str:
    """GetZoneKey: `region + ":\\x00:" + zone` from the topology (else beta failure-domain)
    labels; "" when both are empty."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    zone = (
        labels[LABEL_TOPOLOGY_ZONE]
        if LABEL_TOPOLOGY_ZONE in labels
        else labels.get(LABEL_FAILURE_DOMAIN_BETA_ZONE, "")
    )
    region = (
        labels[LABEL_TOPOLOGY_REGION]
        if LABEL_TOPOLOGY_REGION in labels
        else labels.get(LABEL_FAILURE_DOMAIN_BETA_REGION, "")
    )
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


def is_excluded_from_disruption_checks(node: Mapping[str, Any]) -> bool:
    """isNodeExcludedFromDisruptionChecks."""
    return LABEL_NODE_DISRUPTION_EXCLUSION in ((node.get("metadata") or {}).get("labels") or {})


def compute_zone_state(
    ready_conditions: Sequence[Mapping[str, Any] | None], unhealthy_zone_threshold: float
) -> tuple[int, ZoneState]:
    """ComputeZoneState: (not-ready count, state). Ready means a Ready condition with status True.
    FullDisruption when none is ready; PartialDisruption when more than 2 are not ready and their
    share (float32) reaches the threshold."""
    ready = sum(1 for c in ready_conditions if c is not None and c.get("status") == "True")
    return zone_state(ready, len(ready_conditions) - ready, unhealthy_zone_threshold)


def zone_state(ready: int, not_ready: int, unhealthy_zone_threshold: float) -> tuple[int, ZoneState]:
    """ComputeZoneState from the counts of ready and not-ready nodes."""
    if ready == 0 and not_ready > 0:
        return not_ready, ZoneState.FULL_DISRUPTION
    if not_ready > 2 and float32(not_ready / (not_ready + ready)) >= float32(unhealthy_zone_threshold):
        return not_ready, ZoneState.PARTIAL_DISRUPTION
    return not_ready, ZoneState.NORMAL


def zone_qps(
    state: ZoneState,
    zone_size: int,
    eviction_qps: float,
    secondary_qps: float,
    large_cluster_threshold: int,
) -> float | None:
    """setLimiterInZone's rate for a state (None for Initial: the limiter is left alone):
    HealthyQPSFunc for Normal and FullDisruption, ReducedQPSFunc (the secondary rate for zones
    larger than the threshold, else 0: stop) for PartialDisruption."""
    if state in (ZoneState.NORMAL, ZoneState.FULL_DISRUPTION):
        return eviction_qps
    if state == ZoneState.PARTIAL_DISRUPTION:
        return secondary_qps if zone_size > large_cluster_threshold else 0.0
    return None
