"""Pod specs found clean are remembered by their content without nodeName (loaded pods differ from
their template only there): every result must be what validating afresh gives, whatever came
before, including specs that look alike but differ in a JSON type or in an invalid nodeName."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.api.validation import kinds
from kubetaint.api.validation.podspec import validate_containers_only_for_pod, validate_pod_spec

JSON = dict[str, Any]
TEMPLATE: JSON = {
    "containers": [{"name": "app", "image": "app", "resources": {"requests": {"cpu": "100m"}}}],
    "tolerations": [
        {
            "key": "node.kubernetes.io/not-ready",
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": 300,
        }
    ],
    "priority": 0,
}


def fresh(spec: JSON, allow: bool = False) -> list[Any]:
    return [*validate_pod_spec(spec, "spec", allow_comparison=allow), *validate_containers_only_for_pod(spec)]


def with_(**fields: Any) -> JSON:
    spec = copy.deepcopy(TEMPLATE)
    for key, value in fields.items():
        if value is None:
            spec.pop(key, None)
        else:
            spec[key] = value
    return spec


VARIANTS = [
    pytest.param(with_(nodeName="node-2"), id="another valid node name"),
    pytest.param(with_(nodeName=None), id="no node name"),
    pytest.param(with_(nodeName="Node_2"), id="an invalid node name"),
    pytest.param(with_(nodeName="-bad-"), id="a node name that is not a DNS subdomain"),
    pytest.param(with_(nodeName="n", activeDeadlineSeconds=0), id="an invalid activeDeadlineSeconds"),
    pytest.param(with_(nodeName="n", activeDeadlineSeconds=True), id="a boolean where a number goes"),
    pytest.param(with_(nodeName="n", activeDeadlineSeconds=1.0), id="a float where an integer goes"),
    pytest.param(
        with_(nodeName="n", tolerations=[{"key": "k", "operator": "Exists", "value": "v"}]),
        id="an invalid toleration",
    ),
    pytest.param(
        with_(nodeName="n", containers=[{"name": "app", "image": " app"}]), id="a padded image on a pod"
    ),
    pytest.param(with_(nodeName="n", restartPolicy="Sometimes"), id="an unsupported restart policy"),
]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("allow", [False, True], ids=["comparison off", "comparison on"])
def test_after_a_clean_spec_a_variant_gets_its_own_errors(variant: JSON, allow: bool) -> None:
    clean = with_(nodeName="node-1")
    assert kinds._pod_spec_errors(clean, allow) == [] == fresh(clean, allow)
    assert kinds._pod_spec_errors(variant, allow) == fresh(variant, allow)
    # and once more, after the variant itself may have been remembered
    assert kinds._pod_spec_errors(copy.deepcopy(variant), allow) == fresh(variant, allow)


@pytest.mark.usefixtures("default_mode")
def test_a_clean_spec_is_remembered_and_an_invalid_one_is_not() -> None:
    kinds._CLEAN_SPECS.clear()
    kinds._pod_spec_errors(with_(nodeName="node-1"), False)
    kinds._pod_spec_errors(with_(nodeName="Node_1"), False)
    kinds._pod_spec_errors(with_(nodeName="n", restartPolicy="Sometimes"), False)
    assert len(kinds._CLEAN_SPECS) == 1


JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(-3, 3), st.text(max_size=4))


@settings(max_examples=200, deadline=None)
@given(
    field=st.sampled_from(["activeDeadlineSeconds", "restartPolicy", "priorityClassName", "nodeName"]),
    first=JSON_SCALARS,
    second=JSON_SCALARS,
)
def test_any_two_specs_in_a_row_get_fresh_results(field: str, first: Any, second: Any) -> None:
    for value in (first, second):
        spec = with_(**{field: value}) if value is not None else with_(**{field: None})
        assert kinds._pod_spec_errors(spec, False) == fresh(spec, False)
