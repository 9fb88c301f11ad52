"""The official Python client (`kubernetes`) against `kubetaint up`: discovery, CRUD, an
informer's list+watch resumed from a resourceVersion, the three patch types, eviction, tainting
and cordoning a node, and server-side apply with its conflicts."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ..harness import UpServer, eventually
from .checks import NODE, TAINT, configmap, eviction, namespace, pod

NS = "python-client"


@pytest.fixture(scope="module")
def api(cluster: UpServer) -> Iterator[Any]:
    from kubernetes import client, config

    api_client = config.new_client_from_config(config_file=str(cluster.kubeconfig))
    client.CoreV1Api(api_client).create_namespace(namespace(NS))
    try:
        yield api_client
    finally:
        api_client.close()


def test_discovery_lists_the_groups_and_the_eviction_subresource(api: Any) -> None:
    from kubernetes import client

    assert client.CoreApi(api).get_api_versions().versions == ["v1"]
    groups = {g.name for g in client.ApisApi(api).get_api_versions().groups}
    assert {"apps", "policy", "coordination.k8s.io"} <= groups
    names = {r.name for r in client.CoreV1Api(api).get_api_resources().resources}
    assert {"pods", "pods/eviction", "nodes", "configmaps"} <= names
    assert client.VersionApi(api).get_code().git_version.startswith("v1.")


def test_create_read_replace_delete(api: Any) -> None:
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    core = client.CoreV1Api(api)
    created = core.create_namespaced_config_map(NS, configmap("crud", colour="blue"))
    assert created.metadata.uid and created.metadata.resource_version
    read = core.read_namespaced_config_map("crud", NS)
    read.data["colour"] = "green"
    replaced = core.replace_namespaced_config_map("crud", NS, read)
    assert replaced.data == {"colour": "green"}
    assert int(replaced.metadata.resource_version) > int(created.metadata.resource_version)
    stale = core.read_namespaced_config_map("crud", NS)
    stale.metadata.resource_version = created.metadata.resource_version
    with pytest.raises(ApiException) as conflict:
        core.replace_namespaced_config_map("crud", NS, stale)
    assert conflict.value.status == 409
    core.delete_namespaced_config_map("crud", NS)
    with pytest.raises(ApiException) as missing:
        core.read_namespaced_config_map("crud", NS)
    assert missing.value.status == 404


def test_an_informer_lists_then_watches_and_resumes_from_the_last_resource_version(api: Any) -> None:
    from kubernetes import client, watch

    core = client.CoreV1Api(api)
    listed = core.list_namespaced_config_map(NS, label_selector="informer=yes")
    assert listed.items == []
    version = listed.metadata.resource_version
    core.create_namespaced_config_map(
        NS, {**configmap("watched"), "metadata": {"name": "watched", "labels": {"informer": "yes"}}}
    )
    seen = []
    for event in watch.Watch().stream(
        core.list_namespaced_config_map,
        NS,
        label_selector="informer=yes",
        resource_version=version,
        timeout_seconds=5,
    ):
        seen.append((event["type"], event["object"].metadata.name))
        version = event["object"].metadata.resource_version
        break
    assert seen == [("ADDED", "watched")]
    core.patch_namespaced_config_map("watched", NS, {"data": {"k": "v"}})
    core.delete_namespaced_config_map("watched", NS)
    resumed = []
    for event in watch.Watch().stream(
        core.list_namespaced_config_map,
        NS,
        label_selector="informer=yes",
        resource_version=version,
        timeout_seconds=5,
    ):
        resumed.append((event["type"], event["object"].data))
        if event["type"] == "DELETED":
            break
    assert resumed == [("MODIFIED", {"k": "v"}), ("DELETED", {"k": "v"})]


@pytest.mark.parametrize(
    ("content_type", "body", "expected"),
    [
        pytest.param(
            "application/strategic-merge-patch+json",
            {"data": {"b": "2"}},
            {"a": "1", "b": "2"},
            id="a strategic merge patch merges the map",
        ),
        pytest.param(
            "application/merge-patch+json",
            {"data": {"a": None}},
            {},
            id="a JSON merge patch removes a key set to null",
        ),
        pytest.param(
            "application/json-patch+json",
            [{"op": "add", "path": "/data/c", "value": "3"}],
            {"a": "1", "c": "3"},
            id="a JSON patch adds a key",
        ),
    ],
)
def test_patch_types(api: Any, content_type: str, body: Any, expected: dict[str, str]) -> None:
    from kubernetes import client

    core = client.CoreV1Api(api)
    name = "patch-" + content_type.split("/")[1].split("-patch", maxsplit=1)[0]
    core.create_namespaced_config_map(NS, configmap(name, a="1"))
    patched = core.patch_namespaced_config_map(name, NS, body, _content_type=content_type)
    assert (patched.data or {}) == expected


def test_an_evicted_pod_goes(api: Any) -> None:
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    core = client.CoreV1Api(api)
    core.create_namespaced_pod(NS, pod("evicted"))
    eventually(lambda: core.read_namespaced_pod("evicted", NS).status.phase == "Running", "the pod to run")
    core.create_namespaced_pod_eviction("evicted", NS, eviction("evicted", NS))

    def gone() -> bool:
        try:
            core.read_namespaced_pod("evicted", NS)
        except ApiException as err:
            return err.status == 404
        return False

    eventually(gone, "the evicted pod to go")


def test_taint_and_cordon_a_node(api: Any) -> None:
    from kubernetes import client

    core = client.CoreV1Api(api)
    before = core.read_node(NODE).spec
    taints = [t.to_dict() for t in before.taints or []]
    core.patch_node(NODE, {"spec": {"taints": [*taints, TAINT], "unschedulable": True}})
    node = core.read_node(NODE)
    assert node.spec.unschedulable is True
    assert (TAINT["key"], "yes", "NoSchedule") in [(t.key, t.value, t.effect) for t in node.spec.taints]
    core.patch_node(NODE, {"spec": {"taints": taints or None, "unschedulable": None}})
    after = core.read_node(NODE).spec
    assert after.unschedulable is None and after.taints == before.taints


def test_server_side_apply_owns_fields_and_reports_conflicts(api: Any) -> None:
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    core = client.CoreV1Api(api)
    apply = "application/apply-patch+yaml"
    core.patch_namespaced_config_map(
        "applied", NS, configmap("applied", owner="alice"), field_manager="alice", _content_type=apply
    )
    with pytest.raises(ApiException) as conflict:
        core.patch_namespaced_config_map(
            "applied", NS, configmap("applied", owner="bob"), field_manager="bob", _content_type=apply
        )
    assert conflict.value.status == 409
    forced = core.patch_namespaced_config_map(
        "applied", NS, configmap("applied", owner="bob"), field_manager="bob", force=True, _content_type=apply
    )
    assert forced.data == {"owner": "bob"}
    assert [(m.manager, m.operation) for m in forced.metadata.managed_fields] == [("bob", "Apply")]


def test_every_namespace_publishes_the_cluster_ca_as_kube_root_ca(api: Any, cluster: UpServer) -> None:
    from kubernetes import client

    core = client.CoreV1Api(api)

    def published() -> Any:
        found = core.list_namespaced_config_map(NS, field_selector="metadata.name=kube-root-ca.crt").items
        return found[0] if found else None

    config_map = eventually(published, "the root-ca-cert-publisher")
    assert cluster.connection.ca_pem is not None
    assert config_map.data == {"ca.crt": cluster.connection.ca_pem}
    assert set(config_map.metadata.annotations) == {"kubernetes.io/description"}
