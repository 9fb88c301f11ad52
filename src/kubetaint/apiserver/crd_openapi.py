"""The OpenAPI v3 documents of custom resources' group versions (mirrors apiextensions-apiserver
pkg/controller/openapi/builder: each kind's schema is its CRD's `openAPIV3Schema` with apiVersion,
kind and metadata, named by the REST-friendly name `com.example.stable.v1.CronTab`, its list kind
beside it, `x-kubernetes-group-version-kind` on both), so `kubectl explain` describes custom
resources and kubectl finds `fieldValidation` on their operations.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Sequence
from typing import Any

from kubetaint.api.crd import CustomResource
from kubetaint.api.openapi_schemas import REF
from kubetaint.apiserver.wire import dumps

JSON = dict[str, Any]
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_API_VERSION_DOC = (
    "APIVersion defines the versioned schema of this representation of an object. Servers should "
    "convert recognized schemas to the latest internal value, and may reject unrecognized values. "
    "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
)
_KIND_DOC = (
    "Kind is a string value representing the REST resource this object represents. Servers may infer "
    "this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
)
_METADATA_DOC = (
    "Standard object's metadata. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)


def friendly_name(group: str, version: str, kind: str) -> str:
    """util.ToRESTFriendlyName of `group/version/kind`: the group's domain reversed
    (`stable.example.com` -> `com.example.stable.v1.CronTab`)."""
    return ".".join([*reversed(group.split(".")), version, kind])


def _gvk(res: CustomResource, kind: str) -> list[JSON]:
    return [{"group": res.group, "kind": kind, "version": res.version}]


def kind_schema(res: CustomResource) -> JSON:
    """The kind's schema: the CRD's with apiVersion, kind and metadata (ObjectMeta)."""
    schema: JSON = copy.deepcopy(res.schema) if res.schema else {"type": "object"}
    given = schema.get("properties")
    props: JSON = dict(given) if isinstance(given, dict) else {}
    props["apiVersion"] = {"description": _API_VERSION_DOC, "type": "string"}
    props["kind"] = {"description": _KIND_DOC, "type": "string"}
    props["metadata"] = {"allOf": [{"$ref": REF + _META + "ObjectMeta"}], "description": _METADATA_DOC}
    schema["properties"] = dict(sorted(props.items()))
    schema["x-kubernetes-group-version-kind"] = _gvk(res, res.kind)
    return schema


def list_schema(res: CustomResource, item: str) -> JSON:
    return {
        "description": f"{res.list_kind} is a list of {res.kind}",
        "properties": {
            "apiVersion": {"description": _API_VERSION_DOC, "type": "string"},
            "items": {
                "description": (
                    f"List of {res.plural}. More info: "
                    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"
                ),
                "items": {"$ref": REF + item},
                "type": "array",
            },
            "kind": {"description": _KIND_DOC, "type": "string"},
            "metadata": {"allOf": [{"$ref": REF + _META + "ListMeta"}], "description": _METADATA_DOC},
        },
        "required": ["items"],
        "type": "object",
        "x-kubernetes-group-version-kind": _gvk(res, res.list_kind),
    }


def components(resources: Sequence[CustomResource]) -> dict[str, JSON]:
    """The schemas of a group version's custom resources: each kind and its list."""
    out: dict[str, JSON] = {}
    for res in resources:
        name = friendly_name(res.group, res.version, res.kind)
        out[name] = kind_schema(res)
        out[friendly_name(res.group, res.version, res.list_kind)] = list_schema(res, name)
    return out


def content_hash(body: bytes) -> str:
    """The document hash the index carries (as the built-in documents')."""
    return hashlib.sha512(body).hexdigest()[:128].upper()


def render(doc: JSON) -> tuple[bytes, str]:
    body = dumps(doc)
    return body, content_hash(body)
