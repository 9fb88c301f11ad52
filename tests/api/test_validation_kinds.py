"""Metadata, quantities, per-kind basics and kube-apiserver's Invalid rendering."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.api.validation import invalid_message, invalid_status, kubectl_invalid_message, validate
from kubetaint.api.validation.field import go_quote, invalid, not_supported, required, too_long

from .builders import node, pod, workload

SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
    "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
QUANTITY = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def _strings(obj: dict[str, Any], **kwargs: Any) -> list[str]:
    return [str(e) for e in validate(obj, **kwargs)]


def _with_meta(obj: dict[str, Any], **meta: Any) -> dict[str, Any]:
    obj["metadata"] = meta
    return obj


META_CASES = [
    pytest.param(
        node("Node_1"),
        [f'metadata.name: Invalid value: "Node_1": {SUBDOMAIN}'],
        id="node names are DNS subdomains",
    ),
    pytest.param(node("a.b"), [], id="a dotted node name is a valid subdomain"),
    pytest.param(
        _with_meta(node(), generateName="gpu-"),
        [],
        id="a generateName with a trailing dash stands in for the name",
    ),
    pytest.param(
        _with_meta(node()),
        ["metadata.name: Required value: name or generateName is required"],
        id="a name is required",
    ),
    pytest.param(
        _with_meta(node(), name="n", namespace="default"),
        ["metadata.namespace: Forbidden: not allowed on this type"],
        id="a namespace on a cluster-scoped kind is forbidden",
    ),
    pytest.param(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a.b"}},
        ['metadata.name: Invalid value: "a.b": must not contain dots'],
        id="namespace names are DNS labels and a subdomain fails for its dots",
    ),
    pytest.param(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "Team"}},
        [f'metadata.name: Invalid value: "Team": {LABEL}'],
        id="an uppercase namespace name",
    ),
    pytest.param(
        _with_meta(pod(), name="p", namespace="Bad"),
        [f'metadata.namespace: Invalid value: "Bad": {LABEL}'],
        id="a namespace must be a DNS label",
    ),
    pytest.param(
        _with_meta(node(), name="n", labels={"ok": "-x"}),
        [
            'metadata.labels: Invalid value: "-x": a valid label must be an empty string or consist of alphanumeric '
            "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
            "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        ],
        id="label values are checked at metadata.labels",
    ),
    pytest.param(
        _with_meta(node(), name="n", annotations={"Example.COM/Key": "v"}),
        [],
        id="annotation keys are checked lower-cased",
    ),
    pytest.param(
        _with_meta(node(), name="n", annotations={"a": "x" * (256 * 1024)}),
        ["metadata.annotations: Too long: may not be more than 262144 bytes"],
        id="annotations are limited to 256 KiB in total",
    ),
]


@pytest.mark.parametrize(("obj", "expected"), META_CASES)
def test_object_meta(obj: dict[str, Any], expected: list[str]) -> None:
    assert _strings(obj) == expected


def test_namespaced_object_without_namespace_gets_the_request_namespace() -> None:
    obj = pod()
    del obj["metadata"]["namespace"]
    assert validate(obj) == []


QUANTITY_CASES = [
    pytest.param(
        node(capacity={"cpu": "8", "memory": "32Gi", "pods": "110"}), [], id="a valid node capacity"
    ),
    pytest.param(
        node(capacity={"cpu": "lots"}),
        [f'status.capacity.cpu: Invalid value: "lots": {QUANTITY}'],
        id="a malformed capacity quantity",
    ),
    pytest.param(
        node(allocatable={"memory": "-1Gi"}),
        ['status.allocatable.memory: Invalid value: "-1Gi": must be greater than or equal to 0'],
        id="a negative allocatable quantity",
    ),
    pytest.param(
        node(capacity={"example.com/gpu": "1500m"}),
        ['status.capacity.example.com/gpu: Invalid value: "1500m": must be an integer'],
        id="extended resources must be whole",
    ),
    pytest.param(
        pod(
            containers=[
                {"name": "c", "image": "i", "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}
            ]
        ),
        [
            'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1'
        ],
        id="a request above its limit",
    ),
    pytest.param(
        pod(containers=[{"name": "c", "image": "i", "resources": {"requests": {"memory": "1x"}}}]),
        [f'spec.containers[0].resources.requests[memory]: Invalid value: "1x": {QUANTITY}'],
        id="a malformed request quantity",
    ),
    pytest.param(
        pod(containers=[{"name": "c", "image": "i", "resources": {"requests": {"example.com/gpu": "1"}}}]),
        [
            "spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources"
        ],
        id="extended resources need a limit",
    ),
    pytest.param(
        pod(containers=[{"name": "c", "image": "i", "resources": {"limits": {"gpu": "1"}}}]),
        [
            'spec.containers[0].resources.limits[gpu]: Invalid value: "gpu": must be a standard resource type or fully qualified',
            'spec.containers[0].resources.limits[gpu]: Invalid value: "gpu": must be a standard resource for containers',
        ],
        id="an unknown unqualified resource name fails both name checks",
    ),
    pytest.param(
        pod(containers=[{"name": "c", "image": "i", "resources": {"limits": {"pods": "1"}}}]),
        [
            'spec.containers[0].resources.limits[pods]: Invalid value: "pods": must be a standard resource for containers'
        ],
        id="a standard resource that is not a container resource",
    ),
    pytest.param(
        pod(
            containers=[
                {
                    "name": "c",
                    "image": "i",
                    "resources": {"limits": {"hugepages-2Mi": "2Mi"}, "requests": {"hugepages-2Mi": "2Mi"}},
                }
            ]
        ),
        [],
        id="hugepages with equal request and limit",
    ),
    pytest.param(
        pod(
            containers=[
                {
                    "name": "c",
                    "image": "i",
                    "resources": {"limits": {"example.com/gpu": "2"}, "requests": {"example.com/gpu": "1"}},
                }
            ]
        ),
        [
            'spec.containers[0].resources.requests: Invalid value: "1": must be equal to example.com/gpu limit of 2'
        ],
        id="extended resources cannot overcommit",
    ),
]


@pytest.mark.parametrize(("obj", "expected"), QUANTITY_CASES)
def test_quantities(obj: dict[str, Any], expected: list[str]) -> None:
    assert _strings(obj) == expected


KIND_CASES = [
    pytest.param(pod(containers=[]), ["spec.containers: Required value"], id="a pod needs containers"),
    pytest.param(
        pod(containers=[{"image": "nginx"}]),
        ["spec.containers[0].name: Required value"],
        id="a container needs a name",
    ),
    pytest.param(
        pod(containers=[{"name": "c", "image": "i"}, {"name": "c", "image": "i"}]),
        ['spec.containers[1].name: Duplicate value: "c"'],
        id="container names are unique",
    ),
    pytest.param(
        pod(restartPolicy="Sometimes"),
        [
            'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'
        ],
        id="an unknown restart policy",
    ),
    pytest.param(
        pod(nodeName="Bad_Node"),
        [f'spec.nodeName: Invalid value: "Bad_Node": {SUBDOMAIN}'],
        id="a bad nodeName",
    ),
    pytest.param(
        pod(nodeName="n1", schedulingGates=[{"name": "g"}]),
        ["spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"],
        id="a bound pod cannot carry scheduling gates",
    ),
    pytest.param(
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 2000000000,
        },
        ["value: Forbidden: maximum allowed value of a user defined priority is 1000000000"],
        id="a user priority above one billion",
    ),
    pytest.param(
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "system-x"},
            "value": 1,
        },
        [
            "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use "
            "only. error: system-x is not a known system priority class"
        ],
        id="system- names are reserved",
    ),
    pytest.param(
        {
            "apiVersion": "node.k8s.io/v1",
            "kind": "RuntimeClass",
            "metadata": {"name": "rc"},
            "handler": "Bad",
        },
        [f'handler: Invalid value: "Bad": {LABEL}'],
        id="a runtime class handler is a DNS label",
    ),
    pytest.param(
        {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"}, "target": {"kind": "Pod"}},
        [
            'target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>"',
            "target.name: Required value",
        ],
        id="a binding targets a named node",
    ),
    pytest.param(
        workload("Deployment", labels={"app": "db"}),
        [
            'spec.template.metadata.labels: Invalid value: map[string]string{"app":"db"}: '
            "`selector` does not match template `labels`"
        ],
        id="a deployment selector must match its template",
    ),
    pytest.param(
        workload(
            "DaemonSet",
            template={
                "metadata": {"labels": {"app": "web"}},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]},
            },
        ),
        ['spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"'],
        id="workload pods must restart always",
    ),
    pytest.param(
        workload("ReplicaSet", replicas=-1),
        ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"],
        id="negative replicas",
    ),
    pytest.param(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "b"},
            "spec": {"minAvailable": "150%"},
        },
        [
            'spec.minAvailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}: must not be greater than 100%'
        ],
        id="a PDB percentage above 100",
    ),
    pytest.param(
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "l"},
            "spec": {"leaseDurationSeconds": 0},
        },
        ["spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"],
        id="a lease needs a positive duration",
    ),
]


@pytest.mark.parametrize(("obj", "expected"), KIND_CASES)
def test_kinds(obj: dict[str, Any], expected: list[str]) -> None:
    assert _strings(obj) == expected


def test_workload_template_tolerations_are_validated() -> None:
    obj = workload("Deployment")
    obj["spec"]["template"]["spec"]["tolerations"] = [{"key": "a", "effect": "Foo"}]
    assert [e.field for e in validate(obj)] == ["spec.template.spec.tolerations[0].effect"]


def test_workload_templates_ratchet_comparison_operators() -> None:
    old = workload("Deployment")
    old["spec"]["template"]["spec"]["tolerations"] = [{"key": "sla", "operator": "Gt", "value": "1"}]
    new = workload("Deployment")
    new["spec"]["template"]["spec"]["tolerations"] = [{"key": "sla", "operator": "Lt", "value": "5"}]
    assert validate(new, old=old) == []
    assert [e.reason for e in validate(new)] == ["FieldValueNotSupported"]


def test_duplicate_errors_compare_equal() -> None:
    taint = {"key": "a", "effect": "NoSchedule"}
    assert validate(node(taints=[taint, taint])) == validate(node(taints=[taint, taint]))


def test_unknown_kind_is_rejected() -> None:
    with pytest.raises(ValueError, match='no kind "Widget" is registered for version "v1"'):
        validate({"apiVersion": "v1", "kind": "Widget"})


def test_padded_image_is_reported_on_create_and_twice_on_update() -> None:
    line = 'spec.containers[0].image: Invalid value: " nginx": must not have leading or trailing whitespace'
    new = pod(containers=[{"name": "c", "image": " nginx"}])
    assert _strings(new) == [line]
    assert _strings(new, old=pod()) == [line, line]


def test_pod_update_may_not_add_containers() -> None:
    old = pod()
    new = pod(containers=[{"name": "c", "image": "i"}, {"name": "d", "image": "i"}])
    assert _strings(new, old=old) == [
        "spec.containers: Forbidden: pod updates may not add or remove containers"
    ]


ERROR_RENDER_CASES = [
    pytest.param(invalid("a", 5, "d"), "a: Invalid value: 5: d", id="integers print bare"),
    pytest.param(invalid("a", True, "d"), "a: Invalid value: true: d", id="booleans print as Go does"),
    pytest.param(invalid("a", None, "d"), "a: Invalid value: null: d", id="nil prints null"),
    pytest.param(invalid("a", 'q"\n', "d"), 'a: Invalid value: "q\\"\\n": d', id="strings are Go-quoted"),
    pytest.param(required("a"), "a: Required value", id="required prints no value"),
    pytest.param(
        not_supported("a", "x", []), 'a: Unsupported value: "x"', id="no supported values, no detail"
    ),
    pytest.param(too_long("a", 1), "a: Too long: may not be more than 1 byte", id="a singular byte"),
]


@pytest.mark.parametrize(("error", "text"), ERROR_RENDER_CASES)
def test_error_rendering(error: Any, text: str) -> None:
    assert str(error) == text
    assert text == f"{error.field}: {error.message}"


def test_go_quote_escapes_controls_and_keeps_printable_unicode() -> None:
    assert go_quote("é\x01\t") == '"é\\x01\\t"'


def test_single_error_messages() -> None:
    errs = validate(node(taints=[{"key": "a", "effect": "Foo"}]))
    line = 'metadata.taints[0].effect: Unsupported value: "Foo": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'
    assert kubectl_invalid_message("Node", "n1", errs) == f'The Node "n1" is invalid: {line}'
    assert invalid_message("Node", "n1", errs) == f'Node "n1" is invalid: {line}'


def test_multiple_errors_render_as_a_list() -> None:
    errs = [required("a"), required("b"), required("a")]
    assert (
        invalid_message("Deployment", "d", errs, "apps")
        == 'Deployment.apps "d" is invalid: [a: Required value, b: Required value]'
    )
    assert (
        kubectl_invalid_message("Pod", "p", errs)
        == 'The Pod "p" is invalid: \n* a: Required value\n* b: Required value'
    )


def test_kubectl_drops_repeated_causes_but_the_status_keeps_them() -> None:
    errs = [required("a"), required("a")]
    assert kubectl_invalid_message("Pod", "p", errs) == 'The Pod "p" is invalid: a: Required value'
    assert len(invalid_status("Pod", "p", errs)["details"]["causes"]) == 2
    assert kubectl_invalid_message("Pod", "p", []) == 'The Pod "p" is invalid'


def test_invalid_status_has_causes() -> None:
    errs = validate(node(taints=[{"key": "a"}]))
    status = invalid_status("Node", "n1", errs)
    assert status["code"] == 422 and status["reason"] == "Invalid" and status["status"] == "Failure"
    assert status["details"] == {
        "name": "n1",
        "kind": "Node",
        "causes": [
            {
                "reason": "FieldValueRequired",
                "message": "Required value",
                "field": "metadata.taints[0].effect",
            }
        ],
    }
    assert status["message"] == 'Node "n1" is invalid: metadata.taints[0].effect: Required value'
