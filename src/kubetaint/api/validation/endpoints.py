"""Endpoints and EndpointSlice validation (mirrors ValidateEndpointsCreate/Update,
validateEndpointSubsets, validateEndpointAddress, validateEndpointPort and ValidateNonSpecialIP
in pkg/apis/core/validation, and ValidateEndpointSlice in pkg/apis/discovery/validation). The
objects here are defaulted: ports have a protocol (TCP), EndpointSlice ports a name ("")."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from kubetaint.api.validation import field as f
from kubetaint.api.validation.metaupdate import validate_namespaced_metadata as _meta
from kubetaint.api.validation.names import is_dns1123_label, is_dns1123_subdomain

Obj = Mapping[str, Any]
PROTOCOLS = ("SCTP", "TCP", "UDP")
ADDRESS_TYPES = ("FQDN", "IPv4", "IPv6")
PORT_RANGE_ERROR = "must be between 1 and 65535, inclusive"
INVALID_IP = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"


def _list(obj: Obj, name: str) -> list[Obj]:
    value = obj.get(name)
    return [v if isinstance(v, Mapping) else {} for v in value] if isinstance(value, list) else []


def non_special_ip_errors(text: str, path: str) -> list[f.FieldError]:
    """ValidateNonSpecialIP: not unspecified, loopback or link-local."""
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return [f.invalid(path, text, "must be a valid IP address")]
    errs = []
    if ip.is_unspecified:
        errs.append(f.invalid(path, text, f"may not be unspecified ({text})"))
    if ip.is_loopback:
        errs.append(f.invalid(path, text, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
    link_local_unicast = ip in ipaddress.ip_network("169.254.0.0/16") or ip in ipaddress.ip_network(
        "fe80::/10"
    )
    if link_local_unicast:
        errs.append(f.invalid(path, text, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
    if ip in ipaddress.ip_network("224.0.0.0/24") or ip in ipaddress.ip_network("ff02::/16"):
        errs.append(
            f.invalid(path, text, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)")
        )
    return errs


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _address_errors(address: Obj, path: str) -> list[f.FieldError]:
    ip = str(address.get("ip") or "")
    ip_path = f.child(path, "ip")
    errs = [] if _is_ip(ip) else [f.invalid(ip_path, ip, INVALID_IP)]
    hostname = str(address.get("hostname") or "")
    if hostname:
        errs.extend(f.invalid(f.child(path, "hostname"), hostname, msg) for msg in is_dns1123_label(hostname))
    node_name = address.get("nodeName")
    if isinstance(node_name, str):
        errs.extend(
            f.invalid(f.child(path, "nodeName"), node_name, msg) for msg in is_dns1123_subdomain(node_name)
        )
    errs.extend(non_special_ip_errors(ip, ip_path))
    return errs


def _port_errors(port: Obj, require_name: bool, path: str) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    name = str(port.get("name") or "")
    if require_name and not name:
        errs.append(f.required(f.child(path, "name")))
    elif name:
        errs.extend(f.invalid(f.child(path, "name"), name, msg) for msg in is_dns1123_label(name))
    number = port.get("port")
    if not (isinstance(number, int) and not isinstance(number, bool) and 1 <= number <= 65535):
        errs.append(f.invalid(f.child(path, "port"), number if number is not None else 0, PORT_RANGE_ERROR))
    errs.extend(_protocol_errors(port, path))
    return errs


def _protocol_errors(port: Obj, path: str) -> list[f.FieldError]:
    protocol = port.get("protocol")
    if not protocol:
        return [f.required(f.child(path, "protocol"))]
    if protocol not in PROTOCOLS:
        return [f.not_supported(f.child(path, "protocol"), protocol, PROTOCOLS)]
    return []


def validate_endpoints(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
    """ValidateEndpointsCreate / ValidateEndpointsUpdate."""
    errs = _meta(obj, old)
    for i, subset in enumerate(_list(obj, "subsets")):
        path = f.index("subsets", i)
        ready, not_ready = _list(subset, "addresses"), _list(subset, "notReadyAddresses")
        if not ready and not not_ready:
            errs.append(f.required(path, "must specify `addresses` or `notReadyAddresses`"))
        for j, address in enumerate(ready):
            errs.extend(_address_errors(address, f.index(f.child(path, "addresses"), j)))
        for j, address in enumerate(not_ready):
            errs.extend(_address_errors(address, f.index(f.child(path, "notReadyAddresses"), j)))
        ports = _list(subset, "ports")
        for j, port in enumerate(ports):
            errs.extend(_port_errors(port, len(ports) > 1, f.index(f.child(path, "ports"), j)))
    return errs


def _slice_address_errors(address: str, kind: str, path: str) -> list[f.FieldError]:
    if kind in ("IPv4", "IPv6"):
        try:
            parsed = ipaddress.ip_address(address)
        except ValueError:
            parsed = None
        if parsed is None or parsed.version != (4 if kind == "IPv4" else 6):
            return [f.invalid(path, address, f"must be a valid {kind} address")]
        return non_special_ip_errors(address, path)
    if kind == "FQDN":
        return [f.invalid(path, address, msg) for msg in is_dns1123_subdomain(address)]
    return []


def validate_endpoint_slice(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
    """ValidateEndpointSlice (ValidateEndpointSliceUpdate: the address type is immutable)."""
    errs = _meta(obj, old)
    kind = obj.get("addressType") or ""
    if not kind:
        errs.append(f.required("addressType"))
    elif kind not in ADDRESS_TYPES:
        errs.append(f.not_supported("addressType", kind, ADDRESS_TYPES))
    for i, endpoint in enumerate(_list(obj, "endpoints")):
        path = f.child(f.index("endpoints", i), "addresses")
        addresses = endpoint.get("addresses") if isinstance(endpoint.get("addresses"), list) else []
        if not addresses:
            errs.append(f.required(path, "must contain at least 1 address"))
        for j, address in enumerate(addresses or []):
            errs.extend(_slice_address_errors(str(address), str(kind), f.index(path, j)))
    names: set[str] = set()
    for i, port in enumerate(_list(obj, "ports")):
        path = f.index("ports", i)
        name = str(port.get("name") or "")
        if name:
            errs.extend(f.invalid(f.child(path, "name"), name, msg) for msg in is_dns1123_label(name))
        if name in names:
            errs.append(f.duplicate(f.child(path, "name"), name))
        names.add(name)
        errs.extend(_protocol_errors(port, path))
    if old is not None and kind != (old.get("addressType") or ""):
        errs.append(f.invalid("addressType", kind, "field is immutable"))
    return errs
