"""Owner references, finalizers and the update rules of object metadata, for every kind (tables
from apimachinery's pkg/api/validation/objectmeta_test.go, as data)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubetaint.api.validation import invalid_status, validate
from kubetaint.api.validation.metaupdate import after_before_update

JSON = dict[str, Any]


def pod(**meta: Any) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "test", "namespace": "test", **meta},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }


def ref(
    kind: str, uid: str, controller: bool | None = None, api_version: str = "customresourceVersion"
) -> JSON:
    out: JSON = {"apiVersion": api_version, "kind": kind, "name": "name", "uid": uid}
    if controller is not None:
        out["controller"] = controller
    return out


def messages(obj: JSON, old: JSON | None = None) -> list[str]:
    return [str(e) for e in validate(obj, old=old)]


# TestValidateObjectMetaOwnerReferences: (references, the first error's text or None when valid)
OWNER_CASES = [
    pytest.param([ref("customresourceKind", "1")], None, id="a custom resource may own"),
    pytest.param(
        [ref("Event", "1", api_version="v1")],
        "is disallowed from being an owner",
        id="a core v1 Event may not own",
    ),
    pytest.param(
        [ref("customresourceKind", "1", True)], None, id="one reference with controller set is fine"
    ),
    pytest.param(
        [
            ref("customresourceKind1", "1", False),
            ref("customresourceKind2", "2", True),
            ref("customresourceKind3", "3", False),
            ref("customresourceKind4", "4"),
        ],
        None,
        id="one controller among references with controller false or unset is fine",
    ),
    pytest.param(
        [
            ref("customresourceKind1", "1", False),
            ref("customresourceKind2", "2", True),
            ref("customresourceKind3", "3", True),
            ref("customresourceKind4", "4"),
        ],
        'Only one reference can have Controller set to true. Found "true" in references for '
        "customresourceKind2/name and customresourceKind3/name",
        id="two controllers are refused, naming both",
    ),
]


@pytest.mark.parametrize(("refs", "expected"), OWNER_CASES)
def test_owner_references(refs: list[JSON], expected: str | None) -> None:
    errors = validate(pod(ownerReferences=refs))
    if expected is None:
        assert errors == []
    else:
        assert errors and expected in str(errors[0])
        assert errors[0].field == "metadata.ownerReferences"


@pytest.mark.parametrize(
    ("reference", "expected"),
    [
        pytest.param(
            {},
            [
                'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
                'metadata.ownerReferences.kind: Invalid value: "": must not be empty',
                'metadata.ownerReferences.name: Invalid value: "": must not be empty',
                'metadata.ownerReferences.uid: Invalid value: "": must not be empty',
            ],
            id="an empty reference lacks all four fields, reported without its index",
        ),
        pytest.param(
            {"apiVersion": "apps/", "kind": "ReplicaSet", "name": "rs", "uid": "u"},
            ['metadata.ownerReferences.apiVersion: Invalid value: "apps/": version must not be empty'],
            id="a group without a version has no version",
        ),
        pytest.param(
            {"apiVersion": "a/b/c", "kind": "ReplicaSet", "name": "rs", "uid": "u"},
            ['metadata.ownerReferences.apiVersion: Invalid value: "a/b/c": version must not be empty'],
            id="a malformed apiVersion has no version",
        ),
        pytest.param(
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": True},
            [],
            id="a ReplicaSet controller reference is valid",
        ),
        pytest.param(
            {"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u"},
            [
                "metadata.ownerReferences: Invalid value: "
                '{"apiVersion":"v1","kind":"Event","name":"e","uid":"u"}: '
                "/v1, Kind=Event is disallowed from being an owner"
            ],
            id="the banned owner message names the group-version-kind",
        ),
        pytest.param(
            {"apiVersion": "events.k8s.io/v1", "kind": "Event", "name": "e", "uid": "u"},
            [],
            id="only the core group's Event is banned",
        ),
    ],
)
def test_owner_reference_messages(reference: JSON, expected: list[str]) -> None:
    assert messages(pod(ownerReferences=[reference])) == expected


def test_two_controllers_show_every_reference_as_json() -> None:
    refs = [ref("A", "1", True), {**ref("B", "2", True), "blockOwnerDeletion": False}]
    assert messages(pod(ownerReferences=refs)) == [
        "metadata.ownerReferences: Invalid value: "
        '[{"apiVersion":"customresourceVersion","kind":"A","name":"name","uid":"1","controller":true},'
        '{"apiVersion":"customresourceVersion","kind":"B","name":"name","uid":"2","controller":true,'
        '"blockOwnerDeletion":false}]: '
        'Only one reference can have Controller set to true. Found "true" in references for A/name and B/name'
    ]


@pytest.mark.parametrize(
    ("finalizers", "expected"),
    [
        pytest.param(["x/a", "kubernetes"], [], id="qualified names are valid finalizers"),
        pytest.param(
            ["orphan", "foregroundDeletion"],
            [
                "metadata.finalizers: Invalid value: "
                '["orphan","foregroundDeletion"]: '
                "finalizer orphan and foregroundDeletion cannot be both set"
            ],
            id="orphan and foregroundDeletion conflict",
        ),
        pytest.param(
            ["bad name!"],
            [
                'metadata.finalizers: Invalid value: "bad name!": name part must consist of alphanumeric '
                "characters, '-', '_' or '.', and must start and end with an alphanumeric character "
                "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
            ],
            id="a finalizer must be a qualified name",
        ),
    ],
)
def test_finalizers(finalizers: list[str], expected: list[str]) -> None:
    assert messages(pod(finalizers=finalizers)) == expected


@pytest.mark.parametrize(
    ("old_finalizers", "new_finalizers", "expected"),
    [
        pytest.param(["x/a"], ["x/a", "y/b"], "y/b", id="adding a finalizer while being deleted"),
        pytest.param(["x/a"], ["x/b"], "x/b", id="changing a finalizer while being deleted"),
        pytest.param(["x/a", "y/b"], ["x/a"], None, id="removing a finalizer while being deleted"),
    ],
)
def test_finalizers_of_an_object_being_deleted(
    old_finalizers: list[str], new_finalizers: list[str], expected: str | None
) -> None:
    now = "1970-01-01T00:16:40Z"
    old = pod(resourceVersion="1", deletionTimestamp=now, finalizers=old_finalizers)
    new = pod(resourceVersion="1", deletionTimestamp=now, finalizers=new_finalizers)
    found = messages(new, old)
    if expected is None:
        assert found == []
    else:
        assert found == [
            "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being "
            f'deleted, found new finalizers []string{{"{expected}"}}'
        ]


def test_finalizers_may_be_added_to_an_object_not_being_deleted() -> None:
    assert messages(pod(finalizers=["x/a", "y/b"]), pod(finalizers=["x/a"])) == []


NOW, LATER = "1970-01-01T00:16:40Z", "1970-01-01T00:33:20Z"

# TestValidateObjectMetaUpdatePreventsDeletionFieldMutation: (old, new metadata, errors) where
# rest.BeforeUpdate keeps old's deletionTimestamp and an unset grace period before validating.
DELETION_CASES = [
    pytest.param({}, {}, [], id="no deletion fields"),
    pytest.param(
        {"deletionTimestamp": NOW, "deletionGracePeriodSeconds": 30},
        {"deletionTimestamp": NOW, "deletionGracePeriodSeconds": 30},
        [],
        id="the same deletion fields",
    ),
    pytest.param(
        {},
        {"deletionTimestamp": NOW},
        [f'metadata.deletionTimestamp: Invalid value: "{NOW}": field is immutable'],
        id="setting deletionTimestamp",
    ),
    pytest.param(
        {"deletionTimestamp": NOW}, {}, [], id="clearing deletionTimestamp is undone by BeforeUpdate"
    ),
    pytest.param(
        {"deletionTimestamp": NOW},
        {"deletionTimestamp": LATER},
        [],
        id="changing deletionTimestamp is undone by BeforeUpdate",
    ),
    pytest.param(
        {},
        {"deletionGracePeriodSeconds": 30},
        ["metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable"],
        id="setting deletionGracePeriodSeconds",
    ),
    pytest.param(
        {"deletionGracePeriodSeconds": 30},
        {},
        [],
        id="clearing deletionGracePeriodSeconds is undone by BeforeUpdate",
    ),
    pytest.param(
        {"deletionGracePeriodSeconds": 30},
        {"deletionGracePeriodSeconds": 40},
        ["metadata.deletionGracePeriodSeconds: Invalid value: 40: field is immutable"],
        id="changing deletionGracePeriodSeconds",
    ),
]


@pytest.mark.parametrize(("old_meta", "new_meta", "expected"), DELETION_CASES)
def test_deletion_fields_are_immutable(old_meta: JSON, new_meta: JSON, expected: list[str]) -> None:
    assert messages(pod(resourceVersion="1", **new_meta), pod(resourceVersion="1", **old_meta)) == expected


@pytest.mark.parametrize(
    ("old_meta", "new_meta", "expected"),
    [
        pytest.param({"uid": "a"}, {}, [], id="an empty uid takes old's"),
        pytest.param(
            {"uid": "a"}, {"uid": "b"}, ['metadata.uid: Invalid value: "b": field is immutable'], id="uid"
        ),
        pytest.param(
            {"creationTimestamp": NOW}, {"creationTimestamp": LATER}, [], id="creationTimestamp is old's"
        ),
        pytest.param(
            {},
            {"creationTimestamp": NOW},
            [f'metadata.creationTimestamp: Invalid value: "{NOW}": field is immutable'],
            id="creationTimestamp set on an object without one",
        ),
        pytest.param({"generation": 5}, {"generation": 4}, [], id="generation is old's"),
        pytest.param({"generation": 5}, {"generation": -1}, [], id="a negative generation is replaced"),
        pytest.param({"namespace": "test"}, {"namespace": ""}, [], id="an empty namespace is the request's"),
    ],
)
def test_update_fills_in_from_old(old_meta: JSON, new_meta: JSON, expected: list[str]) -> None:
    assert messages(pod(**new_meta), pod(**old_meta)) == expected


def test_cluster_scoped_update_drops_the_namespace() -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
    with_namespace = {**node, "metadata": {"name": "n1", "namespace": "x"}}
    assert messages(with_namespace) == ["metadata.namespace: Forbidden: not allowed on this type"]
    assert messages(with_namespace, node) == []


def test_update_errors_follow_the_create_checks_in_upstream_order() -> None:
    old = pod(uid="a", deletionTimestamp=NOW, finalizers=["x/a"])
    new = pod(uid="b", labels={"app": "-a-"}, finalizers=["x/a", "y/b"], ownerReferences=[{}])
    fields = [e.field for e in validate(new, old=old)]
    assert fields == [
        "metadata.labels",
        "metadata.ownerReferences.apiVersion",
        "metadata.ownerReferences.kind",
        "metadata.ownerReferences.name",
        "metadata.ownerReferences.uid",
        "metadata.finalizers",
        "metadata.uid",
    ]
    status = invalid_status("Pod", "test", validate(new, old=old))
    assert status["code"] == 422 and len(status["details"]["causes"]) == len(fields)


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param(
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n", "ownerReferences": [{}]}},
            id="a Node",
        ),
        pytest.param(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n", "ownerReferences": [{}]}},
            id="a Namespace",
        ),
        pytest.param(
            {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": "n", "namespace": "d", "ownerReferences": [{}]},
            },
            id="a Lease",
        ),
    ],
)
def test_every_kind_checks_owner_references(obj: JSON) -> None:
    fields = [e.field for e in validate(obj)]
    assert "metadata.ownerReferences.uid" in fields
    assert [e.field for e in validate(obj, old=copy.deepcopy(obj))] == fields


def test_after_before_update_leaves_its_input_alone() -> None:
    meta: JSON = {"name": "p", "namespace": ""}
    old = {"name": "p", "namespace": "d", "uid": "u", "generation": 3, "creationTimestamp": NOW}
    assert after_before_update(meta, old, namespaced=True) == {
        "name": "p",
        "namespace": "d",
        "uid": "u",
        "generation": 3,
        "creationTimestamp": NOW,
    }
    assert meta == {"name": "p", "namespace": ""}


def test_the_memo_keeps_controller_true_apart_from_one() -> None:
    two = [ref("A", "1", True), ref("B", "2", True)]
    assert len(validate(pod(ownerReferences=two))) == 1
    ones: list[JSON] = [{**r, "controller": 1} for r in two]
    assert validate(pod(ownerReferences=ones)) == []
