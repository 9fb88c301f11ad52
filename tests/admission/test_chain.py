"""The admission chain: default plugin set, upstream order, order of effects on one pod, the
done-when cases, and rejections that leave the input untouched."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubetaint.admission import (
    CREATE,
    AdmissionChain,
    AdmissionError,
    AdmissionSettings,
    Attributes,
    DictLookup,
)

from .builders import (
    best_effort_pod,
    burstable_pod,
    container,
    lookup,
    namespace,
    node,
    pod,
    pod_create,
    priority_class,
    runtime_class,
    tol,
)

NOT_READY = tol("node.kubernetes.io/not-ready", "Exists", effect="NoExecute", seconds=300)
UNREACHABLE = tol("node.kubernetes.io/unreachable", "Exists", effect="NoExecute", seconds=300)
MEMORY_PRESSURE = tol("node.kubernetes.io/memory-pressure", "Exists", effect="NoSchedule")
DEDICATED = tol("dedicated", "Equal", "infra", "NoSchedule")
GPU = tol("example.com/gpu", "Exists", effect="NoSchedule")
SANDBOX = tol("sandbox", "Exists", effect="NoSchedule")
ALL_TOLERATION_PLUGINS = AdmissionSettings(
    enable_admission_plugins=("PodTolerationRestriction", "ExtendedResourceToleration")
)


def test_the_default_set_is_a_default_kube_apiservers() -> None:
    assert AdmissionChain().plugin_names == [
        "NamespaceLifecycle",
        "TaintNodesByCondition",
        "Priority",
        "DefaultTolerationSeconds",
        "RuntimeClass",
    ]


def test_enabled_plugins_run_in_upstream_order() -> None:
    assert AdmissionChain(ALL_TOLERATION_PLUGINS).plugin_names == [
        "NamespaceLifecycle",
        "TaintNodesByCondition",
        "Priority",
        "DefaultTolerationSeconds",
        "PodTolerationRestriction",
        "ExtendedResourceToleration",
        "RuntimeClass",
    ]


def test_order_of_effects_on_one_pod() -> None:
    store = lookup(
        namespace(defaults=[DEDICATED]),
        priority_class("standard", 100, default=True),
        runtime_class(
            "gvisor",
            overhead={"podFixed": {"cpu": "50m"}},
            scheduling={"nodeSelector": {"sandboxed": "true"}, "tolerations": [SANDBOX]},
        ),
    )
    requested = pod(
        containers=[container(requests={"cpu": "500m", "example.com/gpu": "1"}, limits={"cpu": "1"})],
        runtimeClassName="gvisor",
    )
    before = copy.deepcopy(requested)
    admitted = AdmissionChain(ALL_TOLERATION_PLUGINS, store).admit(pod_create(requested))
    assert admitted is not None
    spec = admitted["spec"]
    # DefaultTolerationSeconds, then the namespace default and memory-pressure (PodTolerationRestriction),
    # then the extended resource, then the RuntimeClass's tolerations.
    assert spec["tolerations"] == [NOT_READY, UNREACHABLE, DEDICATED, MEMORY_PRESSURE, GPU, SANDBOX]
    assert (spec["priority"], spec["priorityClassName"], spec["preemptionPolicy"]) == (
        100,
        "standard",
        "PreemptLowerPriority",
    )
    assert spec["overhead"] == {"cpu": "50m"}
    assert spec["nodeSelector"] == {"sandboxed": "true"}
    assert requested == before


@pytest.mark.parametrize(
    ("requested", "expected"),
    [
        pytest.param(best_effort_pod(), [NOT_READY, UNREACHABLE, DEDICATED],
                     id="a BestEffort pod gets the defaults and the namespace toleration"),
        pytest.param(burstable_pod(), [NOT_READY, UNREACHABLE, DEDICATED, MEMORY_PRESSURE],
                     id="a Burstable pod also gets the memory-pressure toleration"),
        pytest.param(pod(containers=[container(requests={"example.com/gpu": "1"})]),
                     [NOT_READY, UNREACHABLE, DEDICATED, GPU],
                     id="a pod requesting example.com/gpu carries the example.com/gpu Exists NoSchedule toleration"),
    ],
)  # fmt: skip
def test_done_when(requested: dict[str, Any], expected: list[dict[str, Any]]) -> None:
    chain = AdmissionChain(ALL_TOLERATION_PLUGINS, lookup(namespace(defaults=[DEDICATED])))
    admitted = chain.admit(pod_create(requested))
    assert admitted is not None
    assert admitted["spec"]["tolerations"] == expected


def test_a_whitelist_also_polices_the_default_toleration_seconds() -> None:
    chain = AdmissionChain(ALL_TOLERATION_PLUGINS, lookup(namespace(whitelist=[DEDICATED])))
    with pytest.raises(AdmissionError) as caught:
        chain.admit(pod_create(best_effort_pod(tolerations=[DEDICATED])))
    assert caught.value.message == (
        'pods "p" is forbidden: pod tolerations (possibly merged with namespace default tolerations) conflict '
        "with its namespace whitelist"
    )
    allowed = AdmissionChain(
        ALL_TOLERATION_PLUGINS, lookup(namespace(whitelist=[DEDICATED, NOT_READY, UNREACHABLE]))
    )
    assert allowed.admit(pod_create(best_effort_pod(tolerations=[DEDICATED]))) is not None


BAD = [
    pytest.param(namespace(defaults="[{"), pod(), 403, 'pods "p" is forbidden: unexpected end of JSON input',
                 id="malformed namespace annotations are rejected"),
    pytest.param(namespace(), pod(priorityClassName="gold"), 403,
                 'pods "p" is forbidden: no PriorityClass with name gold was found',
                 id="an unknown PriorityClass is rejected"),
    pytest.param(namespace(), pod(runtimeClassName="kata"), 403,
                 'pods "p" is forbidden: pod rejected: RuntimeClass "kata" not found',
                 id="an unknown RuntimeClass is rejected"),
    pytest.param(namespace(), pod(priority=7), 403,
                 'pods "p" is forbidden: the integer value of priority (7) must not be provided in pod spec; '
                 "priority admission controller computed 0 from the given PriorityClass name",
                 id="a pod setting its own spec.priority is rejected"),
    pytest.param(runtime_class("kata", overhead={"podFixed": {"cpu": "1"}}), pod(runtimeClassName="kata",
                 overhead={"cpu": "2"}), 403,
                 "pods \"p\" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
                 id="a conflicting spec.overhead is rejected"),
]  # fmt: skip


@pytest.mark.parametrize(("stored", "requested", "code", "message"), BAD)
def test_bad_input_is_rejected_and_the_input_is_unchanged(
    stored: dict[str, Any], requested: dict[str, Any], code: int, message: str
) -> None:
    store = lookup(stored)
    if stored["kind"] != "Namespace":
        store.add("namespaces", namespace())
    before = copy.deepcopy(requested)
    with pytest.raises(AdmissionError) as caught:
        AdmissionChain(ALL_TOLERATION_PLUGINS, store).admit(pod_create(requested))
    assert (caught.value.code, caught.value.message) == (code, message)
    assert caught.value.status["kind"] == "Status" and caught.value.status["status"] == "Failure"
    assert requested == before


def test_nodes_are_tainted_not_ready_on_creation() -> None:
    admitted = AdmissionChain().admit(Attributes(CREATE, "nodes", node(), name="n1"))
    assert admitted is not None
    assert admitted["spec"]["taints"] == [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]


def test_mutate_and_validate_can_run_separately() -> None:
    store = lookup(namespace(whitelist=[DEDICATED]))
    chain = AdmissionChain(AdmissionSettings(enable_admission_plugins=["PodTolerationRestriction"],
                                             disable_admission_plugins=["DefaultTolerationSeconds"]), store)  # fmt: skip
    attrs = pod_create(best_effort_pod(tolerations=[DEDICATED]))
    mutated = chain.mutate(attrs)
    assert mutated is not None
    chain.validate(attrs.with_object(mutated))
    with pytest.raises(AdmissionError):
        chain.validate(attrs.with_object(best_effort_pod(tolerations=[GPU])))


def test_a_lookup_given_per_call_overrides_the_chains() -> None:
    chain = AdmissionChain(ALL_TOLERATION_PLUGINS, DictLookup())
    admitted = chain.admit(pod_create(best_effort_pod()), lookup(namespace(defaults=[DEDICATED])))
    assert admitted is not None
    assert DEDICATED in admitted["spec"]["tolerations"]


def test_disabled_plugins_do_not_run() -> None:
    chain = AdmissionChain(
        AdmissionSettings(disable_admission_plugins=["DefaultTolerationSeconds", "Priority"]),
        lookup(namespace()),
    )
    admitted = chain.admit(pod_create(pod()))
    assert admitted is not None
    assert "tolerations" not in admitted["spec"] and "priority" not in admitted["spec"]
