"""The `default/kubernetes` Service kube-apiserver keeps, with its Endpoints and EndpointSlice
naming the server's own address (mirrors pkg/controlplane/controller/kubernetesservice and the
endpoint reconciler): created at start when missing, left as it is when present."""

from __future__ import annotations

import ipaddress
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.core.services import ServiceNetwork, kubernetes_service
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


def ensure_kubernetes_service(
    store: Store, server_address: str, network: ServiceNetwork | None = None
) -> None:
    """Create the `default/kubernetes` Service, Endpoints and EndpointSlice that are missing."""
    ip, port = _host_and_port(server_address)
    for resource, obj in (
        ("services", kubernetes_service(network or ServiceNetwork(), port)),
        ("endpoints", _endpoints(ip, port)),
        ("endpointslices.discovery.k8s.io", _endpoint_slice(ip, port)),
    ):
        try:
            store.create(resource, obj)
        except StatusError as err:
            if err.code != 409:
                raise
