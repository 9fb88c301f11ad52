"""The StatefulSet controller with the scheduler and hollow kubelets: ordered pods `<set>-<n>`
(OrderedReady one at a time, Parallel at once), scale down from the highest ordinal, the same
name back after a deletion or a NoExecute eviction, a RollingUpdate down to its partition, and
the status upstream computes."""

from __future__ import annotations

from typing import Any

from controllers.batch_builders import events, get, pods, running_plane, statefulset
from kubetaint.controlplane import ControlPlane


def _names(plane: ControlPlane) -> list[str]:
    return [p["metadata"]["name"] for p in pods(plane)]


def _hold_readiness(plane: ControlPlane) -> list[str]:
    """Record the pod names in the order they are created."""
    created: list[str] = []

    def seen(changes: Any) -> None:
        for kind, key, _, _ in changes:
            if kind == "ADDED":
                created.append(key[1])

    plane.informer("pods").add_handlers(seen, replay=False)
    return created


def test_ordered_ready_creates_each_pod_after_its_predecessor_runs_and_is_ready() -> None:
    plane = running_plane("n1", "n2")
    order = _hold_readiness(plane)
    plane.registry.create("statefulsets.apps", statefulset("db", 3))
    plane.clock.run_pending()
    assert order == ["db-0", "db-1", "db-2"]
    created = [e for e in events(plane, "statefulset-controller") if e[1] == "SuccessfulCreate"]
    assert created == [
        ("Normal", "SuccessfulCreate", f"create Pod db-{i} in StatefulSet db successful") for i in range(3)
    ]
    status = get(plane, "statefulsets.apps", "db")["status"]
    revision = status["updateRevision"]
    assert revision.startswith("db-")
    assert status == {
        "observedGeneration": 1,
        "replicas": 3,
        "readyReplicas": 3,
        "currentReplicas": 3,
        "updatedReplicas": 3,
        "currentRevision": revision,
        "updateRevision": revision,
        "collisionCount": 0,
        "availableReplicas": 3,
    }


def test_pods_get_their_identity() -> None:
    plane = running_plane("n1")
    created = plane.registry.create("statefulsets.apps", statefulset("db", 2))
    plane.clock.run_pending()
    pod = pods(plane)[1]
    assert pod["metadata"]["name"] == "db-1"
    assert pod["spec"]["hostname"] == "db-1"
    assert pod["spec"]["subdomain"] == "db"
    labels = pod["metadata"]["labels"]
    assert labels["statefulset.kubernetes.io/pod-name"] == "db-1"
    assert labels["apps.kubernetes.io/pod-index"] == "1"
    assert (
        labels["controller-revision-hash"]
        == get(plane, "statefulsets.apps", "db")["status"]["updateRevision"]
    )
    (ref,) = pod["metadata"]["ownerReferences"]
    assert (ref["kind"], ref["name"], ref["uid"]) == ("StatefulSet", "db", created["metadata"]["uid"])


def test_ordered_ready_waits_while_a_pod_is_not_ready() -> None:
    plane = running_plane("n1")
    plane.fleet.fault(["n1"], "stop")  # no kubelet: db-0 is bound but never Running
    plane.registry.create("statefulsets.apps", statefulset("db", 3))
    plane.clock.advance(5)
    assert _names(plane) == ["db-0"]
    plane.fleet.fault(["n1"], "recover")
    plane.clock.advance(1)
    assert _names(plane) == ["db-0", "db-1", "db-2"]


def test_parallel_creates_every_pod_at_once() -> None:
    plane = running_plane("n1")
    plane.fleet.fault(["n1"], "stop")
    plane.registry.create("statefulsets.apps", statefulset("web", 3, podManagementPolicy="Parallel"))
    plane.clock.advance(5)
    assert _names(plane) == ["web-0", "web-1", "web-2"]


def test_scale_down_removes_the_highest_ordinals_first() -> None:
    plane = running_plane("n1")
    plane.registry.create("statefulsets.apps", statefulset("db", 4))
    plane.clock.run_pending()
    scaled = get(plane, "statefulsets.apps", "db")
    scaled["spec"]["replicas"] = 1
    plane.registry.update("statefulsets.apps", scaled)
    plane.clock.run_pending()
    assert _names(plane) == ["db-0"]
    deleted = [e[2] for e in events(plane, "statefulset-controller") if e[1] == "SuccessfulDelete"]
    assert deleted == [f"delete Pod db-{i} in StatefulSet db successful" for i in (3, 2, 1)]
    status = get(plane, "statefulsets.apps", "db")["status"]
    assert (status["observedGeneration"], status["replicas"]) == (2, 1)


def test_a_deleted_pod_comes_back_under_the_same_name() -> None:
    plane = running_plane("n1")
    plane.registry.create("statefulsets.apps", statefulset("db", 2))
    plane.clock.run_pending()
    old_uid = get(plane, "pods", "db-1")["metadata"]["uid"]
    plane.registry.delete("pods", "default", "db-1")
    plane.clock.run_pending()
    assert _names(plane) == ["db-0", "db-1"]
    assert get(plane, "pods", "db-1")["metadata"]["uid"] != old_uid
    assert get(plane, "pods", "db-1")["status"]["phase"] == "Running"


def test_a_noexecute_eviction_brings_the_pod_back_on_another_node() -> None:
    plane = running_plane("n1", "n2")
    plane.registry.create("statefulsets.apps", statefulset("db", 1))
    plane.clock.run_pending()
    first = get(plane, "pods", "db-0")
    node = get(plane, "nodes", first["spec"]["nodeName"], namespace="")
    node["spec"]["taints"] = [{"key": "maintenance", "effect": "NoExecute"}]
    plane.registry.update("nodes", node)
    plane.clock.advance(5)
    again = get(plane, "pods", "db-0")
    assert again["metadata"]["uid"] != first["metadata"]["uid"]
    assert again["spec"]["nodeName"] != first["spec"]["nodeName"]
    assert again["status"]["phase"] == "Running"


def test_a_failed_pod_is_recreated_with_upstreams_warning() -> None:
    plane = running_plane("n1")
    plane.registry.create("statefulsets.apps", statefulset("db", 1))
    plane.clock.run_pending()
    pod = get(plane, "pods", "db-0")
    plane.registry.update("pods", {**pod, "status": {**pod["status"], "phase": "Failed"}})
    plane.clock.run_pending()
    assert get(plane, "pods", "db-0")["status"]["phase"] == "Running"
    assert (
        "Warning",
        "RecreatingFailedPod",
        "StatefulSet default/db is recreating failed Pod db-0",
    ) in events(plane, "statefulset-controller")


def test_a_rolling_update_replaces_pods_from_the_highest_ordinal_down_to_the_partition() -> None:
    plane = running_plane("n1")
    plane.registry.create(
        "statefulsets.apps",
        statefulset("db", 3, updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}),
    )
    plane.clock.run_pending()
    before = get(plane, "statefulsets.apps", "db")["status"]["updateRevision"]
    changed = get(plane, "statefulsets.apps", "db")
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "busybox:2"
    plane.registry.update("statefulsets.apps", changed)
    plane.clock.run_pending()
    status = get(plane, "statefulsets.apps", "db")["status"]
    after = status["updateRevision"]
    assert after != before
    revisions = {
        p["metadata"]["name"]: p["metadata"]["labels"]["controller-revision-hash"] for p in pods(plane)
    }
    assert revisions == {"db-0": before, "db-1": after, "db-2": after}
    assert (status["currentRevision"], status["currentReplicas"], status["updatedReplicas"]) == (before, 1, 2)
    images = {p["metadata"]["name"]: p["spec"]["containers"][0]["image"] for p in pods(plane)}
    assert images == {"db-0": "busybox", "db-1": "busybox:2", "db-2": "busybox:2"}


def test_claim_templates_create_each_pods_claims_before_the_pod() -> None:
    plane = running_plane("n1")
    claim = {
        "metadata": {"name": "data", "labels": {"tier": "db"}},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    plane.registry.create("statefulsets.apps", statefulset("db", 1, volumeClaimTemplates=[claim]))
    plane.clock.run_pending()
    pod = get(plane, "pods", "db-0")
    assert pod["spec"]["volumes"] == [{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}}]
    created = get(plane, "persistentvolumeclaims", "data-db-0")
    assert created["metadata"]["labels"] == {"tier": "db", "app": "db"}
    assert created["spec"]["resources"] == {"requests": {"storage": "1Gi"}}
    assert [e for e in events(plane, "statefulset-controller") if e[1] == "SuccessfulCreate"] == [
        ("Normal", "SuccessfulCreate", "create Claim data-db-0 Pod db-0 in StatefulSet db success"),
        ("Normal", "SuccessfulCreate", "create Pod db-0 in StatefulSet db successful"),
    ]


def test_a_deleting_claim_retention_policy_is_reported_not_modelled() -> None:
    plane = running_plane("n1")
    retention = {"whenDeleted": "Delete", "whenScaled": "Retain"}
    plane.registry.create(
        "statefulsets.apps", statefulset("db", 1, persistentVolumeClaimRetentionPolicy=retention)
    )
    plane.clock.run_pending()
    assert (
        "Warning",
        "NotModelled",
        "spec.persistentVolumeClaimRetentionPolicy (whenDeleted: Delete): not modelled: "
        "kubetaint's statefulset controller retains the claims it creates",
    ) in events(plane, "statefulset-controller")


def _bare_pod(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }


def test_an_orphan_pod_holding_an_ordinals_name_is_adopted() -> None:
    plane = running_plane("n1")
    plane.registry.create("pods", _bare_pod("db-0", {"app": "db"}))
    created = plane.registry.create("statefulsets.apps", statefulset("db", 2))
    plane.clock.run_pending()
    (ref,) = get(plane, "pods", "db-0")["metadata"]["ownerReferences"]
    assert (ref["kind"], ref["uid"], ref["controller"]) == ("StatefulSet", created["metadata"]["uid"], True)
    assert _names(plane) == ["db-0", "db-1"]


def test_a_pod_of_that_name_the_set_cannot_claim_holds_the_ordinal_without_an_event() -> None:
    # upstream's CreateStatefulPod sinks AlreadyExists: no event, the sync is retried with back-off
    plane = running_plane("n1")
    plane.registry.create("pods", _bare_pod("db-0", {"app": "other"}))
    plane.registry.create("statefulsets.apps", statefulset("db", 2))
    plane.clock.advance(5)
    assert _names(plane) == ["db-0"]
    assert "ownerReferences" not in get(plane, "pods", "db-0")["metadata"]
    assert [e for e in events(plane, "statefulset-controller") if e[1] == "FailedCreate"] == []


def test_an_orphan_created_later_with_a_members_name_is_adopted_and_scaled_down() -> None:
    plane = running_plane("n1")
    created = plane.registry.create("statefulsets.apps", statefulset("db", 2))
    plane.clock.run_pending()
    plane.registry.create("pods", _bare_pod("db-5", {"app": "db"}))
    plane.registry.create("pods", _bare_pod("stray", {"app": "db"}))
    plane.clock.run_pending()
    assert _names(plane) == ["db-0", "db-1", "stray"]  # db-5 adopted, then deleted as condemned
    assert "ownerReferences" not in get(plane, "pods", "stray")["metadata"]  # not a member: ignored
    deleted = [e for e in events(plane, "statefulset-controller") if e[1] == "SuccessfulDelete"]
    assert deleted == [("Normal", "SuccessfulDelete", "delete Pod db-5 in StatefulSet db successful")]
    assert created["metadata"]["uid"]


def test_a_pod_that_stops_matching_the_selector_is_released() -> None:
    plane = running_plane("n1")
    plane.registry.create("statefulsets.apps", statefulset("db", 2))
    plane.clock.run_pending()
    pod = get(plane, "pods", "db-1")
    pod["metadata"]["labels"]["app"] = "debug"
    plane.registry.update("pods", pod)
    plane.clock.run_pending()
    assert "ownerReferences" not in get(plane, "pods", "db-1")["metadata"]
    assert get(plane, "statefulsets.apps", "db")["status"]["replicas"] == 1
