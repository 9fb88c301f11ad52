"""Shared pieces of the Table printers: Go's duration.HumanDuration, translateTimestampSince,
column definitions and defensive accessors (mirrors apimachinery/pkg/util/duration and the helpers
of pkg/printers/internalversion/printers.go)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubetaint.api.jsonview import meta_of
from kubetaint.api.openapi_schemas import schemas
from kubetaint.clock.base import parse_time

JSON = dict[str, Any]
Cells = list[Any]
Printer = Callable[[JSON, float], Cells]


def human_duration(seconds: float) -> str:
    """duration.HumanDuration."""
    secs = int(seconds)
    if secs < -1:
        return "<invalid>"
    if secs < 0:
        return "0s"
    if secs < 120:
        return f"{secs}s"
    minutes = secs // 60
    if minutes < 10:
        rest = secs % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = secs // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        years = hours // 24 // 365
        return f"{years}y" if days == 0 else f"{years}y{days}d"
    return f"{hours // 24 // 365}y"


def since(timestamp: Any, now: float) -> str:
    """translateTimestampSince: `<unknown>` for a zero or unparsable time."""
    if not isinstance(timestamp, str) or not timestamp:
        return "<unknown>"
    try:
        return human_duration(now - parse_time(timestamp))
    except ValueError:
        return "<unknown>"


def col(name: str, description: str = "", *, priority: int = 0, type_: str = "string", fmt: str = "") -> JSON:
    return {"name": name, "type": type_, "format": fmt, "description": description, "priority": priority}


def swagger_doc(schema: str, field: str) -> str:
    """`T{}.SwaggerDoc()[field]`: the field's doc comment, as the shipped OpenAPI schema has it
    ("" when the schema has no such field, as Go's map lookup gives)."""
    prop = schemas().get(schema, {}).get("properties", {}).get(field, {})
    return str(prop.get("description", "")).split("\n\nPossible enum values:")[0]


_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
NAME_COLUMN = col("Name", swagger_doc(_OBJECT_META, "name"), fmt="name")
AGE_COLUMN = col("Age", swagger_doc(_OBJECT_META, "creationTimestamp"))


def as_dict(value: Any) -> JSON:
    return value if isinstance(value, dict) else {}


def count_of(value: Any) -> int:
    """An integer field's value for a cell: 0 when unset or not an integer."""
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else 0


def age_of(obj: JSON, now: float) -> str:
    return since(meta_of(obj).get("creationTimestamp"), now)
