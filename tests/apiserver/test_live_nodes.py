"""`kubetaint up`'s node set: a tainted control-plane node and workers over three zones, numbered
as kind numbers them (InternalIP and pod CIDR), and hollow kubelets that keep those addresses."""

from __future__ import annotations

import ipaddress

import pytest

from kubetaint.apiserver.live import LiveCluster, initial_nodes
from kubetaint.clock import VirtualClock
from kubetaint.controlplane.fleet import node_config
from kubetaint.store.memory import MemoryStore


def _internal_ip(node: dict) -> str:
    return next(a["address"] for a in node["status"]["addresses"] if a["type"] == "InternalIP")


def test_the_initial_nodes_are_numbered_like_kind() -> None:
    nodes = initial_nodes(3)
    assert [n["metadata"]["name"] for n in nodes] == ["control-plane", "node-1", "node-2", "node-3"]
    assert [_internal_ip(n) for n in nodes] == ["172.18.0.2", "172.18.0.3", "172.18.0.4", "172.18.0.5"]
    assert [n["spec"]["podCIDR"] for n in nodes] == [
        "10.244.0.0/24",
        "10.244.1.0/24",
        "10.244.2.0/24",
        "10.244.3.0/24",
    ]
    assert nodes[0]["spec"]["taints"] == [
        {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}
    ]


def test_five_thousand_nodes_get_distinct_valid_addresses() -> None:
    nodes = initial_nodes(5000)
    ips = {_internal_ip(n) for n in nodes}
    cidrs = [ipaddress.IPv4Network(n["spec"]["podCIDR"]) for n in nodes]
    assert len(ips) == len(nodes) == len(set(cidrs))
    assert all(c.prefixlen == 24 for c in cidrs)


@pytest.mark.parametrize(
    ("node", "ip", "cidr"),
    [
        pytest.param(initial_nodes(1)[1], "172.18.0.3", "10.244.1.0/24", id="a node with both"),
        pytest.param({"metadata": {"name": "bare"}}, "", "", id="a bare manifest has neither"),
    ],
)
def test_node_config_takes_the_address_and_pod_cidr(node: dict, ip: str, cidr: str) -> None:
    config = node_config(node)
    assert (config.internal_ip, config.pod_cidr) == (ip, cidr)


def test_the_registered_nodes_and_their_pods_have_addresses() -> None:
    clock = VirtualClock()
    cluster = LiveCluster(MemoryStore(clock), clock, workers=1, seed=1, server_address="http://127.0.0.1:1")
    cluster.start()
    clock.advance(1)
    node = cluster.store.get("nodes", "", "node-1")
    assert _internal_ip(node) == "172.18.0.3"
    assert node["spec"]["podCIDR"] == "10.244.1.0/24"
    cluster.plane.registry.create(
        "pods",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        },
    )
    clock.advance(2)
    pod = cluster.store.get("pods", "default", "web")
    assert pod["status"]["hostIP"] == "172.18.0.3"
    assert ipaddress.IPv4Address(pod["status"]["podIP"]) in ipaddress.IPv4Network("10.244.1.0/24")
    cluster.stop()
