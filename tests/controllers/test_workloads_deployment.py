"""Deployment controller: one ReplicaSet `<name>-<pod-template-hash>`, scaling, template changes, status."""

from __future__ import annotations

from controllers.workload_builders import deployment, events, make_env, owner_ref, pods_of
from kubetaint.controllers.deployment import DeploymentController
from kubetaint.controllers.deployment.hashing import compute_hash, fnv32a, safe_encode
from kubetaint.controllers.replicaset import ReplicaSetController
from kubetaint.core.names import ALPHANUMS


def start():
    clock, store, rng = make_env()
    ReplicaSetController(store, clock, rng).start()
    DeploymentController(store, clock).start()
    return clock, store


def replicasets(store):
    return {r["metadata"]["name"]: r for r in store.list("replicasets.apps").items}


def make_ready(clock, store, rounds: int = 20) -> None:
    """Play the kubelets: every pod Running and Ready, until the rollout stops creating pods."""
    for _ in range(rounds):
        clock.run_pending()
        waiting = [p for p in pods_of(store) if (p.get("status") or {}).get("phase") != "Running"]
        if not waiting:
            return
        for p in waiting:
            ready = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
            store.update("pods", {**p, "status": ready})


def test_fnv32a_known_vectors() -> None:
    assert fnv32a(b"") == 0x811C9DC5
    assert fnv32a(b"a") == 0xE40C292C
    assert fnv32a(b"foobar") == 0xBF9CF968


def test_safe_encode_maps_digits_onto_safe_alphanumerics() -> None:
    assert safe_encode("0123456789") == "".join(ALPHANUMS[ord(c) % 27] for c in "0123456789")
    assert set(compute_hash({"spec": {}})) <= set(ALPHANUMS)


def test_creates_one_replicaset_named_with_the_template_hash() -> None:
    clock, store = start()
    d = store.create("deployments.apps", deployment("web", 3))
    clock.run_pending()
    [(name, rs)] = replicasets(store).items()
    pod_hash = rs["metadata"]["labels"]["pod-template-hash"]
    assert name == f"web-{pod_hash}"
    assert pod_hash == compute_hash(d["spec"]["template"])
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": pod_hash}
    assert rs["spec"]["template"]["metadata"]["labels"]["pod-template-hash"] == pod_hash
    assert rs["metadata"]["ownerReferences"] == [owner_ref(d, "Deployment")]
    assert len(pods_of(store)) == 3
    assert [e["message"] for e in events(store, "ScalingReplicaSet")] == [
        f"Scaled up replica set {name} from 0 to 3"
    ]


def test_scaling_the_deployment_scales_its_replicaset() -> None:
    clock, store = start()
    store.create("deployments.apps", deployment("web", 3))
    clock.run_pending()
    d = store.get("deployments.apps", "default", "web")
    store.update("deployments.apps", {**d, "spec": {**d["spec"], "replicas": 1}})
    clock.run_pending()
    [rs] = replicasets(store).values()
    assert rs["spec"]["replicas"] == 1 and len(pods_of(store)) == 1
    assert events(store, "ScalingReplicaSet")[-1]["message"] == (
        f"Scaled down replica set {rs['metadata']['name']} to 1 from 3"
    )


def test_template_change_creates_a_new_replicaset_and_scales_the_old_to_zero() -> None:
    clock, store = start()
    store.create("deployments.apps", deployment("web", 2))
    clock.run_pending()
    old_name = next(iter(replicasets(store)))
    d = store.get("deployments.apps", "default", "web")
    template = {**d["spec"]["template"], "spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}
    store.update("deployments.apps", {**d, "spec": {**d["spec"], "template": template}})
    make_ready(clock, store)
    sets = replicasets(store)
    assert len(sets) == 2 and sets[old_name]["spec"]["replicas"] == 0
    [new_name] = [n for n in sets if n != old_name]
    assert sets[new_name]["spec"]["replicas"] == 2
    images = {p["spec"]["containers"][0]["image"] for p in pods_of(store)}
    assert images == {"nginx:2"} and len(pods_of(store)) == 2
    status = store.get("deployments.apps", "default", "web")["status"]
    assert (status["replicas"], status["updatedReplicas"]) == (2, 2)


def test_status_reports_availability_condition() -> None:
    clock, store = start()
    store.create("deployments.apps", deployment("web", 1))
    clock.run_pending()
    status = store.get("deployments.apps", "default", "web")["status"]
    assert status["unavailableReplicas"] == 1
    [cond] = [c for c in status["conditions"] if c["type"] == "Available"]
    assert (cond["type"], cond["status"], cond["reason"], cond["message"]) == (
        "Available",
        "False",
        "MinimumReplicasUnavailable",
        "Deployment does not have minimum availability.",
    )
    [p] = pods_of(store)
    ready = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    store.update("pods", {**p, "status": ready})
    clock.run_pending()
    status = store.get("deployments.apps", "default", "web")["status"]
    reasons = {c["type"]: c["reason"] for c in status["conditions"]}
    assert status["availableReplicas"] == 1
    assert reasons == {"Available": "MinimumReplicasAvailable", "Progressing": "NewReplicaSetAvailable"}


def test_paused_deployment_is_not_scaled() -> None:
    clock, store = start()
    store.create(
        "deployments.apps", {**deployment("web", 2), "spec": {**deployment("web", 2)["spec"], "paused": True}}
    )
    clock.run_pending()
    assert replicasets(store) == {}


def test_existing_orphan_replicaset_with_the_same_template_is_adopted_not_duplicated() -> None:
    clock, store = start()
    d_body = deployment("web", 2)
    template = d_body["spec"]["template"]
    pod_hash = compute_hash(template)
    labels = {**template["metadata"]["labels"], "pod-template-hash": pod_hash}
    store.create(
        "replicasets.apps",
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": f"web-{pod_hash}", "namespace": "default", "labels": labels},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": labels},
                "template": {**template, "metadata": {"labels": labels}},
            },
        },
    )
    d = store.create("deployments.apps", d_body)
    clock.run_pending()
    [rs] = replicasets(store).values()
    assert rs["metadata"]["ownerReferences"] == [owner_ref(d, "Deployment")]
    assert events(store, "ScalingReplicaSet") == []
