"""events.k8s.io/v1 Events served from the core Events' storage, as kube-apiserver converts them
(pkg/apis/events/v1/conversion.go): what one API writes the other reads, field selectors on the
events.k8s.io/v1 field names (AddFieldLabelConversionsForEvent), patches of a series."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

CORE = "/api/v1/namespaces/default/events"
EVENTS = "/apis/events.k8s.io/v1/namespaces/default/events"
REGARDING = {
    "kind": "Pod",
    "namespace": "default",
    "name": "web",
    "uid": "u-1",
    "apiVersion": "v1",
    "resourceVersion": "7",
}
V1_EVENT: dict[str, Any] = {
    "apiVersion": "events.k8s.io/v1",
    "kind": "Event",
    "metadata": {"name": "web.1", "namespace": "default"},
    "eventTime": "2026-01-01T00:00:00.000000Z",
    "reportingController": "default-scheduler",
    "reportingInstance": "default-scheduler-host",
    "action": "Scheduling",
    "reason": "FailedScheduling",
    "regarding": REGARDING,
    "note": "0/3 nodes are available",
    "type": "Warning",
}
CORE_EVENT: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Event",
    "metadata": {"name": "web.2", "namespace": "default"},
    "involvedObject": REGARDING,
    "reason": "TaintManagerEviction",
    "message": "Marking for deletion Pod default/web",
    "source": {"component": "taint-eviction-controller"},
    "firstTimestamp": "2026-01-01T00:00:00Z",
    "lastTimestamp": "2026-01-01T00:00:05Z",
    "count": 2,
    "type": "Normal",
}


def _without_server_fields(obj: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in obj["metadata"].items() if k in ("name", "namespace")}
    return {**obj, "metadata": meta}


def test_an_events_v1_event_reads_as_the_core_event_its_conversion_stores(client: TestClient) -> None:
    created = client.post(EVENTS, json=V1_EVENT)
    assert created.status_code == 201, created.text
    assert _without_server_fields(created.json()) == {
        **V1_EVENT,
        "deprecatedSource": {},
        "deprecatedFirstTimestamp": None,
        "deprecatedLastTimestamp": None,
    }
    core = client.get(f"{CORE}/web.1").json()
    assert _without_server_fields(core) == {
        "kind": "Event",
        "apiVersion": "v1",
        "metadata": {"name": "web.1", "namespace": "default"},
        "involvedObject": REGARDING,
        "reason": "FailedScheduling",
        "message": "0/3 nodes are available",
        "source": {},
        "firstTimestamp": None,
        "lastTimestamp": None,
        "type": "Warning",
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "action": "Scheduling",
        "reportingComponent": "default-scheduler",
        "reportingInstance": "default-scheduler-host",
    }


def test_a_core_event_reads_as_an_events_v1_event_with_its_deprecated_fields(client: TestClient) -> None:
    assert client.post(CORE, json=CORE_EVENT).status_code == 201
    served = client.get(f"{EVENTS}/web.2").json()
    assert _without_server_fields(served) == {
        "kind": "Event",
        "apiVersion": "events.k8s.io/v1",
        "metadata": {"name": "web.2", "namespace": "default"},
        "eventTime": None,
        "reason": "TaintManagerEviction",
        "regarding": REGARDING,
        "note": "Marking for deletion Pod default/web",
        "type": "Normal",
        "deprecatedSource": {"component": "taint-eviction-controller"},
        "deprecatedFirstTimestamp": "2026-01-01T00:00:00Z",
        "deprecatedLastTimestamp": "2026-01-01T00:00:05Z",
        "deprecatedCount": 2,
    }


@pytest.mark.parametrize(
    ("selector", "names"),
    [
        pytest.param("regarding.name=web", ["web.1", "web.2"], id="regarding.name selects on involvedObject"),
        pytest.param("reportingController=default-scheduler", ["web.1"], id="reportingController"),
        pytest.param("reason!=FailedScheduling", ["web.2"], id="reason, negated"),
        pytest.param("type=Normal,regarding.kind=Pod", ["web.2"], id="two terms"),
    ],
)
def test_field_selectors_use_the_events_v1_field_names(
    client: TestClient, selector: str, names: list[str]
) -> None:
    client.post(EVENTS, json=V1_EVENT)
    client.post(CORE, json=CORE_EVENT)
    listed = client.get(EVENTS, params={"fieldSelector": selector}).json()
    assert listed["kind"] == "EventList" and listed["apiVersion"] == "events.k8s.io/v1"
    assert [e["metadata"]["name"] for e in listed["items"]] == names
    assert all(e["apiVersion"] == "events.k8s.io/v1" for e in listed["items"])


@pytest.mark.parametrize("label", ["involvedObject.name", "note"])
def test_a_field_label_events_v1_does_not_know_is_a_bad_request(client: TestClient, label: str) -> None:
    response = client.get(EVENTS, params={"fieldSelector": f"{label}=web"})
    assert response.status_code == 400
    assert response.json()["message"] == f"field label not supported: {label}"


def test_a_series_patched_through_events_v1_is_the_core_events_series(client: TestClient) -> None:
    client.post(EVENTS, json=V1_EVENT)
    series = {"count": 2, "lastObservedTime": "2026-01-01T00:00:30.000000Z"}
    patched = client.patch(
        f"{EVENTS}/web.1",
        json={"series": series},
        headers={"Content-Type": "application/strategic-merge-patch+json"},
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["series"] == series and patched.json()["note"] == V1_EVENT["note"]
    core = client.get(f"{CORE}/web.1").json()
    assert core["series"] == series and core["message"] == V1_EVENT["note"]


def test_an_update_through_events_v1_replaces_the_stored_core_events_series(client: TestClient) -> None:
    client.post(EVENTS, json=V1_EVENT)
    current = client.get(f"{EVENTS}/web.1").json()
    series = {"count": 3, "lastObservedTime": "2026-01-01T00:01:00.000000Z"}
    replaced = client.put(f"{EVENTS}/web.1", json={**current, "series": series})
    assert replaced.status_code == 200, replaced.text
    assert replaced.json()["apiVersion"] == "events.k8s.io/v1"
    assert client.get(f"{CORE}/web.1").json()["series"] == series


def _causes(response: Any) -> list[tuple[str, str]]:
    assert response.status_code == 422, response.text
    return [(c["field"], c["message"]) for c in response.json()["details"]["causes"]]


@pytest.mark.parametrize(
    ("change", "causes"),
    [
        pytest.param(
            {"eventTime": None},
            [("eventTime", "Required value")],
            id="eventTime is required",
        ),
        pytest.param(
            {"action": "", "reportingInstance": ""},
            [("reportingInstance", "Required value"), ("action", "Required value")],
            id="the reporting instance and the action are required",
        ),
        pytest.param(
            {"type": "Info"},
            [("type", 'Invalid value: "": has invalid value: Info')],
            id="the type is Normal or Warning",
        ),
        pytest.param(
            {"deprecatedCount": 3, "deprecatedSource": {"component": "kubelet"}},
            [
                ("count", 'Invalid value: "": needs to be unset'),
                ("source", 'Invalid value: "": needs to be unset'),
            ],
            id="the deprecated fields need to be unset",
        ),
        pytest.param(
            {"series": {"count": 1, "lastObservedTime": "2026-01-01T00:00:30.000000Z"}},
            [("series.count", 'Invalid value: "": should be at least 2')],
            id="a series counts at least 2",
        ),
    ],
)
def test_a_create_through_events_v1_is_validated_strictly(
    client: TestClient, change: dict[str, Any], causes: list[tuple[str, str]]
) -> None:
    assert _causes(client.post(EVENTS, json={**V1_EVENT, **change})) == causes


def test_a_core_event_with_the_deprecated_fields_is_created_through_core_v1(client: TestClient) -> None:
    assert client.post(CORE, json=CORE_EVENT).status_code == 201


def test_an_update_through_events_v1_cannot_change_the_note(client: TestClient) -> None:
    client.post(EVENTS, json=V1_EVENT)
    current = client.get(f"{EVENTS}/web.1").json()
    response = client.put(f"{EVENTS}/web.1", json={**current, "note": "0/4 nodes are available"})
    assert _causes(response) == [("message", 'Invalid value: "0/4 nodes are available": field is immutable')]


def test_a_table_of_events_v1_events_embeds_them_as_events_v1(client: TestClient) -> None:
    client.post(EVENTS, json=V1_EVENT)
    table = client.get(
        EVENTS,
        headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"},
        params={"includeObject": "Object"},
    ).json()
    (row,) = table["rows"]
    assert row["cells"][2] == "FailedScheduling"
    assert row["object"]["apiVersion"] == "events.k8s.io/v1" and row["object"]["note"] == V1_EVENT["note"]


def test_deleting_through_events_v1_removes_the_core_event(client: TestClient) -> None:
    client.post(CORE, json=CORE_EVENT)
    assert client.delete(f"{EVENTS}/web.2").status_code == 200
    assert client.get(f"{CORE}/web.2").status_code == 404


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param(
            {"series": "often"},
            "json: cannot unmarshal string into Go struct field Event.series of type v1.EventSeries",
            id="a series that is no object",
        ),
        pytest.param(
            {"series": {"count": "two"}},
            "json: cannot unmarshal string into Go struct field EventSeries.series.count of type int32",
            id="a series count that is no number",
        ),
        pytest.param(
            {"deprecatedSource": "kubelet"},
            "json: cannot unmarshal string into Go struct field Event.deprecatedSource of type v1.EventSource",
            id="a deprecated source that is no object",
        ),
    ],
)
def test_a_body_that_does_not_decode_into_the_events_v1_type_is_a_bad_request(
    client: TestClient, change: dict[str, Any], message: str
) -> None:
    response = client.post(EVENTS, json={**V1_EVENT, **change})
    assert response.status_code == 400
    assert response.json()["message"] == f'Event in version "v1" cannot be handled as a Event: {message}'


def test_a_json_patch_breaking_the_series_type_is_a_bad_request(client: TestClient) -> None:
    client.post(EVENTS, json=V1_EVENT)
    response = client.patch(
        f"{EVENTS}/web.1",
        json=[{"op": "add", "path": "/series", "value": "often"}],
        headers={"Content-Type": "application/json-patch+json"},
    )
    assert response.status_code == 400


@pytest.mark.parametrize(
    "patch",
    [
        pytest.param({"kind": None}, id="a merge patch removing the kind"),
        pytest.param({"apiVersion": None}, id="a merge patch removing the apiVersion"),
        pytest.param({"kind": True}, id="a merge patch making the kind a boolean"),
    ],
)
def test_a_patch_of_the_kind_or_apiversion_keeps_the_events_v1_event(
    client: TestClient, patch: dict[str, Any]
) -> None:
    client.post(EVENTS, json=V1_EVENT)
    response = client.patch(
        f"{EVENTS}/web.1", json=patch, headers={"Content-Type": "application/merge-patch+json"}
    )
    assert response.status_code == 200, response.text
    assert (response.json()["kind"], response.json()["apiVersion"]) == ("Event", "events.k8s.io/v1")
    assert client.get(f"{CORE}/web.1").json()["apiVersion"] == "v1"
