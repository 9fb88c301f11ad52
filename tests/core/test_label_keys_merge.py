"""The pod strategy's mutatePodAffinity and mutateTopologySpreadConstraints
(pkg/registry/core/pod/strategy.go), as data: what a created pod's selectors become."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubetaint.core.label_keys_merge import with_label_keys_merged

REQ = "requiredDuringSchedulingIgnoredDuringExecution"
PREF = "preferredDuringSchedulingIgnoredDuringExecution"
LABELS = {"app": "web", "tier": "front"}


def pod(labels: dict[str, str] | None = LABELS, **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "p", "namespace": "default"}
    if labels is not None:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": [], **spec}}


def term(**fields: Any) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {"team": "a"}}, "topologyKey": "zone", **fields}


def spread(**fields: Any) -> dict[str, Any]:
    return {
        "maxSkew": 1,
        "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"team": "a"}},
        **fields,
    }


def In(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "operator": "In", "values": [value]}


def NotIn(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "operator": "NotIn", "values": [value]}


def test_affinity_terms_get_in_and_notin_requirements_from_the_pods_labels() -> None:
    created = with_label_keys_merged(
        pod(
            affinity={
                "podAffinity": {REQ: [term(matchLabelKeys=["app", "absent"], mismatchLabelKeys=["tier"])]},
                "podAntiAffinity": {
                    PREF: [{"weight": 5, "podAffinityTerm": term(mismatchLabelKeys=["app"])}],
                },
            }
        )
    )
    affinity = created["spec"]["affinity"]
    assert affinity["podAffinity"][REQ][0]["labelSelector"] == {
        "matchLabels": {"team": "a"},
        "matchExpressions": [In("app", "web"), NotIn("tier", "front")],
    }
    assert affinity["podAffinity"][REQ][0]["matchLabelKeys"] == ["app", "absent"]  # the keys stay
    assert affinity["podAntiAffinity"][PREF][0] == {
        "weight": 5,
        "podAffinityTerm": {
            **term(mismatchLabelKeys=["app"]),
            "labelSelector": {"matchLabels": {"team": "a"}, "matchExpressions": [NotIn("app", "web")]},
        },
    }


def test_spread_constraints_get_in_requirements_after_their_own() -> None:
    own = {"key": "team", "operator": "Exists"}
    created = with_label_keys_merged(
        pod(
            topologySpreadConstraints=[
                spread(matchLabelKeys=["tier", "app"], labelSelector={"matchExpressions": [own]})
            ]
        )
    )
    assert created["spec"]["topologySpreadConstraints"][0]["labelSelector"] == {
        "matchExpressions": [own, In("tier", "front"), In("app", "web")]
    }


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param(
            pod(topologySpreadConstraints=[spread(labelSelector=None, matchLabelKeys=["app"])]),
            id="no selector",
        ),
        pytest.param(
            pod(topologySpreadConstraints=[spread(matchLabelKeys=["absent"])]), id="a key without a label"
        ),
        pytest.param(
            pod(None, topologySpreadConstraints=[spread(matchLabelKeys=["app"])]), id="a pod without labels"
        ),
        pytest.param(
            pod(affinity={"podAffinity": {REQ: [term(labelSelector=None, matchLabelKeys=["app"])]}}),
            id="an affinity term without a selector",
        ),
        pytest.param(pod(affinity={"nodeAffinity": {}}), id="no pod affinity"),
        pytest.param(pod(), id="neither"),
    ],
)
def test_nothing_to_merge_leaves_the_selectors_as_written(obj: dict[str, Any]) -> None:
    before = copy.deepcopy(obj)
    assert with_label_keys_merged(obj) == before


def test_the_given_pod_and_its_selectors_are_not_changed() -> None:
    """A controller's pods share their template's dicts: the merge copies what it changes."""
    selector = {"matchLabels": {"team": "a"}, "matchExpressions": [{"key": "team", "operator": "Exists"}]}
    given = pod(
        topologySpreadConstraints=[spread(matchLabelKeys=["app"], labelSelector=selector)],
        affinity={"podAntiAffinity": {REQ: [term(matchLabelKeys=["app"], labelSelector=selector)]}},
    )
    before = copy.deepcopy(given)
    merged = with_label_keys_merged(given)
    assert given == before
    assert merged != before


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param(
            {"topologySpreadConstraints": [None, 3, {"labelSelector": "x", "matchLabelKeys": ["app"]}]}
        ),
        pytest.param({"affinity": {"podAffinity": {REQ: "x", PREF: [None, {"podAffinityTerm": None}]}}}),
        pytest.param(
            {"affinity": {"podAntiAffinity": {REQ: [{"labelSelector": {}, "matchLabelKeys": "app"}]}}}
        ),
    ],
    ids=["malformed constraints", "malformed affinity", "keys not a list"],
)
def test_malformed_specs_pass_through(spec: dict[str, Any]) -> None:
    obj = pod(**spec)
    assert with_label_keys_merged(copy.deepcopy(obj)) == obj
