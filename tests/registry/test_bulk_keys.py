"""The pod admission memo's key of a pod's fields other than metadata and spec is the repr of
those fields in their order (what the comprehension over the pod's items gives)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.registry.bulk import _rest

VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=10,
)
KEYS = st.sampled_from(["apiVersion", "kind", "metadata", "spec", "status", "x"]) | st.text(max_size=3)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(KEYS, VALUES, max_size=6))
def test_the_rest_of_a_pod_is_the_repr_of_its_other_fields_in_order(pod: dict[str, Any]) -> None:
    expected = repr({k: v for k, v in pod.items() if k not in ("metadata", "spec")})
    assert _rest(pod) == expected


def test_metadata_and_spec_are_left_out_wherever_they_stand() -> None:
    pod = {"status": {"phase": "Running"}, "spec": {}, "kind": "Pod", "metadata": {}, "apiVersion": "v1"}
    assert _rest(pod) == "{'status': {'phase': 'Running'}, 'kind': 'Pod', 'apiVersion': 'v1'}"
    assert list(pod) == ["status", "spec", "kind", "metadata", "apiVersion"], "the pod is not changed"
