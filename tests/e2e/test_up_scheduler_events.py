"""kube-scheduler's events on `kubetaint up` as an API server shows those client-go's tools/events
records (events.k8s.io/v1): eventTime, action, reportingComponent and reportingInstance set, the
deprecated core/v1 fields unset, repeats of a pending pod's FailedScheduling as an EventSeries —
read with the real kubectl (`get events`, `events`) and the official Python client."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from .harness import KUBECTL, UpServer, eventually

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl not installed")

STUCK_POD = """
apiVersion: v1
kind: Pod
metadata:
  name: stuck
spec:
  nodeSelector:
    absent: label
  containers:
  - name: c
    image: nginx
"""
PLACED_POD = """
apiVersion: v1
kind: Pod
metadata:
  name: placed
spec:
  containers:
  - name: c
    image: nginx
"""


@pytest.fixture(scope="module")
def server(virtual_server: UpServer) -> Iterator[UpServer]:
    for name, text in (("stuck.yaml", STUCK_POD), ("placed.yaml", PLACED_POD)):
        (virtual_server.workdir / name).write_text(text)
        virtual_server.kubectl("create", "-f", name)
    eventually(lambda: _scheduler_events(virtual_server, "stuck"), "a FailedScheduling event of stuck")
    # the unschedulable pod is retried (podMaxInUnschedulablePodsDuration: 5 minutes): its
    # first retry is a new Event (the pod's resourceVersion changed with its PodScheduled
    # condition), the later ones a series on it, written at the refresh (30 minutes)
    for _ in range(7):
        advanced = virtual_server.kubetaint("clock", "advance", "5m")
        assert advanced.returncode == 0, advanced.stderr
    yield virtual_server


def _scheduler_events(server: UpServer, pod: str) -> list[dict[str, Any]]:
    listed = server.kubectl("get", "events", "--field-selector", f"involvedObject.name={pod}", "-o", "json")
    items: list[dict[str, Any]] = json.loads(listed.stdout)["items"]
    return [e for e in items if e.get("reportingComponent") == "default-scheduler"]


def test_the_scheduled_event_is_an_events_v1_event_as_core_v1_shows_it(server: UpServer) -> None:
    (event,) = _scheduler_events(server, "placed")
    assert event["reason"] == "Scheduled"
    assert event["action"] == "Binding"
    assert event["message"].startswith("Successfully assigned default/placed to ")
    assert event["reportingInstance"] == f"default-scheduler-{socket.gethostname()}"
    assert event["eventTime"].endswith("Z") and len(event["eventTime"]) == len("2026-01-01T00:00:00.000000Z")
    assert event["source"] == {}
    assert event["firstTimestamp"] is None
    assert event["lastTimestamp"] is None
    assert "count" not in event
    assert "series" not in event


def test_a_pending_pods_repeated_failures_are_counted_in_an_event_series(server: UpServer) -> None:
    first, repeated = sorted(_scheduler_events(server, "stuck"), key=lambda e: e["eventTime"])
    assert [e["reason"] for e in (first, repeated)] == ["FailedScheduling", "FailedScheduling"]
    assert [e["action"] for e in (first, repeated)] == ["Scheduling", "Scheduling"]
    assert "series" not in first
    assert first["involvedObject"]["resourceVersion"] != repeated["involvedObject"]["resourceVersion"]
    assert repeated["series"]["count"] >= 5
    assert repeated["series"]["lastObservedTime"] > repeated["eventTime"]


def test_kubectl_get_events_wide_shows_the_series_count_and_the_reporting_controller(
    server: UpServer,
) -> None:
    (repeated,) = [e for e in _scheduler_events(server, "stuck") if "series" in e]
    table = server.kubectl(
        "get", "events", "--field-selector", "involvedObject.name=stuck,reason=FailedScheduling", "-o", "wide"
    ).stdout
    header, *rows = table.splitlines()
    assert header.split()[:4] == ["LAST", "SEEN", "TYPE", "REASON"]
    counts = [row.split()[-2] for row in rows]
    assert sorted(counts) == sorted(["1", str(repeated["series"]["count"])])
    assert all(f"default-scheduler, default-scheduler-{socket.gethostname()}" in row for row in rows)


def test_kubectl_events_shows_the_series_as_repeats_over_time(server: UpServer) -> None:
    (repeated,) = [e for e in _scheduler_events(server, "stuck") if "series" in e]
    listing = server.kubectl("events", "--for", "pod/stuck").stdout
    assert f"(x{repeated['series']['count']} over " in listing
    assert "FailedScheduling" in listing


def test_the_python_client_reads_the_series_and_the_events_v1_fields(server: UpServer) -> None:
    from kubernetes import client, config

    api = config.new_client_from_config(config_file=str(server.kubeconfig))
    try:
        listed = client.CoreV1Api(api).list_namespaced_event(
            "default", field_selector="involvedObject.name=stuck,reason=FailedScheduling"
        )
    finally:
        api.close()
    (repeated,) = [e for e in listed.items if e.series is not None]
    assert repeated.series.count >= 5
    assert repeated.action == "Scheduling"
    assert repeated.reporting_component == "default-scheduler"
    assert repeated.event_time is not None
    assert repeated.first_timestamp is None
    assert repeated.count is None


def test_kubectl_describe_pod_lists_the_series_from_the_reporting_controller(server: UpServer) -> None:
    (repeated,) = [e for e in _scheduler_events(server, "stuck") if "series" in e]
    described = server.kubectl("describe", "pod", "stuck").stdout
    events = described[described.index("Events:") :]
    line = next(line for line in events.splitlines() if f"(x{repeated['series']['count']} over " in line)
    assert line.split()[:2] == ["Warning", "FailedScheduling"]
    assert "default-scheduler" in line


def test_the_events_v1_api_serves_the_series_as_the_scheduler_recorded_it(server: UpServer) -> None:
    listed = server.kubectl(
        "get", "events.events.k8s.io", "--field-selector", "regarding.name=stuck", "-o", "json"
    )
    items = json.loads(listed.stdout)["items"]
    (repeated,) = [e for e in items if "series" in e]
    assert repeated["apiVersion"] == "events.k8s.io/v1"
    assert repeated["reportingController"] == "default-scheduler"
    assert repeated["reportingInstance"] == f"default-scheduler-{socket.gethostname()}"
    assert (repeated["action"], repeated["reason"]) == ("Scheduling", "FailedScheduling")
    assert repeated["note"].startswith("0/")
    assert repeated["deprecatedSource"] == {}
    assert repeated["deprecatedFirstTimestamp"] is None


def test_the_python_clients_events_v1_api_lists_the_scheduler_events(server: UpServer) -> None:
    from kubernetes import client, config

    api = config.new_client_from_config(config_file=str(server.kubeconfig))
    try:
        listed = client.EventsV1Api(api).list_namespaced_event(
            "default", field_selector="regarding.name=stuck,reportingController=default-scheduler"
        )
    finally:
        api.close()
    (repeated,) = [e for e in listed.items if e.series is not None]
    assert repeated.series.count >= 5
    assert repeated.regarding.name == "stuck"
    assert repeated.action == "Scheduling" and repeated.note.startswith("0/")
