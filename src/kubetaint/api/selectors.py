"""Label and field selectors: the string syntax of list/watch requests and structured
`LabelSelector`s (mirrors apimachinery pkg/labels/selector.go, pkg/fields/selector.go and
metav1.LabelSelectorAsSelector)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kubetaint.api.errors import StatusError, bad_request

Requirement = tuple[str, str, tuple[str, ...]]  # (key, operator, values)
_TOKEN = re.compile(r"\s*(!=|==|=|!|\(|\)|,|>|<|[^\s!=(),<>]+)")


@dataclass(frozen=True)
class LabelSelector:
    """A parsed label selector; `requirements` all have to hold (an empty list selects everything)."""

    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        labels = labels or {}
        return all(_requirement_holds(req, labels) for req in self.requirements)

    @property
    def empty(self) -> bool:
        return not self.requirements


def _requirement_holds(req: Requirement, labels: Mapping[str, str]) -> bool:
    key, op, values = req
    present = key in labels
    if op == "exists":
        return present
    if op == "!":
        return not present
    if op in ("=", "==", "in"):
        return present and labels[key] in values
    if op in ("!=", "notin"):
        return not present or labels[key] not in values
    if op in (">", "<"):
        if not present:
            return False
        try:
            have, want = int(labels[key]), int(values[0])
        except ValueError:
            return False
        return have > want if op == ">" else have < want
    return False


def parse_label_selector(text: str | None) -> LabelSelector:
    """Parse `a=b,c!=d,e in (x,y),!f,g`; raises a 400 StatusError on bad syntax."""
    if text is None or not text.strip():
        return LabelSelector()
    tokens = [t for t in _TOKEN.findall(text)]
    if "".join(tokens).replace(" ", "") != re.sub(r"\s+", "", text):
        raise bad_request(f"unable to parse requirement: invalid label selector: {text!r}")
    requirements: list[Requirement] = []
    i = 0
    while i < len(tokens):
        req, i = _parse_requirement(tokens, i, text)
        requirements.append(req)
        if i < len(tokens):
            if tokens[i] != ",":
                raise bad_request(f"found '{tokens[i]}', expected: ',' or 'end of string'")
            i += 1
    return LabelSelector(tuple(requirements))


def _parse_requirement(tokens: list[str], i: int, text: str) -> tuple[Requirement, int]:
    if tokens[i] == "!":
        if i + 1 >= len(tokens):
            raise bad_request("found '', expected: identifier after '!'")
        return (tokens[i + 1], "!", ()), i + 2
    key = tokens[i]
    if key in ("=", "==", "!=", "(", ")", ",", ">", "<"):
        raise bad_request(f"found '{key}', expected: !, identifier, or 'end of string'")
    i += 1
    if i >= len(tokens) or tokens[i] == ",":
        return (key, "exists", ()), i
    op = tokens[i]
    if op in ("in", "notin"):
        if i + 1 >= len(tokens) or tokens[i + 1] != "(":
            raise bad_request(f"found '{tokens[i + 1] if i + 1 < len(tokens) else ''}', expected: '('")
        values: list[str] = []
        i += 2
        while i < len(tokens) and tokens[i] != ")":
            if tokens[i] != ",":
                values.append(tokens[i])
            i += 1
        if i >= len(tokens):
            raise bad_request("found '', expected: ')'")
        return (key, op, tuple(values)), i + 1
    if op in ("=", "==", "!=", ">", "<"):
        value = ""
        if i + 1 < len(tokens) and tokens[i + 1] not in (",",):
            value = tokens[i + 1]
            i += 1
        return (key, op, (value,)), i + 1
    raise bad_request(f"found '{op}', expected: in, notin, =, ==, !=, gt, lt")


# Field selectors ---------------------------------------------------------------------------

FieldGetter = Callable[[Mapping[str, Any]], str]


def _path(*keys: str) -> FieldGetter:
    def get(obj: Mapping[str, Any]) -> str:
        value: Any = obj
        for key in keys:
            if not isinstance(value, Mapping):
                return ""
            value = value.get(key)
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    return get


def _bool(*keys: str) -> FieldGetter:
    """A boolean field as Go's `strconv.FormatBool`/`fmt.Sprint` renders it: an unset field is its
    zero value, `false` (upstream selects on the internal object, where an omitted bool is false)."""
    get = _path(*keys)
    return lambda obj: get(obj) or "false"


def _int(*keys: str) -> FieldGetter:
    """An int32 field as `strconv.Itoa` renders it: an unset field is its zero value, `0`."""
    get = _path(*keys)
    return lambda obj: get(obj) or "0"


def _pod_ip(obj: Mapping[str, Any]) -> str:
    """`status.podIP`: the first of the internal object's podIPs, which v1 conversion fills from
    `status.podIP` when set, else from `status.podIPs`."""
    status = obj.get("status")
    if not isinstance(status, Mapping):
        return ""
    if ip := status.get("podIP"):
        return str(ip)
    ips = status.get("podIPs")
    if isinstance(ips, list) and ips and isinstance(ips[0], Mapping):
        return str(ips[0].get("ip") or "")
    return ""


def _event_source(obj: Mapping[str, Any]) -> str:
    """Events' `source`: `source.component`, else `reportingComponent` (event strategy)."""
    return _path("source", "component")(obj) or _path("reportingComponent")(obj)


_COMMON_FIELDS: dict[str, FieldGetter] = {
    "metadata.name": _path("metadata", "name"),
    "metadata.namespace": _path("metadata", "namespace"),
}
#: Field labels each resource supports: its strategy's ToSelectableFields (what the value of a
#: field is, unset fields included) restricted to its version's field label conversion function
#: (pkg/apis/core/v1/conversion.go); a kind without one accepts metadata.name/namespace only.
RESOURCE_FIELDS: dict[str, dict[str, FieldGetter]] = {
    "pods": {
        **_COMMON_FIELDS,
        "spec.nodeName": _path("spec", "nodeName"),
        "spec.restartPolicy": _path("spec", "restartPolicy"),
        "spec.schedulerName": _path("spec", "schedulerName"),
        "spec.serviceAccountName": _path("spec", "serviceAccountName"),
        "spec.hostNetwork": _bool("spec", "hostNetwork"),
        "status.phase": _path("status", "phase"),
        "status.podIP": _pod_ip,
        "status.nominatedNodeName": _path("status", "nominatedNodeName"),
    },
    "nodes": {
        "metadata.name": _path("metadata", "name"),
        "spec.unschedulable": _bool("spec", "unschedulable"),
    },
    "namespaces": {"metadata.name": _path("metadata", "name"), "status.phase": _path("status", "phase")},
    "events": {
        **_COMMON_FIELDS,
        "involvedObject.kind": _path("involvedObject", "kind"),
        "involvedObject.namespace": _path("involvedObject", "namespace"),
        "involvedObject.name": _path("involvedObject", "name"),
        "involvedObject.uid": _path("involvedObject", "uid"),
        "involvedObject.apiVersion": _path("involvedObject", "apiVersion"),
        "involvedObject.resourceVersion": _path("involvedObject", "resourceVersion"),
        "involvedObject.fieldPath": _path("involvedObject", "fieldPath"),
        "reason": _path("reason"),
        "reportingComponent": _path("reportingComponent"),
        "source": _event_source,
        "type": _path("type"),
    },
    "secrets": {**_COMMON_FIELDS, "type": _path("type")},
    "jobs.batch": {**_COMMON_FIELDS, "status.successful": _int("status", "succeeded")},
    "services": {
        **_COMMON_FIELDS,
        "spec.clusterIP": _path("spec", "clusterIP"),
        "spec.type": _path("spec", "type"),
    },
}
#: Old names the conversion function maps to a field label (`spec.host` of v1 clients).
FIELD_ALIASES: dict[str, dict[str, str]] = {"pods": {"spec.host": "spec.nodeName"}}


@dataclass(frozen=True)
class FieldSelector:
    """A parsed field selector: (field, operator, value) terms that all have to hold."""

    terms: tuple[tuple[str, str, str], ...] = ()
    getters: tuple[FieldGetter, ...] = ()

    def matches(self, obj: Mapping[str, Any]) -> bool:
        for (_, op, want), get in zip(self.terms, self.getters, strict=True):
            have = get(obj)
            if (have == want) != (op != "!="):
                return False
        return True

    @property
    def empty(self) -> bool:
        return not self.terms

    def exact_value(self, field: str) -> str | None:
        for name, op, value in self.terms:
            if name == field and op != "!=":
                return value
        return None


def parse_field_selector(text: str | None, resource: str) -> FieldSelector:
    """Parse `spec.nodeName=n1,status.phase!=Running` for `resource` (the store's name: the plural,
    `.group` appended outside the core group)."""
    if text is None or not text.strip():
        return FieldSelector()
    supported = RESOURCE_FIELDS.get(resource, _COMMON_FIELDS)
    aliases = FIELD_ALIASES.get(resource, {})
    terms: list[tuple[str, str, str]] = []
    getters: list[FieldGetter] = []
    for part in _split_unescaped(text):
        match = re.fullmatch(r"\s*([^!=\s]+)\s*(!=|==|=)(.*)", part)
        if match is None:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{part}'")
        field, op, value = match[1], match[2], _unescape(match[3])
        field = aliases.get(field, field)
        if field not in supported:
            raise bad_request(f"field label not supported: {field}")
        terms.append((field, op, value))
        getters.append(supported[field])
    return FieldSelector(tuple(terms), tuple(getters))


def _split_unescaped(text: str) -> list[str]:
    parts, current, escaped = [], [], False
    for char in text:
        if escaped:
            current.append("\\" + char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == ",":
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


# Structured selectors ----------------------------------------------------------------------


def label_selector_from_dict(selector: Mapping[str, Any] | None) -> LabelSelector | None:
    """metav1.LabelSelectorAsSelector: None for a nil selector (selects nothing), else the
    requirements (an empty selector selects everything). Raises StatusError on a bad operator."""
    if selector is None:
        return None
    requirements: list[Requirement] = [
        (key, "=", (str(value),)) for key, value in sorted((selector.get("matchLabels") or {}).items())
    ]
    for expr in selector.get("matchExpressions") or []:
        op = expr.get("operator", "")
        values = tuple(str(v) for v in expr.get("values") or [])
        mapped = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}.get(op)
        if mapped is None:
            raise StatusError(422, "Invalid", f'"{op}" is not a valid label selector operator')
        requirements.append((str(expr.get("key", "")), mapped, values))
    return LabelSelector(tuple(requirements))


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str] | None) -> bool:
    """Whether a structured LabelSelector (nil selects nothing, empty everything) matches labels."""
    parsed = label_selector_from_dict(selector)
    return parsed is not None and parsed.matches(labels)
