"""Priority: upstream TestPodAdmission, TestDefaultPriority and TestPriorityClassAdmission as data."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubetaint.admission import CREATE, DELETE, UPDATE, AdmissionError, Attributes
from kubetaint.admission.priority import Priority

from .builders import lookup, pod, pod_create, priority_class

DEFAULT1 = priority_class("default1", 1000, default=True)
DEFAULT2 = priority_class("default2", 2000, default=True)
NONDEFAULT1 = priority_class("nondefault1", 2000)
SYSTEM_CLUSTER_CRITICAL = priority_class("system-cluster-critical", 2_000_000_000, default=True)
LOWER_POLICY_CLASS = priority_class("nopreemptionpolicy", 2000, default=True, policy="PreemptLowerPriority")


def priority_pod(name: str, namespace: str = "namespace", **spec: Any) -> dict[str, Any]:
    return pod(name, namespace, **spec)


ADMITTED = [
    pytest.param([DEFAULT1, NONDEFAULT1], priority_pod("pod-w-priorityclass", priorityClassName="default1"), 1000,
                 "PreemptLowerPriority", id="a pod with a priority class gets its value"),
    pytest.param([DEFAULT1], priority_pod("pod-wo-priorityclass"), 1000, "PreemptLowerPriority",
                 id="a pod without a class gets the global default class"),
    pytest.param([], priority_pod("pod-wo-priorityclass"), 0, "PreemptLowerPriority",
                 id="a pod without a class and no classes at all gets priority 0"),
    pytest.param([NONDEFAULT1], priority_pod("pod-wo-priorityclass"), 0, "PreemptLowerPriority",
                 id="a pod without a class and no default class gets priority 0"),
    pytest.param([SYSTEM_CLUSTER_CRITICAL], priority_pod("pod-w-system-priority", "kube-system",
                 priorityClassName="system-cluster-critical"), 2_000_000_000, "PreemptLowerPriority",
                 id="a pod with a system priority class gets its value"),
    pytest.param([SYSTEM_CLUSTER_CRITICAL], priority_pod("pod-w-system-priority-in-nonsystem-namespace",
                 "non-system-namespace", priorityClassName="system-cluster-critical"), 2_000_000_000,
                 "PreemptLowerPriority", id="system-cluster-critical is allowed outside kube-system"),
    pytest.param([NONDEFAULT1], priority_pod("pod-w-zero-priority", priority=0), 0, "PreemptLowerPriority",
                 id="a pod's own priority matching the computed priority is accepted"),
    pytest.param([DEFAULT2], priority_pod("pod-w-priority-matching-default", priority=2000), 2000,
                 "PreemptLowerPriority", id="a pod's own priority matching the default class is accepted"),
    pytest.param([SYSTEM_CLUSTER_CRITICAL], priority_pod("pod-matching-resolved", "kube-system",
                 priorityClassName="system-cluster-critical", priority=2_000_000_000), 2_000_000_000,
                 "PreemptLowerPriority", id="a pod's own priority matching its class is accepted"),
    pytest.param([LOWER_POLICY_CLASS], priority_pod("pod-nil-policy", priorityClassName="nopreemptionpolicy",
                 priority=2000), 2000, "PreemptLowerPriority",
                 id="a pod without a preemption policy gets the class's policy"),
    pytest.param([LOWER_POLICY_CLASS], priority_pod("pod-matching-policy", priorityClassName="nopreemptionpolicy",
                 priority=2000, preemptionPolicy="PreemptLowerPriority"), 2000, "PreemptLowerPriority",
                 id="a pod's own preemption policy matching the class is accepted"),
    pytest.param([priority_class("never", 10, policy="Never")], priority_pod("p", priorityClassName="never"), 10,
                 "Never", id="a class with preemptionPolicy Never gives the pod Never"),
    pytest.param([], priority_pod("p", "kube-system", priorityClassName="system-node-critical"), 2_000_001_000,
                 "PreemptLowerPriority", id="the built-in system-node-critical resolves without a stored class"),
    pytest.param([DEFAULT1, DEFAULT2], priority_pod("p"), 1000, "PreemptLowerPriority",
                 id="several default classes resolve to the lowest value"),
]  # fmt: skip


@pytest.mark.parametrize(("classes", "requested", "priority", "policy"), ADMITTED)
def test_pod_admission(
    classes: list[dict[str, Any]], requested: dict[str, Any], priority: int, policy: str
) -> None:
    before = copy.deepcopy(requested)
    admitted = Priority().admit(pod_create(requested), lookup(*classes))
    assert admitted is not None
    assert admitted["spec"]["priority"] == priority
    assert admitted["spec"]["preemptionPolicy"] == policy
    assert requested == before


def test_the_default_class_name_is_written_into_the_pod() -> None:
    admitted = Priority().admit(pod_create(priority_pod("p")), lookup(DEFAULT1))
    assert admitted is not None
    assert admitted["spec"]["priorityClassName"] == "default1"
    bare = Priority().admit(pod_create(priority_pod("p")), lookup())
    assert bare is not None and "priorityClassName" not in bare["spec"]


REJECTED = [
    pytest.param([DEFAULT1, NONDEFAULT1], priority_pod("pod-w-non-existing-priorityclass",
                 priorityClassName="non-existing"),
                 'pods "pod-w-non-existing-priorityclass" is forbidden: no PriorityClass with name non-existing '
                 "was found", id="an unknown priority class is rejected"),
    pytest.param([], priority_pod("pod-w-integer-priority", priorityClassName="default1", priority=1000),
                 'pods "pod-w-integer-priority" is forbidden: no PriorityClass with name default1 was found',
                 id="a pod naming a missing class is rejected even with its own priority"),
    pytest.param([DEFAULT2], priority_pod("pod-w-own-priority", priority=5),
                 'pods "pod-w-own-priority" is forbidden: the integer value of priority (5) must not be provided '
                 "in pod spec; priority admission controller computed 2000 from the given PriorityClass name",
                 id="a pod setting its own different priority is rejected"),
    pytest.param([], priority_pod("mirror-pod", priority=1000),
                 'pods "mirror-pod" is forbidden: the integer value of priority (1000) must not be provided '
                 "in pod spec; priority admission controller computed 0 from the given PriorityClass name",
                 id="a pod setting a priority when no class exists is rejected"),
    pytest.param([LOWER_POLICY_CLASS], priority_pod("pod-policy-mismatch", priorityClassName="nopreemptionpolicy",
                 priority=2000, preemptionPolicy="Never"),
                 'pods "pod-policy-mismatch" is forbidden: the string value of PreemptionPolicy (Never) must not '
                 "be provided in pod spec; priority admission controller computed PreemptLowerPriority from the "
                 "given PriorityClass name", id="a pod setting a different preemption policy is rejected"),
]  # fmt: skip


@pytest.mark.parametrize(("classes", "requested", "message"), REJECTED)
def test_pod_rejection(classes: list[dict[str, Any]], requested: dict[str, Any], message: str) -> None:
    before = copy.deepcopy(requested)
    with pytest.raises(AdmissionError) as caught:
        Priority().admit(pod_create(requested), lookup(*classes))
    assert (caught.value.code, caught.value.reason, caught.value.message) == (403, "Forbidden", message)
    assert requested == before


def test_an_update_keeps_the_stored_priority_and_policy() -> None:
    old = pod(priority=1000, preemptionPolicy="Never", priorityClassName="x")
    new = pod(priorityClassName="x")
    admitted = Priority().admit(
        Attributes(UPDATE, "pods", new, old_object=old, namespace="ns", name="p"), lookup()
    )
    assert admitted is not None
    assert (admitted["spec"]["priority"], admitted["spec"]["preemptionPolicy"]) == (1000, "Never")
    assert "priority" not in new["spec"]


def test_an_update_does_not_resolve_classes() -> None:
    p = pod(priorityClassName="missing")
    assert Priority().admit(Attributes(UPDATE, "pods", p, old_object=p, namespace="ns"), lookup()) is p


SYSTEM_TEST = priority_class("system-test", 1_000_000_001)
CLASS_CASES = [
    pytest.param([], DEFAULT1, CREATE, None, id="creating a default class with no other default is allowed"),
    pytest.param([DEFAULT1], DEFAULT2, CREATE,
                 'priorityclasses.scheduling.k8s.io "default2" is forbidden: PriorityClass default1 is already '
                 "marked as default. Only one default can exist", id="creating a second default class is rejected"),
    pytest.param([], SYSTEM_TEST, CREATE, None, id="a system- name may exceed the user priority limit here"),
    pytest.param([], DEFAULT1, UPDATE, None, id="updating a default class with no other default is allowed"),
    pytest.param([DEFAULT1], DEFAULT2, UPDATE,
                 'priorityclasses.scheduling.k8s.io "default2" is forbidden: PriorityClass default1 is already '
                 "marked as default. Only one default can exist",
                 id="marking another class default while one exists is rejected"),
    pytest.param([DEFAULT1], DEFAULT1, UPDATE, None, id="updating the existing default class itself is allowed"),
    pytest.param([], DEFAULT1, DELETE, None, id="deleting a class is not checked"),
    pytest.param([DEFAULT1], NONDEFAULT1, CREATE, None, id="a non-default class may be added next to a default"),
]  # fmt: skip


@pytest.mark.parametrize(("existing", "new", "operation", "message"), CLASS_CASES)
def test_priority_class_admission(
    existing: list[dict[str, Any]], new: dict[str, Any], operation: str, message: str | None
) -> None:
    attrs = Attributes(operation, "priorityclasses.scheduling.k8s.io", new, name=new["metadata"]["name"])
    if message is None:
        Priority().validate(attrs, lookup(*existing))
    else:
        with pytest.raises(AdmissionError) as caught:
            Priority().validate(attrs, lookup(*existing))
        assert (caught.value.code, caught.value.message) == (403, message)


def test_a_user_class_above_one_billion_is_invalid() -> None:
    attrs = Attributes(
        CREATE, "priorityclasses.scheduling.k8s.io", priority_class("huge", 1_000_000_001), name="huge"
    )
    with pytest.raises(AdmissionError) as caught:
        Priority().validate(attrs, lookup())
    assert caught.value.code == 422
    assert caught.value.message == (
        'PriorityClass.scheduling.k8s.io "huge" is invalid: value: Forbidden: maximum allowed value of a user '
        "defined priority is 1000000000"
    )
    assert caught.value.status["details"]["causes"] == [
        {
            "reason": "FieldValueForbidden",
            "message": "Forbidden: maximum allowed value of a user defined priority is 1000000000",
            "field": "value",
        }
    ]


def test_exactly_one_billion_is_allowed() -> None:
    Priority().validate(
        Attributes(CREATE, "priorityclasses.scheduling.k8s.io", priority_class("top", 1_000_000_000)),
        lookup(),
    )


@pytest.mark.parametrize(
    ("classes", "expected"),
    [
        pytest.param([DEFAULT1], "default1", id="simple resolution with a default class"),
        pytest.param([NONDEFAULT1], None, id="no default when no class is marked default"),
        pytest.param([DEFAULT1, DEFAULT2], "default1", id="several defaults resolve to the minimum value"),
        pytest.param([DEFAULT2], "default2", id="after deleting the lower default the other one is used"),
        pytest.param(
            [{**DEFAULT1, "globalDefault": False}], None, id="a class that stops being default is ignored"
        ),
    ],
)
def test_default_priority(classes: list[dict[str, Any]], expected: str | None) -> None:
    default = Priority.default_priority_class(lookup(*classes))
    assert (default["metadata"]["name"] if default else None) == expected
