"""PodTolerationRestriction: upstream TestPodAdmission (newest table) and TestHandles as data, plus
whitelist scopes, UPDATE behaviour and malformed annotations."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubetaint.admission import CONNECT, CREATE, DELETE, UPDATE, AdmissionError, Attributes
from kubetaint.admission.podtolerationrestriction import Configuration, PodTolerationRestriction

from .builders import best_effort_pod, burstable_pod, guaranteed_pod, lookup, namespace, pod_create, tol

TEST = tol("testKey", "Equal", "testValue", "NoSchedule")
TEST1 = tol("testKey", "Equal", "testValue1", "NoSchedule")
TEST2 = tol("testKey", "Equal", "testValue2", "NoSchedule")
MEMORY_PRESSURE = tol("node.kubernetes.io/memory-pressure", "Exists", effect="NoSchedule")
WHITELIST_CONFLICT = "pod tolerations (possibly merged with namespace default tolerations) conflict with its"

# (pod builder, cluster default, namespace default, namespace whitelist, cluster whitelist, pod tolerations,
#  expected tolerations or None when rejected). None for a namespace list means "annotation absent".
CASES = [
    pytest.param(best_effort_pod, [TEST], None, None, [], [], [TEST],
                 id="cluster default tolerations apply when the namespace has no default annotation"),
    pytest.param(best_effort_pod, [TEST], [], None, [], [TEST], [TEST],
                 id="a pod already carrying the default toleration keeps exactly one"),
    pytest.param(best_effort_pod, [], [TEST], None, [], [TEST], [TEST],
                 id="namespace default tolerations identical to the pod's are not duplicated"),
    pytest.param(best_effort_pod, [], [TEST], None, [], [], [TEST],
                 id="namespace default tolerations are added to a pod without tolerations"),
    pytest.param(best_effort_pod, [], [TEST], None, [], [TEST1], [TEST1, TEST],
                 id="pod and namespace tolerations with the same key are both kept"),
    pytest.param(best_effort_pod, [TEST2], [], None, [], [TEST1], [TEST1],
                 id="an empty namespace default annotation overrides the cluster default"),
    pytest.param(best_effort_pod, [], [TEST], [TEST], [], [], [TEST],
                 id="merged tolerations that satisfy the namespace whitelist are admitted"),
    pytest.param(best_effort_pod, [TEST], [], None, [], [], [],
                 id="an empty namespace default annotation leaves the pod without tolerations"),
    pytest.param(best_effort_pod, [], None, [], [TEST1], [TEST], [TEST],
                 id="an empty namespace whitelist overrides a cluster whitelist the pod would fail"),
    pytest.param(best_effort_pod, [], [TEST], [TEST1], [], [], None,
                 id="merged tolerations that conflict with the namespace whitelist are rejected"),
    pytest.param(burstable_pod, [], [TEST], [], [], [], [TEST, MEMORY_PRESSURE],
                 id="a Burstable pod also gets the memory-pressure toleration, after the defaults"),
    pytest.param(best_effort_pod, [], [], [], [], [TEST, TEST1], [TEST, TEST1],
                 id="a pod with duplicate-key tolerations is not modified"),
    pytest.param(guaranteed_pod, [], [TEST], [], [], [], [TEST, MEMORY_PRESSURE],
                 id="a Guaranteed pod also gets the memory-pressure toleration"),
]  # fmt: skip


@pytest.mark.parametrize(
    (
        "make_pod",
        "cluster_default",
        "ns_default",
        "ns_whitelist",
        "cluster_whitelist",
        "pod_tols",
        "expected",
    ),
    CASES,
)
def test_pod_admission(
    make_pod: Any,
    cluster_default: list[dict[str, Any]],
    ns_default: list[dict[str, Any]] | None,
    ns_whitelist: list[dict[str, Any]] | None,
    cluster_whitelist: list[dict[str, Any]],
    pod_tols: list[dict[str, Any]],
    expected: list[dict[str, Any]] | None,
) -> None:
    plugin = PodTolerationRestriction(Configuration(default=cluster_default, whitelist=cluster_whitelist))
    requested = make_pod(tolerations=pod_tols)
    before = copy.deepcopy(requested)
    store = lookup(namespace(defaults=ns_default, whitelist=ns_whitelist))
    if expected is None:
        with pytest.raises(AdmissionError) as caught:
            plugin.admit(pod_create(requested), store)
        assert caught.value.code == 403
        assert caught.value.message == f'pods "p" is forbidden: {WHITELIST_CONFLICT} namespace whitelist'
    else:
        admitted = plugin.admit(pod_create(requested), store)
        assert admitted is not None
        assert admitted["spec"]["tolerations"] == expected
    assert requested == before


@pytest.mark.parametrize(
    ("make_pod", "expected"),
    [
        pytest.param(best_effort_pod, [TEST], id="a BestEffort pod gets exactly the namespace default toleration"),
        pytest.param(burstable_pod, [TEST, MEMORY_PRESSURE],
                     id="a Burstable pod gets the namespace default then the memory-pressure toleration"),
    ],
)  # fmt: skip
def test_done_when_namespace_default_tolerations(make_pod: Any, expected: list[dict[str, Any]]) -> None:
    plugin = PodTolerationRestriction()
    admitted = plugin.admit(pod_create(make_pod()), lookup(namespace(defaults=[TEST])))
    assert admitted is not None
    assert admitted["spec"]["tolerations"] == expected


def test_the_cluster_whitelist_is_named_in_the_rejection() -> None:
    plugin = PodTolerationRestriction(Configuration(whitelist=[TEST1]))
    with pytest.raises(AdmissionError) as caught:
        plugin.admit(pod_create(best_effort_pod(tolerations=[TEST])), lookup(namespace()))
    assert caught.value.message == f'pods "p" is forbidden: {WHITELIST_CONFLICT} cluster whitelist'
    assert caught.value.status["details"] == {"name": "p", "kind": "pods"}
    assert caught.value.reason == "Forbidden"


def test_the_memory_pressure_toleration_is_subject_to_the_whitelist() -> None:
    plugin = PodTolerationRestriction()
    store = lookup(namespace(whitelist=[TEST]))
    with pytest.raises(AdmissionError):
        plugin.admit(pod_create(burstable_pod(tolerations=[TEST])), store)
    admitted = plugin.admit(pod_create(best_effort_pod(tolerations=[TEST])), store)
    assert admitted is not None


def test_defaults_are_not_added_on_update_but_memory_pressure_is() -> None:
    plugin = PodTolerationRestriction(Configuration(default=[TEST2]))
    p = burstable_pod(tolerations=[TEST1])
    attrs = Attributes(UPDATE, "pods", p, old_object=p, namespace="ns", name="p")
    admitted = plugin.admit(attrs, lookup(namespace(defaults=[TEST])))
    assert admitted is not None
    assert admitted["spec"]["tolerations"] == [TEST1, MEMORY_PRESSURE]


def test_a_persisted_qos_class_decides_the_memory_pressure_toleration() -> None:
    p = {**best_effort_pod(), "status": {"qosClass": "Burstable"}}
    admitted = PodTolerationRestriction().admit(pod_create(p), lookup(namespace()))
    assert admitted is not None
    assert admitted["spec"]["tolerations"] == [MEMORY_PRESSURE]


def test_a_default_superset_replaces_narrower_pod_tolerations() -> None:
    wide = tol("testKey", "Exists", effect="NoSchedule")
    admitted = PodTolerationRestriction().admit(
        pod_create(best_effort_pod(tolerations=[TEST, TEST1])), lookup(namespace(defaults=[wide]))
    )
    assert admitted is not None
    assert admitted["spec"]["tolerations"] == [wide]


def test_annotation_field_names_match_case_insensitively() -> None:
    raw = (
        '[{"Key": "testKey", "OPERATOR": "Equal", "value": "testValue", "Effect": "NoSchedule", "extra": 1}]'
    )
    admitted = PodTolerationRestriction().admit(
        pod_create(best_effort_pod()), lookup(namespace(defaults=raw))
    )
    assert admitted is not None
    assert admitted["spec"]["tolerations"] == [TEST]


def test_a_null_annotation_is_an_empty_list_that_overrides_the_cluster_default() -> None:
    plugin = PodTolerationRestriction(Configuration(default=[TEST]))
    admitted = plugin.admit(pod_create(best_effort_pod()), lookup(namespace(defaults="null")))
    assert admitted is not None
    assert "tolerations" not in admitted["spec"]


@pytest.mark.parametrize(
    ("annotation", "message"),
    [
        pytest.param("{not json", "invalid character 'n' looking for beginning of object key string",
                     id="text that is not JSON is rejected"),
        pytest.param('[{"key": "a"', "unexpected end of JSON input", id="truncated JSON is rejected"),
        pytest.param('{"key": "a"}', "json: cannot unmarshal object into Go value of type []v1.Toleration",
                     id="an object instead of a list is rejected"),
        pytest.param('["a"]', "json: cannot unmarshal string into Go value of type v1.Toleration",
                     id="a list of strings is rejected"),
        pytest.param('[{"key": 1}]', "json: cannot unmarshal number into Go struct field Toleration.key of type string",
                     id="a number where a string belongs is rejected"),
        pytest.param('[{"key": "a", "tolerationSeconds": "5"}]',
                     "json: cannot unmarshal string into Go struct field Toleration.tolerationSeconds of type int64",
                     id="seconds given as a string are rejected"),
        pytest.param('[{"key": "a"}] x', "invalid character 'x' after top-level value",
                     id="trailing garbage is rejected"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("annotation_key", ["defaults", "whitelist"])
def test_malformed_annotations_are_rejected_and_the_pod_is_unchanged(
    annotation: str, message: str, annotation_key: str
) -> None:
    requested = burstable_pod(tolerations=[TEST])
    before = copy.deepcopy(requested)
    with pytest.raises(AdmissionError) as caught:
        PodTolerationRestriction().admit(
            pod_create(requested), lookup(namespace(**{annotation_key: annotation}))
        )
    assert caught.value.code == 403
    assert caught.value.message == f'pods "p" is forbidden: {message}'
    assert requested == before


def test_a_missing_namespace_is_not_found() -> None:
    with pytest.raises(AdmissionError) as caught:
        PodTolerationRestriction().admit(pod_create(best_effort_pod()), lookup())
    assert (caught.value.code, caught.value.message) == (404, 'namespaces "ns" not found')


def test_subresources_and_other_resources_are_ignored() -> None:
    plugin = PodTolerationRestriction(Configuration(default=[TEST]))
    p = best_effort_pod()
    assert plugin.admit(Attributes(CREATE, "pods", p, namespace="ns", subresource="binding"), lookup()) is p
    n = {"kind": "Node", "metadata": {"name": "n"}}
    assert plugin.admit(Attributes(CREATE, "nodes", n), lookup()) is n


def test_validate_alone_checks_the_whitelist() -> None:
    plugin = PodTolerationRestriction()
    store = lookup(namespace(whitelist=[TEST]))
    plugin.validate(pod_create(best_effort_pod(tolerations=[TEST])), store)
    with pytest.raises(AdmissionError):
        plugin.validate(pod_create(best_effort_pod(tolerations=[TEST1])), store)


@pytest.mark.parametrize(
    ("operation", "handled"),
    [
        pytest.param(CREATE, True, id="create is handled"),
        pytest.param(UPDATE, True, id="update is handled"),
        pytest.param(DELETE, False, id="delete is not handled"),
        pytest.param(CONNECT, False, id="connect is not handled"),
    ],
)
def test_handles(operation: str, handled: bool) -> None:
    assert PodTolerationRestriction().handles(operation) is handled
