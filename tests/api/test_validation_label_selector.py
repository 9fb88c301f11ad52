"""metav1 LabelSelector checks: the selector module on its own, the law tying it to
LabelSelectorAsSelector, and where upstream applies it (apps/v1 workloads, PodDisruptionBudgets)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubetaint.api.validation import validate
from kubetaint.api.validation.labelselector import (
    go_label_selector,
    has_invalid_label_value,
    selector_converts,
    validate_label_selector,
)

from .builders import workload

VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
    "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
SEL = "spec.selector"


def _strings(selector: Any, **kwargs: Any) -> list[str]:
    return [str(e) for e in validate_label_selector(selector, SEL, **kwargs)]


SELECTOR_CASES = [
    pytest.param(None, [], id="an absent selector has nothing to check"),
    pytest.param({}, [], id="an empty selector is valid as a selector"),
    pytest.param({"matchLabels": {"app": "web"}}, [], id="plain match labels pass"),
    pytest.param(
        {"matchLabels": {"app": "a b"}},
        [f'spec.selector.matchLabels: Invalid value: "a b": {VALUE}'],
        id="a match label value is a label value, reported at matchLabels",
    ),
    pytest.param(
        {"matchLabels": {"bad key": "x"}},
        [f'spec.selector.matchLabels: Invalid value: "bad key": {NAME_PART}'],
        id="a match label key is a qualified name, reported at matchLabels",
    ),
    pytest.param(
        {"matchExpressions": [{"key": "app", "operator": "In", "values": ["a", "b"]}]},
        [],
        id="In with values passes",
    ),
    pytest.param(
        {"matchExpressions": [{"key": "app", "operator": "NotIn"}]},
        [
            "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
        ],
        id="NotIn needs values",
    ),
    pytest.param(
        {"matchExpressions": [{"key": "app", "operator": "Exists", "values": ["x"]}]},
        [
            "spec.selector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is "
            "'Exists' or 'DoesNotExist'"
        ],
        id="Exists takes no values",
    ),
    pytest.param(
        {"matchExpressions": [{"key": "app", "operator": "Gt", "values": ["1"]}]},
        ['spec.selector.matchExpressions[0].operator: Invalid value: "Gt": not a valid selector operator'],
        id="Gt is a node selector operator, not a label selector one",
    ),
    pytest.param(
        {"matchExpressions": [{"key": "", "operator": "DoesNotExist"}]},
        [
            'spec.selector.matchExpressions[0].key: Invalid value: "": name part must be non-empty',
            f'spec.selector.matchExpressions[0].key: Invalid value: "": {NAME_PART}',
        ],
        id="an empty key fails both name checks",
    ),
    pytest.param(
        {"matchExpressions": [{"key": "app", "operator": "In", "values": ["ok", "not ok"]}]},
        [f'spec.selector.matchExpressions[0].values[1]: Invalid value: "not ok": {VALUE}'],
        id="each requirement value is a label value, at its own index",
    ),
    pytest.param(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "x", "operator": "Bogus"}, {"key": "y", "operator": "In"}],
        },
        [
            'spec.selector.matchExpressions[0].operator: Invalid value: "Bogus": not a valid selector operator',
            "spec.selector.matchExpressions[1].values: Required value: must be specified when `operator` is "
            "'In' or 'NotIn'",
        ],
        id="every requirement is checked in order",
    ),
]


@pytest.mark.parametrize(("selector", "expected"), SELECTOR_CASES)
def test_label_selector(selector: Any, expected: list[str]) -> None:
    assert _strings(selector) == expected


def test_old_invalid_values_may_be_kept() -> None:
    selector = {"matchExpressions": [{"key": "app", "operator": "In", "values": ["not ok"]}]}
    assert has_invalid_label_value(selector)
    assert _strings(selector, allow_invalid_values=True) == []
    assert not has_invalid_label_value(
        {"matchExpressions": [{"key": "app", "operator": "In", "values": ["ok"]}]}
    )
    assert not has_invalid_label_value(None)


_TEXT = st.sampled_from(["app", "a b", "", "x/y", "-bad", "ok.v", "Z" * 64])
_REQUIREMENT = st.fixed_dictionaries(
    {"key": _TEXT, "operator": st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", ""])},
    optional={"values": st.lists(_TEXT, max_size=3)},
)
_SELECTOR = st.fixed_dictionaries(
    {},
    optional={
        "matchLabels": st.dictionaries(_TEXT, _TEXT, max_size=3),
        "matchExpressions": st.lists(_REQUIREMENT, max_size=3),
    },
)


@given(_SELECTOR)
def test_a_selector_converts_exactly_when_it_validates(selector: dict[str, Any]) -> None:
    """LabelSelectorAsSelector refuses exactly what strict ValidateLabelSelector reports."""
    assert selector_converts(selector) == (validate_label_selector(selector, SEL) == [])


def test_go_rendering_of_a_selector() -> None:
    selector = {"matchLabels": {"b": "2", "a": "1"}, "matchExpressions": [{"key": "k", "operator": "Exists"}]}
    assert go_label_selector(selector) == (
        '&v1.LabelSelector{MatchLabels:map[string]string{"a":"1", "b":"2"}, '
        'MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:"k", '
        'Operator:"Exists", Values:[]string(nil)}}}'
    )


BAD_OPERATOR = {"matchExpressions": [{"key": "app", "operator": "Foo"}]}
BAD_OPERATOR_GO = (
    "&v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement"
    '{v1.LabelSelectorRequirement{Key:"app", Operator:"Foo", Values:[]string(nil)}}}'
)
MISMATCH = 'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`'


def _without_selector(kind: str) -> dict[str, Any]:
    obj = workload(kind)
    del obj["spec"]["selector"]
    return obj


WORKLOAD_CASES = [
    pytest.param(
        workload("ReplicaSet", selector=BAD_OPERATOR, template={"metadata": {}, "spec": {}}),
        [
            'spec.selector.matchExpressions[0].operator: Invalid value: "Foo": not a valid selector operator',
            f"spec.selector: Invalid value: {BAD_OPERATOR_GO}: invalid label selector",
        ],
        id="a replica set selector that does not convert skips the template checks",
    ),
    pytest.param(
        workload("Deployment", selector=BAD_OPERATOR),
        [
            'spec.selector.matchExpressions[0].operator: Invalid value: "Foo": not a valid selector operator',
            f"spec.selector: Invalid value: {BAD_OPERATOR_GO}: invalid label selector",
        ],
        id="so does a deployment's",
    ),
    pytest.param(
        workload("DaemonSet", selector=BAD_OPERATOR, labels={"other": "x"}),
        ['spec.selector.matchExpressions[0].operator: Invalid value: "Foo": not a valid selector operator'],
        id="a daemon set selector that does not convert skips only the labels match",
    ),
    pytest.param(
        _without_selector("ReplicaSet"),
        ["spec.selector: Required value", MISMATCH],
        id="a replica set without a selector: required, and it matches no labels",
    ),
    pytest.param(
        _without_selector("DaemonSet"),
        [MISMATCH],
        id="a daemon set without a selector matches no labels (upstream does not require one)",
    ),
    pytest.param(
        workload("DaemonSet", selector={}),
        [
            "spec.selector: Invalid value: &v1.LabelSelector{MatchLabels:map[string]string(nil), "
            "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for daemonset"
        ],
        id="an empty daemon set selector matches everything but is refused",
    ),
    pytest.param(
        workload(
            "ReplicaSet", selector={"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]}
        ),
        [],
        id="an expression selector matching the template passes",
    ),
    pytest.param(
        workload("DaemonSet", selector={"matchLabels": {"app": "db"}}, template={"spec": {"containers": []}}),
        [
            "spec.template.metadata.labels: Invalid value: map[string]string(nil): "
            "`selector` does not match template `labels`",
            "spec.template.spec.containers: Required value",
        ],
        id="template without labels renders a nil map",
    ),
]


@pytest.mark.parametrize(("obj", "expected"), WORKLOAD_CASES)
def test_workload_selectors(obj: dict[str, Any], expected: list[str]) -> None:
    assert [str(e) for e in validate(obj)] == expected


def _pdb(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "b", "namespace": "default"},
        "spec": spec,
    }


PDB_CASES = [
    pytest.param(_pdb(selector={"matchLabels": {"app": "web"}}, minAvailable=1), [], id="a plain PDB passes"),
    pytest.param(
        _pdb(selector={"matchExpressions": [{"key": "app", "operator": "In"}]}),
        [
            "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
        ],
        id="a PDB selector is validated",
    ),
    pytest.param(
        _pdb(unhealthyPodEvictionPolicy="Sometimes"),
        [
            'spec.unhealthyPodEvictionPolicy: Unsupported value: "Sometimes": supported values: "AlwaysAllow", "IfHealthyBudget"'
        ],
        id="an unknown unhealthy pod eviction policy",
    ),
    pytest.param(_pdb(unhealthyPodEvictionPolicy="AlwaysAllow"), [], id="AlwaysAllow is a policy"),
]


@pytest.mark.parametrize(("obj", "expected"), PDB_CASES)
def test_pdb_selectors(obj: dict[str, Any], expected: list[str]) -> None:
    assert [str(e) for e in validate(obj)] == expected


def test_a_pdb_update_keeps_old_invalid_values() -> None:
    selector = {"matchExpressions": [{"key": "app", "operator": "In", "values": ["not ok"]}]}
    old = _pdb(selector=selector)
    old["metadata"].update(resourceVersion="1", uid="u", creationTimestamp="2026-01-01T00:00:00Z")
    new = _pdb(selector=selector, minAvailable=1)
    new["metadata"] = dict(old["metadata"])
    assert [str(e) for e in validate(new, old=old)] == []
    assert [e.field for e in validate(new)] == ["spec.selector.matchExpressions[0].values[0]"]
