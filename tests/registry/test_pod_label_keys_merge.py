"""A pod created through the registry has its matchLabelKeys/mismatchLabelKeys merged into its
selectors before validation (the pod strategy's PrepareForCreate: mutatePodAffinity,
mutateTopologySpreadConstraints), so validation rejects what upstream's rejects; restored pods
and pod templates keep their selectors as written."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from kubetaint.admission import AdmissionChain
from kubetaint.api.errors import StatusError
from kubetaint.clock import VirtualClock
from kubetaint.registry import Registry
from kubetaint.store.interface import Create
from kubetaint.store.memory import MemoryStore

JSON = dict[str, Any]


def make_registry() -> Registry:
    clock = VirtualClock()
    store = MemoryStore(clock)
    store.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}})
    return Registry(store, admission=AdmissionChain(), rng=random.Random(7), clock=clock)


def pod(name: str, **spec: Any) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "pause"}], **spec},
    }


REQ = "requiredDuringSchedulingIgnoredDuringExecution"
LABELS = {"app": "web", "tier": "front"}


def labelled(name: str, **spec: Any) -> JSON:
    obj = pod(name, **spec)
    obj["metadata"]["labels"] = dict(LABELS)
    return obj


def spread(selector: JSON, *keys: str) -> JSON:
    return {
        "maxSkew": 1,
        "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": selector,
        "matchLabelKeys": list(keys),
    }


def anti_affinity(selector: JSON, *, match: list[str], mismatch: list[str]) -> JSON:
    term = {
        "labelSelector": selector,
        "topologyKey": "zone",
        "matchLabelKeys": match,
        "mismatchLabelKeys": mismatch,
    }
    return {"podAntiAffinity": {REQ: [term]}}


@pytest.mark.parametrize("count", [pytest.param(1, id="one create"), pytest.param(3, id="a run of creates")])
def test_created_pods_store_their_selectors_merged(count: int) -> None:
    registry = make_registry()
    objs = [
        labelled(
            f"p{i}",
            topologySpreadConstraints=[spread({"matchLabels": {"team": "a"}}, "app")],
            affinity=anti_affinity({"matchLabels": {"team": "a"}}, match=["app"], mismatch=["tier"]),
        )
        for i in range(count)
    ]
    results = registry.commit([Create("pods", copy.deepcopy(o)) for o in objs])
    for created in results:
        assert isinstance(created, dict)
        spec = created["spec"]
        assert spec["topologySpreadConstraints"][0]["labelSelector"] == {
            "matchLabels": {"team": "a"},
            "matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}],
        }
        assert spec["affinity"]["podAntiAffinity"][REQ][0]["labelSelector"] == {
            "matchLabels": {"team": "a"},
            "matchExpressions": [
                {"key": "app", "operator": "In", "values": ["web"]},
                {"key": "tier", "operator": "NotIn", "values": ["front"]},
            ],
        }
        assert registry.store.get("pods", "default", created["metadata"]["name"])["spec"] == spec


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param(
            {"topologySpreadConstraints": [spread({"matchLabels": {"app": "web"}}, "app")]},
            'spec.topologySpreadConstraints[0][0]: Invalid value: "app": exists in both matchLabelKeys and labelSelector',
            id="a spread key also in matchLabels",
        ),
        pytest.param(
            {"affinity": anti_affinity({"matchLabels": {"app": "db"}}, match=["app"], mismatch=[])},
            f'spec.affinity.podAntiAffinity.{REQ}[0][0]: Invalid value: "app": '
            "exists in both matchLabelKeys and labelSelector",
            id="an affinity key also in matchLabels",
        ),
    ],
)
def test_a_key_also_in_the_selector_is_rejected_once_merged(spec: JSON, message: str) -> None:
    registry = make_registry()
    with pytest.raises(StatusError) as err:
        registry.create("pods", labelled("dup", **spec))
    assert err.value.code == 422
    assert [f"{c['field']}: {c['message']}" for c in err.value.causes] == [message]


def test_without_the_label_nothing_is_merged_and_the_pod_is_valid() -> None:
    registry = make_registry()
    created = registry.create(
        "pods", pod("unlabelled", topologySpreadConstraints=[spread({"matchLabels": {"app": "web"}}, "app")])
    )
    assert created["spec"]["topologySpreadConstraints"][0]["labelSelector"] == {"matchLabels": {"app": "web"}}


def test_a_restored_pod_keeps_its_selectors_as_declared() -> None:
    registry = make_registry()
    declared = labelled("declared", topologySpreadConstraints=[spread({"matchLabels": {"team": "a"}}, "app")])
    created = registry.create("pods", copy.deepcopy(declared), restore=True)
    assert created["spec"]["topologySpreadConstraints"] == declared["spec"]["topologySpreadConstraints"]


def test_a_pod_template_keeps_its_selectors_as_written() -> None:
    registry = make_registry()
    template_spec = {
        "containers": [{"name": "c", "image": "pause"}],
        "topologySpreadConstraints": [spread({"matchLabels": {"app": "web"}}, "app")],
    }
    replica_set = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "rs", "namespace": "default"},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": copy.deepcopy(template_spec)},
        },
    }
    created = registry.create("replicasets", replica_set)
    assert (
        created["spec"]["template"]["spec"]["topologySpreadConstraints"]
        == template_spec["topologySpreadConstraints"]
    )
