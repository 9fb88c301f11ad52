"""An HTTP write and an in-process write (the simulator's, a controller's: the control plane's
registry without a user) store the same defaults: the kinds' defaults and the strategies'
request-independent preparation are one step of the registry (registry.defaulting), a created
pod's status (the pod strategy's PrepareForCreate) included. What only an HTTP request has stays
apart: a Service's ClusterIP and NodePorts."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from starlette.testclient import TestClient

from kubetaint.controlplane import ControlPlane

from .test_custom_resources_http import crontab_crd

JSON = dict[str, Any]


def _service(name: str, **spec: Any) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def _pod(name: str, **spec: Any) -> JSON:
    resources = {"limits": {"cpu": "500m", "memory": "64Mi"}}
    container = {"name": "c", "image": "nginx", "resources": resources}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [container], **spec},
        "status": {"phase": "Running"},  # reset on create, whoever creates the pod
    }


def _stateful_set(name: str) -> JSON:
    template = {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "c", "image": "db"}]}}
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"serviceName": name, "selector": {"matchLabels": {"app": name}}, "template": template},
    }


def _crd(plural: str) -> JSON:
    crd = crontab_crd()
    crd["metadata"]["name"] = f"{plural}.stable.example.com"
    crd["spec"]["names"] = {"plural": plural, "kind": plural.capitalize()[:-1]}
    return crd


def _without_allocation(obj: JSON) -> JSON:
    """`obj` without what the Service REST storage allocates (ClusterIPs, NodePorts)."""
    spec = dict(obj.get("spec") or {})
    spec.pop("clusterIP", None)
    spec.pop("clusterIPs", None)
    if isinstance(spec.get("ports"), list):
        spec["ports"] = [{k: v for k, v in port.items() if k != "nodePort"} for port in spec["ports"]]
    return {**obj, "spec": spec}


def _stored_part(obj: JSON, *, status: bool) -> JSON:
    """What the two paths must store alike: spec (and status), the generation; never the
    names, uids, timestamps, resourceVersions or managedFields the write itself sets."""
    part = {"spec": obj.get("spec"), "generation": (obj.get("metadata") or {}).get("generation")}
    if status:
        part["status"] = obj.get("status")
    return part


#: (store resource, URL of its collection, the two manifests (a namespaced object is written
#: in-process in another namespace; the CRDs differ in their names), whether the status is
#: compared too)
CREATES = [
    pytest.param(
        "services",
        "/api/v1/namespaces/default/services",
        [_service("a", selector={"app": "web"}, ports=[{"port": 80}])] * 2,
        True,
        id="a Service gets SetDefaults_Service, its IP families and an empty load balancer status",
    ),
    pytest.param(
        "services",
        "/api/v1/namespaces/default/services",
        [_service("c", type="LoadBalancer", ports=[{"port": 80, "name": "web"}])] * 2,
        True,
        id="a LoadBalancer Service gets its traffic policies and allocateLoadBalancerNodePorts",
    ),
    pytest.param(
        "customresourcedefinitions.apiextensions.k8s.io",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        [_crd(plural) for plural in ("crontabs", "cronjabs")],
        False,
        id="a CustomResourceDefinition gets its singular, listKind, conversion and generation 1",
    ),
    pytest.param(
        "statefulsets.apps",
        "/apis/apps/v1/namespaces/default/statefulsets",
        [_stateful_set("e")] * 2,
        True,
        id="a StatefulSet gets SetDefaults_StatefulSet",
    ),
    pytest.param(
        "pods",
        "/api/v1/namespaces/default/pods",
        [_pod("g")] * 2,
        True,
        id="a pod's containers request their limits and it starts Pending and Guaranteed",
    ),
    pytest.param(
        "pods",
        "/api/v1/namespaces/default/pods",
        [_pod("h", schedulingGates=[{"name": "example.com/gate"}])] * 2,
        True,
        id="a gated pod starts with PodScheduled False, reason SchedulingGated",
    ),
]


def _rename(stored: JSON, crd: bool) -> JSON:
    """The CRD's spec without the names that differ on purpose."""
    if not crd:
        return stored
    spec = copy.deepcopy(stored["spec"])
    for key in ("plural", "kind", "singular", "listKind"):
        spec["names"].pop(key, None)
    return {**stored, "spec": spec}


@pytest.mark.parametrize(("resource", "url", "manifests", "with_status"), CREATES)
def test_an_http_create_and_an_in_process_create_store_the_same_defaults(
    engine_client: TestClient,
    plane: ControlPlane,
    resource: str,
    url: str,
    manifests: list[JSON],
    with_status: bool,
) -> None:
    over_http, in_process = manifests[0], copy.deepcopy(manifests[1])
    if "namespace" in in_process["metadata"]:
        plane.ensure_namespace("other")
        in_process["metadata"]["namespace"] = "other"
    response = engine_client.post(url, json=over_http)
    assert response.status_code == 201, response.text
    by_http = _without_allocation(response.json())
    by_registry = _without_allocation(plane.registry.create(resource, in_process))
    crd = resource.startswith("customresourcedefinitions")
    assert _rename(_stored_part(by_http, status=with_status), crd) == _rename(
        _stored_part(by_registry, status=with_status), crd
    )
    assert by_registry["spec"] != manifests[1]["spec"]  # defaults were added


def test_an_http_update_and_an_in_process_update_store_the_same_defaults(
    engine_client: TestClient, plane: ControlPlane
) -> None:
    url = "/api/v1/namespaces/default/services"
    for name in ("a", "b"):
        assert engine_client.post(url, json=_service(name, ports=[{"port": 80}])).status_code == 201
    bare_ports = [{"port": 81}]
    over_http = engine_client.get(f"{url}/a").json()
    over_http["spec"] = {"ports": bare_ports, "clusterIP": over_http["spec"]["clusterIP"]}
    response = engine_client.put(f"{url}/a", json=over_http)
    assert response.status_code == 200, response.text
    in_process = plane.registry.get("services", "default", "b")
    in_process = {**in_process, "spec": {"ports": bare_ports, "clusterIP": in_process["spec"]["clusterIP"]}}
    by_registry = plane.registry.update("services", in_process)
    assert _stored_part(_without_allocation(response.json()), status=True) == _stored_part(
        _without_allocation(by_registry), status=True
    )
    assert by_registry["spec"]["ports"] == [{"port": 81, "protocol": "TCP", "targetPort": 81}]


def test_an_in_process_crd_update_moves_the_generation_and_keeps_the_stored_versions(
    plane: ControlPlane,
) -> None:
    created = plane.registry.create("customresourcedefinitions.apiextensions.k8s.io", _crd("crontabs"))
    assert (created["metadata"]["generation"], created["status"]) == (1, {"storedVersions": ["v1"]})
    changed = copy.deepcopy(created)
    changed["spec"]["versions"][0]["additionalPrinterColumns"] = []
    changed["status"] = {}
    updated = plane.registry.update("customresourcedefinitions.apiextensions.k8s.io", changed)
    assert updated["metadata"]["generation"] == 2
    assert updated["status"]["storedVersions"] == ["v1"]
    assert updated["spec"]["names"]["singular"] == "crontab"
