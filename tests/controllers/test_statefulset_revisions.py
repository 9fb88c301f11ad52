"""A StatefulSet's ControllerRevisions with the scheduler and hollow kubelets, as
stateful_set_control.go keeps them: one revision per template (numbered in order), the old
revision's template for the pods below the partition (read back from the stored revision, so
a new controller does the same), a rollback renumbering the equal revision instead of creating
one, and history beyond revisionHistoryLimit deleted unless a pod uses it."""

from __future__ import annotations

from typing import Any

from controllers.batch_builders import get, pods, running_plane, statefulset
from kubetaint.controllers.statefulset import StatefulSetController
from kubetaint.controlplane import ControlPlane

JSON = dict[str, Any]
REVISIONS = "controllerrevisions.apps"


def _revisions(plane: ControlPlane) -> list[tuple[str, int]]:
    items = plane.store.list(REVISIONS, namespace="default").items
    return sorted(((r["metadata"]["name"], r["revision"]) for r in items), key=lambda item: item[1])


def _set_image(plane: ControlPlane, image: str) -> None:
    changed = get(plane, "statefulsets.apps", "db")
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = image
    plane.registry.update("statefulsets.apps", changed)
    plane.clock.run_pending()


def _images(plane: ControlPlane) -> dict[str, str]:
    return {p["metadata"]["name"]: p["spec"]["containers"][0]["image"] for p in pods(plane)}


def test_the_sets_template_is_stored_as_its_first_revision() -> None:
    plane = running_plane("n1")
    created = plane.registry.create(
        "statefulsets.apps",
        {
            **statefulset("db", 2),
            "metadata": {"name": "db", "namespace": "default", "annotations": {"team": "a"}},
        },
    )
    plane.clock.run_pending()
    (revision,) = plane.store.list(REVISIONS, namespace="default").items
    name = revision["metadata"]["name"]
    assert get(plane, "statefulsets.apps", "db")["status"]["updateRevision"] == name
    assert revision["revision"] == 1
    assert revision["data"] == {"spec": {"template": {**created["spec"]["template"], "$patch": "replace"}}}
    labels = revision["metadata"]["labels"]
    assert labels["app"] == "db" and name == f"db-{labels['controller.kubernetes.io/hash']}"
    assert revision["metadata"]["annotations"] == {"team": "a"}
    (ref,) = revision["metadata"]["ownerReferences"]
    assert (ref["kind"], ref["name"], ref["controller"]) == ("StatefulSet", "db", True)


def test_pods_below_the_partition_are_recreated_from_the_stored_current_revision() -> None:
    plane = running_plane("n1")
    plane.registry.create(
        "statefulsets.apps",
        statefulset("db", 3, updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}),
    )
    plane.clock.run_pending()
    _set_image(plane, "busybox:2")
    assert _images(plane) == {"db-0": "busybox", "db-1": "busybox:2", "db-2": "busybox:2"}
    assert [number for _, number in _revisions(plane)] == [1, 2]
    # a new controller (a restart) reads the old template back from the stored revision
    for controller in [c for c in plane.controllers if isinstance(c, StatefulSetController)]:
        controller.stop()
        plane.controllers.remove(controller)
    fresh = StatefulSetController(plane.registry, plane.clock)
    plane.controllers.append(fresh)
    fresh.start()
    plane.registry.delete("pods", "default", "db-0")
    plane.clock.advance(5)
    assert _images(plane)["db-0"] == "busybox"


def test_a_rollback_renumbers_the_equal_revision_instead_of_creating_one() -> None:
    plane = running_plane("n1")
    plane.registry.create("statefulsets.apps", statefulset("db", 2))
    plane.clock.run_pending()
    ((first, _),) = _revisions(plane)
    _set_image(plane, "busybox:2")
    plane.clock.advance(5)
    ((_, one), (second, two)) = _revisions(plane)
    assert (one, two) == (1, 2)
    _set_image(plane, "busybox")
    plane.clock.advance(5)
    assert _revisions(plane) == [(second, 2), (first, 3)]
    status = get(plane, "statefulsets.apps", "db")["status"]
    assert status["updateRevision"] == first
    assert _images(plane) == {"db-0": "busybox", "db-1": "busybox"}


def test_history_beyond_the_limit_is_deleted_unless_a_pod_uses_it() -> None:
    plane = running_plane("n1")
    plane.registry.create("statefulsets.apps", statefulset("db", 1, revisionHistoryLimit=1))
    plane.clock.run_pending()
    for image in ("busybox:2", "busybox:3", "busybox:4"):
        _set_image(plane, image)
        plane.clock.advance(5)
    names = [name for name, _ in _revisions(plane)]
    assert [number for _, number in _revisions(plane)] == [3, 4]
    assert get(plane, "statefulsets.apps", "db")["status"]["updateRevision"] == names[-1]
    assert _images(plane) == {"db-0": "busybox:4"}


def test_an_orphan_revision_matching_the_selector_is_adopted_and_reused() -> None:
    plane = running_plane("n1")
    first = plane.registry.create("statefulsets.apps", statefulset("db", 1))
    plane.clock.run_pending()
    (revision,) = plane.store.list(REVISIONS, namespace="default").items
    # the set deleted with --cascade=orphan: its revision (and pod) stay without an owner
    plane.registry.delete("statefulsets.apps", "default", "db", propagation_policy="Orphan")
    plane.clock.run_pending()
    (orphan,) = plane.store.list(REVISIONS, namespace="default").items
    assert "ownerReferences" not in orphan["metadata"] or orphan["metadata"]["ownerReferences"] == []
    second = plane.registry.create("statefulsets.apps", statefulset("db", 1))
    plane.clock.run_pending()
    (adopted,) = plane.store.list(REVISIONS, namespace="default").items
    assert adopted["metadata"]["name"] == revision["metadata"]["name"]
    (ref,) = adopted["metadata"]["ownerReferences"]
    assert (ref["uid"], ref["controller"]) == (second["metadata"]["uid"], True)
    assert ref["uid"] != first["metadata"]["uid"]
    (pod,) = pods(plane)
    assert pod["metadata"]["ownerReferences"][0]["uid"] == second["metadata"]["uid"]  # the pod too
