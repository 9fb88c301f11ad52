"""Deleting a namespace that holds a running StatefulSet, Job and CronJob (graceful pod deletion,
as `kubetaint up` runs it): every object and pod goes, the Jobs' pods despite their tracking
finalizer, and the namespace is finalized."""

from __future__ import annotations

import pytest

from controllers.batch_builders import create_job, job, statefulset
from controllers.test_cronjob_controller import cron_job
from kubetaint.api.errors import StatusError
from kubetaint.clock import VirtualClock
from kubetaint.controlplane import ControlPlane
from kubetaint.store.memory import MemoryStore

from .builders import node


def test_a_namespace_with_running_workloads_is_emptied_and_removed() -> None:
    clock = VirtualClock()
    plane = ControlPlane(MemoryStore(clock), clock, seed=1, graceful_deletion=True)
    plane.fleet.add(node("n1"))
    plane.start()
    plane.registry.create(
        "namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
    )
    sts = statefulset("db", 2)
    sts["metadata"]["namespace"] = "team"
    plane.registry.create("statefulsets.apps", sts)
    batch = job("long", run_seconds=3600, parallelism=2, completions=2)
    batch["metadata"]["namespace"] = "team"
    create_job(plane, batch)
    cron = cron_job("report", "* * * * *", run_seconds=3600)
    cron["metadata"]["namespace"] = "team"
    plane.registry.create("cronjobs.batch", cron)
    clock.advance(61)
    assert len(plane.store.list("pods", namespace="team").items) == 5
    plane.registry.delete("namespaces", "", "team")
    clock.advance(120)
    for resource in ("pods", "statefulsets.apps", "jobs.batch", "cronjobs.batch"):
        assert plane.store.list(resource, namespace="team").items == [], resource
    with pytest.raises(StatusError):
        plane.store.get("namespaces", "", "team")
