"""The field manager of a write on the served kinds' schemas (apimachinery
managedfields/internal: fieldmanager_test.go, skipnonapplied_test.go, stripmeta,
lastappliedupdater_test.go, capmanagers), with upstream's encoding of the entries."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from kubetaint.core.fieldmanager import manager as fm
from kubetaint.core.fieldmanager.merge import ConflictsError

T0, T1, T2 = "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z"


def req(manager: str, time: str = T0, subresource: str = "", api_version: str = "v1") -> fm.Request:
    return fm.Request(manager, api_version, subresource, time)


def pod(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec},
    }


def stored(obj: dict[str, Any]) -> dict[str, Any]:
    """The object as the store keeps it (a uid, a resourceVersion)."""
    out = copy.deepcopy(obj)
    out["metadata"] = {**out["metadata"], "uid": "u-1", "resourceVersion": "7"}
    return out


def entries(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return list(obj["metadata"].get("managedFields") or [])


def managers(obj: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(e["manager"], e["operation"], e.get("subresource", "")) for e in entries(obj)]


def test_create_records_the_creators_fields_in_upstreams_encoding() -> None:
    created = fm.update(None, pod(tolerations=[{"key": "k", "operator": "Exists"}]), req("kubectl-create"))
    assert entries(created) == [
        {
            "manager": "kubectl-create",
            "operation": "Update",
            "apiVersion": "v1",
            "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                "f:spec": {
                    "f:containers": {'k:{"name":"c"}': {".": {}, "f:image": {}, "f:name": {}}},
                    "f:tolerations": {},
                },
            },
        }
    ]


def test_an_update_of_an_object_that_was_never_tracked_records_nothing() -> None:
    live = stored(pod())
    assert "managedFields" not in fm.update(live, pod(nodeName="n1"), req("kubectl-edit"))["metadata"]


def test_updaters_merge_per_manager_and_lose_what_others_change() -> None:
    live = stored(fm.update(None, pod(), req("kubectl-create")))
    changed = copy.deepcopy(live)
    changed["spec"]["containers"][0]["image"] = "nginx:2"
    after = fm.update(live, changed, req("kubectl-set", T1))
    assert managers(after) == [("kubectl-create", "Update", ""), ("kubectl-set", "Update", "")]
    create, set_image = entries(after)
    assert create["fieldsV1"]["f:spec"]["f:containers"]['k:{"name":"c"}'] == {".": {}, "f:name": {}}
    assert set_image["fieldsV1"] == {"f:spec": {"f:containers": {'k:{"name":"c"}': {"f:image": {}}}}}
    assert set_image["time"] == T1


def test_a_write_that_changes_nothing_keeps_the_managers_time() -> None:
    live = stored(fm.update(None, pod(), req("kubectl-create")))
    assert entries(fm.update(live, copy.deepcopy(live), req("kubectl-create", T2))) == entries(live)


@pytest.mark.parametrize(
    "reset",
    [pytest.param([], id="an empty list"), pytest.param([{}], id="a list of one empty entry")],
)
def test_a_request_resets_managed_fields(reset: list[Any]) -> None:
    live = stored(fm.update(None, pod(), req("kubectl-create")))
    new = copy.deepcopy(live)
    new["metadata"]["managedFields"] = reset
    assert "managedFields" not in fm.update(live, new, req("kubectl-edit", T1))["metadata"]


def test_invalid_managed_fields_in_a_request_keep_the_stored_ones() -> None:
    live = stored(fm.update(None, pod(), req("kubectl-create")))
    new = copy.deepcopy(live)
    new["metadata"]["managedFields"] = [{"manager": "x", "operation": "Delete", "apiVersion": "v1"}]
    assert entries(fm.update(live, new, req("kubectl-edit", T1))) == entries(live)


def test_a_status_write_is_its_own_entry_and_ignores_managed_fields_in_the_body() -> None:
    live = stored(fm.update(None, pod(), req("kubectl-create")))
    live["status"] = {"qosClass": "BestEffort"}
    new = copy.deepcopy(live)
    new["status"] = {"phase": "Running"}
    new["metadata"]["managedFields"] = []
    after = fm.update(live, new, req("kubelet", T1, subresource="status"))
    assert managers(after) == [("kubectl-create", "Update", ""), ("kubelet", "Update", "status")]
    assert entries(after)[1]["fieldsV1"] == {"f:status": {"f:phase": {}}}


def test_server_set_metadata_is_never_owned() -> None:
    created = fm.update(None, {**pod(), "metadata": {"name": "p", "generateName": "p-"}}, req("x"))
    assert entries(created)[0]["fieldsV1"]["f:metadata"] == {"f:generateName": {}}


def test_more_than_ten_updaters_merge_the_oldest_into_ancient_changes() -> None:
    live = stored(fm.update(None, pod(), req("creator", "2026-01-01T00:00:00Z")))
    for i in range(11):
        new = copy.deepcopy(live)
        new["metadata"]["labels"] = {**new["metadata"]["labels"], f"l{i}": "x"}
        live = fm.update(live, new, req(f"updater-{i:02d}", f"2026-01-01T01:{i:02d}:00Z"))
    names = [m for m, _, _ in managers(live)]
    assert len(names) == 10
    assert names[0] == "ancient-changes"
    assert names[1:] == [f"updater-{i:02d}" for i in range(2, 11)]


def test_apply_creates_and_owns_what_it_applies() -> None:
    created = fm.apply(None, pod(), req("kubectl"), "Pod", force=False)
    assert managers(created) == [("kubectl", "Apply", "")]
    assert entries(created)[0]["fieldsV1"] == {
        "f:metadata": {"f:labels": {"f:app": {}}},
        "f:spec": {"f:containers": {'k:{"name":"c"}': {".": {}, "f:image": {}, "f:name": {}}}},
    }


def test_reapplying_without_a_toleration_removes_it() -> None:
    tolerations = [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
    live = stored(fm.apply(None, pod(tolerations=tolerations), req("argocd"), "Pod", force=False))
    after = fm.apply(live, pod(), req("argocd", T1), "Pod", force=False)
    assert "tolerations" not in after["spec"]


def test_an_applied_field_another_manager_changed_conflicts_unless_forced() -> None:
    live = stored(fm.apply(None, pod(), req("kubectl"), "Pod", force=False))
    edited = copy.deepcopy(live)
    edited["spec"]["containers"][0]["image"] = "nginx:edited"
    live = fm.update(live, edited, req("kubectl-edit", T1))
    with pytest.raises(ConflictsError) as caught:
        fm.apply(live, pod(), req("kubectl", T2), "Pod", force=False)
    assert [(c.manager, c.path) for c in caught.value.conflicts] == [
        (
            '{"manager":"kubectl-edit","operation":"Update","apiVersion":"v1"}',
            ((0, "spec"), (0, "containers"), (1, (("name", (1, "c")),)), (0, "image")),
        )
    ]
    forced = fm.apply(live, pod(), req("kubectl", T2), "Pod", force=True)
    assert forced["spec"]["containers"][0]["image"] == "nginx"
    assert managers(forced) == [("kubectl", "Apply", "")]


def test_the_first_apply_to_an_untracked_object_gives_its_fields_to_before_first_apply() -> None:
    live = stored(pod(nodeName="n1"))
    after = fm.apply(live, pod(), req("kubectl"), "Pod", force=False)
    assert managers(after) == [("kubectl", "Apply", ""), ("before-first-apply", "Update", "")]
    assert after["spec"]["nodeName"] == "n1"


def test_a_no_op_apply_returns_the_live_object() -> None:
    live = stored(fm.apply(None, pod(), req("kubectl"), "Pod", force=False))
    again = fm.apply(live, pod(), req("kubectl", T1), "Pod", force=False)
    assert again == live


@pytest.mark.parametrize(
    ("config", "code", "message"),
    [
        pytest.param(
            {**pod(), "metadata": {"name": "p", "managedFields": [{"manager": "x"}]}},
            400,
            "metadata.managedFields must be nil",
            id="managedFields in the configuration",
        ),
        pytest.param(
            {**pod(), "kind": "Node"}, 400, "invalid object type: /v1, Kind=Node", id="another kind"
        ),
        pytest.param(
            {**pod(), "apiVersion": "apps/v1"},
            400,
            "invalid object type: apps/v1, Kind=Pod",
            id="another version",
        ),
        pytest.param(
            pod(containers=[{"image": "nginx"}]),
            500,
            "failed to create typed patch object (/v1, Kind=Pod): .spec.containers: element 0: associative "
            'list with keys has an element that omits key field "name" (and doesn\'t have default value)',
            id="a list item without its key",
        ),
    ],
)
def test_apply_refusals(config: dict[str, Any], code: int, message: str) -> None:
    with pytest.raises(fm.ApplyError) as caught:
        fm.apply(None, config, req("kubectl"), "Pod", force=False)
    assert (caught.value.code, caught.value.message) == (code, message)


def test_kubectls_server_side_apply_keeps_a_client_side_last_applied_annotation_in_step() -> None:
    annotated = pod()
    annotated["metadata"]["annotations"] = {fm.LAST_APPLIED: "{}"}
    live = stored(fm.update(None, annotated, req("kubectl-client-side-apply")))
    after = fm.apply(live, pod(), req("kubectl", T1), "Pod", force=False)
    assert after["metadata"]["annotations"][fm.LAST_APPLIED].startswith('{"apiVersion":"v1","kind":"Pod"')


def test_node_taints_are_one_atomic_field() -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"a": "b"}}, "spec": {}}
    live = stored(fm.update(None, node, req("kubelet")))
    tainted = copy.deepcopy(live)
    tainted["spec"]["taints"] = [{"key": "dedicated", "value": "foo", "effect": "PreferNoSchedule"}]
    after = fm.update(live, tainted, req("kubectl-taint", T1))
    taint = next(e for e in entries(after) if e["manager"] == "kubectl-taint")
    assert taint["fieldsV1"] == {"f:spec": {"f:taints": {}}}


# managedfieldsupdater_test.go: when an entry's time moves, as data -----------------------------


def configmap(**data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "configmap"}, "data": data}


TIME_CASES = [
    pytest.param(
        [("update", "a", {"key": "value"}), ("update", "a", {"key": "new-value"})],
        {"a": T1},
        id="an update that changes a field moves its manager's time",
    ),
    pytest.param(
        [("apply", "a", {"key": "value"}), ("apply", "a", {"key": "new-value"})],
        {"a": T1},
        id="an apply that changes a field moves its manager's time",
    ),
    pytest.param(
        [("update", "a", {"key": "value"}), ("update", "a", {"key": "value"})],
        {"a": T0},
        id="an update without changes keeps the time",
    ),
    pytest.param(
        [("apply", "a", {"key": "value"}), ("apply", "a", {"key": "value"})],
        {"a": T0},
        id="an apply without changes keeps the time",
    ),
    pytest.param(
        [
            ("update", "a", {"key_a": "value"}),
            ("update", "b", {"key_b": "value"}),
            ("update", "a", {"key_a": "value", "key_b": "new-value"}),
        ],
        {"a": T2, "b": None},
        id="an update taking a manager's only field removes its entry",
    ),
    pytest.param(
        [
            ("apply", "a", {"key_a": "value"}),
            ("apply", "b", {"key_b": "value"}),
            ("apply", "a", {"key_a": "new-value"}),
        ],
        {"a": T2, "b": T1},
        id="an apply of other fields leaves another manager's time",
    ),
    pytest.param(
        [("update", "a", {"key_a": "value", "key_b": "value"}), ("update", "b", {"key_b": "new-value"})],
        {"a": T0, "b": T1},
        id="taking fields over by an update leaves the previous manager's time",
    ),
    pytest.param(
        [("apply", "a", {"key_a": "value", "key_b": "value"}), ("apply", "b", {"key_b": "new-value"})],
        {"a": T0, "b": T1},
        id="taking fields over by an apply leaves the previous manager's time",
    ),
    pytest.param(
        [
            ("apply", "a", {"key_a": "value", "key_b": "value"}),
            ("apply", "b", {"key_a": "value", "key_b": "value"}),
        ],
        {"a": T0, "b": T1},
        id="co-owning by applying the same object gives the new manager its own time",
    ),
]


@pytest.mark.parametrize(("ops", "times"), TIME_CASES)
def test_managed_fields_times(
    ops: list[tuple[str, str, dict[str, str]]], times: dict[str, str | None]
) -> None:
    live: dict[str, Any] | None = None
    for step, (verb, manager, data) in enumerate(ops):
        time = (T0, T1, T2)[step]
        if verb == "update":
            new = configmap(**data)
            if live is not None:
                new["metadata"] = {**live["metadata"]}
            live = stored(fm.update(live, new, req(manager, time)))
        else:
            live = stored(fm.apply(live, configmap(**data), req(manager, time), "ConfigMap", force=True))
    assert live is not None
    got = {e["manager"]: e.get("time") for e in entries(live)}
    for manager, time in times.items():
        assert got.get(manager) == time, got


def test_co_owners_of_the_same_applied_object_own_the_same_fields() -> None:
    live = stored(fm.apply(None, configmap(key_a="value", key_b="value"), req("a"), "ConfigMap", force=True))
    live = fm.apply(live, configmap(key_a="value", key_b="value"), req("b", T1), "ConfigMap", force=True)
    a, b = (e["fieldsV1"] for e in entries(live))
    assert a == b == {"f:data": {"f:key_a": {}, "f:key_b": {}}}


# skipnonapplied_test.go ---------------------------------------------------------------------------


def test_an_apply_to_an_object_updated_before_it_was_tracked_conflicts_with_before_first_apply() -> None:
    untracked = stored({**pod(), "metadata": {"name": "pod", "labels": {"app": "my-nginx"}}})
    applied = pod()
    applied["metadata"] = {"name": "pod", "labels": {"app": "nginx"}}
    with pytest.raises(ConflictsError) as caught:
        fm.apply(untracked, applied, req("fieldmanager_test_apply"), "Pod", force=False)
    ((manager, path),) = [(c.manager, c.path) for c in caught.value.conflicts]
    assert '"before-first-apply"' in manager
    assert path == ((0, "metadata"), (0, "labels"), (0, "app"))
    forced = fm.apply(untracked, applied, req("fieldmanager_test_apply"), "Pod", force=True)
    assert [m for m, _, _ in managers(forced)] == ["fieldmanager_test_apply", "before-first-apply"]


def test_an_apply_to_a_new_object_has_one_entry() -> None:
    applied = pod()
    assert [
        m for m, _, _ in managers(fm.apply(None, applied, req("fieldmanager_test_apply"), "Pod", False))
    ] == ["fieldmanager_test_apply"]


def test_entries_an_update_does_not_touch_are_kept_as_stored() -> None:
    live = stored(fm.update(None, pod(), req("kubectl-create")))
    labelled = copy.deepcopy(live)
    labelled["metadata"]["labels"]["tier"] = "web"
    live = stored(fm.update(live, labelled, req("kubectl-label", T1)))
    edited = copy.deepcopy(live)
    edited["spec"]["containers"][0]["image"] = "nginx:2"
    after = fm.update(live, edited, req("kubectl-set", T2))
    before = {e["manager"]: e for e in entries(live)}
    now = {e["manager"]: e for e in entries(after)}
    assert now["kubectl-label"]["fieldsV1"] is before["kubectl-label"]["fieldsV1"]
    assert now["kubectl-create"]["fieldsV1"] != before["kubectl-create"]["fieldsV1"]  # lost the image


# lastappliedmanager_test.go: upgrading from client-side to server-side apply --------------------


def _client_side_applied(replicas: int) -> dict[str, Any]:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            },
        },
    }
    annotated = copy.deepcopy(deployment)
    annotated["metadata"]["annotations"] = {fm.LAST_APPLIED: json.dumps(deployment)}
    return stored(fm.update(None, annotated, req("kubectl-client-side-apply", api_version="apps/v1")))


def _server_side(live: dict[str, Any], replicas: int, manager: str = "kubectl") -> dict[str, Any]:
    config = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            },
        },
    }
    return fm.apply(live, config, req(manager, T1, api_version="apps/v1"), "Deployment", force=False)


def test_kubectls_first_server_side_apply_takes_over_what_client_side_apply_set() -> None:
    after = _server_side(_client_side_applied(1), 3)
    assert after["spec"]["replicas"] == 3
    assert json.loads(after["metadata"]["annotations"][fm.LAST_APPLIED])["spec"]["replicas"] == 3


def test_another_manager_does_not_take_over_client_side_applied_fields() -> None:
    with pytest.raises(ConflictsError):
        _server_side(_client_side_applied(1), 3, manager="my-controller")


def test_fields_changed_since_the_client_side_apply_still_conflict() -> None:
    live = _client_side_applied(1)
    scaled = copy.deepcopy(live)
    scaled["spec"]["replicas"] = 5
    live = stored(fm.update(live, scaled, req("kubectl-scale", api_version="apps/v1")))
    with pytest.raises(ConflictsError) as caught:
        _server_side(live, 3)
    assert [c.path for c in caught.value.conflicts] == [((0, "spec"), (0, "replicas"))]
