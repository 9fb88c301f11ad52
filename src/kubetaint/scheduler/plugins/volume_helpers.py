"""The volume plugins' helpers: the shared storage helpers of `kubetaint.core.volumes`, a PV's node
affinity against a node's labels (volume.CheckNodeAffinity, with the scheduler's node selector
parsing) and the PreFilter Skip they answer for pods without the volumes they judge."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kubetaint.core.volumes import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    NOT_SUPPORTED_PROVISIONER,
    READ_WRITE_ONCE_POD,
    WAIT_FOR_FIRST_CONSUMER,
    MatchError,
    annotations_of,
    bind_volume_to_claim,
    claim_name,
    ephemeral_claim_name,
    has_volumes,
    is_volume_bound_to_claim,
    label_zones_to_set,
    match_topology_selector_terms,
    meta,
    persistent_volume_claim_class,
    persistent_volume_class,
    pod_volumes,
    spec,
    storage_request,
    volume_is_for_pod,
)
from kubetaint.core.volumes import find_matching_volume as _find_matching_volume
from kubetaint.scheduler.cache import BoolArray, Cache
from kubetaint.scheduler.extension_points import CycleState, Handle, Plugin
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.plugins.node_selector_parse import lazy_node_selector, terms_matcher
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.status import Code, Status

__all__ = [
    "ANN_BIND_COMPLETED",
    "ANN_BOUND_BY_CONTROLLER",
    "ANN_SELECTED_NODE",
    "NOT_SUPPORTED_PROVISIONER",
    "READ_WRITE_ONCE_POD",
    "SKIP",
    "WAIT_FOR_FIRST_CONSUMER",
    "MatchError",
    "VolumePlugin",
    "annotations_of",
    "bind_volume_to_claim",
    "check_node_affinity",
    "claim_name",
    "ephemeral_claim_name",
    "find_matching_volume",
    "has_volumes",
    "is_volume_bound_to_claim",
    "label_zones_to_set",
    "match_topology_selector_terms",
    "meta",
    "persistent_volume_claim_class",
    "persistent_volume_class",
    "pod_volumes",
    "spec",
    "storage_request",
    "volume_is_for_pod",
]

Obj = Mapping[str, Any]

#: a volume plugin's PreFilter answer for a pod without the volumes it judges (made once)
SKIP = Status(Code.Skip)


class VolumePlugin(Plugin):
    """What the volume plugins share: the scheduler's Handle (UsesHandle), and FilterBatch as
    their Filter on each node."""

    def __init__(self) -> None:
        self.handle: Handle | None = None

    def use_handle(self, handle: Handle) -> None:
        self.handle = handle

    def filter(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> Status:
        raise NotImplementedError

    def filter_batch(self, state: CycleState, pi: PodInfo, cache: Cache) -> BoolArray | None:
        nodes = cache.slot_nodes
        return np.fromiter(
            (ni is not None and self.filter(state, pi, ni).is_success() for ni in nodes), np.bool_, len(nodes)
        )


def check_node_affinity(volume: Obj, node_labels: Mapping[str, str]) -> bool:
    """volume.CheckNodeAffinity: whether the PV's required node affinity accepts a node with
    these labels (the node is given by its labels alone: a `metadata.name` field requirement is
    not checked, as upstream's)."""
    affinity = spec(volume).get("nodeAffinity")
    if not isinstance(affinity, Mapping):
        return True
    required = affinity.get("required")
    if not isinstance(required, Mapping):
        return True
    return terms_matcher(lazy_node_selector(required))("", node_labels)


def find_matching_volume(
    claim: Obj, volumes: Sequence[Obj], node_labels: Mapping[str, str], excluded: Mapping[str, Any]
) -> Obj | None:
    """FindMatchingVolume on the scheduler's path: a node's labels, delayed binding."""
    return _find_matching_volume(
        claim, volumes, lambda pv: check_node_affinity(pv, node_labels), excluded, True
    )
