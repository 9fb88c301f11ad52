"""validate_pod_keeping_spec: for an update carrying the spec object of a pod validate accepted
(with the same feature gates), it reports exactly what validate(obj, old=old) reports."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.api.validation import validate, validate_pod_keeping_spec

JSON = dict[str, Any]
COMPARISON = {"TaintTolerationComparisonOperators": True}


def base_pod(operator: str = "Equal", **spec: Any) -> JSON:
    toleration = {"key": "k", "operator": operator, "value": "5", "effect": "NoSchedule"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "app-0",
            "namespace": "default",
            "generateName": "app-",
            "generation": 1,
            "labels": {"app": "a"},
            "annotations": {"note": "x"},
            "uid": "uid-0",
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "finalizers": ["x/a"],
        },
        "spec": {
            "containers": [{"name": "app", "image": "app"}],
            "tolerations": [toleration],
            "activeDeadlineSeconds": 30,
            "schedulingGates": [{"name": "wait"}],
            **spec,
        },
    }


#: Values each metadata field may take in an update: old's own (kept by identity), valid and
#: invalid ones, values equal to old's but of another type, absence.
FIELD_VALUES: dict[str, list[Any]] = {
    "name": ["app-0", "app-1", "App_0", "a" * 254],
    "generateName": ["app-", "App_", "", None],
    "namespace": ["default", "Bad_NS", "", None],
    "generation": [1, 1.0, True, -1, -1.0, "-1", None],
    "labels": [{"app": "a"}, {"app": "-a-"}, {"bad key!": "v"}, {"app": 1}, {"app": None}, {}, None],
    "annotations": [{"note": "x"}, {"Bad/Key/Three": "x"}, {"note": "x" * (257 * 1024)}, {"n": 5}, None],
    "ownerReferences": [
        [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": True}],
        [{"kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": True}],
        [{}],
        None,
    ],
    "finalizers": [["x/a"], ["x/a", "y/b"], ["bad name!"], ["orphan", "foregroundDeletion"], [], None],
    "uid": ["uid-0", "uid-1", "", None],
    "creationTimestamp": ["2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", None],
    "deletionTimestamp": ["2026-01-03T00:00:00Z", None],
    "deletionGracePeriodSeconds": [30, 0, None],
}
KEEP = object()


@st.composite
def updates(draw: st.DrawFn) -> tuple[JSON, JSON, dict[str, bool]]:
    gates = draw(st.sampled_from([{}, COMPARISON]))
    operator = "Lt" if gates else draw(st.sampled_from(["Equal", "Exists"]))
    old = base_pod(operator)
    if operator == "Exists":
        del old["spec"]["tolerations"][0]["value"]
    if draw(st.booleans()):  # being deleted: no new finalizers
        old["metadata"]["deletionTimestamp"] = "2026-01-03T00:00:00Z"
    assert validate(old, feature_gates=gates) == []
    meta = dict(old["metadata"])
    for name, values in FIELD_VALUES.items():
        value = draw(st.sampled_from([KEEP, *values]))
        if value is KEEP:
            continue
        if value is None:
            meta.pop(name, None)
        else:
            meta[name] = copy.deepcopy(value)
    return {**old, "metadata": meta}, old, gates


@settings(max_examples=300, deadline=None)
@given(updates())
def test_reports_what_validate_reports(case: tuple[JSON, JSON, dict[str, bool]]) -> None:
    new, old, gates = case
    assert validate_pod_keeping_spec(new, old) == validate(new, old=old, feature_gates=gates)


@pytest.mark.parametrize(
    ("gates_on_create", "gates_on_update"),
    [
        pytest.param(COMPARISON, COMPARISON, id="an Lt toleration accepted with the gate on stays accepted"),
        pytest.param({}, {}, id="a pod without comparison tolerations ignores the gate"),
    ],
)
def test_the_spec_part_stays_clean(
    gates_on_create: dict[str, bool], gates_on_update: dict[str, bool]
) -> None:
    old = base_pod("Lt" if gates_on_create else "Equal")
    assert validate(old, feature_gates=gates_on_create) == []
    adopted = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": True}]
    new = {**old, "metadata": {**old["metadata"], "ownerReferences": adopted}}
    assert validate_pod_keeping_spec(new, old) == []
    assert validate(new, old=old, feature_gates=gates_on_update) == []


def test_equal_but_not_identical_metadata_is_checked_afresh() -> None:
    old = base_pod()
    new = {**old, "metadata": copy.deepcopy(old["metadata"]) | {"labels": {"app": "-a-"}}}
    errors = validate_pod_keeping_spec(new, old)
    assert [e.field for e in errors] == ["metadata.labels"]
    assert errors == validate(new, old=old)


def _loaded_pod() -> JSON:
    """A pod as a scenario loads it: few metadata fields, no owner references."""
    pod = base_pod()
    pod["metadata"] = {
        k: pod["metadata"][k] for k in ("name", "namespace", "labels", "uid", "creationTimestamp")
    }
    return pod


_REFS = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": True}]


@pytest.mark.parametrize(
    "extra",
    [
        pytest.param({}, id="the metadata object itself"),
        pytest.param({"ownerReferences": _REFS}, id="an orphan adopted"),
        pytest.param(
            {"ownerReferences": [{"kind": "ReplicaSet"}]}, id="an orphan adopted by a bad reference"
        ),
        pytest.param({"ownerReferences": None}, id="null owner references"),
        pytest.param({"finalizers": ["bad name!"]}, id="another field added"),
        pytest.param(
            {"ownerReferences": _REFS, "finalizers": ["bad name!"]}, id="references and a field added"
        ),
        pytest.param({"labels": {"app": "-a-"}}, id="a field replaced"),
        pytest.param({"name": None}, id="a field emptied"),
    ],
)
def test_a_loaded_pods_usual_updates_report_what_validate_reports(extra: JSON) -> None:
    old = _loaded_pod()
    assert validate(old) == []
    new = {**old, "metadata": {**old["metadata"], **extra}} if extra else dict(old)
    assert validate_pod_keeping_spec(new, old) == validate(new, old=old)


def test_a_missing_field_beside_added_references_is_checked_afresh() -> None:
    old = _loaded_pod()
    meta = {k: v for k, v in old["metadata"].items() if k != "name"}
    new = {**old, "metadata": {**meta, "ownerReferences": _REFS, "generateName": "app-"}}
    assert validate_pod_keeping_spec(new, old) == validate(new, old=old) != []
