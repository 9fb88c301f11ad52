"""Services as kube-apiserver stores them: the defaults (SetDefaults_Service and the REST
storage's IP family defaults), values kept from the old object on update (patchAllocatedValues),
and the allocation of a ClusterIP from the service CIDR and of NodePorts from the node port
range, with the allocators' messages (mirrors pkg/registry/core/service/storage/alloc.go,
ipallocator and portallocator). Allocation is from the values in use, passed in: the stored
Services are the allocation table."""

from __future__ import annotations

import ipaddress
import itertools
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kubetaint.api.validation import field as f
from kubetaint.api.validation.rbac import go_strings

JSON = dict[str, Any]
#: kube-apiserver's --service-cluster-ip-range default and --service-node-port-range default.
SERVICE_CIDR = "10.96.0.0/12"
NODE_PORT_RANGE = (30000, 32767)
NEEDS_NODE_PORT = ("NodePort", "LoadBalancer")


@dataclass(frozen=True)
class ServiceNetwork:
    """The service CIDR (IPv4) and the node port range a server allocates from."""

    cidr: str = SERVICE_CIDR
    node_port_base: int = NODE_PORT_RANGE[0]
    node_port_max: int = NODE_PORT_RANGE[1]

    @property
    def network(self) -> ipaddress.IPv4Network:
        return ipaddress.IPv4Network(self.cidr)

    @property
    def kubernetes_service_ip(self) -> str:
        """The first address of the range: the `default/kubernetes` Service's ClusterIP."""
        return str(self.network.network_address + 1)

    @property
    def node_port_range(self) -> str:
        return f"{self.node_port_base}-{self.node_port_max}"


class AllocationError(Exception):
    """A ClusterIP or NodePort that cannot be allocated: the field errors of upstream's 422."""

    def __init__(self, causes: list[f.FieldError]) -> None:
        super().__init__("; ".join(map(str, causes)))
        self.causes = causes


def _m(obj: Any) -> JSON:
    return obj if isinstance(obj, dict) else {}


def default_service(service: JSON) -> JSON:
    """SetDefaults_Service and SetDefaults_ServicePort, then the IP family fields the REST
    storage fills for a single-stack IPv4 cluster; a new object (the argument is not changed)."""
    spec = dict(_m(service.get("spec")))
    kind = spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    ports = spec.get("ports")
    if isinstance(ports, list):
        spec["ports"] = [_default_port(p) for p in ports]
    if kind in NEEDS_NODE_PORT:
        spec.setdefault("externalTrafficPolicy", "Cluster")
    if kind != "ExternalName":
        spec.setdefault("internalTrafficPolicy", "Cluster")
        headless_without_selector = spec.get("clusterIP") == "None" and not spec.get("selector")
        spec.setdefault("ipFamilyPolicy", "RequireDualStack" if headless_without_selector else "SingleStack")
        spec.setdefault("ipFamilies", ["IPv4"])
    if kind == "LoadBalancer":
        spec.setdefault("allocateLoadBalancerNodePorts", True)
    return {**service, "spec": spec}


def _default_port(port: Any) -> Any:
    if not isinstance(port, dict):
        return port
    out = {**port}
    out.setdefault("protocol", "TCP")
    if out.get("targetPort") in (None, 0, ""):
        out["targetPort"] = out.get("port")
    return out


def needs_cluster_ip(service: Mapping[str, Any]) -> bool:
    """Every type but ExternalName has a ClusterIP (`None` for a headless Service)."""
    return _m(service.get("spec")).get("type") != "ExternalName"


def needs_node_port(service: Mapping[str, Any]) -> bool:
    return _m(service.get("spec")).get("type") in NEEDS_NODE_PORT


def keep_allocated_values(service: JSON, old: Mapping[str, Any]) -> JSON:
    """patchAllocatedValues: an update that leaves out the ClusterIP or a port's NodePort keeps
    the old value (ports matched by name, a NodePort another port now uses excepted)."""
    spec, old_spec = dict(_m(service.get("spec"))), _m(old.get("spec"))
    if needs_cluster_ip(old) and needs_cluster_ip(service):
        if not spec.get("clusterIP") and old_spec.get("clusterIP"):
            spec["clusterIP"] = old_spec["clusterIP"]
        if not spec.get("clusterIPs") and old_spec.get("clusterIPs"):
            spec["clusterIPs"] = old_spec["clusterIPs"]
    ports = spec.get("ports")
    if needs_node_port(old) and needs_node_port(service) and isinstance(ports, list):
        used = _node_ports(old_spec) & _node_ports(spec)
        by_name = {str(_m(p).get("name") or ""): _m(p).get("nodePort") for p in old_spec.get("ports") or []}
        patched = []
        for port in ports:
            old_value = by_name.get(str(port.get("name") or "")) if isinstance(port, dict) else None
            if isinstance(port, dict) and not port.get("nodePort") and old_value and old_value not in used:
                patched.append({**port, "nodePort": old_value})
            else:
                patched.append(port)
        spec["ports"] = patched
    return {**service, "spec": spec}


def _node_ports(spec: Mapping[str, Any]) -> set[int]:
    ports = spec.get("ports")
    return {
        int(p["nodePort"])
        for p in (ports if isinstance(ports, list) else [])
        if isinstance(p, dict) and isinstance(p.get("nodePort"), int) and p["nodePort"]
    }


def allocated_values(services: Iterable[Mapping[str, Any]]) -> tuple[set[str], set[int]]:
    """The ClusterIPs and NodePorts the given Services hold."""
    ips: set[str] = set()
    ports: set[int] = set()
    for service in services:
        spec = _m(service.get("spec"))
        for ip in spec.get("clusterIPs") or [spec.get("clusterIP")]:
            if isinstance(ip, str) and ip and ip != "None":
                ips.add(ip)
        ports |= _node_ports(spec)
    return ips, ports


def _range_offset(size: int, minimum: int, step: int, maximum: int) -> int:
    """calculateRangeOffset: the size of the lower band kept for static allocation."""
    if size < minimum:
        return 0
    return min(max(minimum, size // step), maximum)


def _next_free(first: int, size: int, offset: int, taken: set[int], rng: random.Random) -> int | None:
    """AllocateNext of a bitmap with a static lower band: a random free member of the upper band,
    else of the lower band (the first free one from a random start, wrapping)."""
    for low, high in ((first + offset, first + size), (first, first + offset)):
        if high <= low:
            continue
        start = rng.randrange(low, high)
        for candidate in itertools.chain(range(start, high), range(low, start)):
            if candidate not in taken:
                return candidate
    return None


def allocate(
    service: JSON,
    old: Mapping[str, Any] | None,
    in_use: tuple[set[str], set[int]],
    network: ServiceNetwork,
    rng: random.Random,
) -> JSON:
    """The Service with its ClusterIP and NodePorts allocated; `in_use` are the values other
    Services hold. AllocationError when a requested value is outside the range or taken."""
    spec = dict(_m(service.get("spec")))
    ips, ports = in_use
    if needs_cluster_ip(service) and (old is None or not needs_cluster_ip(old)):
        spec.update(_cluster_ips(spec, ips, network, rng))
    if needs_node_port(service) and isinstance(spec.get("ports"), list):
        own = _node_ports(_m(old.get("spec"))) if old is not None and needs_node_port(old) else set()
        spec["ports"] = _allocate_node_ports(spec["ports"], ports, own, network, rng)
    return {**service, "spec": spec}


def _cluster_ips(spec: JSON, taken: set[str], network: ServiceNetwork, rng: random.Random) -> JSON:
    requested = spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
    requested = [str(ip) for ip in requested]
    if requested and requested[0] == "None":
        return {"clusterIP": "None", "clusterIPs": ["None"]}
    net = network.network
    if requested:
        ip = requested[0]
        try:
            address = ipaddress.IPv4Address(ip)
        except ValueError:
            return {}  # not an IP: validation reports it
        if address not in net or address in (net.network_address, net.broadcast_address):
            detail = (
                f"failed to allocate IP {ip}: the provided IP ({ip}) is not in the valid range. "
                f"The range of valid IPs is {network.cidr}"
            )
            raise AllocationError([f.invalid("spec.clusterIPs", go_strings(requested), detail)])
        if ip in taken:
            detail = f"failed to allocate IP {ip}: provided IP is already allocated"
            raise AllocationError([f.invalid("spec.clusterIPs", go_strings(requested), detail)])
        return {"clusterIP": ip, "clusterIPs": requested}
    first, size = int(net.network_address) + 1, net.num_addresses - 2
    used = {int(ipaddress.IPv4Address(ip)) for ip in taken if _is_v4(ip)}
    chosen = _next_free(first, size, _range_offset(size, 16, 16, 256), used, rng)
    if chosen is None:
        raise AllocationError([f.invalid("spec.clusterIPs", go_strings([]), "range is full")])
    ip = str(ipaddress.IPv4Address(chosen))
    return {"clusterIP": ip, "clusterIPs": [ip]}


def _is_v4(text: str) -> bool:
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


def _allocate_node_ports(
    ports: list[Any], taken: set[int], own: set[int], network: ServiceNetwork, rng: random.Random
) -> list[Any]:
    base, size = network.node_port_base, network.node_port_max - network.node_port_base + 1
    used = set(taken)
    out: list[Any] = []
    for i, port in enumerate(ports):
        if not isinstance(port, dict):
            out.append(port)
            continue
        value = port.get("nodePort")
        if isinstance(value, int) and value:
            if value in own:
                out.append(port)
                used.add(value)
                continue
            if not base <= value <= network.node_port_max:
                detail = (
                    "provided port is not in the valid range. The range of valid ports is "
                    f"{network.node_port_range}"
                )
                raise AllocationError([f.invalid(f"spec.ports[{i}].nodePort", value, detail)])
            if value in used and not any(_m(p).get("nodePort") == value for p in out):
                raise AllocationError(
                    [f.invalid(f"spec.ports[{i}].nodePort", value, "provided port is already allocated")]
                )
            used.add(value)
            out.append(port)
            continue
        same = next(  # one NodePort for the same port number under two protocols
            (
                _m(p).get("nodePort")
                for p in out
                if _m(p).get("port") == port.get("port") and _m(p).get("nodePort")
            ),
            None,
        )
        chosen = same or _next_free(base, size, _range_offset(size, 16, 32, 128), used, rng)
        if chosen is None:
            raise AllocationError([f.invalid(f"spec.ports[{i}].nodePort", 0, "range is full")])
        used.add(chosen)
        out.append({**port, "nodePort": chosen})
    return out


def kubernetes_service(network: ServiceNetwork, secure_port: int) -> JSON:
    """The `default/kubernetes` Service kube-apiserver keeps (its first service IP, port 443
    to the server's secure port)."""
    ip = network.kubernetes_service_ip
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "kubernetes",
            "namespace": "default",
            "labels": {"component": "apiserver", "provider": "kubernetes"},
        },
        "spec": {
            "ports": [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": secure_port}],
            "clusterIP": ip,
            "clusterIPs": [ip],
            "type": "ClusterIP",
            "sessionAffinity": "None",
            "ipFamilies": ["IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "internalTrafficPolicy": "Cluster",
        },
    }


def drop_type_dependent_fields(service: JSON, old: Mapping[str, Any]) -> JSON:
    """dropTypeDependentFields (pkg/registry/core/service/strategy.go): a Service whose new type
    no longer takes NodePorts (or a ClusterIP) loses the values it kept unchanged from the old
    object, so that changing only `type` is a valid update."""
    spec, old_spec = dict(_m(service.get("spec"))), _m(old.get("spec"))
    if needs_cluster_ip(old) and not needs_cluster_ip(service):
        if spec.get("clusterIPs") == old_spec.get("clusterIPs") and spec.get("clusterIP") == old_spec.get(
            "clusterIP"
        ):
            for name in ("clusterIP", "clusterIPs"):
                spec.pop(name, None)
        if spec.get("ipFamilies") == old_spec.get("ipFamilies"):
            spec.pop("ipFamilies", None)
        if spec.get("ipFamilyPolicy") == old_spec.get("ipFamilyPolicy"):
            spec.pop("ipFamilyPolicy", None)
    ports = spec.get("ports")
    if needs_node_port(old) and not needs_node_port(service) and isinstance(ports, list):
        old_ports = [p.get("nodePort") if isinstance(p, dict) else None for p in old_spec.get("ports") or []]
        new_ports = [p.get("nodePort") if isinstance(p, dict) else None for p in ports]
        if new_ports == old_ports[: len(new_ports)] or all(not p or p in old_ports for p in new_ports):
            spec["ports"] = [
                {k: v for k, v in p.items() if k != "nodePort"} if isinstance(p, dict) else p for p in ports
            ]
    left_load_balancer = spec.get("type") != "LoadBalancer" and old_spec.get("type") == "LoadBalancer"
    if left_load_balancer and spec.get("allocateLoadBalancerNodePorts") == old_spec.get(
        "allocateLoadBalancerNodePorts"
    ):
        spec.pop("allocateLoadBalancerNodePorts", None)
    if not needs_node_port(service) and spec.get("externalTrafficPolicy") == old_spec.get(
        "externalTrafficPolicy"
    ):
        spec.pop("externalTrafficPolicy", None)
    return {**service, "spec": spec}
