"""ImageLocality Score, ported from upstream's imagelocality/image_locality_test.go
(TestImageLocalityPriority, TestNormalizedImageName) as data."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from kubetaint.scheduler.plugins.image_locality import normalized_image_name
from scheduler.pod_affinity_builders import make_node, scheduler_with, scores

MB = 1024 * 1024
PLUGIN = "ImageLocality"


def image(size_mb: int, *names: str) -> dict[str, Any]:
    return {"names": list(names), "sizeBytes": size_mb * MB}


NODE_40_300_2000 = [
    image(40, "gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"),
    image(300, "gcr.io/300:latest", "gcr.io/300:v1"),
    image(2000, "gcr.io/2000:latest"),
]
NODE_250_10 = [image(250, "gcr.io/250:latest"), image(10, "gcr.io/10:latest", "gcr.io/10:v1")]
NODE_600_40_900 = [
    image(600, "gcr.io/600:latest"),
    image(40, "gcr.io/40:latest"),
    image(900, "gcr.io/900:latest"),
]
NODE_300_600_900 = [
    image(300, "gcr.io/300:latest"),
    image(600, "gcr.io/600:latest"),
    image(900, "gcr.io/900:latest"),
]
NODE_4000_30 = [image(4000, "gcr.io/4000:latest"), image(30, "gcr.io/30:latest")]
NODE_20_30_40 = [image(20, "gcr.io/20:latest"), image(30, "gcr.io/30:latest"), image(40, "gcr.io/40:latest")]


def image_node(name: str, images: list[dict[str, Any]]) -> dict[str, Any]:
    node = make_node(name)
    if images:
        node["status"]["images"] = images
    return node


def pod(*images: str, init: tuple[str, ...] = ()) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": f"c{i}", "image": img} for i, img in enumerate(images)]}
    if init:
        spec["initContainers"] = [{"name": f"i{i}", "image": img} for i, img in enumerate(init)]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": spec,
    }


CASES = [
    pytest.param(
        pod("gcr.io/40", "gcr.io/250"),
        [NODE_40_300_2000, NODE_250_10],
        [0, 5],
        id="two images spread on two nodes, prefer the larger image one",
    ),
    pytest.param(
        pod("gcr.io/40", "gcr.io/300"),
        [NODE_40_300_2000, NODE_250_10],
        [7, 0],
        id="two images on one node, prefer this node",
    ),
    pytest.param(
        pod("gcr.io/10", "gcr.io/4000"),
        [NODE_4000_30, NODE_250_10],
        [100, 0],
        id="if exceed limit, use limit",
    ),
    pytest.param(
        pod("gcr.io/10", "gcr.io/4000"),
        [NODE_4000_30, NODE_250_10, []],
        [66, 0, 0],
        id="if exceed limit, use limit (with a node without images)",
    ),
    pytest.param(
        pod("gcr.io/300", "gcr.io/600", "gcr.io/900"),
        [NODE_600_40_900, NODE_300_600_900, []],
        [32, 36, 0],
        id="pod with multiple large images, node2 is preferred",
    ),
    pytest.param(
        pod("gcr.io/30", "gcr.io/40"),
        [NODE_20_30_40, NODE_4000_30],
        [1, 0],
        id="pod with multiple small images",
    ),
    pytest.param(
        pod("gcr.io/30", init=("gcr.io/300",)),
        [NODE_40_300_2000, NODE_20_30_40],
        [6, 0],
        id="init containers count: two images spread on two nodes, prefer the larger image one",
    ),
]


@pytest.mark.parametrize(("the_pod", "node_images", "want"), CASES)
def test_image_locality_priority(the_pod: dict[str, Any], node_images: list[Any], want: list[int]) -> None:
    nodes = [image_node(f"node{i + 1}", images) for i, images in enumerate(node_images)]
    sched = scheduler_with(nodes, [])
    got = scores(sched, PLUGIN, the_pod)
    assert [got[n["metadata"]["name"]] for n in nodes] == want


def test_a_node_status_post_with_new_images_is_read() -> None:
    """A node's images change by a status post that keeps spec, labels and allocatable."""
    first = image_node("node1", [])
    sched = scheduler_with([first, image_node("node2", [])], [])
    assert scores(sched, PLUGIN, pod("gcr.io/4000")) == {"node1": 0, "node2": 0}
    posted = {**first, "status": {**first["status"], "images": [image(4000, "gcr.io/4000:latest")]}}
    sched.update_node(posted)
    # 4000M * 1/2 nodes is beyond 1000M for one container: the maximum
    assert scores(sched, PLUGIN, pod("gcr.io/4000")) == {"node1": 100, "node2": 0}


def _digest(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


@pytest.mark.parametrize(
    ("given", "want"),
    [
        pytest.param("root", "root:latest", id="add the latest tag 1"),
        pytest.param("gcr.io:5000/root", "gcr.io:5000/root:latest", id="add the latest tag 2"),
        pytest.param("root:tag", "root:tag", id="keep a tagged name as is"),
        pytest.param("root@" + _digest("root"), "root@" + _digest("root"), id="keep a digest as is"),
    ],
)
def test_normalized_image_name(given: str, want: str) -> None:
    assert normalized_image_name(given) == want
