"""PersistentVolumes, PersistentVolumeClaims, StorageClasses, CSINodes and CSIDrivers over HTTP:
stored with upstream's defaults, refused in upstream's words, printed with kubectl's columns; a
claim's create warns that no provisioner runs."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from .builders import TABLE_ACCEPT

JSON = dict[str, Any]
CORE = "/api/v1"
STORAGE = "/apis/storage.k8s.io/v1"

PV = {
    "apiVersion": "v1",
    "kind": "PersistentVolume",
    "metadata": {"name": "pv-a"},
    "spec": {
        "capacity": {"storage": "10Gi"},
        "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
        "storageClassName": "local",
        "local": {"path": "/mnt"},
        "nodeAffinity": {
            "required": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "kubernetes.io/hostname", "operator": "In", "values": ["a"]}
                        ]
                    }
                ]
            }
        },
    },
}
PVC = {
    "apiVersion": "v1",
    "kind": "PersistentVolumeClaim",
    "metadata": {"name": "data", "namespace": "default"},
    "spec": {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "5Gi"}},
        "storageClassName": "local",
    },
}
SC = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "StorageClass",
    "metadata": {"name": "local", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
    "provisioner": "kubernetes.io/no-provisioner",
}
CSI_NODE = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "CSINode",
    "metadata": {"name": "a"},
    "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": "i-1", "allocatable": {"count": 25}}]},
}
CSI_DRIVER = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "CSIDriver",
    "metadata": {"name": "ebs.csi.aws.com"},
    "spec": {},
}


def _rows(client: TestClient, path: str) -> tuple[list[str], list[list[Any]]]:
    table = client.get(path, headers={"Accept": TABLE_ACCEPT}).json()
    return [c["name"] for c in table["columnDefinitions"]], [row["cells"] for row in table["rows"]]


def test_storage_objects_are_stored_with_upstreams_defaults(engine_client: TestClient) -> None:
    assert engine_client.post(f"{CORE}/persistentvolumes", json=PV).status_code == 201
    stored = engine_client.get(f"{CORE}/persistentvolumes/pv-a").json()
    assert stored["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert stored["spec"]["volumeMode"] == "Filesystem"
    assert stored["status"] == {"phase": "Pending"}
    created = engine_client.post(f"{CORE}/namespaces/default/persistentvolumeclaims", json=PVC)
    assert created.status_code == 201, created.text
    assert "runs no provisioner" in created.headers["warning"]
    assert created.json()["status"] == {"phase": "Pending"}
    assert engine_client.post(f"{STORAGE}/storageclasses", json=SC).status_code == 201
    stored_sc = engine_client.get(f"{STORAGE}/storageclasses/local").json()
    assert (stored_sc["reclaimPolicy"], stored_sc["volumeBindingMode"]) == ("Delete", "Immediate")
    assert engine_client.post(f"{STORAGE}/csidrivers", json=CSI_DRIVER).status_code == 201
    driver = engine_client.get(f"{STORAGE}/csidrivers/ebs.csi.aws.com").json()["spec"]
    assert driver["attachRequired"] is True and driver["volumeLifecycleModes"] == ["Persistent"]


def test_tables_have_kubectls_columns(engine_client: TestClient) -> None:
    for path, body in (
        (f"{CORE}/persistentvolumes", PV),
        (f"{CORE}/namespaces/default/persistentvolumeclaims", PVC),
        (f"{STORAGE}/storageclasses", SC),
        (f"{STORAGE}/csinodes", CSI_NODE),
        (f"{STORAGE}/csidrivers", CSI_DRIVER),
    ):
        assert engine_client.post(path, json=body).status_code == 201, path
    assert _rows(engine_client, f"{CORE}/persistentvolumes") == (
        [
            "Name",
            "Capacity",
            "Access Modes",
            "Reclaim Policy",
            "Status",
            "Claim",
            "StorageClass",
            "VolumeAttributesClass",
            "Reason",
            "Age",
            "VolumeMode",
        ],
        [["pv-a", "10Gi", "RWO,ROX", "Retain", "Pending", "", "local", "<unset>", "", "0s", "Filesystem"]],
    )
    assert _rows(engine_client, f"{CORE}/namespaces/default/persistentvolumeclaims") == (
        [
            "Name",
            "Status",
            "Volume",
            "Capacity",
            "Access Modes",
            "StorageClass",
            "VolumeAttributesClass",
            "Age",
            "VolumeMode",
        ],
        [["data", "Pending", "", "", "", "local", "<unset>", "0s", "Filesystem"]],
    )
    assert _rows(engine_client, f"{STORAGE}/storageclasses") == (
        ["Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode", "AllowVolumeExpansion", "Age"],
        [["local (default)", "kubernetes.io/no-provisioner", "Delete", "Immediate", False, "0s"]],
    )
    assert _rows(engine_client, f"{STORAGE}/csinodes") == (["Name", "Drivers", "Age"], [["a", 1, "0s"]])
    assert _rows(engine_client, f"{STORAGE}/csidrivers") == (
        [
            "Name",
            "AttachRequired",
            "PodInfoOnMount",
            "StorageCapacity",
            "TokenRequests",
            "RequiresRepublish",
            "Modes",
            "Age",
        ],
        [["ebs.csi.aws.com", True, False, False, "<unset>", False, "Persistent", "0s"]],
    )


@pytest.mark.parametrize(
    ("path", "body", "message"),
    [
        pytest.param(
            f"{CORE}/namespaces/default/persistentvolumeclaims",
            {**PVC, "spec": {"resources": {"requests": {"storage": "1Gi"}}}},
            "spec.accessModes: Required value: at least 1 access mode is required",
            id="a claim without access modes",
        ),
        pytest.param(
            f"{CORE}/namespaces/default/persistentvolumeclaims",
            {**PVC, "spec": {"accessModes": ["ReadWriteOnce"]}},
            "spec.resources[storage]: Required value",
            id="a claim without a storage request",
        ),
        pytest.param(
            f"{CORE}/persistentvolumes",
            {**PV, "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"]}},
            "spec: Required value: must specify a volume type",
            id="a volume without a source",
        ),
        pytest.param(
            f"{CORE}/persistentvolumes",
            {**PV, "spec": {**PV["spec"], "nodeAffinity": None}},
            "spec.nodeAffinity: Required value: Local volume requires node affinity",
            id="a local volume without node affinity",
        ),
        pytest.param(
            f"{STORAGE}/storageclasses",
            {**SC, "volumeBindingMode": "Later"},
            'volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"',
            id="a class with an unknown binding mode",
        ),
    ],
)
def test_invalid_storage_objects_are_refused_in_upstreams_words(
    engine_client: TestClient, path: str, body: JSON, message: str
) -> None:
    response = engine_client.post(path, json=body)
    assert response.status_code == 422, response.text
    assert message in response.json()["message"]


def test_a_storage_classs_binding_mode_is_immutable(engine_client: TestClient) -> None:
    assert engine_client.post(f"{STORAGE}/storageclasses", json=SC).status_code == 201
    response = engine_client.patch(
        f"{STORAGE}/storageclasses/local",
        json={"volumeBindingMode": "WaitForFirstConsumer"},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert response.status_code == 422
    assert (
        'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable'
        in response.json()["message"]
    )
