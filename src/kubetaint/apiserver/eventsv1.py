"""events.k8s.io/v1 Events, served from the core Events' storage as kube-apiserver serves them:
through the conversion of pkg/apis/events/v1 (`kubetaint.api.events_conversion`), with its field
selectors (AddFieldLabelConversionsForEvent: `regarding.*` select on `involvedObject.*`,
`reportingController` on `reportingComponent`) and its validation of writes."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kubetaint.api import errors
from kubetaint.api.events_conversion import GROUP
from kubetaint.api.resources import Resource
from kubetaint.api.validation import field
from kubetaint.api.validation.names import is_qualified_name
from kubetaint.api.validation.status import invalid_status

#: events.k8s.io/v1 field selector labels and the core Event fields they select on.
FIELD_LABELS = {
    "reason": "reason",
    "regarding.kind": "involvedObject.kind",
    "regarding.namespace": "involvedObject.namespace",
    "regarding.name": "involvedObject.name",
    "regarding.uid": "involvedObject.uid",
    "regarding.apiVersion": "involvedObject.apiVersion",
    "regarding.resourceVersion": "involvedObject.resourceVersion",
    "regarding.fieldPath": "involvedObject.fieldPath",
    "reportingController": "reportingComponent",
    "source": "source",
    "type": "type",
    "metadata.namespace": "metadata.namespace",
    "metadata.name": "metadata.name",
}


def converts(res: Resource) -> bool:
    """Whether `res` is served through this conversion (events.k8s.io/v1 Events)."""
    return res.group == GROUP and res.kind == "Event"


def stored_field_selector(res: Resource, selector: str | None) -> str | None:
    """A request's field selector on the stored objects of `res` (converted for events.k8s.io/v1
    Events, as it is otherwise)."""
    return field_selector(selector) if converts(res) else selector


def field_selector(selector: str | None) -> str | None:
    """An events.k8s.io/v1 field selector on the stored core Events (each label converted; a
    label it does not know is a 400 `field label not supported`)."""
    if selector is None or not selector.strip():
        return selector
    terms = []
    for part in _terms(selector):
        match = re.fullmatch(r"\s*([^!=\s]+)\s*(!=|==|=)(.*)", part, flags=re.DOTALL)
        if match is None:
            return selector  # not a term: the store's parser answers as for core Events
        stored = FIELD_LABELS.get(match[1])
        if stored is None:
            raise errors.bad_request(f"field label not supported: {match[1]}")
        terms.append(f"{stored}{match[2]}{match[3]}")
    return ",".join(terms)


def _terms(selector: str) -> list[str]:
    """The selector's terms as written: split at the commas no backslash escapes."""
    terms: list[str] = []
    current: list[str] = []
    escaped = False
    for char in selector:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == ",":
            terms.append("".join(current))
            current = []
            continue
        current.append(char)
    terms.append("".join(current))
    return terms


#: Limits of pkg/apis/core/validation/events.go.
REPORTING_INSTANCE_LENGTH_LIMIT = 128
ACTION_LENGTH_LIMIT = 128
REASON_LENGTH_LIMIT = 128
NOTE_LENGTH_LIMIT = 1024
#: The stored fields an events.k8s.io/v1 update cannot change (ValidateEventUpdate), in its order.
_IMMUTABLE = (
    "involvedObject",
    "reason",
    "message",
    "source",
    "firstTimestamp",
    "lastTimestamp",
    "count",
    "reason",
    "type",
    "eventTime",
    "action",
    "related",
    "reportingComponent",
    "reportingInstance",
)


def check_write(stored: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
    """ValidateEventCreate / ValidateEventUpdate of a write through events.k8s.io/v1 (`stored`: the
    Event as the conversion stores it, `old` the stored one for an update): a 422 Invalid when it
    fails (the metadata checks are the registry's)."""
    errs = _create_errors(stored) if old is None else _update_errors(stored, old)
    if errs:
        name = str((stored.get("metadata") or {}).get("name") or "")
        raise errors.StatusError.from_status(invalid_status("Event", name, errs))


def _create_errors(event: Mapping[str, Any]) -> list[field.FieldError]:
    errs = [*_legacy_errors(event), *_series_errors(event)]
    if not event.get("eventTime"):
        errs.append(field.required("eventTime"))
    if event.get("type") not in ("Normal", "Warning"):
        errs.append(field.invalid("type", "", f"has invalid value: {event.get('type') or ''}"))
    for name in ("firstTimestamp", "lastTimestamp", "count"):
        if event.get(name):
            errs.append(field.invalid(name, "", "needs to be unset"))
    source = event.get("source") or {}
    if source.get("component") or source.get("host"):
        errs.append(field.invalid("source", "", "needs to be unset"))
    return errs


def _update_errors(event: Mapping[str, Any], old: Mapping[str, Any]) -> list[field.FieldError]:
    errs = _legacy_errors(event)
    if event.get("series") != old.get("series"):
        errs.extend(_series_errors(event))
    for name in _IMMUTABLE:
        if _comparable(event.get(name)) != _comparable(old.get(name)):
            errs.append(field.invalid(name, _go_value(event.get(name)), "field is immutable"))
    return errs


def _comparable(value: Any) -> Any:
    """A field's value as Go compares it: a missing field is its zero value."""
    return value if value not in (None, "", 0, {}) else None


def _go_value(value: Any) -> Any:
    return value if isinstance(value, str | int) else field.GoValue(value, field.go_struct(value or {}))


def _series_errors(event: Mapping[str, Any]) -> list[field.FieldError]:
    series = event.get("series")
    if series is None:
        return []
    errs = []
    if int(series.get("count") or 0) < 2:
        errs.append(field.invalid("series.count", "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        errs.append(field.required("series.lastObservedTime"))
    return errs


def _legacy_errors(event: Mapping[str, Any]) -> list[field.FieldError]:
    """legacyValidateEvent of an Event with an eventTime (every events.k8s.io/v1 write that passes
    the eventTime check; the namespace rule of one without is the core API's)."""
    errs: list[field.FieldError] = []
    if not event.get("eventTime"):
        return errs
    namespace = str((event.get("metadata") or {}).get("namespace") or "")
    involved = event.get("involvedObject") or {}
    if not involved.get("namespace") and namespace not in ("default", "kube-system"):
        errs.append(field.invalid("involvedObject.namespace", "", "does not match event.namespace"))
    controller = str(event.get("reportingComponent") or "")
    if not controller:
        errs.append(field.required("reportingController"))
    errs.extend(
        field.invalid("reportingController", controller, msg) for msg in is_qualified_name(controller)
    )
    for name, shown, limit in (
        ("reportingInstance", "reportingInstance", REPORTING_INSTANCE_LENGTH_LIMIT),
        ("action", "action", ACTION_LENGTH_LIMIT),
        ("reason", "reason", REASON_LENGTH_LIMIT),
    ):
        value = str(event.get(name) or "")
        if not value:
            errs.append(field.required(shown))
        if len(value.encode()) > limit:
            errs.append(field.invalid(shown, "", f"can have at most {limit} characters"))
    if len(str(event.get("message") or "").encode()) > NOTE_LENGTH_LIMIT:
        errs.append(field.invalid("message", "", f"can have at most {NOTE_LENGTH_LIMIT} characters"))
    return errs
