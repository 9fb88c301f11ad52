"""The base of kubetaint's typed API models (mirrors k8s.io/api's JSON encoding rules).

Models are for the edges (loading manifests, typed reads); the engine passes dicts. Every model keeps
unknown fields (`extra="allow"`), uses the API's camelCase names, decodes strictly like Go's
encoding/json (no string-to-number coercion), and `to_dict(from_dict(d)) == d` for any valid `d`.
"""

from __future__ import annotations

import types
import typing
from typing import Annotated, Any, ClassVar, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from kubetaint.api.gojson import json_kind


class GoType:
    """Marks an int field with its Go type (int32/int64) for decode messages."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


Int32 = Annotated[int, GoType("int32"), Field(ge=-(2**31), le=2**31 - 1)]
Int64 = Annotated[int, GoType("int64"), Field(ge=-(2**63), le=2**63 - 1)]
#: A resource.Quantity as it appears in JSON (validated by kubetaint.api.validation).
Quantity = Union[str, int, float]  # noqa: UP007 - kept as a runtime alias for pydantic
#: An intstr.IntOrString.
IntOrString = Union[int, str]  # noqa: UP007
Time = str


class DecodeError(ValueError):
    """An object whose JSON types do not fit the API schema; the message is kube-apiserver's."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


class K8sModel(BaseModel):
    """A Kubernetes object or sub-object; unknown fields are kept verbatim."""

    model_config = ConfigDict(
        extra="allow", alias_generator=to_camel, populate_by_name=True, strict=True, serialize_by_alias=True
    )
    #: The Go type name used in decode messages (defaults to the class name).
    go_name: ClassVar[str] = ""

    @classmethod
    def from_dict(cls, data: Any) -> typing.Self:
        """Decode Kubernetes JSON; raises DecodeError with Go's message naming the field."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise decode_error(cls, exc) from None

    def to_dict(self) -> dict[str, Any]:
        """The JSON this object was decoded from (fields never set stay absent)."""
        return self.model_dump(by_alias=True, exclude_unset=True, mode="json")


def _go_struct_name(cls: type[K8sModel]) -> str:
    return cls.go_name or cls.__name__


def _unwrap(annotation: Any) -> tuple[Any, list[Any]]:
    metadata: list[Any] = []
    while get_origin(annotation) is Annotated:
        args = get_args(annotation)
        annotation, metadata = args[0], metadata + list(args[1:])
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        if len(members) == 1:
            return _unwrap(members[0])
    return annotation, metadata


def go_type(annotation: Any) -> str:
    """The Go spelling of a field's type (`int64`, `[]v1.Taint`, `map[string]string`, ...)."""
    inner, metadata = _unwrap(annotation)
    marker = next((m for m in metadata if isinstance(m, GoType)), None)
    if marker is not None:
        return marker.name
    origin = get_origin(inner)
    if origin is list:
        return "[]" + go_type(get_args(inner)[0])
    if origin is dict:
        return f"map[string]{go_type(get_args(inner)[1])}"
    if isinstance(inner, type) and issubclass(inner, K8sModel):
        return f"v1.{_go_struct_name(inner)}"
    if inner is str:
        return "string"
    if inner is bool:
        return "bool"
    if inner is int:
        return "int64"
    if inner is float:
        return "float64"
    if get_origin(inner) in (Union, types.UnionType):
        names = {a.__name__ for a in get_args(inner) if isinstance(a, type)}
        return "resource.Quantity" if "float" in names else "intstr.IntOrString"
    return "interface {}"


def decode_error(cls: type[K8sModel], exc: ValidationError) -> DecodeError:
    """Go's `json: cannot unmarshal <json> into Go struct field <Struct>.<path> of type <type>`."""
    error = exc.errors()[0]
    loc = list(error["loc"])
    if error["type"] == "invalid_key":
        return _key_error(cls, loc)
    model: Any = cls
    struct = _go_struct_name(cls)
    annotation: Any = None
    names: list[str] = []
    display: list[str] = []
    for part in loc:
        if isinstance(part, int):
            display[-1] += f"[{part}]"
            continue
        if isinstance(model, type) and issubclass(model, K8sModel) and _field(model, str(part)) is not None:
            struct = _go_struct_name(model)
            annotation = _field(model, str(part))
        elif annotation is not None:
            inner, _ = _unwrap(annotation)
            annotation = get_args(inner)[-1] if get_origin(inner) is dict else None
        names.append(str(part))
        display.append(str(part))
        model = _descend(annotation)
    if annotation is not None and loc and isinstance(loc[-1], int):
        inner, _ = _unwrap(annotation)
        annotation = get_args(inner)[0] if get_origin(inner) is list else annotation
    target = go_type(annotation) if annotation is not None else "interface {}"
    value = error.get("input")
    dotted = ".".join(names)
    kind = json_kind(value)
    if target in ("int32", "int64") and kind == "number":
        kind = f"number {value}"  # Go names the literal that does not fit an integer
    message = f"json: cannot unmarshal {kind} into Go struct field {struct}.{dotted} of type {target}"
    return DecodeError(message, ".".join(display))


def _key_error(cls: type[K8sModel], loc: list[Any]) -> DecodeError:
    """A mapping key that is not a string (YAML `1: x`): JSON has no such key, so there is no Go
    message to mirror; name the key and where it is."""
    *parents, key = loc
    display: list[str] = []
    for part in parents:
        if isinstance(part, int) and display:
            display[-1] += f"[{part}]"
        else:
            display.append(str(part))
    where = ".".join(display)
    place = f"{_go_struct_name(cls)}.{where}" if where else _go_struct_name(cls)
    message = f"json: object key {key!r} in {place} is not a string"
    return DecodeError(message, ".".join([*display, str(key)]))


def _field(model: type[K8sModel], alias: str) -> Any:
    for name, info in model.model_fields.items():
        if (info.alias or name) == alias:
            return info.rebuild_annotation()
    return None


def _descend(annotation: Any) -> Any:
    if annotation is None:
        return None
    inner, _ = _unwrap(annotation)
    while get_origin(inner) in (list, dict):
        inner, _ = _unwrap(get_args(inner)[-1])
    return inner
