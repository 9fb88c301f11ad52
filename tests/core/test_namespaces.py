"""Namespace lifecycle decisions: the namespace strategy and storage rules, and the namespace
deleter's conditions ported from upstream's pkg/controller/namespace/deletion/
status_condition_utils_test.go (TestUpdateConditions, TestProcessContentTotals)."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.core import namespaces as ns

JSON = dict[str, Any]
NOW = "2026-01-01T00:00:00Z"
LATER = "2026-01-01T00:01:00Z"


def ok(kind: str) -> JSON:
    reason, message = ns.OK_CONDITIONS[kind]
    return {"type": kind, "status": "False", "reason": reason, "message": message}


def strip_times(conditions: list[JSON]) -> list[JSON]:
    return [{k: v for k, v in c.items() if k != "lastTransitionTime"} for c in conditions]


DISCOVERY, GV, CONTENT, REMAINING, FINALIZERS = ns.CONDITION_TYPES
GV_FAILURE = {"type": GV, "status": "True", "reason": "foo", "message": "bar"}


@pytest.mark.parametrize(
    ("new", "starting", "expected"),
    [
        pytest.param(
            [],
            [{"type": "unknown", "status": "True"}],
            [{"type": "unknown", "status": "True"}, *map(ok, ns.CONDITION_TYPES)],
            id="leave unknown",
        ),
        pytest.param(
            [],
            [{"type": DISCOVERY, "status": "True"}],
            list(map(ok, ns.CONDITION_TYPES)),
            id="replace with success",
        ),
        pytest.param(
            [],
            [{"type": GV, "status": "True"}, {"type": DISCOVERY, "status": "True"}],
            [ok(GV), ok(DISCOVERY), ok(CONTENT), ok(REMAINING), ok(FINALIZERS)],
            id="leave different order",
        ),
        pytest.param(
            [GV_FAILURE],
            [{"type": GV, "status": "False"}, {"type": DISCOVERY, "status": "True"}],
            [GV_FAILURE, ok(DISCOVERY), ok(CONTENT), ok(REMAINING), ok(FINALIZERS)],
            id="overwrite with failure",
        ),
        pytest.param(
            [GV_FAILURE],
            [{"type": DISCOVERY, "status": "True"}],
            [ok(DISCOVERY), GV_FAILURE, ok(CONTENT), ok(REMAINING), ok(FINALIZERS)],
            id="write new failure",
        ),
    ],
)
def test_update_conditions(new: list[JSON], starting: list[JSON], expected: list[JSON]) -> None:
    updated = ns.with_conditions({"status": {"conditions": starting}}, new, NOW)
    assert updated is not None
    assert strip_times(updated["status"]["conditions"]) == expected


def test_unchanged_conditions_are_no_update_and_keep_their_transition_time() -> None:
    first = ns.with_conditions({"status": {"phase": "Terminating"}}, [], NOW)
    assert first is not None and ns.with_conditions(first, [], LATER) is None
    failed = ns.with_conditions(first, [GV_FAILURE], LATER)
    assert failed is not None
    times = {c["type"]: c["lastTransitionTime"] for c in failed["status"]["conditions"]}
    assert times[GV] == LATER and times[DISCOVERY] == NOW


APPS = "apps.k8s.io"


@pytest.mark.parametrize(
    ("resources", "finalizers", "expected"),
    [
        pytest.param({}, {}, [], id="nothing"),
        pytest.param(
            {(APPS, "daemonsets"): 5, (APPS, "deployments"): 5},
            {},
            [
                {
                    "type": REMAINING,
                    "status": "True",
                    "reason": "SomeResourcesRemain",
                    "message": "Some resources are remaining: daemonsets.apps.k8s.io has 5 resource instances, "
                    "deployments.apps.k8s.io has 5 resource instances",
                }
            ],
            id="just remaining",
        ),
        pytest.param(
            {},
            {"service-catalog": 6, "kubedb": 5},
            [
                {
                    "type": FINALIZERS,
                    "status": "True",
                    "reason": "SomeFinalizersRemain",
                    "message": "Some content in the namespace has finalizers remaining: kubedb in 5 resource "
                    "instances, service-catalog in 6 resource instances",
                }
            ],
            id="just finalizers",
        ),
    ],
)
def test_process_content_totals(
    resources: dict[tuple[str, str], int], finalizers: dict[str, int], expected: list[JSON]
) -> None:
    assert ns.remaining_condition_messages(resources, finalizers) == expected


def test_content_failure_sorts_and_counts_the_errors() -> None:
    failure = ns.content_failure(["b failed", "a failed"])
    assert failure == {
        "type": CONTENT,
        "status": "True",
        "reason": "ContentDeletionFailed",
        "message": "Failed to delete all resource types, 2 remaining: a failed, b failed",
    }
    assert ns.content_failure([]) is None


@pytest.mark.parametrize(
    ("spec", "finalizers"),
    [
        pytest.param(None, ["kubernetes"], id="a namespace without finalizers gets kubernetes"),
        pytest.param(
            {"finalizers": ["example.com/x"]}, ["example.com/x", "kubernetes"], id="kubernetes is appended"
        ),
        pytest.param({"finalizers": ["kubernetes"]}, ["kubernetes"], id="kubernetes is not repeated"),
    ],
)
def test_prepare_for_create(spec: JSON | None, finalizers: list[str]) -> None:
    obj: JSON = {"metadata": {"name": "a"}, "status": {"phase": "Terminating"}}
    if spec is not None:
        obj["spec"] = spec
    created = ns.prepare_for_create(obj)
    assert created["spec"]["finalizers"] == finalizers and created["status"] == {"phase": "Active"}


def test_an_update_keeps_spec_finalizers_and_status_and_finalize_keeps_status() -> None:
    old = {"metadata": {"name": "a"}, "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
    new = {
        "metadata": {"name": "a", "labels": {"x": "y"}},
        "spec": {"finalizers": []},
        "status": {"phase": "X"},
    }
    assert ns.prepare_for_update(new, old) == {
        **new,
        "spec": {"finalizers": ["kubernetes"]},
        "status": old["status"],
    }
    assert ns.prepare_for_finalize(new, old) == {**new, "status": old["status"]}


@pytest.mark.parametrize(
    ("options", "finalizers"),
    [
        pytest.param({}, None, id="no options: metadata finalizers unchanged"),
        pytest.param({"propagationPolicy": "Orphan"}, ["orphan"], id="orphan adds the orphan finalizer"),
        pytest.param(
            {"propagationPolicy": "Foreground"}, ["foregroundDeletion"], id="foreground adds its finalizer"
        ),
        pytest.param(
            {"orphanDependents": False}, ["foregroundDeletion"], id="orphanDependents false is foreground"
        ),
    ],
)
def test_the_first_delete_marks_terminating(options: JSON, finalizers: list[str] | None) -> None:
    old = {"metadata": {"name": "a"}, "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
    marked = ns.first_delete(old, NOW, options)
    assert marked["metadata"]["deletionTimestamp"] == NOW and marked["status"]["phase"] == "Terminating"
    assert marked["metadata"].get("finalizers") == finalizers
    assert marked["spec"] == old["spec"]


@pytest.mark.parametrize(
    ("spec_finalizers", "meta_finalizers", "deleting", "deleted"),
    [
        pytest.param([], [], True, True, id="finalized and deleting: removed"),
        pytest.param(["kubernetes"], [], True, False, id="a spec finalizer keeps it"),
        pytest.param([], ["example.com/x"], True, False, id="a metadata finalizer keeps it"),
        pytest.param([], [], False, False, id="not being deleted: kept"),
    ],
)
def test_should_delete_during_update(
    spec_finalizers: list[str], meta_finalizers: list[str], deleting: bool, deleted: bool
) -> None:
    old: JSON = {"metadata": {"name": "a"}, "spec": {"finalizers": ["kubernetes"]}}
    if deleting:
        old["metadata"]["deletionTimestamp"] = NOW
    new = {"metadata": {"name": "a", "finalizers": meta_finalizers}, "spec": {"finalizers": spec_finalizers}}
    assert ns.should_delete_during_update(new, old) is deleted


def test_without_finalizer_removes_the_token_and_sorts_the_rest() -> None:
    obj = {"spec": {"finalizers": ["z", "kubernetes", "a", "z"]}}
    assert ns.without_finalizer(obj)["spec"]["finalizers"] == ["a", "z"]
