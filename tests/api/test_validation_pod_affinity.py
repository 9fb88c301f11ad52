"""Pod affinity and anti-affinity validation of pods and pod templates, as data after upstream's
TestValidatePod error cases (pkg/apis/core/validation/validation_test.go: the podAffinity and
podAntiAffinity entries, matchLabelKeys and mismatchLabelKeys included)."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.api.validation import validate

from .builders import pod, workload

AFF = "spec.affinity.podAffinity"
ANTI = "spec.affinity.podAntiAffinity"
REQ = "requiredDuringSchedulingIgnoredDuringExecution"
PREF = "preferredDuringSchedulingIgnoredDuringExecution"
NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
    "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
EMPTY_TOPOLOGY = [
    "{path}.topologyKey: Required value: can not be empty",
    '{path}.topologyKey: Invalid value: "": name part must be non-empty',
    '{path}.topologyKey: Invalid value: "": ' + NAME_PART,
]


def _term(**fields: Any) -> dict[str, Any]:
    term: dict[str, Any] = {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone"}
    term.update(fields)
    return {k: v for k, v in term.items() if v is not None}


def _affinity_pod(
    kind: str = "podAffinity", *, required: Any = None, preferred: Any = None
) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if required is not None:
        body[REQ] = required
    if preferred is not None:
        body[PREF] = preferred
    return pod(affinity={kind: body})


def _empty_topology(path: str) -> list[str]:
    return [line.format(path=path) for line in EMPTY_TOPOLOGY]


CASES = [
    pytest.param(_affinity_pod(required=[_term()]), [], id="a plain required term passes"),
    pytest.param(
        _affinity_pod("podAntiAffinity", preferred=[{"weight": 100, "podAffinityTerm": _term()}]),
        [],
        id="a plain weighted anti-affinity term passes",
    ),
    pytest.param(
        _affinity_pod(
            required=[
                _term(
                    labelSelector={"matchExpressions": [{"key": "k", "operator": "Exists", "values": ["v"]}]}
                )
            ]
        ),
        [
            f"{AFF}.{REQ}[0].labelSelector.matchExpressions[0].values: Forbidden: may not be specified when "
            "`operator` is 'Exists' or 'DoesNotExist'"
        ],
        id="an invalid label selector in a required pod affinity term",
    ),
    pytest.param(
        _affinity_pod(
            required=[_term(namespaceSelector={"matchExpressions": [{"key": "k", "operator": "Bad"}]})]
        ),
        [
            f'{AFF}.{REQ}[0].namespaceSelector.matchExpressions[0].operator: Invalid value: "Bad": not a valid selector operator'
        ],
        id="the namespace selector is a label selector too",
    ),
    pytest.param(
        _affinity_pod(required=[_term(namespaces=["ns", "Bad_NS"])]),
        [f'{AFF}.{REQ}[0].namespace: Invalid value: "Bad_NS": {LABEL}'],
        id="namespaces are DNS labels, reported at the singular namespace path",
    ),
    pytest.param(
        _affinity_pod(required=[_term(topologyKey="")]),
        _empty_topology(f"{AFF}.{REQ}[0]"),
        id="a hard pod affinity needs a topology key",
    ),
    pytest.param(
        _affinity_pod(preferred=[{"weight": 10, "podAffinityTerm": _term(topologyKey=None)}]),
        _empty_topology(f"{AFF}.{PREF}[0].podAffinityTerm"),
        id="so does a soft one",
    ),
    pytest.param(
        _affinity_pod(
            "podAntiAffinity", preferred=[{"weight": 10, "podAffinityTerm": _term(topologyKey="")}]
        ),
        _empty_topology(f"{ANTI}.{PREF}[0].podAffinityTerm"),
        id="and a soft anti-affinity",
    ),
    pytest.param(
        _affinity_pod(preferred=[{"weight": 109, "podAffinityTerm": _term()}]),
        [f"{AFF}.{PREF}[0].weight: Invalid value: 109: must be in the range 1-100"],
        id="a weight above 100",
    ),
    pytest.param(
        _affinity_pod("podAntiAffinity", preferred=[{"podAffinityTerm": _term()}]),
        [f"{ANTI}.{PREF}[0].weight: Invalid value: 0: must be in the range 1-100"],
        id="a missing weight is zero",
    ),
    pytest.param(
        _affinity_pod(required=[_term(topologyKey="bad key")]),
        [f'{AFF}.{REQ}[0].topologyKey: Invalid value: "bad key": {NAME_PART}'],
        id="the topology key is a qualified name",
    ),
    pytest.param(
        _affinity_pod(required=[_term(matchLabelKeys=["/simple"])]),
        [
            f'{AFF}.{REQ}[0].matchLabelKeys[0]: Invalid value: "/simple": prefix part must be non-empty',
        ],
        id="a match label key is a qualified name",
    ),
    pytest.param(
        _affinity_pod(required=[_term(labelSelector=None, mismatchLabelKeys=["app"])]),
        [f"{AFF}.{REQ}[0].mismatchLabelKeys: Forbidden: must not be specified when labelSelector is not set"],
        id="label keys need a label selector",
    ),
    pytest.param(
        _affinity_pod(required=[_term(matchLabelKeys=["app"], mismatchLabelKeys=["app"])]),
        [
            f'{AFF}.{REQ}[0].matchLabelKeys[0]: Invalid value: "app": exists in both matchLabelKeys and mismatchLabelKeys'
        ],
        id="a key may not be both matched and mismatched",
    ),
    pytest.param(
        _affinity_pod(
            "podAntiAffinity",
            required=[
                _term(
                    labelSelector={
                        "matchLabels": {"app": "db"},
                        "matchExpressions": [{"key": "app", "operator": "Exists"}],
                    },
                    matchLabelKeys=["other", "app"],
                )
            ],
        ),
        [f'{ANTI}.{REQ}[0][1]: Invalid value: "app": exists in both matchLabelKeys and labelSelector'],
        id="a matched key already in the selector, at upstream's term-indexed path",
    ),
    pytest.param(
        _affinity_pod(required=[_term(matchLabelKeys=["app"])]),
        [],
        id="a matched key only in matchLabels is not reported (upstream merges before it checks)",
    ),
]


@pytest.mark.parametrize(("obj", "expected"), CASES)
def test_pod_affinity(obj: dict[str, Any], expected: list[str]) -> None:
    assert [str(e) for e in validate(obj)] == expected


def test_pod_templates_check_pod_affinity() -> None:
    obj = workload("ReplicaSet")
    obj["spec"]["template"]["spec"]["affinity"] = {"podAntiAffinity": {REQ: [_term(topologyKey="")]}}
    assert [e.field for e in validate(obj)] == [
        f"spec.template.spec.affinity.podAntiAffinity.{REQ}[0].topologyKey"
    ] * 3


def test_node_affinity_is_checked_before_pod_affinity() -> None:
    obj = pod(
        affinity={
            "podAffinity": {REQ: [_term(topologyKey="")]},
            "nodeAffinity": {REQ: {"nodeSelectorTerms": []}},
        }
    )
    fields = [e.field for e in validate(obj)]
    assert fields[0] == f"spec.affinity.nodeAffinity.{REQ}.nodeSelectorTerms"
    assert fields[1:] == [f"{AFF}.{REQ}[0].topologyKey"] * 3
