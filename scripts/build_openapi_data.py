#!/usr/bin/env python3
"""Build src/kubetaint/api/openapi_data/schemas-v1.35.json.gz: the OpenAPI v3
`components.schemas` of the kinds the API server serves (and everything they reference), in the
shape of kubernetes/kubernetes api/openapi-spec/v3/*.json for the release kubetaint follows
(kubetaint.api.version: v1.35). The repository keeps the generated file; this script documents
how it is made and remakes it.

Source: upstream's v1.35 definitions as the PyPI package `kubernetes-validate` ships them
(Apache-2.0; its `_definitions.json` is upstream's swagger definitions turned into JSON Schema;
the wheel of version 1.35.0 carries every release from 1.25 to 1.35):

    pip download --no-deps -d /tmp/kv kubernetes-validate==1.35.0
    python scripts/build_openapi_data.py /tmp/kv/kubernetes_validate-1.35.0-py3-none-any.whl

The release, the wheel member and the output name all follow MINOR below, which must be
kubetaint.api.version's (the script checks it).

The conversion undoes what that packaging changed, so the result reads as upstream's v3 documents:
- `#/$defs/X` references become `#/components/schemas/X`; a reference with sibling keywords
  (a field's description) is wrapped in `allOf`, as kube-openapi's v3 builder does;
- `"type": ["string", "null"]` becomes `"type": "string"`;
- the `enum` added to every `apiVersion`/`kind` property is dropped;
- Quantity and IntOrString get upstream's string schemas back (`format: int-or-string`);
- the enum values of the taint and toleration fields, and the "Possible enum values" paragraphs of
  their descriptions, are restored from upstream's v3 documents (ENUM_OVERLAY below). Other
  fields' enums are not restored: `kubectl explain` prints no `enum:` line for them.

Only the schemas reachable from ROOTS are kept. The output is deterministic (sorted keys, gzip
mtime 0), so the server's OpenAPI hashes are stable.
"""

from __future__ import annotations

import gzip
import json
import sys
import zipfile
from pathlib import Path
from typing import Any

MINOR = "35"
MEMBER = f"kubernetes_validate/kubernetes-json-schema/v1.{MINOR}.0-local/_definitions.json"
ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / f"src/kubetaint/api/openapi_data/schemas-v1.{MINOR}.json.gz"
VERSION_MODULE = ROOT / "src/kubetaint/api/version.py"
PREFIX = "#/components/schemas/"

_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
ROOTS = [
    *(
        f"io.k8s.api.core.v1.{kind}"
        for kind in ("Namespace", "NamespaceList", "Node", "NodeList", "Pod", "PodList", "Binding")
    ),
    "io.k8s.api.core.v1.Event",
    "io.k8s.api.core.v1.EventList",
    "io.k8s.api.events.v1.Event",
    "io.k8s.api.events.v1.EventList",
    "io.k8s.api.policy.v1.Eviction",
    "io.k8s.api.policy.v1.PodDisruptionBudget",
    "io.k8s.api.policy.v1.PodDisruptionBudgetList",
    "io.k8s.api.scheduling.v1.PriorityClass",
    "io.k8s.api.scheduling.v1.PriorityClassList",
    "io.k8s.api.node.v1.RuntimeClass",
    "io.k8s.api.node.v1.RuntimeClassList",
    "io.k8s.api.coordination.v1.Lease",
    "io.k8s.api.coordination.v1.LeaseList",
    *(f"io.k8s.api.apps.v1.{kind}" for kind in ("DaemonSet", "ReplicaSet", "Deployment")),
    *(f"io.k8s.api.apps.v1.{kind}List" for kind in ("DaemonSet", "ReplicaSet", "Deployment")),
    *(f"io.k8s.api.rbac.v1.{kind}" for kind in ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")),
    *(
        f"io.k8s.api.rbac.v1.{kind}List"
        for kind in ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
    ),
    *(
        f"io.k8s.api.authorization.v1.{kind}"
        for kind in (
            "SelfSubjectAccessReview",
            "SelfSubjectRulesReview",
            "SubjectAccessReview",
            "LocalSubjectAccessReview",
        )
    ),
    "io.k8s.api.authentication.v1.SelfSubjectReview",
    *(
        f"io.k8s.api.core.v1.{kind}{suffix}"
        for kind in ("ConfigMap", "Secret", "ServiceAccount", "Service", "Endpoints")
        for suffix in ("", "List")
    ),
    "io.k8s.api.discovery.v1.EndpointSlice",
    "io.k8s.api.discovery.v1.EndpointSliceList",
    "io.k8s.api.apps.v1.StatefulSet",
    "io.k8s.api.apps.v1.StatefulSetList",
    "io.k8s.api.apps.v1.ControllerRevision",
    "io.k8s.api.apps.v1.ControllerRevisionList",
    *(f"io.k8s.api.batch.v1.{kind}{suffix}" for kind in ("Job", "CronJob") for suffix in ("", "List")),
    *(
        f"io.k8s.api.core.v1.{kind}{suffix}"
        for kind in ("PersistentVolume", "PersistentVolumeClaim")
        for suffix in ("", "List")
    ),
    *(
        f"io.k8s.api.storage.v1.{kind}{suffix}"
        for kind in ("StorageClass", "CSINode", "CSIDriver")
        for suffix in ("", "List")
    ),
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionList",
    _META + "DeleteOptions",
    _META + "Status",
    _META + "Patch",
]

QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"

_TAINT_EFFECTS = (
    "\n\nPossible enum values:\n"
    ' - `"NoExecute"` Evict any already-running pods that do not tolerate the taint. Currently enforced'
    " by NodeController.\n"
    ' - `"NoSchedule"` Do not allow new pods to schedule onto the node unless they tolerate the taint,'
    " but allow all pods submitted to Kubelet without going through the scheduler to start, and allow"
    " all already-running pods to continue running. Enforced by the scheduler.\n"
    ' - `"PreferNoSchedule"` Like TaintEffectNoSchedule, but the scheduler tries not to schedule new'
    " pods onto the node, rather than prohibiting new pods from scheduling onto the node entirely."
    " Enforced by the scheduler."
)
ENUM_OVERLAY: dict[tuple[str, str], tuple[list[str], str]] = {
    ("io.k8s.api.core.v1.Taint", "effect"): (["NoExecute", "NoSchedule", "PreferNoSchedule"], _TAINT_EFFECTS),
    ("io.k8s.api.core.v1.Toleration", "effect"): (
        ["NoExecute", "NoSchedule", "PreferNoSchedule"],
        _TAINT_EFFECTS,
    ),
    # v1.35 adds Lt and Gt (TaintTolerationComparisonOperators, alpha) to the enum's constants
    ("io.k8s.api.core.v1.Toleration", "operator"): (
        ["Equal", "Exists", "Gt", "Lt"],
        '\n\nPossible enum values:\n - `"Equal"`\n - `"Exists"`\n - `"Gt"`\n - `"Lt"`',
    ),
}

INT_OR_STRING_SCHEMA = {
    "description": "IntOrString is a type that can hold an int32 or a string.  When used in JSON or YAML"
    " marshalling and unmarshalling, it produces or consumes the inner type.  This allows you to have,"
    " for example, a JSON field that can accept a name or number.",
    "format": "int-or-string",
    "type": "string",
}


def load_definitions(source: Path) -> dict[str, Any]:
    if source.suffix == ".whl":
        with zipfile.ZipFile(source) as wheel:
            doc = json.loads(wheel.read(MEMBER))
    else:
        doc = json.loads(source.read_text())
    defs = doc.get("$defs") or doc["definitions"]
    assert isinstance(defs, dict)
    return defs


def convert(node: Any, *, in_properties: bool = False) -> Any:
    """One schema node in upstream's v3 shape (see the module docstring)."""
    if isinstance(node, list):
        return [convert(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "$ref":
            out[key] = PREFIX + value.rsplit("/", 1)[-1]
        elif key == "type" and isinstance(value, list):
            kept = [t for t in value if t != "null"]
            out[key] = kept[0] if len(kept) == 1 else kept
        elif key == "properties":
            out[key] = {name: _property(name, sub) for name, sub in value.items()}
        else:
            out[key] = convert(value)
    if "$ref" in out and len(out) > 1:
        ref = out.pop("$ref")
        out = {"allOf": [{"$ref": ref}], **out}
    return out


def _property(name: str, schema: Any) -> Any:
    converted = convert(schema)
    if name in ("apiVersion", "kind") and isinstance(converted, dict):
        converted.pop("enum", None)
    return converted


def references(node: Any) -> set[str]:
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str):
                found.add(ref.rsplit("/", 1)[-1])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def reachable(defs: dict[str, Any], roots: list[str]) -> list[str]:
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(references(defs[name]) - seen)
    return sorted(seen)


def build(defs: dict[str, Any], quantity_description: str) -> dict[str, Any]:
    schemas = {name: convert(defs[name]) for name in reachable(defs, ROOTS)}
    schemas[QUANTITY] = {"description": quantity_description, "type": "string"}
    if INT_OR_STRING in schemas:
        schemas[INT_OR_STRING] = dict(INT_OR_STRING_SCHEMA)
    for (schema_name, field), (values, tail) in ENUM_OVERLAY.items():
        prop = schemas[schema_name]["properties"][field]
        prop["description"] = prop["description"] + tail
        prop["enum"] = values
    return schemas


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    followed = VERSION_MODULE.read_text()
    if f'MINOR = "{MINOR}"' not in followed:
        print(f"{VERSION_MODULE} does not follow v1.{MINOR}: change MINOR here to its MINOR")
        return 1
    defs = load_definitions(Path(argv[1]))
    # The packaged Quantity lost its description; scripts/quantity.txt is upstream's (v3 documents).
    quantity = defs[QUANTITY].get("description") or Path(__file__).with_name("quantity.txt").read_text()
    schemas = build(defs, quantity.rstrip("\n"))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(schemas, sort_keys=True, separators=(",", ":")).encode()
    OUT.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    print(f"{OUT}: {len(schemas)} schemas, {len(data)} bytes JSON")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
