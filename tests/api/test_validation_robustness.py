"""validate() never crashes on JSON of the wrong shape: it returns field errors or nothing."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetaint.api.validation import FieldError, supported_kinds, validate

leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=False),
    st.sampled_from(["", "x", "-1", "1Gi", "Lt", "NoExecute"]),
)
names = st.sampled_from(
    ["metadata", "spec", "status", "name", "namespace", "labels", "annotations", "taints", "tolerations", "containers",
     "key", "value", "effect", "operator", "tolerationSeconds", "resources", "requests", "limits", "capacity",
     "selector", "template", "matchLabels", "target", "scheduling", "handler", "minAvailable", "replicas", "image"]
)  # fmt: skip
json_values = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(names, inner, max_size=4),
    max_leaves=20,
)


def _api_version(group: str) -> str:
    return f"{group}/v1" if group else "v1"


@settings(suppress_health_check=[HealthCheck.too_slow], max_examples=200)
@given(st.sampled_from(supported_kinds()), st.dictionaries(names, json_values, max_size=4), st.booleans())
def test_validate_returns_field_errors_for_any_shape(
    kind: tuple[str, str], body: dict[str, Any], update: bool
) -> None:
    group, name = kind
    obj = {**body, "apiVersion": _api_version(group), "kind": name}
    errors = validate(obj, old=obj if update else None)
    assert all(isinstance(e, FieldError) and str(e) == f"{e.field}: {e.message}" for e in errors)


ODD_SHAPES = [
    {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": [1],
        "spec": {"taints": [5, "x", None]},
        "status": {"capacity": {"cpu": [1]}},
    },
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": 5},
        "spec": {"containers": "x", "tolerations": [{"operator": 5}]},
    },
    {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "spec": {
            "selector": {"matchLabels": [1], "matchExpressions": "x"},
            "template": {"metadata": {"labels": [1]}},
        },
    },
    {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "spec": {"selector": {"matchExpressions": [1, {"values": 3}]}, "template": 4},
    },
    {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "spec": {"minAvailable": [1], "maxUnavailable": 1.5},
    },
]


def test_odd_shapes_do_not_crash() -> None:
    for obj in ODD_SHAPES:
        assert all(isinstance(e, FieldError) for e in validate(obj))
