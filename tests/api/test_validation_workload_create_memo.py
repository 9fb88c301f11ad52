"""A workload's create (or spec update) records its spec checks' result for the very spec it
validated (validation.memo.STORED_PARTS), so the first status update keeping that spec (every
ReplicaSet's after its create) reuses it: the errors are those of validating fresh copies, for
valid and invalid specs, either gate, and the checks do not run again; a spec only equal to the
validated one (a copy) is checked afresh."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubetaint.api.features import resolve_gates
from kubetaint.api.validation import validate, workloads
from kubetaint.store.interface import JSON

LT = {"key": "k", "operator": "Lt", "value": "5", "effect": "NoSchedule"}


def workload(kind: str, template_spec: JSON | None = None, **spec: Any) -> JSON:
    labels = {"app": "web"}
    body: JSON = {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": "web", "namespace": "default", "uid": "u1", "resourceVersion": "3"},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "nginx"}], **(template_spec or {})},
            },
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
    pytest.param({"selector": {"matchLabels": {"app": "db"}}}, id="a selector not matching the template"),
    pytest.param({"template_spec": {"restartPolicy": "Never"}}, id="a restart policy other than Always"),
    pytest.param({"template_spec": {"tolerations": [LT]}}, id="an Lt toleration (the gate decides)"),
]
GATES = [pytest.param(None, id="default gates"), pytest.param("on", id="gate on")]


class Counting:
    """Counts the template checks run (validate_pod_template, once per spec check)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        plain = workloads.validate_pod_template

        def counting(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return plain(*args, **kwargs)

        monkeypatch.setattr(workloads, "validate_pod_template", counting)


@pytest.mark.usefixtures("default_mode")
@pytest.mark.parametrize("gates", GATES)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("spec", SPECS)
def test_the_first_status_update_after_a_create_reuses_the_creates_spec_checks(
    kind: str, spec: JSON, gates: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    feature_gates = resolve_gates({"TaintTolerationComparisonOperators": True}) if gates else None
    stored = workload(kind, **copy.deepcopy(spec))
    expected_create = validate(copy.deepcopy(stored), feature_gates=feature_gates)
    status_update = {**stored, "status": {"replicas": 1}}
    expected_update = validate(
        copy.deepcopy(status_update), old=copy.deepcopy(stored), feature_gates=feature_gates
    )
    counting = Counting(monkeypatch)
    assert validate(stored, feature_gates=feature_gates) == expected_create  # the create
    assert counting.calls == 1
    assert validate(status_update, old=stored, feature_gates=feature_gates) == expected_update
    gate_moved = "tolerations" in str(spec) and gates is None  # (the update ratchets the gate)
    assert counting.calls == (2 if gate_moved else 1)


@pytest.mark.parametrize("kind", KINDS)
def test_a_copy_of_the_validated_spec_is_checked_afresh(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    created = workload(kind)
    assert validate(created) == []
    stored = {**created, "spec": copy.deepcopy(created["spec"])}
    counting = Counting(monkeypatch)
    assert validate({**stored, "status": {}}, old=stored) == []
    assert counting.calls == 1


@pytest.mark.usefixtures("default_mode")
@pytest.mark.parametrize("kind", KINDS)
def test_a_spec_update_records_the_new_spec(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    stored = workload(kind)
    changed = {**stored, "spec": {**stored["spec"], "selector": {"matchLabels": {"app": "db"}}}}
    refused = validate(changed, old=stored)
    assert refused != []
    counting = Counting(monkeypatch)
    assert validate({**changed, "status": {}}, old=changed) == refused
    assert counting.calls == 0
