"""Server-side Table printing: HumanDuration, node/pod/event/namespace/lease rows and the Table
responses kubectl reads (kubectl-wire.md §4.1, §4.2, §5.1)."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from kubetaint.apiserver.printers import human_duration, print_event, print_node, print_pod
from kubetaint.clock import VirtualClock
from kubetaint.clock.base import format_time
from kubetaint.store.memory import MemoryStore

from .builders import TABLE_ACCEPT, node, pod

MINUTE, HOUR, DAY = 60, 3600, 86400


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        pytest.param(-5, "<invalid>", id="more than a second in the future is invalid"),
        pytest.param(-1, "0s", id="a second in the future is now"),
        pytest.param(1, "1s", id="seconds"),
        pytest.param(70, "70s", id="seconds up to two minutes"),
        pytest.param(190, "3m10s", id="minutes and seconds under ten minutes"),
        pytest.param(5 * MINUTE, "5m", id="whole minutes drop the seconds"),
        pytest.param(70 * MINUTE, "70m", id="minutes up to three hours"),
        pytest.param(3 * HOUR + 5 * MINUTE, "3h5m", id="hours and minutes under eight hours"),
        pytest.param(47 * HOUR, "47h", id="hours up to two days"),
        pytest.param(49 * HOUR, "2d1h", id="days and hours under eight days"),
        pytest.param(8 * DAY + 2 * HOUR, "8d", id="days up to two years"),
        pytest.param(367 * DAY, "367d", id="a year in days"),
        pytest.param((365 * 2 + 1) * DAY, "2y1d", id="years and days under eight years"),
        pytest.param((365 * 8 + 2) * DAY, "8y", id="years"),
    ],
)
def test_human_duration(seconds: int, text: str) -> None:
    assert human_duration(seconds) == text


NOW = 1_767_225_600.0  # 2026-01-01T00:00:00Z
CREATED = format_time(NOW - 3 * HOUR)


def with_created(obj: dict[str, Any]) -> dict[str, Any]:
    return {**obj, "metadata": {**obj["metadata"], "creationTimestamp": CREATED}}


@pytest.mark.parametrize(
    ("built", "status", "roles"),
    [
        pytest.param(node("n"), "Ready", "<none>", id="ready node without roles"),
        pytest.param(node("n", ready="False"), "NotReady", "<none>", id="not ready node"),
        pytest.param(
            node("n", ready=None), "Unknown", "<none>", id="node without a Ready condition is Unknown"
        ),
        pytest.param(node("n", unschedulable=True), "Ready,SchedulingDisabled", "<none>", id="cordoned node"),
        pytest.param(
            node(
                "n",
                labels={"node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/control-plane": "x"},
            ),
            "Ready",
            "control-plane,worker",
            id="roles are sorted label suffixes",
        ),
        pytest.param(
            node("n", labels={"kubernetes.io/role": "infra"}),
            "Ready",
            "infra",
            id="kubernetes.io/role value is a role",
        ),
        pytest.param(
            node("n", labels={"node-role.kubernetes.io/": ""}),
            "Ready",
            "<none>",
            id="empty role suffix is ignored",
        ),
    ],
)
def test_node_rows(built: dict[str, Any], status: str, roles: str) -> None:
    cells = print_node(with_created(built), NOW)
    assert cells[:5] == ["n", status, roles, "3h", "v1.35.0"]


def test_node_wide_cells_fall_back_to_none_and_unknown() -> None:
    bare = {
        "metadata": {"name": "n"},
        "status": {"addresses": [{"type": "ExternalIP", "address": "1.2.3.4"}]},
    }
    assert print_node(bare, NOW)[3:] == [
        "<unknown>",
        "",
        "<none>",
        "1.2.3.4",
        "<unknown>",
        "<unknown>",
        "<unknown>",
    ]


def running(name: str, ready: bool = True, restarts: int = 0) -> dict[str, Any]:
    return {"name": name, "ready": ready, "restartCount": restarts, "state": {"running": {}}}


@pytest.mark.parametrize(
    ("status", "extra_meta", "ready", "reason", "restarts"),
    [
        pytest.param({"phase": "Pending"}, {}, "0/1", "Pending", "0", id="pending pod"),
        pytest.param(
            {"phase": "Running", "containerStatuses": [running("main")]},
            {},
            "1/1",
            "Running",
            "0",
            id="running ready pod",
        ),
        pytest.param(
            {
                "phase": "Pending",
                "containerStatuses": [
                    {"name": "main", "state": {"waiting": {"reason": "ContainerCreating"}}}
                ],
            },
            {},
            "0/1",
            "ContainerCreating",
            "0",
            id="waiting reason overrides the phase",
        ),
        pytest.param(
            {
                "phase": "Succeeded",
                "containerStatuses": [
                    {"name": "main", "state": {"terminated": {"reason": "Completed", "exitCode": 0}}}
                ],
            },
            {},
            "0/1",
            "Completed",
            "0",
            id="terminated reason",
        ),
        pytest.param(
            {
                "phase": "Failed",
                "containerStatuses": [
                    {"name": "main", "state": {"terminated": {"exitCode": 137, "signal": 9}}}
                ],
            },
            {},
            "0/1",
            "Signal:9",
            "0",
            id="terminated without reason shows the signal",
        ),
        pytest.param(
            {"phase": "Failed", "reason": "Evicted"},
            {},
            "0/1",
            "Evicted",
            "0",
            id="status reason wins over phase",
        ),
        pytest.param(
            {"phase": "Running"},
            {"deletionTimestamp": CREATED},
            "0/1",
            "Terminating",
            "0",
            id="deleting pod is Terminating",
        ),
        pytest.param(
            {"phase": "Succeeded"},
            {"deletionTimestamp": CREATED},
            "0/1",
            "Succeeded",
            "0",
            id="deleting finished pod keeps its phase",
        ),
        pytest.param(
            {
                "phase": "Pending",
                "conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}],
            },
            {},
            "0/1",
            "SchedulingGated",
            "0",
            id="scheduling gated pod",
        ),
        pytest.param(
            {
                "phase": "Running",
                "containerStatuses": [
                    {
                        **running("main", restarts=3),
                        "lastState": {"terminated": {"exitCode": 1, "finishedAt": format_time(NOW - 300)}},
                    }
                ],
            },
            {},
            "1/1",
            "Running",
            "3 (5m ago)",
            id="restarts show when the last one happened",
        ),
    ],
)
def test_pod_rows(
    status: dict[str, Any], extra_meta: dict[str, Any], ready: str, reason: str, restarts: str
) -> None:
    built = with_created(pod("p"))
    built = {**built, "metadata": {**built["metadata"], **extra_meta}, "status": status}
    assert print_pod(built, NOW)[:5] == ["p", ready, reason, restarts, "3h"]


def test_pod_init_container_progress() -> None:
    built = with_created(pod("p"))
    built["spec"]["initContainers"] = [{"name": "i1"}, {"name": "i2"}]
    built["status"] = {
        "phase": "Pending",
        "initContainerStatuses": [
            {"name": "i1", "state": {"terminated": {"exitCode": 0}}},
            {"name": "i2", "state": {"running": {}}},
        ],
    }
    assert print_pod(built, NOW)[2] == "Init:1/2"


def test_pod_wide_cells() -> None:
    built = with_created(pod("p", node_name="n1"))
    built["status"] = {
        "phase": "Running",
        "podIP": "10.0.0.9",
        "podIPs": [{"ip": "10.0.0.9"}],
        "nominatedNodeName": "n2",
    }
    built["spec"]["readinessGates"] = [{"conditionType": "x"}, {"conditionType": "y"}]
    built["status"]["conditions"] = [{"type": "x", "status": "True"}]
    assert print_pod(built, NOW)[5:] == ["10.0.0.9", "n1", "n2", "1/2"]


def test_event_row_falls_back_for_count_and_last_seen() -> None:
    event = {
        "metadata": {"name": "e1", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "web"},
        "reason": "FailedScheduling",
        "type": "Warning",
        "message": " 0/3 nodes are available \n",
        "firstTimestamp": format_time(NOW - 120),
        "source": {"component": "default-scheduler"},
    }
    cells = print_event(event, NOW)
    assert cells == [
        "2m",
        "Warning",
        "FailedScheduling",
        "pod/web",
        "",
        "default-scheduler",
        "0/3 nodes are available",
        "2m",
        1,
        "e1",
    ]


# Table responses --------------------------------------------------------------------------


def test_list_table_has_columns_rows_and_partial_metadata(
    client: TestClient, store: MemoryStore, clock: VirtualClock
) -> None:
    store.create("nodes", node("n1"))
    clock.advance(90)
    table = client.get("/api/v1/nodes?limit=500", headers={"Accept": TABLE_ACCEPT}).json()
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    assert table["metadata"]["resourceVersion"] == str(store.current_resource_version())
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name", "Status", "Roles", "Age", "Version", "Internal-IP", "External-IP", "OS-Image", "Kernel-Version",
        "Container-Runtime",
    ]  # fmt: skip
    assert [c["priority"] for c in table["columnDefinitions"]] == [0] * 5 + [1] * 5
    row = table["rows"][0]
    assert row["cells"][:4] == ["n1", "Ready", "<none>", "90s"]
    assert row["object"]["kind"] == "PartialObjectMetadata" and row["object"]["metadata"]["name"] == "n1"


@pytest.mark.parametrize(
    ("include", "expected_kind"),
    [
        pytest.param("Object", "Node", id="includeObject=Object embeds the full typed object"),
        pytest.param("Metadata", "PartialObjectMetadata", id="includeObject=Metadata embeds metadata"),
        pytest.param("None", None, id="includeObject=None embeds nothing"),
    ],
)
def test_include_object(
    client: TestClient, store: MemoryStore, include: str, expected_kind: str | None
) -> None:
    store.create("nodes", {k: v for k, v in node("n1").items() if k not in ("kind", "apiVersion")})
    row = client.get(f"/api/v1/nodes?includeObject={include}", headers={"Accept": TABLE_ACCEPT}).json()[
        "rows"
    ][0]
    assert (row.get("object") or {}).get("kind") == expected_kind
    if include == "Object":
        assert row["object"]["apiVersion"] == "v1" and row["object"]["status"]["nodeInfo"]


def test_single_get_as_table_and_v1beta1(client: TestClient, store: MemoryStore) -> None:
    store.create("pods", pod("p"))
    table = client.get("/api/v1/namespaces/default/pods/p", headers={"Accept": TABLE_ACCEPT}).json()
    assert [r["cells"][0] for r in table["rows"]] == ["p"]
    beta = client.get(
        "/api/v1/namespaces/default/pods/p",
        headers={"Accept": "application/json;as=Table;v=v1beta1;g=meta.k8s.io"},
    )
    assert beta.json()["apiVersion"] == "meta.k8s.io/v1beta1"


def test_protobuf_first_accept_still_gets_json(client: TestClient, store: MemoryStore) -> None:
    store.create("pods", pod("p"))
    response = client.get(
        "/api/v1/namespaces/default/pods/p",
        headers={"Accept": "application/vnd.kubernetes.protobuf,application/json"},
    )
    assert response.headers["content-type"] == "application/json" and response.json()["kind"] == "Pod"


@pytest.mark.parametrize(
    ("path", "body", "columns", "cells"),
    [
        pytest.param(
            "/api/v1/namespaces",
            {"metadata": {"name": "team"}, "status": {"phase": "Active"}},
            ["Name", "Status", "Age"],
            ["team", "Active", "0s"],
            id="namespaces",
        ),
        pytest.param(
            "/apis/coordination.k8s.io/v1/namespaces/default/leases",
            {"metadata": {"name": "n1"}, "spec": {"holderIdentity": "n1"}},
            ["Name", "Holder", "Age"],
            ["n1", "n1", "0s"],
            id="leases",
        ),
        pytest.param(
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            {"metadata": {"name": "high"}, "value": 1000},
            ["Name", "Value", "Global-Default", "Age", "PreemptionPolicy"],
            ["high", 1000, False, "0s", "PreemptLowerPriority"],
            id="priority classes",
        ),
        pytest.param(
            "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
            {"metadata": {"name": "pdb"}, "spec": {"minAvailable": 2}},
            ["Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"],
            ["pdb", "2", "N/A", 0, "0s"],
            id="pod disruption budgets",
        ),
        pytest.param(
            "/apis/node.k8s.io/v1/runtimeclasses",
            {"metadata": {"name": "gvisor"}, "handler": "runsc"},
            ["Name", "Handler", "Age"],
            ["gvisor", "runsc", "0s"],
            id="runtime classes",
        ),
    ],
)
def test_kind_tables(
    client: TestClient, path: str, body: dict[str, Any], columns: list[str], cells: list[Any]
) -> None:
    assert client.post(path, json=body).status_code == 201
    table = client.get(path, headers={"Accept": TABLE_ACCEPT}).json()
    assert [c["name"] for c in table["columnDefinitions"]] == columns
    assert table["rows"][-1]["cells"] == cells
