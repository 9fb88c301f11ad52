"""Deployments and the garbage collector on the shared control plane (virtual clock, hollow
kubelets): rolling-update bounds, Recreate, proportional scaling, revisions, rollback, history
cleanup, and Background / Orphan / Foreground cascading deletion."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.api.errors import StatusError
from kubetaint.clock import VirtualClock
from kubetaint.controllers.replicaset import podutil
from kubetaint.controlplane import ControlPlane
from kubetaint.store.changes import each_event
from kubetaint.store.interface import WatchEvent

from .builders import node, plane

JSON = dict[str, Any]
DEPLOYMENTS = "deployments.apps"
REPLICASETS = "replicasets.apps"


def web(replicas: int, image: str = "nginx:1", **spec: Any) -> JSON:
    labels = {"app": "web"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": image}]},
            },
            **spec,
        },
    }


def cluster(nodes: int = 3) -> tuple[ControlPlane, VirtualClock]:
    cp = plane()
    cp.ensure_system_namespaces()
    for i in range(nodes):
        cp.fleet.add(node(f"n{i}"))
    cp.start()
    assert isinstance(cp.clock, VirtualClock)
    return cp, cp.clock


def pods(cp: ControlPlane) -> list[JSON]:
    return cp.store.list("pods", namespace="default").items


def sets(cp: ControlPlane) -> dict[str, JSON]:
    return {rs["metadata"]["name"]: rs for rs in cp.store.list(REPLICASETS, namespace="default").items}


def get_web(cp: ControlPlane) -> JSON:
    return cp.store.get(DEPLOYMENTS, "default", "web")


def set_image(cp: ControlPlane, image: str) -> None:
    d = get_web(cp)
    template = d["spec"]["template"]
    spec = {**template["spec"], "containers": [{"name": "c", "image": image}]}
    cp.registry.update(DEPLOYMENTS, {**d, "spec": {**d["spec"], "template": {**template, "spec": spec}}})


def rolled_out(cp: ControlPlane) -> bool:
    """kubectl rollout status's success test."""
    d = get_web(cp)
    st = d.get("status") or {}
    want = d["spec"]["replicas"]
    return (
        st.get("observedGeneration", 0) >= d["metadata"]["generation"]
        and st.get("updatedReplicas", 0) == want
        and st.get("replicas", 0) == want
        and st.get("availableReplicas", 0) == want
    )


def test_a_new_deployment_rolls_out_with_revision_1_and_upstream_conditions() -> None:
    cp, clock = cluster()
    cp.registry.create(DEPLOYMENTS, web(3))
    clock.advance(30)
    assert rolled_out(cp)
    d = get_web(cp)
    [rs] = sets(cp).values()
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    assert rs["metadata"]["annotations"] == {
        "deployment.kubernetes.io/revision": "1",
        "deployment.kubernetes.io/desired-replicas": "3",
        "deployment.kubernetes.io/max-replicas": "4",
    }
    conditions = {c["type"]: (c["status"], c["reason"], c["message"]) for c in d["status"]["conditions"]}
    assert conditions == {
        "Available": ("True", "MinimumReplicasAvailable", "Deployment has minimum availability."),
        "Progressing": (
            "True",
            "NewReplicaSetAvailable",
            f'ReplicaSet "{rs["metadata"]["name"]}" has successfully progressed.',
        ),
    }
    assert d["status"]["unavailableReplicas"] == 0 and d["status"]["readyReplicas"] == 3


def test_a_rolling_update_stays_within_max_surge_and_max_unavailable() -> None:
    """Upstream's bounds are on the ReplicaSets' sizes (never above replicas + maxSurge) and on
    available pods (never below replicas - maxUnavailable); a scaled-down ReplicaSet's pod may
    outlive its scale-down by one controller sync, as on a real cluster."""
    cp, clock = cluster(nodes=4)
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2, "maxUnavailable": 1}}
    cp.registry.create(DEPLOYMENTS, web(10, strategy=strategy))
    clock.advance(30)
    assert rolled_out(cp)
    sizes: list[int] = []
    ready: list[int] = []

    def watch_sets(_event: WatchEvent) -> None:
        sizes.append(sum(rs["spec"]["replicas"] for rs in sets(cp).values()))

    def watch_pods(_event: WatchEvent) -> None:
        live = [p for p in pods(cp) if not p["metadata"].get("deletionTimestamp")]
        ready.append(sum(1 for p in live if podutil.is_ready(p)))

    unsubscribe = [
        cp.store.subscribe(each_event(watch_sets), REPLICASETS),
        cp.store.subscribe(each_event(watch_pods), "pods"),
    ]
    set_image(cp, "nginx:2")
    clock.advance(120)
    for stop in unsubscribe:
        stop()
    assert rolled_out(cp)
    assert max(sizes) == 12
    assert min(ready) == 9
    images = {p["spec"]["containers"][0]["image"] for p in pods(cp)}
    assert images == {"nginx:2"} and len(pods(cp)) == 10


def test_the_old_replicaset_is_kept_at_zero_and_the_new_one_gets_revision_2() -> None:
    cp, clock = cluster()
    cp.registry.create(DEPLOYMENTS, web(3))
    clock.advance(30)
    [first] = sets(cp)
    set_image(cp, "nginx:2")
    clock.advance(60)
    assert rolled_out(cp)
    current = sets(cp)
    [second] = [name for name in current if name != first]
    assert current[first]["spec"]["replicas"] == 0
    assert current[second]["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    assert get_web(cp)["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"


def test_rolling_back_to_the_old_template_reuses_its_replicaset_with_a_new_revision() -> None:
    cp, clock = cluster()
    cp.registry.create(DEPLOYMENTS, web(2))
    clock.advance(30)
    [first] = sets(cp)
    set_image(cp, "nginx:2")
    clock.advance(60)
    set_image(cp, "nginx:1")
    clock.advance(60)
    assert rolled_out(cp)
    current = sets(cp)
    assert len(current) == 2 and current[first]["spec"]["replicas"] == 2
    annotations = current[first]["metadata"]["annotations"]
    assert annotations["deployment.kubernetes.io/revision"] == "3"
    assert annotations["deployment.kubernetes.io/revision-history"] == "1"


def test_recreate_scales_the_old_replicaset_to_zero_before_creating_new_pods() -> None:
    cp, clock = cluster()
    cp.registry.create(DEPLOYMENTS, web(3, strategy={"type": "Recreate"}))
    clock.advance(30)
    mixed: list[set[str]] = []

    def watch(_event: WatchEvent) -> None:
        mixed.append({p["spec"]["containers"][0]["image"] for p in pods(cp)})

    unsubscribe = cp.store.subscribe(each_event(watch), "pods")
    set_image(cp, "nginx:2")
    clock.advance(60)
    unsubscribe()
    assert rolled_out(cp)
    assert all(len(images) <= 1 for images in mixed)


def cordon_all(cp: ControlPlane) -> None:
    for n in cp.store.list("nodes").items:
        cp.registry.update("nodes", {**n, "spec": {**n["spec"], "unschedulable": True}})


def test_scaling_mid_rollout_spreads_the_change_over_both_replicasets() -> None:
    cp, clock = cluster()
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 3, "maxUnavailable": 0}}
    cp.registry.create(DEPLOYMENTS, web(10, strategy=strategy))
    clock.advance(30)
    cordon_all(cp)  # new pods stay Pending: the rollout stops after its first step
    set_image(cp, "nginx:2")
    clock.advance(5)
    before = {name: rs["spec"]["replicas"] for name, rs in sets(cp).items()}
    assert sorted(before.values()) == [3, 10]
    d = get_web(cp)
    cp.registry.update(DEPLOYMENTS, {**d, "spec": {**d["spec"], "replicas": 20}})
    clock.advance(5)
    after = {name: rs["spec"]["replicas"] for name, rs in sets(cp).items()}
    # 20 + maxSurge 3 = 23, split in proportion to 10:3 (rounded), leftovers to the largest
    assert after == {name: round(size * 23 / 13) for name, size in before.items()}
    for rs in sets(cp).values():
        annotations = rs["metadata"]["annotations"]
        assert annotations["deployment.kubernetes.io/desired-replicas"] == "20"
        assert annotations["deployment.kubernetes.io/max-replicas"] == "23"


def test_a_paused_deployment_records_the_paused_and_resumed_conditions() -> None:
    cp, clock = cluster()
    cp.registry.create(DEPLOYMENTS, web(2))
    clock.advance(30)

    def progressing() -> tuple[str, str, str]:
        [cond] = [c for c in get_web(cp)["status"]["conditions"] if c["type"] == "Progressing"]
        return (cond["status"], cond["reason"], cond["message"])

    d = get_web(cp)
    cp.registry.update(DEPLOYMENTS, {**d, "spec": {**d["spec"], "paused": True}})
    clock.advance(1)
    assert progressing() == ("Unknown", "DeploymentPaused", "Deployment is paused")
    set_image(cp, "nginx:2")
    clock.advance(30)
    assert len(sets(cp)) == 1  # no rollout while paused
    d = get_web(cp)
    cp.registry.update(DEPLOYMENTS, {**d, "spec": {**d["spec"], "paused": False}})
    clock.advance(30)
    assert rolled_out(cp) and len(sets(cp)) == 2
    assert progressing()[1] == "NewReplicaSetAvailable"


def test_revision_history_limit_deletes_the_oldest_idle_replicasets() -> None:
    cp, clock = cluster()
    cp.registry.create(DEPLOYMENTS, web(1, revisionHistoryLimit=1))
    clock.advance(30)
    for image in ("nginx:2", "nginx:3", "nginx:4"):
        set_image(cp, image)
        clock.advance(60)
    remaining = sets(cp)
    revisions = sorted(
        rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"] for rs in remaining.values()
    )
    assert revisions == ["3", "4"]


def test_deleting_a_deployment_in_the_background_removes_its_replicasets_and_pods() -> None:
    cp, clock = cluster()
    cp.registry.create(DEPLOYMENTS, web(3))
    clock.advance(30)
    cp.registry.delete(DEPLOYMENTS, "default", "web", propagation_policy="Background")
    clock.advance(1)
    assert sets(cp) == {} and pods(cp) == []


def test_orphan_deletion_keeps_the_replicaset_without_its_owner_reference() -> None:
    cp, clock = cluster()
    cp.registry.create(DEPLOYMENTS, web(2))
    clock.advance(30)
    marked = cp.registry.delete(DEPLOYMENTS, "default", "web", propagation_policy="Orphan")
    assert marked["metadata"]["finalizers"] == ["orphan"] and marked["metadata"]["deletionTimestamp"]
    clock.advance(1)
    with pytest.raises(StatusError):
        get_web(cp)
    [rs] = sets(cp).values()
    assert "ownerReferences" not in rs["metadata"] and rs["spec"]["replicas"] == 2
    assert len(pods(cp)) == 2


def test_foreground_deletion_waits_for_the_blocking_dependents() -> None:
    cp, clock = cluster()
    cp.registry.create(DEPLOYMENTS, web(2))
    clock.advance(30)
    order: list[str] = []

    def watch(event: WatchEvent) -> None:
        if event.type == "DELETED":
            order.append(event.object["kind"])

    unsubscribe = cp.store.subscribe(each_event(watch))
    marked = cp.registry.delete(DEPLOYMENTS, "default", "web", propagation_policy="Foreground")
    assert marked["metadata"]["finalizers"] == ["foregroundDeletion"]
    clock.advance(1)
    unsubscribe()
    assert order == ["Pod", "Pod", "ReplicaSet", "Deployment"]
    assert sets(cp) == {} and pods(cp) == []


def test_a_replicaset_whose_owner_never_existed_is_collected_at_start_up() -> None:
    cp = plane()
    cp.ensure_system_namespaces()
    ghost = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "gone",
        "uid": "no-such-uid",
        "controller": True,
    }
    body = web(1)
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "gone-1", "namespace": "default", "ownerReferences": [ghost]},
        "spec": {**body["spec"], "replicas": 0},
    }
    cp.registry.create(REPLICASETS, rs)
    cp.start()
    assert isinstance(cp.clock, VirtualClock)
    cp.clock.advance(1)
    assert sets(cp) == {}


def test_a_pod_owned_by_a_kind_the_collector_does_not_follow_is_kept() -> None:
    cp, clock = cluster()
    owner = {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "name": "db",
        "uid": "rc-uid",
        "controller": True,
    }
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "db-0", "namespace": "default", "ownerReferences": [owner]},
        "spec": {"containers": [{"name": "c", "image": "db"}]},
    }
    cp.registry.create("pods", body)
    clock.advance(5)
    assert [p["metadata"]["name"] for p in pods(cp)] == ["db-0"]


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [
        pytest.param("batch/v1", "Job", id="a Job"),
        pytest.param("batch/v1", "CronJob", id="a CronJob"),
        pytest.param("apps/v1", "StatefulSet", id="a StatefulSet"),
        pytest.param("v1", "Service", id="a Service"),
        pytest.param("v1", "ConfigMap", id="a ConfigMap"),
        pytest.param("v1", "Node", id="a Node (cluster-scoped)"),
    ],
)
def test_a_pod_whose_owner_is_gone_is_collected(api_version: str, kind: str) -> None:
    cp, clock = cluster()
    owner = {"apiVersion": api_version, "kind": kind, "name": "gone", "uid": "gone-uid", "controller": True}
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "gone-0", "namespace": "default", "ownerReferences": [owner]},
        "spec": {"containers": [{"name": "c", "image": "db"}]},
    }
    cp.registry.create("pods", body)
    clock.advance(5)
    assert pods(cp) == []


def config_map(name: str, owner: JSON) -> JSON:
    meta = {"name": name, "namespace": "default", "ownerReferences": [owner]}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": "v"}}


def test_a_config_map_owned_by_a_node_stays_while_the_node_exists_and_goes_with_it() -> None:
    cp, clock = cluster()
    n1 = cp.store.get("nodes", "", "n1")
    owner = {"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": n1["metadata"]["uid"]}
    cp.registry.create("configmaps", config_map("n1-config", owner))
    clock.advance(5)
    assert cp.store.get("configmaps", "default", "n1-config")["metadata"]["ownerReferences"] == [owner]
    cp.registry.delete("nodes", "", "n1")
    clock.advance(5)
    with pytest.raises(StatusError):
        cp.store.get("configmaps", "default", "n1-config")


def test_foreground_deletion_of_a_deployment_waits_for_its_blocking_config_map() -> None:
    cp, clock = cluster()
    cp.registry.create(DEPLOYMENTS, web(1))
    clock.advance(30)
    uid = get_web(cp)["metadata"]["uid"]
    owner = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "web",
        "uid": uid,
        "blockOwnerDeletion": True,
    }
    cp.registry.create("configmaps", config_map("web-config", owner))
    order: list[str] = []

    def watch(event: WatchEvent) -> None:
        if event.type == "DELETED":
            order.append(event.object["kind"])

    unsubscribe = cp.store.subscribe(each_event(watch))
    cp.registry.delete(DEPLOYMENTS, "default", "web", propagation_policy="Foreground")
    clock.advance(1)
    unsubscribe()
    assert order[-1] == "Deployment" and "ConfigMap" in order


def test_orphan_deletion_of_a_stateful_set_keeps_its_pods_without_the_reference() -> None:
    cp, clock = cluster()
    body = web(2)
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {**body["spec"], "serviceName": "db", "podManagementPolicy": "Parallel"},
    }
    cp.registry.create("statefulsets.apps", sts)
    clock.advance(30)
    assert sorted(p["metadata"]["name"] for p in pods(cp)) == ["db-0", "db-1"]
    cp.registry.delete("statefulsets.apps", "default", "db", propagation_policy="Orphan")
    clock.advance(1)
    assert cp.store.list("statefulsets.apps", namespace="default").items == []
    kept = pods(cp)
    assert sorted(p["metadata"]["name"] for p in kept) == ["db-0", "db-1"]
    assert all("ownerReferences" not in p["metadata"] for p in kept)
