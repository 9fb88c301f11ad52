"""Topology spread constraint validation, as data after upstream's TestValidateTopologySpreadConstraints
(pkg/apis/core/validation/validation_test.go) with the messages of validation.go; then the same
checks through `validate` for pods, pod templates and pod updates (pkg/api/pod/util.go's options)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubetaint.api.validation import validate
from kubetaint.api.validation.topologyspread import (
    CREATE,
    SpreadOptions,
    spread_options,
    validate_topology_spread_constraints,
)

from .builders import pod, workload

NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
SUPPORTED_ACTIONS = 'supported values: "DoNotSchedule", "ScheduleAnyway"'
SUPPORTED_POLICIES = 'supported values: "Honor", "Ignore"'
BOTH = "exists in both matchLabelKeys and labelSelector"
NO_SELECTOR = "must not be specified when labelSelector is not set"

#: the test table's option sets
MERGE = SpreadOptions(match_label_keys=True, selector_merge=True)
LEGACY = SpreadOptions(match_label_keys=True, selector_merge=False)


def zone(**fields: Any) -> dict[str, Any]:
    """A constraint on k8s.io/zone (upstream's table uses it throughout)."""
    constraint: dict[str, Any] = {
        "maxSkew": 1,
        "topologyKey": "k8s.io/zone",
        "whenUnsatisfiable": "DoNotSchedule",
    }
    constraint.update(fields)
    return {k: v for k, v in constraint.items() if v is not None}


def not_in(*values: str) -> dict[str, Any]:
    return {"key": "foo", "operator": "NotIn", "values": list(values)}


#: one merged requirement, then the user's own on the same key
TWO_FOO = {"matchExpressions": [not_in("value1"), not_in("value2", "value3")]}
ONE_FOO = {"matchExpressions": [not_in("value1")]}

TABLE = [
    pytest.param([zone(minDomains=3)], CREATE, [], id="all required fields ok"),
    pytest.param(
        [zone(maxSkew=None)],
        CREATE,
        ["field[0].maxSkew: Invalid value: 0: must be greater than zero"],
        id="missing MaxSkew",
    ),
    pytest.param(
        [zone(maxSkew=-1)],
        CREATE,
        ["field[0].maxSkew: Invalid value: -1: must be greater than zero"],
        id="negative MaxSkew",
    ),
    pytest.param(
        [zone(whenUnsatisfiable="ScheduleAnyway")],
        CREATE,
        [],
        id="can use MinDomains with ScheduleAnyway, when nil",
    ),
    pytest.param(
        [zone(minDomains=-1)],
        CREATE,
        ["field[0].minDomains: Invalid value: -1: must be greater than zero"],
        id="negative minDomains is invalid",
    ),
    pytest.param(
        [zone(whenUnsatisfiable="ScheduleAnyway", minDomains=10)],
        CREATE,
        [
            "field[0].minDomains: Invalid value: 10: "
            "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"
        ],
        id="cannot use non-nil MinDomains with ScheduleAnyway",
    ),
    pytest.param(
        [zone(whenUnsatisfiable="ScheduleAnyway", minDomains=-1)],
        CREATE,
        [
            "field[0].minDomains: Invalid value: -1: must be greater than zero",
            "field[0].minDomains: Invalid value: -1: "
            "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
        ],
        id="use negative MinDomains with ScheduleAnyway (invalid)",
    ),
    pytest.param(
        [zone(topologyKey=None)],
        CREATE,
        ["field[0].topologyKey: Required value: can not be empty"],
        id="missing TopologyKey",
    ),
    pytest.param(
        [zone(whenUnsatisfiable=None)],
        CREATE,
        [f'field[0].whenUnsatisfiable: Unsupported value: "": {SUPPORTED_ACTIONS}'],
        id="missing scheduling mode",
    ),
    pytest.param(
        [zone(whenUnsatisfiable="N/A")],
        CREATE,
        [f'field[0].whenUnsatisfiable: Unsupported value: "N/A": {SUPPORTED_ACTIONS}'],
        id="unsupported scheduling mode",
    ),
    pytest.param(
        [zone(), zone(maxSkew=2, topologyKey="k8s.io/node", whenUnsatisfiable="ScheduleAnyway")],
        CREATE,
        [],
        id="multiple constraints ok with all required fields",
    ),
    pytest.param(
        [zone(topologyKey=None, whenUnsatisfiable="ScheduleAnyway"), zone(maxSkew=2)],
        CREATE,
        ["field[0].topologyKey: Required value: can not be empty"],
        id="multiple constraints missing TopologyKey on partial ones",
    ),
    pytest.param(
        [zone(), zone(maxSkew=2)],
        CREATE,
        ['field[0].{topologyKey, whenUnsatisfiable}: Duplicate value: "{k8s.io/zone, DoNotSchedule}"'],
        id="duplicate constraints",
    ),
    pytest.param(
        [zone(nodeAffinityPolicy="Honor", nodeTaintsPolicy="Ignore")],
        CREATE,
        [],
        id="supported policy name set on NodeAffinityPolicy and NodeTaintsPolicy",
    ),
    pytest.param(
        [zone(nodeAffinityPolicy="Unknown", nodeTaintsPolicy="Ignore")],
        CREATE,
        [f'field[0].nodeAffinityPolicy: Unsupported value: "Unknown": {SUPPORTED_POLICIES}'],
        id="unsupported policy name set on NodeAffinityPolicy",
    ),
    pytest.param(
        [zone(nodeAffinityPolicy="Honor", nodeTaintsPolicy="Unknown")],
        CREATE,
        [f'field[0].nodeTaintsPolicy: Unsupported value: "Unknown": {SUPPORTED_POLICIES}'],
        id="unsupported policy name set on NodeTaintsPolicy",
    ),
    pytest.param(
        [zone(labelSelector={}, matchLabelKeys=["/simple"])],
        MERGE,
        ['field[0].matchLabelKeys[0]: Invalid value: "/simple": prefix part must be non-empty'],
        id="key in MatchLabelKeys isn't correctly defined",
    ),
    pytest.param(
        [zone(labelSelector={}, matchLabelKeys=["/simple"])],
        LEGACY,
        ['field[0].matchLabelKeys[0]: Invalid value: "/simple": prefix part must be non-empty'],
        id="key in MatchLabelKeys isn't correctly defined without the selector merge",
    ),
    pytest.param(
        [zone(matchLabelKeys=["foo"], labelSelector=TWO_FOO)],
        MERGE,
        [f'field[0][0]: Invalid value: "foo": {BOTH}'],  # upstream's path, without matchLabelKeys
        id="key exists in both MatchLabelKeys and LabelSelector",
    ),
    pytest.param(
        [zone(matchLabelKeys=["foo"], labelSelector={"matchExpressions": [not_in("value1", "value2")]})],
        LEGACY,
        [f'field[0].matchLabelKeys[0]: Invalid value: "foo": {BOTH}'],
        id="key exists in both MatchLabelKeys and LabelSelector without the selector merge",
    ),
    pytest.param(
        [zone(matchLabelKeys=["foo"])],
        MERGE,
        [f"field[0].matchLabelKeys: Forbidden: {NO_SELECTOR}"],
        id="key in MatchLabelKeys is forbidden to be specified when LabelSelector is not set",
    ),
    pytest.param(
        [zone(matchLabelKeys=["foo"])],
        LEGACY,
        [f"field[0].matchLabelKeys: Forbidden: {NO_SELECTOR}"],
        id="key in MatchLabelKeys is forbidden without LabelSelector nor the selector merge",
    ),
    pytest.param(
        [zone(labelSelector={"matchLabels": {"NoUppercaseOrSpecialCharsLike=Equals": "foo"}})],
        MERGE,
        [
            'field[0].labelSelector.matchLabels: Invalid value: "NoUppercaseOrSpecialCharsLike=Equals": '
            + NAME_PART
        ],
        id="invalid MatchLabels set on LabelSelector when AllowInvalidTopologySpreadConstraintLabelSelector is false",
    ),
    pytest.param(
        [zone(labelSelector={"matchLabels": {"NoUppercaseOrSpecialCharsLike=Equals": "foo"}})],
        SpreadOptions(allow_invalid_label_selector=True),
        [],
        id="invalid MatchLabels set on LabelSelector when AllowInvalidTopologySpreadConstraintLabelSelector is true",
    ),
    pytest.param(
        [zone(labelSelector={"matchLabels": {"foo": "foo"}})],
        MERGE,
        [],
        id="valid MatchLabels set on LabelSelector",
    ),
    pytest.param(
        [zone(matchLabelKeys=["foo"], labelSelector=TWO_FOO)],
        SpreadOptions(old_violates_match_label_keys=False),
        [f'field[0][0]: Invalid value: "foo": {BOTH}'],
        id="invalid MatchLabelKeys when OldPodViolatesMatchLabelKeysValidation is false",
    ),
    pytest.param(
        [zone(matchLabelKeys=["foo"], labelSelector=TWO_FOO)],
        SpreadOptions(old_violates_match_label_keys=True),
        [f'field[0].matchLabelKeys[0]: Invalid value: "foo": {BOTH}'],
        id="invalid MatchLabelKeys when OldPodViolatesMatchLabelKeysValidation is true (the legacy check)",
    ),
    pytest.param(
        [zone(matchLabelKeys=["foo"], labelSelector=ONE_FOO)],
        SpreadOptions(old_violates_match_label_keys=False),
        [],
        id="valid MatchLabelKeys when OldPodViolatesMatchLabelKeysValidation is false",
    ),
    pytest.param(
        [zone(matchLabelKeys=["foo"], labelSelector=ONE_FOO)],
        SpreadOptions(selector_merge=False, old_violates_legacy_match_label_keys=False),
        [f'field[0].matchLabelKeys[0]: Invalid value: "foo": {BOTH}'],
        id="invalid MatchLabelKeys without the selector merge when the old pod passes the legacy check",
    ),
    pytest.param(
        [zone(matchLabelKeys=["foo"], labelSelector=ONE_FOO)],
        SpreadOptions(selector_merge=False, old_violates_legacy_match_label_keys=True),
        [],
        id="without the selector merge an old pod failing the legacy check keeps the preferred one",
    ),
    pytest.param(
        [zone(matchLabelKeys=["foo"], labelSelector={"matchExpressions": []})],
        SpreadOptions(selector_merge=False),
        [],
        id="valid MatchLabelKeys without the selector merge",
    ),
    pytest.param(
        [zone(matchLabelKeys=["foo"], labelSelector=TWO_FOO)],
        SpreadOptions(match_label_keys=False, selector_merge=True),
        [f'field[0].matchLabelKeys[0]: Invalid value: "foo": {BOTH}'],
        id="MatchLabelKeysInPodTopologySpread off keeps the legacy check",
    ),
]


@pytest.mark.parametrize(("constraints", "options", "expected"), TABLE)
def test_validate_topology_spread_constraints(
    constraints: list[dict[str, Any]], options: SpreadOptions, expected: list[str]
) -> None:
    assert [str(e) for e in validate_topology_spread_constraints(constraints, "field", options)] == expected


def test_every_check_of_one_constraint_in_upstream_order() -> None:
    bad = {
        "maxSkew": 0,
        "topologyKey": "",
        "whenUnsatisfiable": "Foo",
        "minDomains": 0,
        "nodeAffinityPolicy": "Sometimes",
        "nodeTaintsPolicy": "",
        "matchLabelKeys": ["app"],
        "labelSelector": {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "app", "operator": "Foo"}],
        },
    }
    path = "spec.topologySpreadConstraints[0]"
    assert [str(e) for e in validate(pod(topologySpreadConstraints=[bad, {**bad, "maxSkew": 1}]))] == [
        f"{path}.maxSkew: Invalid value: 0: must be greater than zero",
        f"{path}.topologyKey: Required value: can not be empty",
        f'{path}.whenUnsatisfiable: Unsupported value: "Foo": {SUPPORTED_ACTIONS}',
        f'{path}.{{topologyKey, whenUnsatisfiable}}: Duplicate value: "{{, Foo}}"',
        f"{path}.minDomains: Invalid value: 0: must be greater than zero",
        f"{path}.minDomains: Invalid value: 0: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not Foo",
        f'{path}.nodeAffinityPolicy: Unsupported value: "Sometimes": {SUPPORTED_POLICIES}',
        f'{path}.nodeTaintsPolicy: Unsupported value: "": {SUPPORTED_POLICIES}',
        f'{path}[0]: Invalid value: "app": {BOTH}',
        f'{path}.labelSelector.matchExpressions[0].operator: Invalid value: "Foo": not a valid selector operator',
        "spec.topologySpreadConstraints[1].topologyKey: Required value: can not be empty",
        f'spec.topologySpreadConstraints[1].whenUnsatisfiable: Unsupported value: "Foo": {SUPPORTED_ACTIONS}',
        "spec.topologySpreadConstraints[1].minDomains: Invalid value: 0: must be greater than zero",
        "spec.topologySpreadConstraints[1].minDomains: Invalid value: 0: "
        "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not Foo",
        f'spec.topologySpreadConstraints[1].nodeAffinityPolicy: Unsupported value: "Sometimes": {SUPPORTED_POLICIES}',
        f'spec.topologySpreadConstraints[1].nodeTaintsPolicy: Unsupported value: "": {SUPPORTED_POLICIES}',
        f'spec.topologySpreadConstraints[1][0]: Invalid value: "app": {BOTH}',
        "spec.topologySpreadConstraints[1].labelSelector.matchExpressions[0].operator: "
        'Invalid value: "Foo": not a valid selector operator',
    ]


def test_constraints_are_checked_after_affinity_and_before_node_name_and_tolerations() -> None:
    obj = pod(
        nodeName="Bad_Node",
        tolerations=[{"key": "k", "operator": "Foo"}],
        affinity={
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}
        },
        topologySpreadConstraints=[zone(maxSkew=0)],
    )
    fields = [e.field for e in validate(obj)]
    spread = fields.index("spec.topologySpreadConstraints[0].maxSkew")
    assert (
        fields.index(
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
        )
        < spread
    )
    assert spread < fields.index("spec.nodeName") < fields.index("spec.tolerations[0].operator")


def test_pod_templates_check_their_constraints() -> None:
    obj = workload("Deployment")
    obj["spec"]["template"]["spec"]["topologySpreadConstraints"] = [zone(whenUnsatisfiable="Foo")]
    assert [str(e) for e in validate(obj)] == [
        "spec.template.spec.topologySpreadConstraints[0].whenUnsatisfiable: "
        f'Unsupported value: "Foo": {SUPPORTED_ACTIONS}'
    ]


def test_a_template_is_checked_as_written_no_key_merged() -> None:
    """A template's matchLabelKeys are merged only into the pods made from it (at their creation):
    a key also in the template's matchLabels is no error for the template."""
    obj = workload("Deployment")
    obj["spec"]["template"]["spec"]["topologySpreadConstraints"] = [
        zone(matchLabelKeys=["app"], labelSelector={"matchLabels": {"app": "web"}})
    ]
    assert validate(obj) == []


INVALID_SELECTOR = {"matchLabels": {"bad key": "x"}}


def test_an_update_keeps_an_old_pods_invalid_label_selector() -> None:
    old = pod(topologySpreadConstraints=[zone(labelSelector=INVALID_SELECTOR)])
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"app": "web"}
    assert [e.field for e in validate(new)] == ["spec.topologySpreadConstraints[0].labelSelector.matchLabels"]
    assert validate(new, old=old) == []


def test_an_update_does_not_excuse_what_the_old_pod_passed() -> None:
    old = pod(topologySpreadConstraints=[zone(maxSkew=0, labelSelector=INVALID_SELECTOR)])
    new = copy.deepcopy(old)
    assert [str(e) for e in validate(new, old=old)] == [
        "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero"
    ]


def test_an_update_of_an_old_pod_failing_the_merged_check_gets_the_legacy_one() -> None:
    old = pod(topologySpreadConstraints=[zone(matchLabelKeys=["foo"], labelSelector=TWO_FOO)])
    assert [str(e) for e in validate(copy.deepcopy(old), old=old)] == [
        f'spec.topologySpreadConstraints[0].matchLabelKeys[0]: Invalid value: "foo": {BOTH}'
    ]


@pytest.mark.parametrize(
    ("old_spec", "base", "expected"),
    [
        pytest.param(None, CREATE, CREATE, id="a create has the gates' options"),
        pytest.param(
            {"topologySpreadConstraints": [zone()]}, CREATE, CREATE, id="a valid old spec excuses nothing"
        ),
        pytest.param(
            {"topologySpreadConstraints": [zone(labelSelector=INVALID_SELECTOR)]},
            CREATE,
            SpreadOptions(allow_invalid_label_selector=True),
            id="an old invalid labelSelector is allowed to stay",
        ),
        pytest.param(
            {"topologySpreadConstraints": [zone(matchLabelKeys=["foo"], labelSelector=TWO_FOO)]},
            CREATE,
            SpreadOptions(old_violates_match_label_keys=True),
            id="an old spec failing the merged matchLabelKeys check",
        ),
        pytest.param(
            {"topologySpreadConstraints": [zone(matchLabelKeys=["foo"], labelSelector=ONE_FOO)]},
            SpreadOptions(selector_merge=False),
            SpreadOptions(selector_merge=False, old_violates_legacy_match_label_keys=True),
            id="an old spec failing the legacy check without the selector merge",
        ),
        pytest.param(
            {"topologySpreadConstraints": [zone(matchLabelKeys=["foo"], labelSelector=ONE_FOO)]},
            CREATE,
            CREATE,
            id="a key merged once passes the merged check",
        ),
    ],
)
def test_spread_options_of_an_update(old_spec: Any, base: SpreadOptions, expected: SpreadOptions) -> None:
    assert spread_options(old_spec, base) == expected


@pytest.mark.parametrize(
    "constraints",
    [
        pytest.param("zone", id="not a list"),
        pytest.param([None, 3, "x"], id="items that are not objects"),
        pytest.param(
            [{"maxSkew": "1", "minDomains": True, "matchLabelKeys": "app", "labelSelector": []}],
            id="fields of the wrong type",
        ),
    ],
)
def test_malformed_constraints_get_errors_not_exceptions(constraints: Any) -> None:
    errs = validate(pod(topologySpreadConstraints=constraints))
    assert all(e.field.startswith("spec.topologySpreadConstraints") for e in errs)


def _with_template_constraints(obj: dict[str, Any], constraints: list[dict[str, Any]]) -> dict[str, Any]:
    template = (
        obj["spec"]["jobTemplate"]["spec"]["template"]
        if obj["kind"] == "CronJob"
        else obj["spec"]["template"]
    )
    template["spec"]["topologySpreadConstraints"] = constraints
    return obj


def _cron_job() -> dict[str, Any]:
    template = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "cj", "namespace": "default"},
        "spec": {
            "schedule": "@hourly",
            "concurrencyPolicy": "Allow",
            "jobTemplate": {"spec": {"template": template}},
        },
    }


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: workload("Deployment"), id="a Deployment"),
        pytest.param(lambda: workload("DaemonSet"), id="a DaemonSet"),
        pytest.param(_cron_job, id="a CronJob"),
    ],
)
def test_a_template_update_keeps_an_old_invalid_label_selector(make: Any) -> None:
    """GetValidationOptionsFromPodTemplate: the old template's violations may stay, as a pod's."""
    old = _with_template_constraints(make(), [zone(labelSelector=INVALID_SELECTOR)])
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"changed": "yes"}
    assert [e.field.rpartition("spec.")[2] for e in validate(new)] == [
        "topologySpreadConstraints[0].labelSelector.matchLabels"
    ]
    assert validate(new, old=old) == []
    fresh = _with_template_constraints(make(), [zone(labelSelector=INVALID_SELECTOR)])
    assert len(validate(fresh, old=make())) == 1  # an old template without it excuses nothing
