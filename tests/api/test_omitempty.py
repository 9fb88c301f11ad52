"""Go's omitempty as kube-apiserver's encoding applies it (struct tags of k8s.io/api/core/v1
types.go and metav1.ObjectMeta): empty values of omitempty fields are dropped, others kept."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.api.omitempty import omit_empty


def node(spec: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", **meta}, "spec": spec}


def pod(spec: dict[str, Any], status: dict[str, Any] | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}
    if status is not None:
        obj["status"] = status
    return obj


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(node({"taints": []}), node({}), id="an empty taint list is omitted"),
        pytest.param(node({"unschedulable": False}), node({}), id="unschedulable false is omitted"),
        pytest.param(
            node({"unschedulable": True}), node({"unschedulable": True}), id="unschedulable true stays"
        ),
        pytest.param(
            node({"taints": [{"key": "k", "value": "", "effect": "NoSchedule"}]}),
            node({"taints": [{"key": "k", "effect": "NoSchedule"}]}),
            id="a taint's empty value is omitted",
        ),
        pytest.param(
            node({"taints": [{"key": "", "effect": ""}]}),
            node({"taints": [{"key": "", "effect": ""}]}),
            id="a taint's key and effect have no omitempty",
        ),
        pytest.param(
            node({"podCIDRs": [], "providerID": ""}), node({}), id="empty pod CIDRs and provider ID"
        ),
        pytest.param(
            node({}, labels={}, annotations={}, finalizers=[]), node({}), id="empty metadata maps and lists"
        ),
        pytest.param(
            pod({"hostNetwork": False, "nodeName": "", "tolerations": [], "containers": []}),
            pod({"containers": []}),
            id="pod spec bools strings and lists but not containers",
        ),
        pytest.param(
            pod({"enableServiceLinks": False, "terminationGracePeriodSeconds": 0, "priority": 0}),
            pod({"enableServiceLinks": False, "terminationGracePeriodSeconds": 0, "priority": 0}),
            id="pointers to empty values stay",
        ),
        pytest.param(
            pod(
                {"tolerations": [{"key": "", "operator": "Exists", "effect": "", "tolerationSeconds": None}]}
            ),
            pod({"tolerations": [{"operator": "Exists"}]}),
            id="a toleration's empty fields are omitted",
        ),
        pytest.param(
            pod({}, {"phase": "Pending", "podIPs": [], "hostIP": "", "conditions": []}),
            pod({}, {"phase": "Pending"}),
            id="empty pod status fields",
        ),
        pytest.param(
            {"kind": "ConfigMap", "metadata": {"name": "c"}, "data": {}, "binaryData": {}},
            {"kind": "ConfigMap", "metadata": {"name": "c"}},
            id="a ConfigMap's empty data is omitted",
        ),
        pytest.param(
            {"kind": "Secret", "metadata": {"name": "s"}, "data": {}, "type": "Opaque"},
            {"kind": "Secret", "metadata": {"name": "s"}, "type": "Opaque"},
            id="a Secret's empty data is omitted",
        ),
    ],
)
def test_empty_omitempty_fields_are_dropped(obj: dict[str, Any], expected: dict[str, Any]) -> None:
    assert omit_empty(obj) == expected


def test_a_workloads_pod_template_is_encoded_as_a_pod_spec() -> None:
    rs = {
        "kind": "ReplicaSet",
        "metadata": {"name": "r"},
        "spec": {"template": {"metadata": {"labels": {}}, "spec": {"tolerations": [], "containers": []}}},
    }
    assert omit_empty(rs)["spec"]["template"] == {"metadata": {}, "spec": {"containers": []}}


def test_an_object_without_empty_fields_is_returned_as_is() -> None:
    obj = node({"taints": [{"key": "k", "effect": "NoSchedule"}]})
    assert omit_empty(obj) is obj


def test_a_cronjobs_job_template_carries_a_pod_template() -> None:
    cron = {
        "kind": "CronJob",
        "metadata": {"name": "c"},
        "spec": {"jobTemplate": {"spec": {"template": {"spec": {"hostNetwork": False, "containers": []}}}}},
    }
    assert omit_empty(cron)["spec"]["jobTemplate"]["spec"]["template"]["spec"] == {"containers": []}
