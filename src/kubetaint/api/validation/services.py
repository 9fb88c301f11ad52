"""Service validation, the parts an application manifest meets (mirrors ValidateService and
ValidateServiceUpdate in pkg/apis/core/validation/validation.go): a DNS-1035 name, the type,
ports (required but for headless and ExternalName Services, named when several, numbers, protocols,
target ports), NodePorts only for NodePort and LoadBalancer Services, an ExternalName's name, and
a ClusterIP that may not change once set. A Service here is defaulted (type, protocols)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kubetaint.api.jsonview import mapping_in as _m
from kubetaint.api.validation import field as f
from kubetaint.api.validation.metaupdate import validate_metadata
from kubetaint.api.validation.names import is_dns1123_label, is_dns1123_subdomain, name_is_dns1035_label
from kubetaint.api.validation.rbac import go_strings

Obj = Mapping[str, Any]
SERVICE_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
PROTOCOLS = ("SCTP", "TCP", "UDP")
PORT_RANGE_ERROR = "must be between 1 and 65535, inclusive"


def _is_port(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 65535


def _iana_service_name(name: str) -> list[str]:
    """validation.IsValidPortName."""
    errs = []
    if len(name) > 15:
        errs.append("must be no more than 15 characters")
    if not re.fullmatch("[-a-z0-9]+", name):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search("[a-z]", name):
        errs.append("must contain at least one letter (a-z)")
    if "--" in name:
        errs.append("must not contain consecutive hyphens")
    if name.startswith("-") or name.endswith("-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def _port_errors(port: Obj, i: int, require_name: bool, kind: str) -> list[f.FieldError]:
    path = f.index("spec.ports", i)
    errs: list[f.FieldError] = []
    name = str(port.get("name") or "")
    if require_name and not name:
        errs.append(f.required(f.child(path, "name")))
    elif name:
        errs.extend(f.invalid(f.child(path, "name"), name, msg) for msg in is_dns1123_label(name))
    number = port.get("port")
    if not _is_port(number):
        errs.append(f.invalid(f.child(path, "port"), number, PORT_RANGE_ERROR))
    protocol = port.get("protocol")
    if not protocol:
        errs.append(f.required(f.child(path, "protocol")))
    elif protocol not in PROTOCOLS:
        errs.append(f.not_supported(f.child(path, "protocol"), protocol, PROTOCOLS))
    target = port.get("targetPort")
    if isinstance(target, str):
        errs.extend(f.invalid(f.child(path, "targetPort"), target, msg) for msg in _iana_service_name(target))
    elif target is not None and not _is_port(target):
        errs.append(f.invalid(f.child(path, "targetPort"), target, PORT_RANGE_ERROR))
    if port.get("nodePort") and kind == "ClusterIP":
        errs.append(f.forbidden(f.child(path, "nodePort"), "may not be used when `type` is 'ClusterIP'"))
    elif port.get("nodePort") and kind == "ExternalName":
        errs.append(f.forbidden(f.child(path, "nodePort"), "may not be used when `type` is 'ExternalName'"))
    return errs


def validate_service(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
    """ValidateService (ValidateServiceUpdate with `old`)."""
    errs = validate_metadata(obj, old, namespaced=True, name_fn=name_is_dns1035_label)
    if old is not None:
        errs.extend(_cluster_ip_update_errors(obj, old))
    spec = _m(obj, "spec")
    kind = spec.get("type") or "ClusterIP"
    if kind not in SERVICE_TYPES:
        errs.append(f.not_supported("spec.type", kind, SERVICE_TYPES))
    headless = spec.get("clusterIP") == "None"
    ports = [p if isinstance(p, Mapping) else {} for p in spec.get("ports") or []]
    if not ports and not headless and kind != "ExternalName":
        errs.append(f.required("spec.ports"))
    if kind == "ExternalName":
        external = str(spec.get("externalName") or "")
        if not external:
            errs.append(f.required("spec.externalName"))
        else:
            errs.extend(
                f.invalid("spec.externalName", external, msg) for msg in is_dns1123_subdomain(external)
            )
    names: set[str] = set()
    for i, port in enumerate(ports):
        errs.extend(_port_errors(port, i, len(ports) > 1, str(kind)))
        name = str(port.get("name") or "")
        if name and name in names:
            errs.append(f.duplicate(f.child(f.index("spec.ports", i), "name"), name))
        names.add(name)
    return errs


def _cluster_ip_update_errors(obj: Obj, old: Obj) -> list[f.FieldError]:
    """An allocated ClusterIP may not change (but an ExternalName Service, or one becoming one,
    has none to keep)."""
    spec, old_spec = _m(obj, "spec"), _m(old, "spec")
    if "ExternalName" in (spec.get("type"), old_spec.get("type")):
        return []
    old_ips = [str(ip) for ip in old_spec.get("clusterIPs") or []]
    new_ips = [str(ip) for ip in spec.get("clusterIPs") or []]
    if old_ips and new_ips and new_ips[0] != old_ips[0]:
        return [f.invalid("spec.clusterIPs[0]", go_strings(new_ips), "may not change once set")]
    return []
