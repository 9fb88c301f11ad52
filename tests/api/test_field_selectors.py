"""Field selectors select on the value upstream's strategies give a field, unset fields included
(pkg/registry/core/pod/strategy_test.go TestMatchPod, node and event strategies' selectable
fields, and the field label conversion functions of pkg/apis/core/v1/conversion.go)."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.api.errors import StatusError
from kubetaint.api.selectors import parse_field_selector

NODE_WITHOUT_FIELD: dict[str, Any] = {"metadata": {"name": "n1"}, "spec": {}}
CORDONED_NODE: dict[str, Any] = {"metadata": {"name": "n1"}, "spec": {"unschedulable": True}}
POD_WITHOUT_SPEC_FIELDS: dict[str, Any] = {"metadata": {"name": "p", "namespace": "d"}, "spec": {}}
HOST_NETWORK_POD: dict[str, Any] = {
    "metadata": {"name": "p", "namespace": "d"},
    "spec": {"hostNetwork": True},
}
POD_NETWORK_POD: dict[str, Any] = {
    "metadata": {"name": "p", "namespace": "d"},
    "spec": {"hostNetwork": False},
}
POD_WITH_IPS_ONLY: dict[str, Any] = {"metadata": {"name": "p"}, "status": {"podIPs": [{"ip": "2001:db8::"}]}}
POD_WITH_IP: dict[str, Any] = {
    "metadata": {"name": "p"},
    "status": {"podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.1"}]},
}
EVENT_FROM_EVENTS_API: dict[str, Any] = {
    "metadata": {"name": "e"},
    "reportingComponent": "taint-eviction-controller",
}
EVENT_WITH_SOURCE: dict[str, Any] = {
    "metadata": {"name": "e"},
    "source": {"component": "kubelet"},
    "reportingComponent": "kubelet",
}


@pytest.mark.parametrize(
    ("resource", "obj", "selector", "matches"),
    [
        pytest.param(
            "nodes",
            NODE_WITHOUT_FIELD,
            "spec.unschedulable=false",
            True,
            id="a node without the field is schedulable",
        ),
        pytest.param(
            "nodes",
            NODE_WITHOUT_FIELD,
            "spec.unschedulable!=true",
            True,
            id="a node without the field is not unschedulable",
        ),
        pytest.param(
            "nodes",
            NODE_WITHOUT_FIELD,
            "spec.unschedulable=true",
            False,
            id="a node without the field is not cordoned",
        ),
        pytest.param(
            "nodes", CORDONED_NODE, "spec.unschedulable=false", False, id="a cordoned node is not schedulable"
        ),
        pytest.param(
            "nodes", CORDONED_NODE, "spec.unschedulable=true", True, id="a cordoned node is unschedulable"
        ),
        pytest.param(
            "pods", HOST_NETWORK_POD, "spec.hostNetwork=true", True, id="a host network pod matches true"
        ),
        pytest.param(
            "pods",
            HOST_NETWORK_POD,
            "spec.hostNetwork=false",
            False,
            id="a host network pod does not match false",
        ),
        pytest.param(
            "pods", POD_NETWORK_POD, "spec.hostNetwork=false", True, id="hostNetwork false matches false"
        ),
        pytest.param(
            "pods",
            POD_WITHOUT_SPEC_FIELDS,
            "spec.hostNetwork=false",
            True,
            id="an unset hostNetwork matches false",
        ),
        pytest.param(
            "pods",
            POD_WITHOUT_SPEC_FIELDS,
            "spec.hostNetwork=true",
            False,
            id="an unset hostNetwork does not match true",
        ),
        pytest.param(
            "pods", POD_WITH_IPS_ONLY, "status.podIP=2001:db8::", True, id="podIP is the first of podIPs"
        ),
        pytest.param(
            "pods",
            POD_WITH_IPS_ONLY,
            "status.podIP=2001:db7::",
            False,
            id="podIP differs from the first of podIPs",
        ),
        pytest.param("pods", POD_WITH_IP, "status.podIP=10.0.0.1", True, id="podIP set"),
        pytest.param(
            "pods", POD_WITHOUT_SPEC_FIELDS, "status.podIP=", True, id="a pod without IPs has an empty podIP"
        ),
        pytest.param(
            "pods",
            POD_WITHOUT_SPEC_FIELDS,
            "spec.nodeName=",
            True,
            id="an unscheduled pod has an empty nodeName",
        ),
        pytest.param(
            "pods", {"spec": {"nodeName": "n1"}}, "spec.host=n1", True, id="spec.host is spec.nodeName"
        ),
        pytest.param(
            "jobs.batch", {"status": {}}, "status.successful=0", True, id="a job without successes has 0"
        ),
        pytest.param(
            "jobs.batch", {"status": {"succeeded": 2}}, "status.successful=2", True, id="a job's successes"
        ),
        pytest.param(
            "events", EVENT_WITH_SOURCE, "source=kubelet", True, id="an event's source is its component"
        ),
        pytest.param(
            "events",
            EVENT_FROM_EVENTS_API,
            "source=taint-eviction-controller",
            True,
            id="an event without a source component is sourced by its reporting controller",
        ),
        pytest.param(
            "events",
            EVENT_FROM_EVENTS_API,
            "reportingComponent=taint-eviction-controller",
            True,
            id="reportingComponent",
        ),
    ],
)
def test_a_field_selector_compares_the_value_upstream_gives_the_field(
    resource: str, obj: dict[str, Any], selector: str, matches: bool
) -> None:
    assert parse_field_selector(selector, resource).matches(obj) is matches


@pytest.mark.parametrize(
    ("resource", "selector", "field"),
    [
        pytest.param(
            "nodes", "metadata.namespace=", "metadata.namespace", id="nodes have no namespace field label"
        ),
        pytest.param(
            "namespaces",
            "metadata.namespace=x",
            "metadata.namespace",
            id="namespaces have no namespace field label",
        ),
        pytest.param("pods", "spec.bogus=1", "spec.bogus", id="an unknown pod field"),
        pytest.param(
            "leases.coordination.k8s.io",
            "spec.holderIdentity=a",
            "spec.holderIdentity",
            id="a kind without a conversion function has object meta only",
        ),
        pytest.param(
            "replicasets.apps", "spec.nodeName=n1", "spec.nodeName", id="a pod field on another kind"
        ),
    ],
)
def test_a_field_label_the_kind_does_not_convert_is_refused(resource: str, selector: str, field: str) -> None:
    with pytest.raises(StatusError) as raised:
        parse_field_selector(selector, resource)
    assert raised.value.message == f"field label not supported: {field}"


@pytest.mark.parametrize(
    ("resource", "selector"),
    [
        pytest.param("nodes", "metadata.name=n1", id="node names"),
        pytest.param("namespaces", "status.phase=Active", id="namespace phases"),
        pytest.param(
            "leases.coordination.k8s.io", "metadata.namespace=kube-node-lease", id="a lease's namespace"
        ),
        pytest.param("secrets", "type=Opaque", id="secret types"),
        pytest.param("services", "spec.clusterIP=None", id="service cluster IPs"),
    ],
)
def test_a_field_label_the_kind_converts_is_accepted(resource: str, selector: str) -> None:
    assert not parse_field_selector(selector, resource).empty
