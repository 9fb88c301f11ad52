"""Generated and mutated HTTP requests for benchmarks/reliability.py's fuzz check: methods,
valid and mutated API paths, query parameters, headers, content types, credentials, and bodies
(JSON/YAML generated from scratch or by mutating valid objects, random bytes, deep nesting, YAML
alias bombs, NaN, protobuf-looking bytes, bodies over 3 MiB).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import yaml
from hypothesis import strategies as st

JSON = dict[str, Any]

VALID_PATHS = [
    "/healthz",
    "/readyz",
    "/version",
    "/api",
    "/apis",
    "/api/v1",
    "/apis/policy/v1",
    "/apis/coordination.k8s.io",
    "/openapi/v3",
    "/openapi/v3/api/v1",
    "/api/v1/nodes",
    "/api/v1/nodes/n1",
    "/api/v1/nodes/n1/status",
    "/api/v1/nodes/n2",
    "/api/v1/namespaces",
    "/api/v1/namespaces/default",
    "/api/v1/namespaces/default/status",
    "/api/v1/namespaces/default/finalize",
    "/api/v1/pods",
    "/api/v1/namespaces/default/pods",
    "/api/v1/namespaces/default/pods/p",
    "/api/v1/namespaces/default/pods/p/status",
    "/api/v1/namespaces/default/pods/p/binding",
    "/api/v1/namespaces/default/pods/p/eviction",
    "/api/v1/namespaces/default/bindings",
    "/api/v1/events",
    "/api/v1/namespaces/default/events",
    "/api/v1/watch/pods",
    "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
    "/apis/policy/v1/poddisruptionbudgets",
    "/apis/scheduling.k8s.io/v1/priorityclasses",
    "/apis/scheduling.k8s.io/v1/priorityclasses/high",
    "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
    "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1",
    "/apis/apps/v1/namespaces/default/daemonsets/ds",
]
CONTENT_TYPES = [
    "application/json",
    "application/json; charset=utf-8",
    "application/yaml",
    "application/merge-patch+json",
    "application/json-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
    "application/vnd.kubernetes.protobuf",
    "text/plain",
    "multipart/form-data; boundary=x",
    "APPLICATION/JSON",
    ";;;",
]
ACCEPTS = [
    "application/json",
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
    "application/json;as=Table;v=v9;g=meta.k8s.io",
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
    "application/vnd.kubernetes.protobuf",
    "*/*",
    "text/html",
    "application/json;as=",
]
QUERY_KEYS = [
    "watch",
    "labelSelector",
    "fieldSelector",
    "limit",
    "continue",
    "dryRun",
    "includeObject",
    "timeoutSeconds",
    "resourceVersion",
    "resourceVersionMatch",
    "allowWatchBookmarks",
    "fieldManager",
    "fieldValidation",
    "force",
    "propagationPolicy",
    "gracePeriodSeconds",
]
QUERY_VALUES = [
    "true",
    "True",
    "1",
    "0",
    "false",
    "-1",
    "99999999999999999999999",
    "9223372036854775808",
    "18446744073709551615",
    "",
    "All",
    "Strict",
    "Object",
    "spec.nodeName=n1",
    "metadata.name=n1",
    "a in (b,c),!d",
    "a=b=c",
    "x!=",
    "",
]
KEYS = [
    "metadata",
    "spec",
    "status",
    "name",
    "namespace",
    "generateName",
    "labels",
    "annotations",
    "resourceVersion",
    "uid",
    "kind",
    "apiVersion",
    "taints",
    "key",
    "value",
    "effect",
    "tolerations",
    "containers",
    "nodeName",
    "target",
    "op",
    "path",
    "from",
    "$patch",
    "$setElementOrder/taints",
    "$retainKeys",
    "deleteOptions",
    "preconditions",
    "items",
]


def valid_objects() -> list[JSON]:
    """Well-formed bodies for the served kinds, the seeds of mutation."""
    container = {"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}
    return [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p2", "labels": {"a": "b"}},
            "spec": {"containers": [container], "tolerations": [{"key": "k", "operator": "Exists"}]},
        },
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n3"},
            "spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]},
        },
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns2"}},
        {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p"}},
        {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": "p"},
            "target": {"kind": "Node", "name": "n1"},
        },
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "n1"},
            "spec": {"holderIdentity": "n1", "leaseDurationSeconds": 40},
        },
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 1000,
        },
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "pdb"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"a": "b"}}},
        },
        {"spec": {"taints": None}},
        {"metadata": {"labels": {"x": None}}, "spec": {"$setElementOrder/taints": [{"key": "k"}]}},
        {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background", "dryRun": ["All"]},
    ]


SEEDS = valid_objects()
JSON_PATCHES: list[Any] = [
    [{"op": "add", "path": "/spec/taints", "value": [{"key": "k", "effect": "NoExecute"}]}],
    [{"op": "remove", "path": "/metadata/labels"}],
    [{"op": "replace", "path": "/metadata/resourceVersion", "value": "1"}],
    [{"op": "test", "path": "/metadata/name", "value": "n1"}, {"op": "move", "from": "/spec", "path": "/x"}],
]
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from(
        ["NoSchedule", "NoExecute", "Exists", "Equal", "100m", "1Gi", "", "n1", "default", "1e3"]
    )
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), inner, max_size=5)
    ),
    max_leaves=20,
)


@st.composite
def mutated_object(draw: st.DrawFn) -> Any:
    """A valid object or patch with a few random edits: keys dropped, values replaced or added."""
    obj: Any = json.loads(json.dumps(draw(st.sampled_from(SEEDS + JSON_PATCHES))))
    for _ in range(draw(st.integers(0, 4))):
        containers = [obj]
        node = obj
        while isinstance(node, (dict, list)) and node and draw(st.booleans()):
            node = (
                node[draw(st.sampled_from(sorted(node)))]
                if isinstance(node, dict)
                else draw(st.sampled_from(node))
            )
            if isinstance(node, (dict, list)):
                containers.append(node)
        target = draw(st.sampled_from(containers))
        action = draw(st.sampled_from(["replace", "add", "drop"]))
        if isinstance(target, dict):
            if action == "drop" and target:
                del target[draw(st.sampled_from(sorted(target)))]
            else:
                target[draw(st.sampled_from(KEYS))] = draw(json_values)
        elif isinstance(target, list):
            if action == "drop" and target:
                target.pop(draw(st.integers(0, len(target) - 1)))
            else:
                target.append(draw(json_values))
    return obj


def _deep(depth: int) -> bytes:
    return b'{"metadata":{"name":"deep"},"spec":' + b'{"a":' * depth + b"1" + b"}" * depth + b"}"


ALIAS_BOMB = b"a: &a [x,x,x,x,x,x,x,x,x]\n" + b"".join(
    f"{c}: &{c} [{','.join(['*' + p] * 9)}]\n".encode() for p, c in zip("abcdefg", "bcdefgh", strict=True)
)
#: Issue 22's reproducer: a ~1.3 KB JSON patch that copies a list into itself twenty times.
SELF_COPYING_PATCH = json.dumps(
    [{"op": "add", "path": "/spec/x", "value": ["a" * 30] * 10}]
    + [{"op": "copy", "from": "/spec/x", "path": "/spec/x/-"}] * 20
).encode()
HUGE = b'{"metadata":{"name":"huge"},"padding":"' + b"x" * (3 * 1024 * 1024) + b'"}'
SPECIAL_BODIES = [
    b"",
    b"null",
    b"{}",
    b"[]",
    b'"text"',
    b"{" * 3,
    b'{"metadata":{"name":"nan"},"x":NaN}',
    b"\xff\xfe\x00",
    b"k8s\x00\x0a\x0b\x0a\x02v1\x12\x09Namespace",
    _deep(150),
    _deep(5_000),
    b"[" * 100_000 + b"]" * 100_000,
    ALIAS_BOMB,
    b"metadata: {name: y}\nx: !!python/object/apply:os.system [true]\n",
    b"metadata: {name: t}\nt: 2024-01-01T00:00:00Z\n1: int-key\n",
    HUGE,
    SELF_COPYING_PATCH,
    b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"euro"},"x\xe2\x82\xac":1,'
    b'"spec":{"containers":[{"name":"c","image":"i"}]}}',
    b"apiVersion: v1\nkind: Pod\nmetadata: {name: digits}\nspec: {priority: " + b"9" * 4301 + b"}\n",
    b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"grace"},"spec":{"nodeName":"n1",'
    b'"terminationGracePeriodSeconds":9223372036854775807,"containers":[{"name":"c","image":"i"}]}}',
    b'{"gracePeriodSeconds":9223372036854775808}',
]
bodies = st.one_of(
    mutated_object().map(lambda v: json.dumps(v).encode()),
    mutated_object().map(lambda v: yaml.safe_dump(v).encode()),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=64),
    st.sampled_from(SPECIAL_BODIES),
)
SEGMENT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="?#/\x00"),
    min_size=0,
    max_size=12,
)


@st.composite
def paths(draw: st.DrawFn) -> str:
    base = draw(st.sampled_from(VALID_PATHS))
    if draw(st.integers(0, 2)):
        return base
    segments = base.strip("/").split("/")
    action = draw(st.sampled_from(["replace", "insert", "drop", "dots", "long"]))
    index = draw(st.integers(0, len(segments) - 1))
    if action == "replace":
        segments[index] = draw(SEGMENT)
    elif action == "insert":
        segments.insert(index, draw(SEGMENT))
    elif action == "drop" and len(segments) > 1:
        segments.pop(index)
    elif action == "dots":
        segments.insert(index, draw(st.sampled_from([".", "..", "%2e%2e", "%2F", ""])))
    else:
        segments[index] = "n" * draw(st.integers(200, 5000))
    # non-printable and non-ASCII characters travel percent-encoded, as any client sends them
    return quote("/" + "/".join(segments), safe="/%:@!$&'()*+,;=-._~")


#: Printable ASCII without surrounding blanks (what HTTP/1.1 lets a client send at all).
METHODS = ["GET", "GET", "GET", "POST", "POST", "PUT", "PATCH", "PATCH", "PATCH", "DELETE", "HEAD", "OPTIONS"]
HEADER_TEXT = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40).map(
    str.strip
)


@dataclass(frozen=True)
class FuzzRequest:
    method: str
    path: str
    query: tuple[tuple[str, str], ...]
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def describe(self) -> str:
        return f"{self.method} {self.path} {self.query} {self.headers} body[:200]={self.body[:200]!r}"


def requests_for(tokens: list[str]) -> st.SearchStrategy[FuzzRequest]:
    authorizations = st.sampled_from(
        [None, "Bearer nope", "Basic YTpi", "bearer  x", *[f"Bearer {t}" for t in tokens + tokens[:1]]]
    )

    @st.composite
    def build(draw: st.DrawFn) -> FuzzRequest:
        method = draw(
            st.sampled_from(
                ["GET", "POST", "PUT", "PATCH", "DELETE", "GET", "PATCH", "HEAD", "OPTIONS", "TRACE"]
            )
        )
        query = draw(
            st.lists(
                st.tuples(
                    st.sampled_from(QUERY_KEYS) | HEADER_TEXT, st.sampled_from(QUERY_VALUES) | HEADER_TEXT
                ),
                max_size=4,
            )
        )
        headers: list[tuple[str, str]] = []
        content_type = draw(st.none() | st.sampled_from(CONTENT_TYPES) | HEADER_TEXT)
        if content_type is not None:
            headers.append(("Content-Type", content_type))
        accept = draw(st.none() | st.sampled_from(ACCEPTS) | HEADER_TEXT)
        if accept is not None:
            headers.append(("Accept", accept))
        authorization = draw(authorizations)
        if authorization is not None:
            headers.append(("Authorization", authorization))
        if draw(st.booleans()):
            name = draw(st.text(alphabet="abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=12))
            headers.append((f"X-{name}", draw(HEADER_TEXT)))
        body = draw(bodies) if method in ("POST", "PUT", "PATCH", "DELETE") or draw(st.booleans()) else b""
        return FuzzRequest(method, draw(paths()), tuple(query), tuple(headers), body)

    return build()
