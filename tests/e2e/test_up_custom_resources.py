"""CustomResourceDefinitions and custom resources on `kubetaint up`, with the real kubectl and the
official Python client's CustomObjectsApi: `kubectl apply -f crd.yaml`, `kubectl get <plural>`
with the CRD's printer columns, `kubectl api-resources`, schema errors in upstream's words,
`kubectl scale`, namespace deletion and CRD deletion removing the custom resources, and the CRD
with its objects surviving a restart on SQLite, memory (gone, as every object) and etcd."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from .harness import KUBECTL, UpServer, eventually

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

CRD = r"""apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names: {plural: crontabs, singular: crontab, kind: CronTab, shortNames: [ct]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    additionalPrinterColumns:
    - {name: Spec, type: string, jsonPath: .spec.cronSpec}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [cronSpec]
            properties:
              cronSpec: {type: string}
              image: {type: string}
              replicas: {type: integer, minimum: 1, maximum: 10, default: 1}
          status:
            type: object
            properties:
              replicas: {type: integer}
"""

CRONTAB = """apiVersion: stable.example.com/v1
kind: CronTab
metadata: {name: my-cron, namespace: NS}
spec: {cronSpec: "* * * * */5", image: my-cron-image}
"""


def _apply(server: UpServer, text: str, *args: str, ok: bool = True) -> Any:
    path = server.workdir / f"manifest-{abs(hash(text))}.yaml"
    path.write_text(text)
    return server.kubectl("apply", "-f", str(path), *args, ok=ok)


def established(server: UpServer) -> str | None:
    out = server.kubectl(
        "get",
        "crd",
        "crontabs.stable.example.com",
        "-o",
        "jsonpath={.status.conditions[?(@.type=='Established')].status}",
    ).stdout
    return out if out == "True" else None


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpServer]:
    up = UpServer(tmp_path_factory.mktemp("up-crd"), "--nodes", "1").start()
    assert (
        _apply(up, CRD).stdout.strip()
        == "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created"
    )
    eventually(lambda: established(up), "the CRD to be established")
    yield up
    up.kill()


def test_kubectl_applies_gets_and_describes_custom_resources(server: UpServer) -> None:
    assert (
        _apply(server, CRONTAB.replace("NS", "default")).stdout.strip()
        == "crontab.stable.example.com/my-cron created"
    )
    lines = server.kubectl("get", "crontabs").stdout.splitlines()
    assert lines[0].split() == ["NAME", "SPEC", "REPLICAS"]
    assert lines[1].split() == ["my-cron", "*", "*", "*", "*", "*/5", "1"]
    assert server.kubectl("get", "ct", "my-cron", "-o", "jsonpath={.spec.replicas}").stdout == "1"
    crd_line = server.kubectl("get", "crd").stdout.splitlines()
    assert crd_line[0].split() == ["NAME", "CREATED", "AT"] and crd_line[1].startswith(
        "crontabs.stable.example.com"
    )
    resources = server.kubectl("api-resources", "--api-group=stable.example.com").stdout.splitlines()
    assert resources[1].split() == ["crontabs", "ct", "stable.example.com/v1", "true", "CronTab"]


def test_kubectl_explain_describes_custom_resources(server: UpServer) -> None:
    out = server.kubectl("explain", "crontabs.spec.replicas").stdout
    assert out.splitlines()[:5] == [
        "GROUP:      stable.example.com",
        "KIND:       CronTab",
        "VERSION:    v1",
        "",
        "FIELD: replicas <integer>",
    ]


def test_schema_errors_and_unknown_fields_are_upstreams(server: UpServer) -> None:
    bad = (
        CRONTAB.replace("NS", "default")
        .replace("image: my-cron-image", "replicas: 11")
        .replace("my-cron", "bad")
    )
    result = _apply(server, bad, ok=False)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        'The CronTab "bad" is invalid: spec.replicas: Invalid value: 11: '
        "spec.replicas in body should be less than or equal to 10"
    )
    unknown = (
        CRONTAB.replace("NS", "default").replace("my-cron", "odd").replace("image:", "colour: red, image:")
    )
    result = _apply(server, unknown, ok=False)
    assert 'strict decoding error: unknown field "spec.colour"' in result.stderr


def test_kubectl_scale_and_patch_status(server: UpServer) -> None:
    _apply(server, CRONTAB.replace("NS", "default").replace("my-cron", "scaled"))
    assert server.kubectl("scale", "ct", "scaled", "--replicas=3").stdout.strip() == (
        "crontab.stable.example.com/scaled scaled"
    )
    assert server.kubectl("get", "ct", "scaled", "-o", "jsonpath={.spec.replicas}").stdout == "3"
    server.kubectl(
        "patch", "ct", "scaled", "--subresource=status", "--type=merge", "-p", '{"status":{"replicas":3}}'
    )
    assert server.kubectl("get", "ct", "scaled", "-o", "jsonpath={.status.replicas}").stdout == "3"


def test_the_python_clients_custom_objects_api(server: UpServer) -> None:
    from kubernetes import client, config, watch

    api_client = config.new_client_from_config(config_file=str(server.kubeconfig))
    try:
        api = client.CustomObjectsApi(api_client)
        body = {
            "apiVersion": "stable.example.com/v1",
            "kind": "CronTab",
            "metadata": {"name": "py", "labels": {"made-by": "python"}},
            "spec": {"cronSpec": "0 * * * *"},
        }
        created = api.create_namespaced_custom_object("stable.example.com", "v1", "default", "crontabs", body)
        assert created["spec"] == {"cronSpec": "0 * * * *", "replicas": 1}
        listed = api.list_namespaced_custom_object(
            "stable.example.com", "v1", "default", "crontabs", label_selector="made-by=python"
        )
        assert [o["metadata"]["name"] for o in listed["items"]] == ["py"]
        patched = api.patch_namespaced_custom_object(
            "stable.example.com", "v1", "default", "crontabs", "py", {"spec": {"image": "v2"}}
        )
        assert patched["spec"]["image"] == "v2"
        events = []
        stream = watch.Watch()
        for event in stream.stream(
            api.list_namespaced_custom_object,
            "stable.example.com",
            "v1",
            "default",
            "crontabs",
            resource_version=listed["metadata"]["resourceVersion"],
            timeout_seconds=3,
        ):
            events.append((event["type"], event["object"]["metadata"]["name"]))
            if event["type"] == "MODIFIED":
                stream.stop()
        assert events == [("MODIFIED", "py")]
        api.delete_namespaced_custom_object("stable.example.com", "v1", "default", "crontabs", "py")
        with pytest.raises(client.ApiException) as missing:
            api.get_namespaced_custom_object("stable.example.com", "v1", "default", "crontabs", "py")
        assert missing.value.status == 404
    finally:
        api_client.close()


def test_deleting_a_namespace_deletes_its_custom_resources(server: UpServer) -> None:
    server.kubectl("create", "namespace", "team")
    _apply(server, CRONTAB.replace("NS", "team"))
    server.kubectl("delete", "namespace", "team", "--wait=false")
    eventually(
        lambda: server.kubectl("get", "namespace", "team", ok=False).returncode == 1 or None,
        "the namespace to be gone",
    )
    assert server.kubectl("get", "ct", "-n", "team", "-o", "name").stdout == ""


def _etcd_module() -> ModuleType:
    path = Path(__file__).resolve().parent.parent / "store" / "etcd_server.py"
    spec = importlib.util.spec_from_file_location("kubetaint_tests_etcd_server_crd", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ETCD = _etcd_module()


@pytest.mark.parametrize(
    "store",
    [
        pytest.param("sqlite", id="on SQLite"),
        pytest.param(
            "etcd",
            id="on etcd",
            marks=pytest.mark.skipif(ETCD.ETCD_BINARY is None, reason=ETCD.SKIP_REASON),
        ),
    ],
)
def test_crds_and_custom_resources_survive_a_restart_and_the_crd_deletion_removes_them(
    tmp_path: Path, store: str
) -> None:
    etcd = None
    args: tuple[str, ...] = ("--nodes", "0")
    if store == "etcd":
        (tmp_path / "etcd").mkdir()
        etcd = ETCD.EtcdServer(tmp_path / "etcd")
        args = (*args, "--store", "etcd://" + etcd.url.removeprefix("http://"))
    try:
        first = UpServer(tmp_path, *args).start()
        try:
            _apply(first, CRD)
            eventually(lambda: established(first), "the CRD to be established")
            _apply(first, CRONTAB.replace("NS", "default"))
        finally:
            first.stop()
        again = UpServer(tmp_path, *args).start()
        try:
            assert (
                again.kubectl("get", "ct", "-o", "name").stdout.strip()
                == "crontab.stable.example.com/my-cron"
            )
            again.kubectl("delete", "crd", "crontabs.stable.example.com")
            eventually(
                lambda: again.kubectl("get", "crd", "-o", "name").stdout.strip() == "" or None,
                "the CRD to be gone",
            )
            gone = again.get("/apis/stable.example.com/v1/namespaces/default/crontabs")
            assert gone.status_code == 404
        finally:
            again.stop()
    finally:
        if etcd is not None:
            etcd.stop()


def test_objects_owned_by_a_deleted_custom_resource_are_garbage_collected(server: UpServer) -> None:
    _apply(server, CRONTAB.replace("NS", "default").replace("my-cron", "owner"))
    uid = server.kubectl("get", "ct", "owner", "-o", "jsonpath={.metadata.uid}").stdout
    child = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: owned\n  namespace: default\n"
        "  ownerReferences:\n  - apiVersion: stable.example.com/v1\n    kind: CronTab\n"
        f"    name: owner\n    uid: {uid}\ndata: {{a: b}}\n"
    )
    _apply(server, child)
    server.kubectl("delete", "ct", "owner")
    eventually(
        lambda: server.kubectl("get", "configmap", "owned", ok=False).returncode == 1 or None,
        "the owned ConfigMap to be collected",
    )


def test_a_replace_without_resource_version_is_refused_and_kubectl_replace_fills_it_in(
    server: UpServer,
) -> None:
    from kubernetes import client, config

    manifest = CRONTAB.replace("NS", "default").replace("my-cron", "replaced")
    _apply(server, manifest)
    api_client = config.new_client_from_config(config_file=str(server.kubeconfig))
    try:
        api = client.CustomObjectsApi(api_client)
        body = {
            "apiVersion": "stable.example.com/v1",
            "kind": "CronTab",
            "metadata": {"name": "replaced", "namespace": "default"},
            "spec": {"cronSpec": "* * * * */5", "image": "other-image"},
        }
        with pytest.raises(client.ApiException) as refused:
            api.replace_namespaced_custom_object(
                "stable.example.com", "v1", "default", "crontabs", "replaced", body
            )
        assert refused.value.status == 422
        assert json.loads(refused.value.body)["message"] == (
            'crontabs.stable.example.com "replaced" is invalid: metadata.resourceVersion: '
            "Invalid value: 0x0: must be specified for an update"
        )
    finally:
        api_client.close()
    # kubectl replace reads the object's resourceVersion first when the manifest has none
    path = server.workdir / "replaced.yaml"
    path.write_text(manifest.replace("replaced-image", "other-image"))
    assert (
        server.kubectl("replace", "-f", str(path)).stdout.strip()
        == "crontab.stable.example.com/replaced replaced"
    )
    assert server.kubectl("get", "ct", "replaced", "-o", "jsonpath={.spec.image}").stdout == "other-image"
