"""The `default/kubernetes` Service kube-apiserver keeps, with its Endpoints and EndpointSlice
naming the server's own address (mirrors pkg/controlplane/controller/kubernetesservice and the
endpoint reconciler): created at start when missing, left as it is when present."""

from __future__ import annotations

import ipaddress
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock, format_time
from kubetaint.core.services import ServiceNetwork, kubernetes_service
from kubetaint.registry.managedfields import KUBE_APISERVER, record_create
from kubetaint.store.interface import Store

JSON = dict[str, Any]


def _host_and_port(server_address: str) -> tuple[str, int]:
    """`host:port` (the address the server advertises) as an IPv4 address and a port."""
    host, _, port = server_address.rpartition(":")
    try:
        ip = str(ipaddress.IPv4Address(host.strip("[]")))
    except ValueError:
        ip = "127.0.0.1"
    return ip, int(port) if port.isdigit() else 6443


def _endpoints(ip: str, port: int) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {
            "name": "kubernetes",
            "namespace": "default",
            "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"},
        },
        "subsets": [
            {"addresses": [{"ip": ip}], "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}
        ],
    }


def _endpoint_slice(ip: str, port: int) -> JSON:
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": "kubernetes",
            "namespace": "default",
            "labels": {"kubernetes.io/service-name": "kubernetes"},
        },
        "addressType": "IPv4",
        "endpoints": [{"addresses": [ip], "conditions": {"ready": True}}],
        "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
    }


def _recorded(resource: str, obj: JSON, now: str) -> JSON:
    """`obj` with kube-apiserver's entry for what its controller sends: the Service's clusterIPs
    and ipFamilies are the service REST's allocation, owned by no one."""
    if resource != "services":
        return record_create(obj, resource, KUBE_APISERVER, now)
    allocated = {k: v for k, v in obj["spec"].items() if k in ("clusterIPs", "ipFamilies")}
    sent = {**obj, "spec": {k: v for k, v in obj["spec"].items() if k not in allocated}}
    recorded = record_create(sent, resource, KUBE_APISERVER, now)
    return {**recorded, "spec": obj["spec"]}


def ensure_kubernetes_service(
    store: Store, server_address: str, network: ServiceNetwork | None = None, clock: Clock | None = None
) -> None:
    """Create the `default/kubernetes` Service, Endpoints and EndpointSlice that are missing (with
    a `clock`, each with the `kube-apiserver` managedFields entry of its create)."""
    ip, port = _host_and_port(server_address)
    for resource, obj in (
        ("services", kubernetes_service(network or ServiceNetwork(), port)),
        ("endpoints", _endpoints(ip, port)),
        ("endpointslices.discovery.k8s.io", _endpoint_slice(ip, port)),
    ):
        request = obj if clock is None else _recorded(resource, obj, format_time(clock.now()))
        try:
            store.create(resource, request)
        except StatusError as err:
            if err.code != 409:
                raise
