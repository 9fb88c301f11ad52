"""SetDefaults_Pod: limits default the missing requests of containers and init containers."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.core.defaults import default_pod_requests


def pod(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p"}, "spec": spec}


@pytest.mark.parametrize(
    ("resources", "expected"),
    [
        pytest.param(
            {"limits": {"cpu": "1", "memory": "1Gi"}},
            {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1", "memory": "1Gi"}},
            id="limits only: requests equal the limits",
        ),
        pytest.param(
            {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "500m"}},
            {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "500m", "memory": "1Gi"}},
            id="an explicit request is kept, only the missing one is defaulted",
        ),
        pytest.param(
            {"limits": {"example.com/gpu": "1"}},
            {"limits": {"example.com/gpu": "1"}, "requests": {"example.com/gpu": "1"}},
            id="extended resources are defaulted too",
        ),
        pytest.param(
            {"requests": {"cpu": "1"}}, {"requests": {"cpu": "1"}}, id="requests only stay as they are"
        ),
        pytest.param({}, {}, id="no resources stay empty"),
    ],
)
def test_container_requests_default_to_limits(resources: dict[str, Any], expected: dict[str, Any]) -> None:
    original = pod(containers=[{"name": "c", "image": "x", "resources": resources}])
    snapshot = repr(original)
    defaulted = default_pod_requests(original)
    assert defaulted["spec"]["containers"][0]["resources"] == expected
    assert repr(original) == snapshot  # the input is never modified


def test_init_containers_are_defaulted_and_an_unchanged_pod_is_returned_as_is() -> None:
    init = {"name": "i", "image": "x", "resources": {"limits": {"memory": "64Mi"}}}
    defaulted = default_pod_requests(pod(containers=[], initContainers=[init]))
    assert defaulted["spec"]["initContainers"][0]["resources"]["requests"] == {"memory": "64Mi"}
    untouched = pod(containers=[{"name": "c", "image": "x"}])
    assert default_pod_requests(untouched) is untouched
    assert default_pod_requests({"spec": 5}) == {"spec": 5}


def test_a_container_list_changed_in_place_between_calls_is_defaulted_afresh() -> None:
    """Python API callers may reuse and change their own lists between writes."""
    containers = [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]
    assert default_pod_requests(pod(containers=containers))["spec"]["containers"] is containers
    containers[0] = {"name": "c", "image": "x", "resources": {"limits": {"cpu": "2"}}}
    defaulted = default_pod_requests(pod(containers=containers))
    assert defaulted["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "2"}
