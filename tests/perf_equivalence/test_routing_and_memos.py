"""Shortcuts that must not change outcomes: store dispatch routed by resource, admission plugins
skipped for resources they do not act on, validation results remembered, pinned-node filtering,
and the collector controls."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

from kubetaint.admission import CREATE, UPDATE, AdmissionChain, AdmissionSettings, Attributes, DictLookup
from kubetaint.api.validation import validate
from kubetaint.api.validation.memo import PartMemo, stored_part
from kubetaint.api.validation.names import is_qualified_name
from kubetaint.clock import VirtualClock
from kubetaint.scheduler.plugins.node_selector import compile_required, required_node_names
from kubetaint.store.changes import ChangeBatch, each_event
from kubetaint.store.interface import WatchEvent
from kubetaint.store.memory import MemoryStore
from kubetaint.store.watch import Dispatcher

JSON = dict[str, Any]
EVERY_PLUGIN = AdmissionSettings(
    enable_admission_plugins=(
        "PodTolerationRestriction",
        "ExtendedResourceToleration",
        "DefaultTolerationSeconds",
        "TaintNodesByCondition",
        "Priority",
        "RuntimeClass",
    )
)


# dispatch ----------------------------------------------------------------------------------------


def _event(resource: str, rv: int) -> WatchEvent:
    return WatchEvent("ADDED", resource, {"metadata": {"name": f"o{rv}"}}, rv)


def test_a_resource_subscriber_sees_only_its_resource_and_order_among_subscribers_is_kept() -> None:
    dispatcher = Dispatcher()
    seen: list[tuple[str, str, int]] = []
    dispatcher.subscribe(each_event(lambda e: seen.append(("all", e.resource, e.resource_version))))
    unsubscribe = dispatcher.subscribe(
        each_event(lambda e: seen.append(("pods", e.resource, e.resource_version))), "pods"
    )
    dispatcher.subscribe(
        each_event(lambda e: seen.append(("nodes", e.resource, e.resource_version))), "nodes"
    )
    for rv, resource in enumerate(["pods", "leases", "nodes"], start=1):
        dispatcher.publish(ChangeBatch([_event(resource, rv)]))
    dispatcher.dispatch()
    assert seen == [
        ("all", "pods", 1),
        ("pods", "pods", 1),
        ("all", "leases", 2),
        ("all", "nodes", 3),
        ("nodes", "nodes", 3),
    ]
    seen.clear()
    unsubscribe()
    dispatcher.publish(ChangeBatch([_event("pods", 4)]))
    dispatcher.dispatch()
    assert seen == [("all", "pods", 4)]


def test_a_subscriber_added_while_dispatching_sees_only_later_changes() -> None:
    store = MemoryStore(VirtualClock())
    late: list[str] = []

    def first(event: WatchEvent) -> None:
        if event.object["metadata"]["name"] == "a":
            store.subscribe(each_event(lambda e: late.append(e.object["metadata"]["name"])), "namespaces")
            store.create("namespaces", {"metadata": {"name": "b"}})

    store.subscribe(each_event(first), "namespaces")
    store.create("namespaces", {"metadata": {"name": "a"}})
    assert late == ["b"]


# admission ---------------------------------------------------------------------------------------

BODIES: dict[str, JSON] = {
    "pods": {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "x", "namespace": "ns"},
        "spec": {
            "containers": [{"name": "c", "image": "i", "resources": {"limits": {"example.com/gpu": "1"}}}],
            "priorityClassName": "missing",
            "runtimeClassName": "missing",
        },
    },
    "nodes": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "x"}, "spec": {}},
    "leases": {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "x", "namespace": "kube-node-lease"},
        "spec": {"holderIdentity": "x"},
    },
}


@pytest.mark.parametrize("resource", ["leases", "replicasets", "events", "namespaces", "nodes", "pods"])
@pytest.mark.parametrize("shape", sorted(BODIES))
@pytest.mark.parametrize("operation", [CREATE, UPDATE])
def test_plugins_skipped_for_a_resource_would_have_left_it_alone(
    resource: str, shape: str, operation: str
) -> None:
    """Every plugin, run on a resource outside its `resources`, returns the very object and
    accepts it: skipping it is exactly equivalent."""
    chain = AdmissionChain(EVERY_PLUGIN, DictLookup())
    body = BODIES[shape]
    attrs = Attributes(operation, resource, body, body if operation == UPDATE else None, "ns", "x")
    skipped = [p for p in chain.plugins if p.resources is not None and resource not in p.resources]
    for plugin in skipped:
        if plugin.mutating:
            assert plugin.admit(attrs, DictLookup()) is body
        if plugin.validating:
            plugin.validate(attrs, DictLookup())
    assert [p.name for p in chain._plugins_for(resource)] == [
        p.name for p in chain.plugins if p not in skipped
    ]


def test_every_implemented_plugin_declares_its_resources() -> None:
    chain = AdmissionChain(EVERY_PLUGIN, DictLookup())
    assert len(chain.plugins) == 7
    # NamespaceLifecycle acts on every namespaced resource (and namespaces): it declares none
    assert [p.name for p in chain.plugins if not p.resources] == ["NamespaceLifecycle"]


# validation memo ---------------------------------------------------------------------------------


def _pod(**spec: Any) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec},
    }


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param({}, id="a valid spec"),
        pytest.param({"tolerations": [{"key": "k", "operator": "Bogus"}]}, id="an invalid toleration"),
        pytest.param({"containers": [{"name": "c", "image": ""}]}, id="a container without an image"),
        pytest.param({"containers": [{"name": "C_", "image": "nginx"}]}, id="a bad container name"),
        pytest.param({"containers": [{"name": "c", "image": " nginx"}]}, id="a padded image"),
        pytest.param({"initContainers": [{"name": "i"}]}, id="an init container without an image"),
        pytest.param(
            {
                "tolerations": [
                    {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}
                ]
            },
            id="a clean spec with a toleration",
        ),
    ],
)
def test_an_update_keeping_the_stored_spec_validates_as_a_fresh_copy_does(spec: JSON) -> None:
    stored = _pod(**spec)
    validate(stored)  # a create first: remembers a clean spec
    same_spec = {**stored, "status": {"phase": "Running"}}
    fresh = copy.deepcopy(same_spec)
    for _ in range(2):
        assert validate(same_spec, old=stored) == validate(fresh, old=copy.deepcopy(stored))


@pytest.mark.usefixtures("default_mode")
def test_part_memo_answers_only_for_the_very_object_and_key() -> None:
    memo = PartMemo(limit=2)
    part: JSON = {"a": 1}
    calls: list[int] = []
    compute = lambda: calls.append(1) or []  # noqa: E731
    memo.errors(part, "k", compute)
    memo.errors(part, "k", compute)
    memo.errors(dict(part), "k", compute)
    memo.errors(part, "other", compute)
    assert len(calls) == 3
    memo.errors({"b": 1}, "k", compute)
    memo.errors({"c": 1}, "k", compute)  # over the limit: starts afresh
    assert len(memo._entries) == 1


def test_stored_part_is_the_shared_object_only() -> None:
    spec: JSON = {"x": 1}
    old = {"spec": spec}
    assert stored_part({"spec": spec}, old, "spec") is spec
    assert stored_part({"spec": dict(spec)}, old, "spec") is None
    assert stored_part({"spec": spec}, None, "spec") is None


def test_remembered_name_checks_return_fresh_lists() -> None:
    first = is_qualified_name("-bad")
    first.append("mutated")
    assert is_qualified_name("-bad") == first[:-1]
    assert is_qualified_name("good") == []


# pinned nodes ------------------------------------------------------------------------------------


def _pinned(*names: str, exprs: list[JSON] | None = None) -> JSON:
    terms = [
        {
            "matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]}],
            **({"matchExpressions": exprs} if exprs else {}),
        }
        for n in names
    ]
    return {
        "spec": {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
                }
            }
        }
    }


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        pytest.param(_pinned("n1"), frozenset({"n1"}), id="a DaemonSet pod pinned to one node"),
        pytest.param(_pinned("n1", "n2"), frozenset({"n1", "n2"}), id="two terms pin two nodes"),
        pytest.param({"spec": {"nodeSelector": {"a": "b"}}}, None, id="a node selector pins nothing"),
        pytest.param(
            {
                "spec": {
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {"matchExpressions": [{"key": "a", "operator": "Exists"}]}
                                ]
                            }
                        }
                    }
                }
            },
            None,
            id="a label term pins nothing",
        ),
    ],
)
def test_required_node_names(pod: JSON, expected: frozenset[str] | None) -> None:
    assert required_node_names(pod) == expected


def test_pinned_names_give_the_verdicts_of_the_full_matcher() -> None:
    pod = _pinned("n1", "n3", exprs=[{"key": "zone", "operator": "In", "values": ["a"]}])
    matcher = compile_required(pod, "Pod/p")
    assert matcher is not None
    names = required_node_names(pod)
    assert names is not None
    nodes = [(f"n{i}", {"zone": "a" if i % 2 else "b"}) for i in range(6)]
    full = np.array([matcher(n, labels) for n, labels in nodes])
    pinned = np.array([n in names and matcher(n, labels) for n, labels in nodes])
    assert (full == pinned).all() and full.sum() == 2
