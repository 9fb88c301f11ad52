"""Typed models: exact JSON round trips, unknown fields kept, Go-style decode errors."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetaint.api.models import MODELS, DecodeError, Node, Pod, Taint, Toleration, decode, model_for

NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "gpu-1", "labels": {"topology.kubernetes.io/zone": "a"}, "resourceVersion": "7"},
    "spec": {
        "podCIDR": "10.0.0.0/24",
        "providerID": "kind://x",
        "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
    },
    "status": {
        "capacity": {"cpu": "8", "memory": "32Gi", "pods": 110},
        "conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": "2024-01-01T00:00:00Z"}],
        "nodeInfo": {"kubeletVersion": "v1.35.0"},
    },
}
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "web",
        "namespace": "default",
        "ownerReferences": [{"kind": "ReplicaSet", "name": "r", "controller": True}],
    },
    "spec": {
        "containers": [
            {
                "name": "c",
                "image": "nginx",
                "resources": {"requests": {"cpu": "100m"}},
                "ports": [{"containerPort": 80}],
            }
        ],
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
        "priority": 0,
        "nodeName": None,
    },
    "status": {"phase": "Pending", "podIP": "10.0.0.5", "hostIP": "1.2.3.4"},
}
DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "d", "namespace": "default"},
    "spec": {
        "replicas": 3,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "i"}]},
        },
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%"}},
    },
}
PDB = {
    "apiVersion": "policy/v1",
    "kind": "PodDisruptionBudget",
    "metadata": {"name": "p"},
    "spec": {"minAvailable": "50%"},
}
STATUS = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "reason": "Invalid",
    "details": {
        "name": "n",
        "kind": "Node",
        "causes": [{"reason": "FieldValueRequired", "message": "Required value", "field": "spec"}],
    },
    "code": 422,
}


@pytest.mark.parametrize(
    "manifest",
    [
        pytest.param(NODE, id="a node with unknown status fields"),
        pytest.param(POD, id="a pod with ports, owner references and an explicit null"),
        pytest.param(DEPLOYMENT, id="a deployment with an untyped strategy"),
        pytest.param(PDB, id="a PDB with a percentage"),
    ],
)
def test_round_trip_is_exact(manifest: dict[str, Any]) -> None:
    assert decode(manifest).to_dict() == manifest


def test_status_round_trip() -> None:
    from kubetaint.api.models import Status

    assert Status.from_dict(STATUS).to_dict() == STATUS


def test_typed_access() -> None:
    node = decode(NODE)
    assert isinstance(node, Node) and node.spec is not None and node.spec.taints is not None
    assert node.spec.taints[0].effect == "NoSchedule"
    assert node.spec.pod_cidr == "10.0.0.0/24"
    pod = decode(POD)
    assert isinstance(pod, Pod) and pod.spec is not None and pod.spec.tolerations is not None
    assert pod.spec.tolerations[0].toleration_seconds == 300
    assert (pod.name, pod.namespace) == ("web", "default")


def test_every_served_kind_has_a_model() -> None:
    from kubetaint.api.resources import RESOURCES

    for resource in RESOURCES:
        assert model_for(resource.api_version, resource.kind) is not None, resource.kind
    assert len(MODELS) >= len(RESOURCES)


DECODE_ERRORS = [
    pytest.param(
        {"apiVersion": "v1", "kind": "Node", "spec": {"taints": [{"key": 5}]}},
        'Node in version "v1" cannot be handled as a Node: json: cannot unmarshal number into Go struct field Taint.spec.taints.key of type string',
        "spec.taints[0].key",
        id="a number where a string goes",
    ),
    pytest.param(
        {"apiVersion": "v1", "kind": "Node", "spec": {"unschedulable": "yes"}},
        'Node in version "v1" cannot be handled as a Node: json: cannot unmarshal string into Go struct field NodeSpec.spec.unschedulable of type bool',
        "spec.unschedulable",
        id="a string where a bool goes",
    ),
    pytest.param(
        {"apiVersion": "v1", "kind": "Node", "spec": {"taints": "dedicated=gpu:NoSchedule"}},
        'Node in version "v1" cannot be handled as a Node: json: cannot unmarshal string into Go struct field NodeSpec.spec.taints of type []v1.Taint',
        "spec.taints",
        id="a string where a list goes",
    ),
    pytest.param(
        {"apiVersion": "v1", "kind": "Node", "spec": {"taints": [7]}},
        'Node in version "v1" cannot be handled as a Node: json: cannot unmarshal number into Go struct field NodeSpec.spec.taints of type v1.Taint',
        "spec.taints[0]",
        id="a number where a list element object goes",
    ),
    pytest.param(
        {"apiVersion": "v1", "kind": "Pod", "spec": {"tolerations": [{"tolerationSeconds": "300"}]}},
        'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct field Toleration.spec.tolerations.tolerationSeconds of type int64',
        "spec.tolerations[0].tolerationSeconds",
        id="a quoted number for tolerationSeconds",
    ),
    pytest.param(
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "value": 1.5},
        'PriorityClass in version "v1" cannot be handled as a PriorityClass: json: cannot unmarshal number 1.5 into Go struct field PriorityClass.value of type int32',
        "value",
        id="a fraction where an int32 goes",
    ),
    pytest.param(
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "value": 3000000000},
        'PriorityClass in version "v1" cannot be handled as a PriorityClass: json: cannot unmarshal number 3000000000 into Go struct field PriorityClass.value of type int32',
        "value",
        id="an int32 overflow",
    ),
    pytest.param(
        {"apiVersion": "v1", "kind": "Node", "metadata": {"labels": {"a": True}}},
        'Node in version "v1" cannot be handled as a Node: json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels.a of type string',
        "metadata.labels.a",
        id="a bool label value",
    ),
]


@pytest.mark.parametrize(("manifest", "message", "path"), DECODE_ERRORS)
def test_decode_errors(manifest: dict[str, Any], message: str, path: str) -> None:
    with pytest.raises(DecodeError) as info:
        decode(manifest)
    assert str(info.value) == message
    assert info.value.path == path


def test_unknown_kind() -> None:
    with pytest.raises(DecodeError, match='no kind "Widget" is registered for version "v1"'):
        decode({"apiVersion": "v1", "kind": "Widget"})


def test_models_work_with_matching() -> None:
    from kubetaint import tolerates

    toleration = Toleration.from_dict({"operator": "Exists"})
    taint = Taint.from_dict({"key": "a", "effect": "NoExecute"})
    assert tolerates(toleration, taint)


json_leaves = st.one_of(st.none(), st.booleans(), st.integers(-(10**6), 10**6), st.text(max_size=5))
json_values = st.recursive(
    json_leaves,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)
unknown_keys = st.sampled_from(["x", "extra", "nodeInfo", "zz", "fooBar", "kubetaint.dev/note"])


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(
    st.dictionaries(unknown_keys, json_values, max_size=3),
    st.dictionaries(unknown_keys, json_values, max_size=3),
)
def test_unknown_fields_round_trip(top: dict[str, Any], in_taint: dict[str, Any]) -> None:
    manifest = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n"},
        "spec": {"taints": [{"key": "k", **in_taint}]},
        **top,
    }
    assert decode(manifest).to_dict() == manifest


# pkg/apis/apps/v1/conversion.go Convert_v1_DaemonSet_To_apps_DaemonSet: the template generation
# annotation is read with strconv.ParseInt(value, 10, 64).
@pytest.mark.parametrize(
    ("value", "error"),
    [
        pytest.param("abc", 'strconv.ParseInt: parsing "abc": invalid syntax', id="not a number"),
        pytest.param("1.5", 'strconv.ParseInt: parsing "1.5": invalid syntax', id="not an integer"),
        pytest.param(
            "99999999999999999999",
            'strconv.ParseInt: parsing "99999999999999999999": value out of range',
            id="beyond int64",
        ),
        pytest.param("+7", None, id="a signed integer"),
    ],
)
def test_a_daemon_set_template_generation_annotation_must_be_an_int64(value: str, error: str | None) -> None:
    daemonset = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "annotations": {"deprecated.daemonset.template.generation": value}},
    }
    if error is None:
        decode(daemonset)
        return
    with pytest.raises(DecodeError) as raised:
        decode(daemonset)
    assert str(raised.value) == f'DaemonSet in version "v1" cannot be handled as a DaemonSet: {error}'
