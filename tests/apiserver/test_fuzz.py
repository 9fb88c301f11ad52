"""Fuzzed requests never produce a 500: any body, content type, method and query on the served
paths gets a 2xx or a 4xx kube Status (issue 8, "Bad input")."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from kubetaint.clock import VirtualClock

from .builders import make_app, make_store, namespace, node, pod

CLOCK = VirtualClock()
STORE = make_store(CLOCK)
STORE.create("namespaces", namespace("default"))
STORE.create("nodes", node("n1"))
STORE.create("pods", pod("p"))
CLIENT = TestClient(make_app(STORE, CLOCK), raise_server_exceptions=False)

PATHS = [
    "/api/v1/nodes",
    "/api/v1/nodes/n1",
    "/api/v1/nodes/n1/status",
    "/api/v1/namespaces/default/pods",
    "/api/v1/namespaces/default/pods/p",
    "/api/v1/namespaces/default/pods/p/status",
    "/api/v1/namespaces/default/pods/p/binding",
    "/api/v1/namespaces/default/pods/p/eviction",
    "/api/v1/namespaces/default/bindings",
    "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
    "/apis/coordination.k8s.io/v1/namespaces/default/leases/x",
]
CONTENT_TYPES = [
    "",
    "application/json",
    "application/yaml",
    "application/merge-patch+json",
    "application/json-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
    "application/vnd.kubernetes.protobuf",
    "text/plain",
]
scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "metadata",
                    "spec",
                    "status",
                    "name",
                    "op",
                    "path",
                    "value",
                    "target",
                    "$patch",
                    "containers",
                    "kind",
                    "apiVersion",
                    "resourceVersion",
                    "labels",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)
bodies = json_values.map(lambda v: json.dumps(v).encode()) | st.binary(max_size=30)
queries = st.dictionaries(
    st.sampled_from(
        [
            "watch",
            "labelSelector",
            "fieldSelector",
            "limit",
            "continue",
            "dryRun",
            "includeObject",
            "timeoutSeconds",
            "resourceVersion",
            "fieldManager",
            "fieldValidation",
        ]
    ),
    st.text(max_size=6),
    max_size=3,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE"]),
    path=st.sampled_from(PATHS),
    content_type=st.sampled_from(CONTENT_TYPES),
    body=bodies,
    query=queries,
)
def test_no_request_gets_a_500(
    method: str, path: str, content_type: str, body: bytes, query: dict[str, Any]
) -> None:
    if method == "GET" and "watch" in query:
        query["timeoutSeconds"] = "1"  # a watch that does start must end promptly
        query["resourceVersion"] = "999999"
    headers = {"Content-Type": content_type} if content_type else {}
    response = CLIENT.request(method, path, content=body, headers=headers, params=query)
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        assert response.json()["kind"] == "Status"
