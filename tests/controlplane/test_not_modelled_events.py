"""The live scheduler records what it does not model: a Warning event NotModelled on a pod whose
fields it cannot judge (once, however often the pod is retried), none for the usual pod; a
configuration's unapplied settings reach the scheduler's log."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from kubetaint.clock import VirtualClock
from kubetaint.controlplane import ControlPlane, ControlPlaneSettings
from kubetaint.store.memory import MemoryStore

from .builders import node, pod


def _plane(settings: ControlPlaneSettings | None = None) -> tuple[ControlPlane, MemoryStore, VirtualClock]:
    clock = VirtualClock()
    store = MemoryStore(clock)
    plane = ControlPlane(store, clock, settings=settings, seed=1)
    plane.ensure_system_namespaces()
    plane.fleet.add(node("n1", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]))
    plane.start()
    return plane, store, clock


def _events(store: MemoryStore, reason: str) -> list[dict[str, Any]]:
    return [e for e in store.list("events", namespace="default").items if e.get("reason") == reason]


def test_a_pod_with_an_in_tree_disk_volume_gets_one_not_modelled_warning() -> None:
    plane, store, clock = _plane()
    db = pod("db")
    db["spec"]["volumes"] = [{"name": "data", "awsElasticBlockStore": {"volumeID": "vol-1"}}]
    plane.registry.create("pods", db)
    plane.registry.create("pods", pod("web"))
    clock.advance(400)  # unschedulable (the taint): retried by the leftover flush
    assert len(_events(store, "FailedScheduling")) >= 2
    (warning,) = _events(store, "NotModelled")
    assert warning["type"] == "Warning"
    assert warning["involvedObject"]["name"] == "db"
    assert warning["message"].startswith("spec.volumes[0].awsElasticBlockStore: not modelled (CSI migration)")


def test_unapplied_configuration_settings_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    settings = ControlPlaneSettings(scheduler_config={"podMaxBackoffSeconds": 3})
    with caplog.at_level(logging.WARNING, logger="kubetaint"):
        _plane(settings)
    assert (
        "scheduler configuration: podMaxBackoffSeconds: not modelled: kubetaint's scheduler does not apply "
        "this setting"
    ) in caplog.text
