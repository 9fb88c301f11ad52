"""Request attributes for authorization, derived from the method, path and query
(mirrors apiserver/pkg/endpoints/request/requestinfo.go, RequestInfoFactory.NewRequestInfo).

/api/v1/namespaces/ns/pods/p/status -> resource request, verb from the method (GET on a
collection is list or watch, DELETE on one is deletecollection), group "", namespace "ns",
resource "pods", name "p", subresource "status". Anything else (/healthz, /api, /apis/g) is a
non-resource request whose verb is the lowercase HTTP method.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kubetaint.apiserver.query import go_bool

API_PREFIXES = ("api", "apis")
GROUPLESS_PREFIXES = ("api",)
_SPECIAL_VERBS = ("proxy", "watch")
_NAMESPACE_SUBRESOURCES = ("status", "finalize")
_METHOD_VERBS = {
    "POST": "create",
    "GET": "get",
    "HEAD": "get",
    "PUT": "update",
    "PATCH": "patch",
    "DELETE": "delete",
}


@dataclass(frozen=True, slots=True)
class RequestInfo:
    is_resource_request: bool
    path: str
    verb: str
    api_prefix: str = ""
    api_group: str = ""
    api_version: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    field_selector: str = ""


def _split_path(path: str) -> list[str]:
    path = path.strip("/")
    return path.split("/") if path else []


def _valid_path_segment(name: str) -> bool:
    """path.IsValidPathSegmentName."""
    return name not in (".", "..") and "/" not in name and "%" not in name


def exact_match(field_selector: str, field: str) -> str | None:
    """fields.Selector.RequiresExactMatch: the value `field` must equal (`f=v` or `f==v` among
    the comma-separated terms), or None."""
    for raw_term in field_selector.split(","):
        term = raw_term.strip()
        if "!=" in term:
            continue
        key, sep, value = term.partition("==") if "==" in term else term.partition("=")
        if sep and key.strip() == field:
            return value.strip()
    return None


def request_info(method: str, path: str, query: Mapping[str, str]) -> RequestInfo:
    """`query` holds the first value of each parameter (`query.Query.first_values`)."""
    parts = _split_path(path)
    verb = method.lower()
    if len(parts) < 3 or parts[0] not in API_PREFIXES:
        return RequestInfo(False, path, verb)
    prefix, parts = parts[0], parts[1:]
    group = ""
    if prefix not in GROUPLESS_PREFIXES:
        if len(parts) < 3:
            return RequestInfo(False, path, verb)
        group, parts = parts[0], parts[1:]
    version, parts = parts[0], parts[1:]
    if parts[0] in _SPECIAL_VERBS:
        if len(parts) < 2:
            return RequestInfo(False, path, verb)  # upstream: an error, served as non-resource
        verb, parts = parts[0], parts[1:]
    else:
        verb = _METHOD_VERBS.get(method.upper(), "")
    namespace = ""
    if parts[0] == "namespaces" and len(parts) > 1:
        namespace = parts[1]
        if len(parts) > 2 and parts[2] not in _NAMESPACE_SUBRESOURCES:
            parts = parts[2:]
    resource = parts[0]
    name = parts[1] if len(parts) >= 2 else ""
    subresource = parts[2] if len(parts) >= 3 and verb != "proxy" else ""
    field_selector = query.get("fieldSelector", "")
    if not name and verb == "get":
        verb = "watch" if go_bool(query.get("watch")) else "list"
        selected = exact_match(field_selector, "metadata.name")
        if selected is not None and selected and _valid_path_segment(selected):
            name = selected
    if not name and verb == "delete":
        verb = "deletecollection"
    return RequestInfo(
        True, path, verb, prefix, group, version, namespace, resource, subresource, name, field_selector
    )
