"""Table columns and rows of Deployments, ReplicaSets, DaemonSets and RuntimeClasses, and the
column definitions of every served kind, against upstream's printers.go and the cases of its
printers_test.go (TestPrintDeployment, TestPrintReplicaSet, TestPrintDaemonSet,
TestPrintRuntimeClass), ported as data."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.apiserver.printers import PRINTERS, printer_for
from kubetaint.apiserver.workload_printers import format_label_selector, format_labels
from kubetaint.clock.base import format_time

NOW = 1_700_000_000.0
WIDE_WORKLOAD = ["Containers", "Images", "Selector"]


def _meta(name: str, age: float) -> dict[str, Any]:
    return {"name": name, "namespace": "default", "creationTimestamp": format_time(NOW - age)}


def _template(*containers: tuple[str, str], node_selector: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": n, "image": i} for n, i in containers]}
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    return {"metadata": {"labels": {"foo": "bar"}}, "spec": spec}


TWO_CONTAINERS = (("fake-container1", "fake-image1"), ("fake-container2", "fake-image2"))
FOO_BAR = {"matchLabels": {"foo": "bar"}}


def deployment(replicas: int | None, status: dict[str, int]) -> dict[str, Any]:
    spec: dict[str, Any] = {"template": _template(*TWO_CONTAINERS), "selector": FOO_BAR}
    if replicas is not None:
        spec["replicas"] = replicas
    return {"metadata": _meta("test1", 0), "spec": spec, "status": status}


def replica_set(**status: int) -> dict[str, Any]:
    spec = {"replicas": 5, "template": _template(("test-container", "test-image")), "selector": FOO_BAR}
    return {"metadata": _meta("test1", 0), "spec": spec, "status": status}


def daemon_set(node_selector: dict[str, str] | None = None, **status: int) -> dict[str, Any]:
    spec = {"template": _template(*TWO_CONTAINERS, node_selector=node_selector), "selector": FOO_BAR}
    return {"metadata": _meta("test1", 0), "spec": spec, "status": status}


@pytest.mark.parametrize(
    ("resource", "obj", "cells"),
    [
        pytest.param(
            "deployments.apps",
            deployment(
                5, {"replicas": 10, "updatedReplicas": 2, "availableReplicas": 1, "unavailableReplicas": 4}
            ),
            [
                "test1",
                "0/5",
                2,
                1,
                "0s",
                "fake-container1,fake-container2",
                "fake-image1,fake-image2",
                "foo=bar",
            ],
            id="deployment: ready/desired, up-to-date and available",
        ),
        pytest.param(
            "deployments.apps",
            deployment(None, {"readyReplicas": 1}),
            [
                "test1",
                "1/1",
                0,
                0,
                "0s",
                "fake-container1,fake-container2",
                "fake-image1,fake-image2",
                "foo=bar",
            ],
            id="deployment without replicas is desired 1 as after defaulting",
        ),
        pytest.param(
            "replicasets.apps",
            replica_set(replicas=5, readyReplicas=2),
            ["test1", 5, 5, 2, "0s", "test-container", "test-image", "foo=bar"],
            id="replica set: desired, current and ready",
        ),
        pytest.param(
            "daemonsets.apps",
            daemon_set(
                currentNumberScheduled=2, desiredNumberScheduled=3, numberReady=1, updatedNumberScheduled=2
            ),
            [
                "test1",
                3,
                2,
                1,
                2,
                0,
                "<none>",
                "0s",
                "fake-container1,fake-container2",
                "fake-image1,fake-image2",
                "foo=bar",
            ],
            id="daemon set without a node selector prints <none>",
        ),
        pytest.param(
            "daemonsets.apps",
            daemon_set(node_selector={"zone": "a", "disk": "ssd"}, numberAvailable=4),
            [
                "test1",
                0,
                0,
                0,
                0,
                4,
                "disk=ssd,zone=a",
                "0s",
                "fake-container1,fake-container2",
                "fake-image1,fake-image2",
                "foo=bar",
            ],
            id="daemon set node selector is sorted by key",
        ),
        pytest.param(
            "runtimeclasses.node.k8s.io",
            {"metadata": {"name": "rc1", "creationTimestamp": format_time(NOW - 200)}, "handler": "h1"},
            ["rc1", "h1", "3m20s"],
            id="runtime class: handler",
        ),
    ],
)
def test_rows_match_upstream(resource: str, obj: dict[str, Any], cells: list[Any]) -> None:
    columns, printer = printer_for(resource)
    row = printer(obj, NOW)
    assert row == cells
    assert len(row) == len(columns)


def _names(columns: list[dict[str, Any]], priority: int) -> list[str]:
    return [c["name"] for c in columns if c["priority"] == priority]


@pytest.mark.parametrize(
    ("resource", "normal", "wide"),
    [
        pytest.param(
            "deployments.apps",
            ["Name", "Ready", "Up-to-date", "Available", "Age"],
            WIDE_WORKLOAD,
            id="deployments",
        ),
        pytest.param(
            "replicasets.apps",
            ["Name", "Desired", "Current", "Ready", "Age"],
            WIDE_WORKLOAD,
            id="replicasets",
        ),
        pytest.param(
            "daemonsets.apps",
            ["Name", "Desired", "Current", "Ready", "Up-to-date", "Available", "Node Selector", "Age"],
            WIDE_WORKLOAD,
            id="daemonsets",
        ),
        pytest.param("runtimeclasses.node.k8s.io", ["Name", "Handler", "Age"], [], id="runtimeclasses"),
        pytest.param(
            "nodes",
            ["Name", "Status", "Roles", "Age", "Version"],
            ["Internal-IP", "External-IP", "OS-Image", "Kernel-Version", "Container-Runtime"],
            id="nodes",
        ),
        pytest.param(
            "pods",
            ["Name", "Ready", "Status", "Restarts", "Age"],
            ["IP", "Node", "Nominated Node", "Readiness Gates"],
            id="pods",
        ),
        pytest.param("namespaces", ["Name", "Status", "Age"], [], id="namespaces"),
        pytest.param("leases.coordination.k8s.io", ["Name", "Holder", "Age"], [], id="leases"),
        pytest.param(
            "events",
            ["Last Seen", "Type", "Reason", "Object", "Message"],
            ["Subobject", "Source", "First Seen", "Count", "Name"],
            id="events",
        ),
        pytest.param(
            "poddisruptionbudgets.policy",
            ["Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"],
            [],
            id="poddisruptionbudgets",
        ),
        pytest.param(
            "priorityclasses.scheduling.k8s.io",
            ["Name", "Value", "Global-Default", "Age", "PreemptionPolicy"],
            [],
            id="priorityclasses",
        ),
    ],
)
def test_columns_and_wide_priority_match_upstream(resource: str, normal: list[str], wide: list[str]) -> None:
    columns, _ = PRINTERS[resource]
    assert _names(columns, 0) == normal
    assert _names(columns, 1) == wide


@pytest.mark.parametrize(
    ("resource", "types"),
    [
        pytest.param(
            "deployments.apps",
            ["string"] * 8,
            id="deployment counts are declared string as upstream declares them",
        ),
        pytest.param(
            "replicasets.apps", ["string", *["integer"] * 3, *["string"] * 4], id="replica set counts"
        ),
        pytest.param(
            "daemonsets.apps", ["string", *["integer"] * 5, *["string"] * 5], id="daemon set counts"
        ),
        pytest.param(
            "poddisruptionbudgets.policy",
            ["string", "string", "string", "integer", "string"],
            id="pdb disruptions",
        ),
        pytest.param(
            "priorityclasses.scheduling.k8s.io",
            ["string", "integer", "boolean", "string", "string"],
            id="priority class value and default",
        ),
    ],
)
def test_column_types_match_upstream(resource: str, types: list[str]) -> None:
    assert [c["type"] for c in PRINTERS[resource][0]] == types


@pytest.mark.parametrize(
    ("resource", "column", "description"),
    [
        pytest.param(
            "deployments.apps",
            "Up-to-date",
            "Total number of non-terminating pods targeted by this deployment that have the desired template spec.",
            id="deployment columns carry the status field docs",
        ),
        pytest.param(
            "priorityclasses.scheduling.k8s.io",
            "Value",
            "value represents the integer value of this priority class. This is the actual priority that"
            " pods receive when they have the name of this class in their pod spec.",
            id="priority class value doc",
        ),
        pytest.param(
            "runtimeclasses.node.k8s.io", "Handler", "", id="runtime class handler has no doc upstream"
        ),
        pytest.param("nodes", "Version", "Kubelet Version reported by the node.", id="node version doc"),
    ],
)
def test_column_descriptions_are_the_fields_swagger_docs(
    resource: str, column: str, description: str
) -> None:
    assert {c["name"]: c["description"] for c in PRINTERS[resource][0]}[column] == description


def test_name_and_age_columns_carry_object_meta_docs() -> None:
    columns = PRINTERS["deployments.apps"][0]
    assert columns[0]["format"] == "name"
    assert columns[0]["description"].startswith("Name must be unique within a namespace. Is required when")
    assert columns[4]["description"].startswith(
        "CreationTimestamp is a timestamp representing the server time"
    )


@pytest.mark.parametrize(
    ("selector", "text"),
    [
        pytest.param(None, "<none>", id="no selector"),
        pytest.param({}, "<none>", id="empty selector selects everything"),
        pytest.param({"matchLabels": {"b": "2", "a": "1"}}, "a=1,b=2", id="labels sorted by key"),
        pytest.param(
            {
                "matchLabels": {"m": "x"},
                "matchExpressions": [
                    {"key": "z", "operator": "In", "values": ["b", "a"]},
                    {"key": "c", "operator": "NotIn", "values": ["x"]},
                    {"key": "e", "operator": "Exists"},
                    {"key": "d", "operator": "DoesNotExist"},
                ],
            },
            "c notin (x),!d,e,m=x,z in (a,b)",
            id="expressions and labels merged and sorted by key, values sorted",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]},
            "<error>",
            id="an operator a label selector cannot have is an error",
        ),
    ],
)
def test_format_label_selector(selector: Any, text: str) -> None:
    assert format_label_selector(selector) == text


@pytest.mark.parametrize(
    ("labels", "text"),
    [
        pytest.param(None, "<none>", id="none"),
        pytest.param({}, "<none>", id="empty"),
        pytest.param({"zone": "a", "disk": "ssd"}, "disk=ssd,zone=a", id="sorted"),
    ],
)
def test_format_labels(labels: Any, text: str) -> None:
    assert format_labels(labels) == text
