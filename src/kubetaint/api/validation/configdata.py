"""ConfigMap, Secret and ServiceAccount validation (mirrors ValidateConfigMap/Update,
ValidateSecret/Update and ValidateServiceAccount/Update in pkg/apis/core/validation/validation.go).

A Secret here is the stored form: `data` values are base64 text (decoding checked them) and
`stringData` is already merged into `data`, as upstream's conversion does before validation.
Map keys are checked in sorted order (Go ranges over a map in random order)."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

from kubetaint.api.gojson import json_kind
from kubetaint.api.jsonview import mapping_in as _m
from kubetaint.api.validation import field as f
from kubetaint.api.validation.metaupdate import validate_namespaced_metadata as _meta
from kubetaint.api.validation.names import is_config_map_key

Obj = Mapping[str, Any]
#: core.MaxSecretSize: the total size of a ConfigMap's or Secret's data.
MAX_SECRET_SIZE = 1 * 1024 * 1024
IMMUTABLE_WHEN_SET = "field is immutable when `immutable` is set"
SERVICE_ACCOUNT_NAME_KEY = "kubernetes.io/service-account.name"
REDACTED = "<secret contents redacted>"


def decoded_size(text: Any) -> int:
    """The length of the bytes a base64 `data` value stands for (0 when it does not decode)."""
    try:
        return len(base64.b64decode(str(text)))
    except (binascii.Error, ValueError):
        return 0


def _immutable_errors(obj: Obj, old: Obj, fields: tuple[str, ...]) -> list[f.FieldError]:
    if old.get("immutable") is not True:
        return []
    errs = []
    if obj.get("immutable") is not True:
        errs.append(f.forbidden("immutable", IMMUTABLE_WHEN_SET))
    errs.extend(
        f.forbidden(name, IMMUTABLE_WHEN_SET)
        for name in fields
        if (obj.get(name) or None) != (old.get(name) or None)  # nil and empty maps alike, as DeepEqual
    )
    return errs


def validate_config_map(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
    """ValidateConfigMap, after ValidateConfigMapUpdate's immutability checks on update."""
    errs = _meta(obj, old)
    if old is not None:
        errs.extend(_immutable_errors(obj, old, ("data", "binaryData")))
    data, binary = _m(obj, "data"), _m(obj, "binaryData")
    total = 0
    for key in sorted(data):
        errs.extend(f.invalid(f.key("data", key), key, msg) for msg in is_config_map_key(key))
        if key in binary:
            errs.append(f.invalid(f.key("data", key), key, "duplicate of key present in binaryData"))
        total += len(str(data[key]).encode())
    for key in sorted(binary):
        errs.extend(f.invalid(f.key("binaryData", key), key, msg) for msg in is_config_map_key(key))
        total += decoded_size(binary[key])
    if total > MAX_SECRET_SIZE:
        errs.append(f.too_long("", MAX_SECRET_SIZE))
    return errs


def validate_secret(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
    """ValidateSecret, after ValidateSecretUpdate's `type` and immutability checks on update."""
    errs = _meta(obj, old)
    if old is not None:
        if (obj.get("type") or "") != (old.get("type") or ""):
            errs.append(f.invalid("type", obj.get("type") or "", "field is immutable"))
        errs.extend(_immutable_errors(obj, old, ("data",)))
    data = _m(obj, "data")
    total = 0
    for key in sorted(data):
        errs.extend(f.invalid(f.key("data", key), key, msg) for msg in is_config_map_key(key))
        total += decoded_size(data[key])
    if total > MAX_SECRET_SIZE:
        errs.append(f.too_long("data", MAX_SECRET_SIZE))
    errs.extend(_type_errors(obj, data))
    return errs


def _type_errors(obj: Obj, data: Obj) -> list[f.FieldError]:
    kind = obj.get("type") or ""
    if kind == "kubernetes.io/service-account-token":
        annotations = _m(_m(obj, "metadata"), "annotations")
        if not annotations.get(SERVICE_ACCOUNT_NAME_KEY):
            return [f.required(f.key("metadata.annotations", SERVICE_ACCOUNT_NAME_KEY))]
    elif kind in ("kubernetes.io/dockercfg", "kubernetes.io/dockerconfigjson"):
        key = ".dockercfg" if kind == "kubernetes.io/dockercfg" else ".dockerconfigjson"
        if key not in data:
            return [f.required(f.key("data", key))]
        problem = _json_object_error(data[key])
        if problem:
            return [f.invalid(f.key("data", key), REDACTED, problem)]
    elif kind == "kubernetes.io/basic-auth":
        if "username" not in data and "password" not in data:
            return [f.required(f.key("data", "username")), f.required(f.key("data", "password"))]
    elif kind == "kubernetes.io/ssh-auth":
        if not decoded_size(data.get("ssh-privatekey", "")):
            return [f.required(f.key("data", "ssh-privatekey"))]
    elif kind == "kubernetes.io/tls":
        return [f.required(f.key("data", key)) for key in ("tls.crt", "tls.key") if key not in data]
    return []


def _json_object_error(text: Any) -> str:
    """What json.Unmarshal into a map says of the decoded bytes ("" when they are a JSON object)."""
    try:
        raw = base64.b64decode(str(text))
    except (binascii.Error, ValueError):
        return ""
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return "unexpected end of JSON input" if not raw.strip() else "invalid character in JSON input"
    if not isinstance(value, dict) and value is not None:
        return f"json: cannot unmarshal {json_kind(value)} into Go value of type map[string]interface {{}}"
    return ""


def validate_service_account(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
    """ValidateServiceAccount / ValidateServiceAccountUpdate: its metadata."""
    return _meta(obj, old)
