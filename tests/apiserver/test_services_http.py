"""Services over HTTP: defaults, a ClusterIP from 10.96.0.0/12 and NodePorts from 30000-32767
allocated as kube-apiserver allocates them, refused in its words when taken or out of range, kept
across updates, printed with kubectl's columns."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest
from starlette.testclient import TestClient

from .builders import TABLE_ACCEPT

JSON = dict[str, Any]
SERVICES = "/api/v1/namespaces/default/services"
MERGE = {"Content-Type": "application/merge-patch+json"}


def service(name: str, **spec: Any) -> JSON:
    spec.setdefault("ports", [{"port": 80}])
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def create(client: TestClient, body: JSON) -> Any:
    return client.post(SERVICES, json=body)


def test_a_service_gets_upstreams_defaults_and_a_cluster_ip(engine_client: TestClient) -> None:
    response = create(
        engine_client, service("web", selector={"app": "web"}, ports=[{"port": 80, "targetPort": 8080}])
    )
    assert response.status_code == 201, response.text
    spec = response.json()["spec"]
    assert ipaddress.IPv4Address(spec["clusterIP"]) in ipaddress.IPv4Network("10.96.0.0/12")
    assert spec["clusterIPs"] == [spec["clusterIP"]]
    assert spec["ports"] == [{"port": 80, "targetPort": 8080, "protocol": "TCP"}]
    assert (spec["type"], spec["sessionAffinity"], spec["ipFamilies"], spec["ipFamilyPolicy"]) == (
        "ClusterIP",
        "None",
        ["IPv4"],
        "SingleStack",
    )
    assert spec["internalTrafficPolicy"] == "Cluster"


def test_two_services_get_different_cluster_ips(engine_client: TestClient) -> None:
    ips = {create(engine_client, service(f"s{i}")).json()["spec"]["clusterIP"] for i in range(20)}
    assert len(ips) == 20


@pytest.mark.parametrize(
    ("ip", "message"),
    [
        pytest.param(
            "10.96.0.10",
            'Service "b" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.10"}: '
            "failed to allocate IP 10.96.0.10: provided IP is already allocated",
            id="an IP another service holds",
        ),
        pytest.param(
            "10.0.0.1",
            'Service "b" is invalid: spec.clusterIPs: Invalid value: []string{"10.0.0.1"}: '
            "failed to allocate IP 10.0.0.1: the provided IP (10.0.0.1) is not in the valid range. "
            "The range of valid IPs is 10.96.0.0/12",
            id="an IP outside the service CIDR",
        ),
    ],
)
def test_a_requested_cluster_ip_must_be_free_and_in_range(
    engine_client: TestClient, ip: str, message: str
) -> None:
    assert create(engine_client, service("a", clusterIP="10.96.0.10")).status_code == 201
    response = create(engine_client, service("b", clusterIP=ip))
    assert (response.status_code, response.json()["message"]) == (422, message)


@pytest.mark.parametrize(
    ("port", "message"),
    [
        pytest.param(
            30080,
            'Service "b" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated',
            id="a port another service holds",
        ),
        pytest.param(
            8080,
            'Service "b" is invalid: spec.ports[0].nodePort: Invalid value: 8080: provided port is not in the '
            "valid range. The range of valid ports is 30000-32767",
            id="a port outside the range",
        ),
    ],
)
def test_a_requested_node_port_must_be_free_and_in_range(
    engine_client: TestClient, port: int, message: str
) -> None:
    first = create(engine_client, service("a", type="NodePort", ports=[{"port": 80, "nodePort": 30080}]))
    assert first.status_code == 201, first.text
    response = create(engine_client, service("b", type="NodePort", ports=[{"port": 80, "nodePort": port}]))
    assert (response.status_code, response.json()["message"]) == (422, message)


def test_node_ports_are_allocated_in_the_range_and_kept_on_update(engine_client: TestClient) -> None:
    created = create(engine_client, service("np", type="NodePort", ports=[{"name": "http", "port": 80}]))
    assert created.status_code == 201, created.text
    node_port = created.json()["spec"]["ports"][0]["nodePort"]
    assert 30000 <= node_port <= 32767
    assert created.json()["spec"]["externalTrafficPolicy"] == "Cluster"
    replaced = service("np", type="NodePort", ports=[{"name": "http", "port": 80}])
    replaced["metadata"]["resourceVersion"] = created.json()["metadata"]["resourceVersion"]
    updated = engine_client.put(f"{SERVICES}/np", json=replaced)
    assert updated.status_code == 200, updated.text
    assert updated.json()["spec"]["ports"][0]["nodePort"] == node_port
    assert updated.json()["spec"]["clusterIP"] == created.json()["spec"]["clusterIP"]


def test_a_cluster_ip_may_not_change_once_set(engine_client: TestClient) -> None:
    assert create(engine_client, service("c", clusterIP="10.96.0.20")).status_code == 201
    response = engine_client.patch(
        f"{SERVICES}/c", json={"spec": {"clusterIP": "None", "clusterIPs": ["None"]}}, headers=MERGE
    )
    assert (response.status_code, response.json()["message"]) == (
        422,
        'Service "c" is invalid: spec.clusterIPs[0]: Invalid value: []string{"None"}: may not change once set',
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param(
            {"ports": []},
            'Service "v" is invalid: spec.ports: Required value',
            id="a service without ports",
        ),
        pytest.param(
            {"ports": [{"port": 80}, {"port": 81}]},
            'Service "v" is invalid: [spec.ports[0].name: Required value, spec.ports[1].name: Required value]',
            id="several ports are named",
        ),
        pytest.param(
            {"ports": [{"port": 80, "nodePort": 30001}]},
            "Service \"v\" is invalid: spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'",
            id="a ClusterIP service has no node port",
        ),
        pytest.param(
            {"type": "Bogus"},
            'Service "v" is invalid: spec.type: Unsupported value: "Bogus": supported values: "ClusterIP", '
            '"ExternalName", "LoadBalancer", "NodePort"',
            id="an unknown type",
        ),
        pytest.param(
            {"ports": [{"port": 70000}]},
            'Service "v" is invalid: [spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, '
            "inclusive, spec.ports[0].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive]",
            id="a port number out of range",
        ),
    ],
)
def test_invalid_services(engine_client: TestClient, spec: JSON, message: str) -> None:
    response = create(engine_client, service("v", **spec))
    assert (response.status_code, response.json()["message"]) == (422, message)


def test_a_headless_service_has_no_cluster_ip(engine_client: TestClient) -> None:
    response = create(engine_client, service("h", clusterIP="None", selector={"app": "h"}))
    assert response.status_code == 201, response.text
    assert response.json()["spec"]["clusterIPs"] == ["None"]


def test_the_service_table_has_kubectls_columns(engine_client: TestClient) -> None:
    create(engine_client, service("web", clusterIP="10.96.0.50", selector={"app": "web"}))
    create(
        engine_client,
        service("np", type="NodePort", clusterIP="10.96.0.51", ports=[{"port": 80, "nodePort": 30500}]),
    )
    create(engine_client, service("ext", type="ExternalName", externalName="example.com", ports=[]))
    table = engine_client.get(SERVICES, headers={"Accept": TABLE_ACCEPT}).json()
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name",
        "Type",
        "Cluster-IP",
        "External-IP",
        "Port(s)",
        "Age",
        "Selector",
    ]
    rows = {row["cells"][0]: row["cells"] for row in table["rows"]}
    assert rows["web"] == ["web", "ClusterIP", "10.96.0.50", "<none>", "80/TCP", "0s", "app=web"]
    assert rows["np"] == ["np", "NodePort", "10.96.0.51", "<none>", "80:30500/TCP", "0s", "<none>"]
    assert rows["ext"] == ["ext", "ExternalName", "<none>", "example.com", "<none>", "0s", "<none>"]


def test_endpoints_and_slices_are_defaulted_validated_and_printed(engine_client: TestClient) -> None:
    ep = {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {"name": "web", "namespace": "default"},
        "subsets": [{"addresses": [{"ip": "10.1.0.5"}, {"ip": "10.1.0.6"}], "ports": [{"port": 8080}]}],
    }
    created = engine_client.post("/api/v1/namespaces/default/endpoints", json=ep)
    assert created.status_code == 201, created.text
    assert created.json()["subsets"][0]["ports"] == [{"port": 8080, "protocol": "TCP"}]
    table = engine_client.get("/api/v1/namespaces/default/endpoints", headers={"Accept": TABLE_ACCEPT}).json()
    assert table["rows"][0]["cells"] == ["web", "10.1.0.5:8080,10.1.0.6:8080", "0s"]
    bad = {
        **ep,
        "metadata": {"name": "bad", "namespace": "default"},
        "subsets": [{"addresses": [{"ip": "0.0.0.0"}]}],
    }
    refused = engine_client.post("/api/v1/namespaces/default/endpoints", json=bad)
    assert (refused.status_code, refused.json()["message"]) == (
        422,
        'Endpoints "bad" is invalid: subsets[0].addresses[0].ip: Invalid value: "0.0.0.0": '
        "may not be unspecified (0.0.0.0)",
    )
    eps = {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": "web-1", "namespace": "default"},
        "addressType": "IPv4",
        "endpoints": [{"addresses": [f"10.1.0.{i}"]} for i in range(1, 6)],
        "ports": [{"port": 8080}],
    }
    slices = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"
    created = engine_client.post(slices, json=eps)
    assert created.status_code == 201, created.text
    assert created.json()["ports"] == [{"name": "", "protocol": "TCP", "port": 8080}]
    table = engine_client.get(slices, headers={"Accept": TABLE_ACCEPT}).json()
    assert table["rows"][0]["cells"] == [
        "web-1",
        "IPv4",
        "8080",
        "10.1.0.1,10.1.0.2,10.1.0.3 + 2 more...",
        "0s",
    ]


def test_changing_only_the_type_drops_what_the_new_type_does_not_take(engine_client: TestClient) -> None:
    created = create(engine_client, service("t", type="NodePort", ports=[{"name": "http", "port": 80}]))
    assert created.status_code == 201, created.text
    to_cluster_ip = engine_client.patch(f"{SERVICES}/t", json={"spec": {"type": "ClusterIP"}}, headers=MERGE)
    assert to_cluster_ip.status_code == 200, to_cluster_ip.text
    spec = to_cluster_ip.json()["spec"]
    assert "nodePort" not in spec["ports"][0] and "externalTrafficPolicy" not in spec
    assert spec["clusterIP"] == created.json()["spec"]["clusterIP"]
    external = {"spec": {"type": "ExternalName", "externalName": "example.com"}}
    to_external = engine_client.patch(f"{SERVICES}/t", json=external, headers=MERGE)
    assert to_external.status_code == 200, to_external.text
    assert "clusterIP" not in to_external.json()["spec"] and "ipFamilies" not in to_external.json()["spec"]
