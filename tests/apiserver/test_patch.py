"""PATCH: strategic merge (kubectl's subset), JSON merge, JSON patch and simplified server-side
apply, as data tables and over HTTP (kubectl-wire.md §4.6, §4.7, §4.10, §8)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient

from kubetaint.api.errors import StatusError
from kubetaint.apiserver.patch import (
    JSONPatchError,
    apply_json_patch,
    json_patch,
    merge_patch,
    strategic_merge,
)

from .builders import node, pod

SMP = {"Content-Type": "application/strategic-merge-patch+json"}
MERGE = {"Content-Type": "application/merge-patch+json"}
JSONPATCH = {"Content-Type": "application/json-patch+json"}
APPLY = {"Content-Type": "application/apply-patch+yaml"}
PODS = "/api/v1/namespaces/default/pods"

TAINT = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    ("original", "patch", "expected"),
    [
        pytest.param(
            {"spec": {"taints": [TAINT]}},
            {"spec": {"taints": None}},
            {"spec": {}},
            id="null removes the taint list",
        ),
        pytest.param(
            {"spec": {"taints": [TAINT]}},
            {"spec": {"taints": [{"key": "other", "effect": "NoExecute"}]}},
            {"spec": {"taints": [{"key": "other", "effect": "NoExecute"}]}},
            id="taints have no merge key so the list is replaced",
        ),
        pytest.param(
            {"spec": {"tolerations": [{"key": "a", "operator": "Exists"}]}},
            {"spec": {"tolerations": [{"key": "b", "operator": "Exists"}]}},
            {"spec": {"tolerations": [{"key": "b", "operator": "Exists"}]}},
            id="tolerations have no merge key so the list is replaced",
        ),
        pytest.param(
            {"spec": {}},
            {"spec": {"unschedulable": True}},
            {"spec": {"unschedulable": True}},
            id="cordon sets a field",
        ),
        pytest.param(
            {"spec": {"unschedulable": True}},
            {"spec": {"unschedulable": None}},
            {"spec": {}},
            id="uncordon deletes it",
        ),
        pytest.param(
            {
                "status": {
                    "conditions": [
                        {"type": "Ready", "status": "True"},
                        {"type": "DiskPressure", "status": "False"},
                    ]
                }
            },
            {"status": {"conditions": [{"type": "Ready", "status": "False", "reason": "KubeletDown"}]}},
            {
                "status": {
                    "conditions": [
                        {"type": "Ready", "status": "False", "reason": "KubeletDown"},
                        {"type": "DiskPressure", "status": "False"},
                    ]
                }
            },
            id="conditions merge by type",
        ),
        pytest.param(
            {
                "spec": {
                    "containers": [{"name": "main", "image": "nginx:1.25"}, {"name": "side", "image": "x"}]
                }
            },
            {
                "spec": {
                    "$setElementOrder/containers": [{"name": "main"}, {"name": "side"}],
                    "containers": [{"name": "main", "image": "nginx:1.26"}],
                }
            },
            {
                "spec": {
                    "containers": [{"name": "main", "image": "nginx:1.26"}, {"name": "side", "image": "x"}]
                }
            },
            id="containers merge by name and setElementOrder is tolerated",
        ),
        pytest.param(
            {"spec": {"containers": [{"name": "main"}, {"name": "side"}]}},
            {"spec": {"containers": [{"name": "side", "$patch": "delete"}]}},
            {"spec": {"containers": [{"name": "main"}]}},
            id="patch delete directive removes a keyed element",
        ),
        pytest.param(
            {"spec": {"containers": [{"name": "main"}, {"name": "side"}]}},
            {"spec": {"containers": [{"name": "only"}, {"$patch": "replace"}]}},
            {"spec": {"containers": [{"name": "only"}]}},
            id="patch replace directive in a list replaces it",
        ),
        pytest.param(
            {"metadata": {"labels": {"a": "1", "b": "2"}}},
            {"metadata": {"labels": {"$patch": "replace", "c": "3"}}},
            {"metadata": {"labels": {"c": "3"}}},
            id="patch replace directive in a map replaces it",
        ),
        pytest.param(
            {"metadata": {"finalizers": ["a", "b"]}},
            {"metadata": {"finalizers": ["c"], "$deleteFromPrimitiveList/finalizers": ["a"]}},
            {"metadata": {"finalizers": ["b", "c"]}},
            id="finalizers merge as a set and deleteFromPrimitiveList removes",
        ),
        pytest.param(
            {"metadata": {"ownerReferences": [{"uid": "1", "name": "a"}]}},
            {"metadata": {"ownerReferences": [{"uid": "2", "name": "b"}]}},
            {"metadata": {"ownerReferences": [{"uid": "1", "name": "a"}, {"uid": "2", "name": "b"}]}},
            id="ownerReferences merge by uid",
        ),
        pytest.param(
            {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}},
            {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}},
            {"spec": {"strategy": {"type": "Recreate"}}},
            id="retainKeys drops keys not listed",
        ),
        pytest.param(
            {"kind": "Service", "spec": {"ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}]}},
            {"spec": {"ports": [{"port": 80, "name": "http"}, {"port": 443, "name": "https"}]}},
            {
                "kind": "Service",
                "spec": {
                    "ports": [
                        {"port": 80, "protocol": "TCP", "targetPort": 80, "name": "http"},
                        {"port": 443, "name": "https"},
                    ]
                },
            },
            id="a Service's ports merge by port",
        ),
        pytest.param(
            {"kind": "Pod", "spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80}]}]}},
            {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 81}]}]}},
            {
                "kind": "Pod",
                "spec": {
                    "containers": [{"name": "a", "ports": [{"containerPort": 80}, {"containerPort": 81}]}]
                },
            },
            id="a container's ports merge by containerPort",
        ),
        pytest.param(
            {"kind": "EndpointSlice", "ports": [{"name": "a", "port": 80}]},
            {"ports": [{"name": "b", "port": 81}]},
            {"kind": "EndpointSlice", "ports": [{"name": "b", "port": 81}]},
            id="an EndpointSlice's ports are replaced",
        ),
    ],
)
def test_strategic_merge(original: dict[str, Any], patch: dict[str, Any], expected: dict[str, Any]) -> None:
    assert strategic_merge(original, patch) == expected


def test_strategic_merge_does_not_change_its_inputs() -> None:
    original = {"spec": {"containers": [{"name": "main", "image": "a"}]}}
    patch = {"spec": {"containers": [{"name": "main", "image": "b"}]}}
    strategic_merge(original, patch)
    assert original == {"spec": {"containers": [{"name": "main", "image": "a"}]}}


@pytest.mark.parametrize(
    ("original", "patch", "message"),
    [
        pytest.param(
            {"kind": "DaemonSet"},
            {"spec": {"template": {"spec": {"volumes": [{"hostPath": {"path": "/var/lib/kubelet/pods"}}]}}}},
            "map: map[hostPath:map[path:/var/lib/kubelet/pods]] does not contain declared merge key: name",
            id="a volume without its name",
        ),
        pytest.param(
            {"kind": "Service"},
            {"spec": {"ports": [{"targetPort": 441}]}},
            "map: map[targetPort:441] does not contain declared merge key: port",
            id="a Service port without its port",
        ),
        pytest.param(
            {"kind": "Pod"},
            {"spec": {"containers": [{"image": "x", "args": ["a", "b"], "tty": True, "x": None, "y": 1e6}]}},
            "map: map[args:[a b] image:x tty:true x:<nil> y:1e+06] does not contain declared merge key: name",
            id="values as Go prints them",
        ),
    ],
)
def test_keyed_list_element_without_its_key_is_a_400_with_mergepatchs_message(
    original: dict[str, Any], patch: dict[str, Any], message: str
) -> None:
    """mergepatch.ErrNoMergeKey's text (upstream's kubectl shows `Error from server: map: map[...] does
    not contain declared merge key: name`); a 400 here where upstream answers 500 (a documented
    difference)."""
    with pytest.raises(StatusError) as err:
        strategic_merge(original, patch)
    assert (err.value.code, err.value.message) == (400, message)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=8,
)


@given(
    st.dictionaries(st.text(max_size=3), json_values, max_size=4),
    st.dictionaries(st.text(max_size=3), json_values, max_size=4),
)
def test_merge_patch_is_idempotent(target: dict[str, Any], patch: dict[str, Any]) -> None:
    once = merge_patch(target, patch)
    assert merge_patch(once, patch) == once


def test_json_patch_test_failure_is_422() -> None:
    with pytest.raises(StatusError) as err:
        json_patch({"a": 1}, [{"op": "test", "path": "/a", "value": 2}])
    assert err.value.code == 422


# over HTTP -------------------------------------------------------------------------------


def test_taint_patch_round_trip(client: TestClient) -> None:
    client.post("/api/v1/nodes", json=node("n1"))
    body = {"spec": {"taints": [{"effect": "NoSchedule", "key": "dedicated", "value": "gpu"}]}}
    tainted = client.patch(
        "/api/v1/nodes/n1?fieldManager=kubectl-taint&fieldValidation=Strict", json=body, headers=SMP
    )
    assert tainted.status_code == 200 and tainted.json()["spec"]["taints"] == body["spec"]["taints"]
    untainted = client.patch("/api/v1/nodes/n1", json={"spec": {"taints": None}}, headers=SMP)
    assert "taints" not in untainted.json()["spec"]
    assert int(untainted.json()["metadata"]["resourceVersion"]) > int(
        tainted.json()["metadata"]["resourceVersion"]
    )


def test_main_resource_patch_keeps_status_and_status_patch_keeps_spec(client: TestClient) -> None:
    client.post("/api/v1/nodes", json=node("n1"))
    patched = client.patch(
        "/api/v1/nodes/n1", json={"status": {"conditions": []}, "spec": {"unschedulable": True}}, headers=SMP
    )
    assert patched.json()["status"]["conditions"] == [{"type": "Ready", "status": "True"}]
    assert patched.json()["spec"]["unschedulable"] is True
    body = {"spec": {"unschedulable": None}, "status": {"conditions": [{"type": "Ready", "status": "False"}]}}
    status = client.patch("/api/v1/nodes/n1/status", json=body, headers=SMP).json()
    assert status["status"]["conditions"] == [{"type": "Ready", "status": "False"}]
    assert status["spec"]["unschedulable"] is True


def test_merge_patch_labels_and_json_patch(client: TestClient) -> None:
    client.post(PODS, json=pod("web"))
    labelled = client.patch(
        f"{PODS}/web?fieldManager=kubectl-label", json={"metadata": {"labels": {"a": "b"}}}, headers=MERGE
    )
    assert labelled.json()["metadata"]["labels"] == {"a": "b"}
    ops = [{"op": "add", "path": "/metadata/labels/c", "value": "d"}]
    patched = client.patch(f"{PODS}/web", json=ops, headers=JSONPATCH)
    assert patched.json()["metadata"]["labels"] == {"a": "b", "c": "d"}


def test_patch_with_stale_resource_version_conflicts(client: TestClient) -> None:
    client.post(PODS, json=pod("web"))
    response = client.patch(
        f"{PODS}/web", json={"metadata": {"resourceVersion": "1", "labels": {"a": "b"}}}, headers=MERGE
    )
    assert response.status_code == 409 and response.json()["reason"] == "Conflict"


@pytest.mark.parametrize(
    ("headers", "body", "code"),
    [
        pytest.param({"Content-Type": "application/json"}, b"{}", 415, id="plain JSON is not a patch type"),
        pytest.param(SMP, b"{oops", 400, id="malformed strategic patch is 400"),
        pytest.param(SMP, b"[1]", 400, id="a strategic patch that is not an object is 400"),
        pytest.param(MERGE, b"[1]", 400, id="a merge patch that is not an object is 400"),
        pytest.param(JSONPATCH, b"{}", 400, id="a JSON patch that is not a list is 400"),
        pytest.param(
            JSONPATCH, b'[{"op": "remove", "path": "/nope"}]', 422, id="a JSON patch that cannot apply is 422"
        ),
        pytest.param(
            JSONPATCH,
            b'[{"op": "replace", "path": "", "value": 3}]',
            422,
            id="patching into a non-object is 422",
        ),
        pytest.param(APPLY, b"a: [", 400, id="malformed apply YAML is 400"),
    ],
)
def test_bad_patches_are_4xx(client: TestClient, headers: dict[str, str], body: bytes, code: int) -> None:
    client.post(PODS, json=pod("web"))
    response = client.patch(f"{PODS}/web?fieldManager=m", content=body, headers=headers)
    assert response.status_code == code, response.text
    assert response.json()["kind"] == "Status"


def test_patch_of_missing_object_is_404(client: TestClient) -> None:
    response = client.patch(f"{PODS}/ghost", json={}, headers=SMP)
    assert response.status_code == 404 and response.json()["message"] == 'pods "ghost" not found'


def test_server_side_apply_creates_then_updates_and_records_the_manager(client: TestClient) -> None:
    manifest = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: ssa\n  labels: {app: a}\nspec:\n  containers:\n  - {name: main, image: x}\n"
    created = client.patch(
        f"{PODS}/ssa?fieldManager=kubectl&force=false", content=manifest.encode(), headers=APPLY
    )
    assert created.status_code == 201
    entry = created.json()["metadata"]["managedFields"][0]
    assert (entry["manager"], entry["operation"], entry["fieldsType"]) == ("kubectl", "Apply", "FieldsV1")
    assert entry["fieldsV1"]["f:metadata"] == {"f:labels": {"f:app": {}}}
    updated = client.patch(
        f"{PODS}/ssa?fieldManager=kubectl",
        content=manifest.replace("image: x", "image: y").encode(),
        headers=APPLY,
    )
    assert updated.status_code == 200
    assert updated.json()["spec"]["containers"] == [{"name": "main", "image": "y"}]
    assert len(updated.json()["metadata"]["managedFields"]) == 1


def test_server_side_apply_requires_a_field_manager(client: TestClient) -> None:
    response = client.patch(f"{PODS}/ssa", content=b"metadata: {name: ssa}", headers=APPLY)
    assert response.status_code == 422


# evanphx/json-patch v4 patch_test.go: negative indices and the accumulated copy size -------

A48, A49 = "A" * 48, "A" * 49


@pytest.mark.parametrize(
    ("doc", "operations", "result"),
    [
        pytest.param(
            {"foo": ["bar", "baz"]},
            [{"op": "add", "path": "/foo/-1", "value": "qux"}],
            {"foo": ["bar", "baz", "qux"]},
            id="add at -1 appends",
        ),
        pytest.param(
            {"foo": ["bar", "qux", "baz"]},
            [{"op": "remove", "path": "/foo/-2"}],
            {"foo": ["bar", "baz"]},
            id="remove at -2 counts from the end",
        ),
        pytest.param(
            {"foo": []},
            [{"op": "add", "path": "/foo/-1", "value": "qux"}],
            {"foo": ["qux"]},
            id="add at -1 to an empty array",
        ),
        pytest.param(
            {"foo": ["all", "grass", "cows", "eat"]},
            [{"op": "move", "from": "/foo/1", "path": "/foo/3"}],
            {"foo": ["all", "cows", "eat", "grass"]},
            id="move removes, then adds on the shortened array",
        ),
        pytest.param(
            {"foo": ["A", A48]},
            [{"op": "copy", "path": "/foo/-", "from": "/foo/1"}] * 2,
            {"foo": ["A", A48, A48, A48]},
            id="two copies of 50 bytes fit a limit of 100",
        ),
    ],
)
def test_json_patch_cases(doc: Any, operations: list[Any], result: Any) -> None:
    assert apply_json_patch(doc, operations, copy_limit=100) == result


@pytest.mark.parametrize(
    ("doc", "operations"),
    [
        pytest.param(
            {"foo": ["bar", "baz"]}, [{"op": "add", "path": "/foo/-4", "value": "bum"}], id="add at -4"
        ),
        pytest.param({"foo": []}, [{"op": "remove", "path": "/foo/-1"}], id="remove -1 of an empty array"),
        pytest.param({"foo": ["bar"]}, [{"op": "remove", "path": "/foo/-2"}], id="remove -2 of one element"),
        pytest.param(
            {"foo": ["bar"]}, [{"op": "copy", "path": "/foo/2", "from": "/foo/0"}], id="copy past the end"
        ),
        pytest.param(
            {"foo": ["all", "grass", "cows", "eat"]},
            [{"op": "move", "from": "/foo/1", "path": "/foo/4"}],
            id="move past the end of the shortened array",
        ),
    ],
)
def test_json_patch_bad_cases_are_422_with_upstreams_fixed_message(doc: Any, operations: list[Any]) -> None:
    with pytest.raises(StatusError) as caught:
        json_patch(doc, operations, copy_limit=100)
    assert caught.value.code == 422
    assert caught.value.reason == "Invalid"
    assert caught.value.message == "the server rejected our request due to an error in our request"


def test_copies_past_the_accumulated_limit_fail_with_json_patchs_message() -> None:
    with pytest.raises(JSONPatchError) as caught:
        apply_json_patch(
            {"foo": ["A", A49]}, [{"op": "copy", "path": "/foo/-", "from": "/foo/1"}] * 2, copy_limit=100
        )
    assert str(caught.value) == (
        "Unable to complete the copy, the accumulated size increase of copy is 102, exceeding the limit 100"
    )
