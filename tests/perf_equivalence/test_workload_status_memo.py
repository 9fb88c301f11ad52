"""A workload update keeping the stored spec object (a ReplicaSet or DaemonSet status update)
reuses the spec checks' result for that very spec (validation.memo.STORED_PARTS): the errors are
those of validating a fresh copy, for valid and invalid specs, with and without the comparison
operators gate, and a changed spec is validated afresh."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubetaint.api.features import resolve_gates
from kubetaint.api.validation import validate
from kubetaint.store.interface import JSON


def workload(kind: str, **spec: Any) -> JSON:
    labels = {"app": "web"}
    template_spec = {"containers": [{"name": "c", "image": "nginx"}], **spec.pop("template_spec", {})}
    body: JSON = {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": "web", "namespace": "default", "uid": "u1", "resourceVersion": "3"},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": template_spec},
            **spec,
        },
    }
    if kind != "DaemonSet":
        body["spec"].setdefault("replicas", 2)
    return body


KINDS = ["ReplicaSet", "DaemonSet", "Deployment"]
SPECS = [
    pytest.param({}, id="a valid spec"),
    pytest.param({"replicas": -1}, id="negative replicas"),
    pytest.param({"selector": {}}, id="an empty selector"),
    pytest.param({"selector": {"matchLabels": {"app": "db"}}}, id="a selector not matching the template"),
    pytest.param({"template_spec": {"restartPolicy": "Never"}}, id="a restart policy other than Always"),
    pytest.param({"template_spec": {"containers": [{"name": "C_", "image": ""}]}}, id="a bad container"),
    pytest.param(
        {
            "template_spec": {
                "tolerations": [{"key": "k", "operator": "Lt", "value": "5", "effect": "NoSchedule"}]
            }
        },
        id="an Lt toleration (the comparison operators gate)",
    ),
]


@pytest.mark.parametrize("gates", [pytest.param(None, id="default gates"), pytest.param("on", id="gate on")])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("spec", SPECS)
def test_a_status_update_keeping_the_stored_spec_validates_as_a_fresh_copy_does(
    kind: str, spec: JSON, gates: str | None
) -> None:
    feature_gates = resolve_gates({"TaintTolerationComparisonOperators": True}) if gates else None
    stored = workload(kind, **copy.deepcopy(spec))
    for round_ in range(3):  # the first computes the spec checks, the later ones reuse them
        same_spec = {**stored, "status": {"replicas": round_, "observedGeneration": 1}}
        fresh = copy.deepcopy(same_spec)
        expected = validate(fresh, old=copy.deepcopy(stored), feature_gates=feature_gates)
        assert validate(same_spec, old=stored, feature_gates=feature_gates) == expected


@pytest.mark.parametrize("kind", KINDS)
def test_metadata_errors_are_found_though_the_spec_checks_are_reused(kind: str) -> None:
    stored = workload(kind)
    validate({**stored, "status": {}}, old=stored)
    relabelled = {**stored, "metadata": {**stored["metadata"], "labels": {"bad key!": "x"}}}
    errors = validate(relabelled, old=stored)
    assert [e.field for e in errors] == ["metadata.labels"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_changed_spec_is_validated_afresh(kind: str) -> None:
    stored = workload(kind)
    assert validate({**stored, "status": {}}, old=stored) == []
    broken = {**stored, "spec": {**stored["spec"], "selector": {}}}
    assert validate(broken, old=stored) != []


@pytest.mark.parametrize("kind", KINDS)
def test_the_reused_result_is_the_one_for_the_gate_in_force(kind: str) -> None:
    lt = {"key": "k", "operator": "Lt", "value": "5", "effect": "NoSchedule"}
    stored = {**workload(kind), "metadata": {"name": "web", "namespace": "default"}}
    stored["spec"]["template"]["spec"]["tolerations"] = [lt]
    on = resolve_gates({"TaintTolerationComparisonOperators": True})
    for gates in (None, on, None, on):
        same_spec = {**stored, "status": {}}
        expected = validate(copy.deepcopy(same_spec), feature_gates=gates)  # as created: no ratcheting
        fresh = validate(copy.deepcopy(same_spec), old=copy.deepcopy(stored), feature_gates=gates)
        assert validate(same_spec, old=stored, feature_gates=gates) == fresh
        assert (expected == []) == (gates is not None)
