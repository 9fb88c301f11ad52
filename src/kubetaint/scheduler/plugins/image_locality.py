"""ImageLocality: favour nodes that already hold the pod's container images, by the images' sizes
scaled by how many nodes hold them (mirrors pkg/scheduler/framework/plugins/imagelocality/
image_locality.go). A node's images are the `status.images` it reports; the cluster-wide counts
come from `scheduler.pod_index` (the cache's imageStates)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from kubetaint.scheduler.cache import Cache, IntArray
from kubetaint.scheduler.extension_points import (
    CycleState,
    Handle,
    Plugin,
    ScoreBatch,
    ScorePlugin,
    UsesHandle,
)
from kubetaint.scheduler.listers import ClusterListers
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.plugins import names
from kubetaint.scheduler.pod_index import PodIndex, pod_index
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.status import MAX_NODE_SCORE

MB = 1024 * 1024
#: Below this sum of image scores a node scores 0.
MIN_THRESHOLD = 23 * MB
#: Per container, the sum of image scores at and above which a node scores MAX_NODE_SCORE.
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    """normalizedImageName: an image without a tag gets ":latest"."""
    if name.rfind(":") <= name.rfind("/"):
        name += ":latest"
    return name


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """calculatePriority: the sum clamped to [min, max] and scaled to 0..MAX_NODE_SCORE."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


def pod_images(pod: Mapping[str, Any]) -> list[str]:
    """The normalized images of the init containers, then the containers."""
    spec = pod.get("spec") or {}
    out: list[str] = []
    for field in ("initContainers", "containers"):
        for c in spec.get(field) or ():
            if isinstance(c, Mapping):
                out.append(normalized_image_name(str(c.get("image") or "")))
    return out


class ImageLocality(Plugin, ScorePlugin, ScoreBatch, UsesHandle):
    name = names.IMAGE_LOCALITY

    def __init__(self) -> None:
        self.handle: ClusterListers | None = None

    def use_handle(self, handle: Handle) -> None:
        self.handle = handle

    def _index(self) -> PodIndex:
        assert self.handle is not None, "ImageLocality needs a handle"
        return pod_index(self.handle.cache)

    def _score(self, index: PodIndex, images: list[str], slot: int, total_nodes: int) -> int:
        held = index.images_at(slot)
        states = index.image_states
        total = 0
        for name in images:
            if name in held:
                size, num_nodes = states[name]
                total += int(float(size) * (num_nodes / total_nodes))  # scaledImageScore
        return calculate_priority(total, len(images))

    def score(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> int:
        index = self._index()
        assert self.handle is not None
        total_nodes = len(self.handle.cache.nodes)
        return self._score(index, pod_images(pi.pod), ni.slot, total_nodes) if total_nodes else 0

    def score_batch(self, state: CycleState, pi: PodInfo, cache: Cache, slots: IntArray) -> IntArray:
        index = self._index()
        if not index.image_states:  # no node lists any image (hollow kubelets, snapshots)
            return np.zeros(len(slots), np.int64)
        images = pod_images(pi.pod)
        if not images or not any(name in index.image_states for name in images):
            # no node holds any of them: every node scores calculatePriority(0, n) = 0
            return np.zeros(len(slots), np.int64)
        total_nodes = len(cache.nodes)
        return np.fromiter(
            (self._score(index, images, int(slot), total_nodes) for slot in slots), np.int64, len(slots)
        )
