"""A Job's pod failure policy, success policy and backoff limit per index validated as upstream's
(pkg/apis/batch/validation/validation_test.go TestValidateJob's error cases, as data: each case's
id is upstream's key, the expectation the full message)."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.api.validation import validate

JSON = dict[str, Any]
NEVER = {"spec": {"restartPolicy": "Never", "containers": [{"name": "abc", "image": "i"}]}}


def job(**spec: Any) -> JSON:
    spec.setdefault("template", NEVER)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "myjob", "namespace": "ns"},
        "spec": spec,
    }


def indexed(completions: int = 5, **spec: Any) -> JSON:
    return job(completionMode="Indexed", completions=completions, **spec)


def pfp(*rules: JSON) -> JSON:
    return job(podFailurePolicy={"rules": list(rules)})


def on_exit(action: str = "FailJob", operator: str = "In", values: Any = (1, 2, 3), **extra: Any) -> JSON:
    codes: JSON = {"operator": operator, **extra}
    if values is not None:
        codes["values"] = list(values)
    return {"action": action, "onExitCodes": codes}


def on_conditions(*patterns: JSON, action: str = "Ignore") -> JSON:
    return {"action": action, "onPodConditions": list(patterns)}


DISRUPTION = {"type": "DisruptionTarget", "status": "True"}
QUALIFIED = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)

CASES = [
    (
        job(successPolicy={"rules": []}),
        "spec.successPolicy: Invalid value: batch.SuccessPolicy{Rules:[]batch.SuccessPolicyRule{}}: "
        "requires indexed completion mode",
    ),
    (
        indexed(successPolicy={}),
        "spec.successPolicy.rules: Required value: at least one rules must be specified when the successPolicy "
        "is specified",
    ),
    (
        indexed(successPolicy={"rules": [{}]}),
        "spec.successPolicy.rules[0]: Required value: at least one of succeededCount or succeededIndexes must be "
        "specified",
    ),
    (
        indexed(successPolicy={"rules": [{"succeededIndexes": "invalid-format"}]}),
        'spec.successPolicy.rules[0].succeededIndexes: Invalid value: "invalid-format": error parsing '
        'succeededIndexes: cannot convert string to integer for index: "invalid"',
    ),
    (
        indexed(successPolicy={"rules": [{"succeededCount": -1}]}),
        "spec.successPolicy.rules[0].succeededCount: Invalid value: -1: must be greater than or equal to 0",
    ),
    (
        indexed(successPolicy={"rules": [{"succeededCount": 6}]}),
        "spec.successPolicy.rules[0].succeededCount: Invalid value: 6: must be less than or equal to 5 (the number "
        "of specified completions)",
    ),
    (
        indexed(successPolicy={"rules": [{"succeededCount": 4, "succeededIndexes": "0-2"}]}),
        "spec.successPolicy.rules[0].succeededCount: Invalid value: 4: must be less than or equal to 3 (the number "
        "of indexes in the specified succeededIndexes field)",
    ),
    (
        indexed(successPolicy={"rules": [{"succeededCount": 5}] * 21}),
        "spec.successPolicy.rules: Too many: 21: must have at most 20 items",
    ),
    (
        pfp({"action": "FailJob"}),
        "spec.podFailurePolicy.rules[0]: Invalid value: specifying one of OnExitCodes and OnPodConditions is "
        "required",
    ),
    (
        pfp(on_exit(values=[11, 11])),
        "spec.podFailurePolicy.rules[0].onExitCodes.values[1]: Duplicate value: 11",
    ),
    (
        pfp(on_exit(values=range(256))),
        "spec.podFailurePolicy.rules[0].onExitCodes.values: Too many: 256: must have at most 255 items",
    ),
    (
        pfp(*[on_exit(values=[i + 1]) for i in range(21)]),
        "spec.podFailurePolicy.rules: Too many: 21: must have at most 20 items",
    ),
    (
        pfp(
            on_conditions(
                *[{"type": f"CustomType_{i}", "status": "True"} for i in range(21)], action="FailJob"
            )
        ),
        "spec.podFailurePolicy.rules[0].onPodConditions: Too many: 21: must have at most 20 items",
    ),
    (
        pfp(on_exit(values=[19, 11])),
        "spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: []int32{19, 11}: must be ordered",
    ),
    (
        pfp(on_exit(values=[])),
        "spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: []int32{}: at least one value is "
        "required",
    ),
    (
        pfp(on_exit(action="")),
        'spec.podFailurePolicy.rules[0].action: Required value: valid values: ["Count" "FailIndex" "FailJob" '
        '"Ignore"]',
    ),
    (
        pfp(on_exit(operator="")),
        'spec.podFailurePolicy.rules[0].onExitCodes.operator: Required value: valid values: ["In" "NotIn"]',
    ),
    (
        pfp({**on_exit(containerName="abc"), "onPodConditions": [DISRUPTION]}),
        "spec.podFailurePolicy.rules[0]: Invalid value: specifying both OnExitCodes and OnPodConditions is not "
        "supported",
    ),
    (
        pfp(on_exit(action="Ignore", values=[1, 0, 2])),
        "spec.podFailurePolicy.rules[0].onExitCodes.values[1]: Invalid value: 0: must not be 0 for the In operator",
    ),
    (
        pfp(on_exit(action="Ignore", containerName="abc"), on_exit(containerName="xyz", values=[5, 6, 7])),
        'spec.podFailurePolicy.rules[1].onExitCodes.containerName: Invalid value: "xyz": must be one of the '
        "container or initContainer names in the pod template",
    ),
    (
        pfp(on_exit(action="UnknownAction", containerName="abc")),
        'spec.podFailurePolicy.rules[0].action: Unsupported value: "UnknownAction": supported values: "Count", '
        '"FailIndex", "FailJob", "Ignore"',
    ),
    (
        pfp(on_exit(action="Ignore", operator="UnknownOperator")),
        'spec.podFailurePolicy.rules[0].onExitCodes.operator: Unsupported value: "UnknownOperator": supported '
        'values: "In", "NotIn"',
    ),
    (
        pfp(on_conditions({"type": "DisruptionTarget"})),
        'spec.podFailurePolicy.rules[0].onPodConditions[0].status: Required value: valid values: ["False" "True" '
        '"Unknown"]',
    ),
    (
        pfp(on_conditions({"type": "DisruptionTarget", "status": "UnknownStatus"})),
        'spec.podFailurePolicy.rules[0].onPodConditions[0].status: Unsupported value: "UnknownStatus": supported '
        'values: "False", "True", "Unknown"',
    ),
    (
        pfp(on_conditions({"status": "True"})),
        'spec.podFailurePolicy.rules[0].onPodConditions[0].type: Invalid value: "": name part must be non-empty',
    ),
    (
        pfp(on_conditions({"type": "Invalid Condition Type", "status": "True"})),
        'spec.podFailurePolicy.rules[0].onPodConditions[0].type: Invalid value: "Invalid Condition Type": '
        + QUALIFIED,
    ),
    (
        job(
            podReplacementPolicy="TerminatingOrFailed",
            podFailurePolicy={"rules": [on_conditions(DISRUPTION)]},
        ),
        'spec.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": supported values: "Failed"',
    ),
    (
        job(podReplacementPolicy=""),
        'spec.podReplacementPolicy: Unsupported value: "": supported values: "Failed", "TerminatingOrFailed"',
    ),
    (
        job(
            template={"spec": {"restartPolicy": "OnFailure", "containers": [{"name": "abc", "image": "i"}]}},
            podFailurePolicy={"rules": []},
        ),
        'spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when '
        "podFailurePolicy is specified",
    ),
    (
        job(backoffLimitPerIndex=1),
        "spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode",
    ),
    (
        indexed(backoffLimitPerIndex=-1),
        "spec.backoffLimitPerIndex: Invalid value: -1: must be greater than or equal to 0",
    ),
    (
        indexed(10, maxFailedIndexes=11, backoffLimitPerIndex=1),
        "spec.maxFailedIndexes: Invalid value: 11: must be less than or equal to completions",
    ),
    (
        indexed(100_001, backoffLimitPerIndex=1),
        "spec.maxFailedIndexes: Required value: must be specified when completions is above 100000",
    ),
    (
        indexed(100_001, parallelism=50_000, backoffLimitPerIndex=1, maxFailedIndexes=1),
        "spec.parallelism: Invalid value: 50000: must be less than or equal to 10000 when completions are above "
        "100000 and used with backoff limit per index",
    ),
    (
        indexed(100_001, backoffLimitPerIndex=1, maxFailedIndexes=100_001),
        "spec.maxFailedIndexes: Invalid value: 100001: must be less than or equal to 100000",
    ),
    (
        indexed(100_001, backoffLimitPerIndex=1, maxFailedIndexes=50_000),
        "spec.maxFailedIndexes: Invalid value: 50000: must be less than or equal to 10000 when completions are "
        "above 100000 and used with backoff limit per index",
    ),
    (
        indexed(backoffLimitPerIndex=1, maxFailedIndexes=-1),
        "spec.maxFailedIndexes: Invalid value: -1: must be greater than or equal to 0",
    ),
    (
        indexed(maxFailedIndexes=1),
        "spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified",
    ),
    (job(completionMode="Indexed"), "spec.completions: Required value: when completion mode is Indexed"),
    (
        indexed(2, parallelism=100_001),
        "spec.parallelism: Invalid value: 100001: must be less than or equal to 100000 when completion mode is "
        "Indexed",
    ),
]


@pytest.mark.parametrize(("obj", "message"), [pytest.param(o, m, id=m) for o, m in CASES])
def test_an_invalid_job_policy_is_refused_with_upstreams_message(obj: JSON, message: str) -> None:
    assert message in [str(e) for e in validate(obj)]


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param(
            indexed(100_000, parallelism=100_000, maxFailedIndexes=100_000, backoffLimitPerIndex=1),
            id="valid parallelism and maxFailedIndexes for high completions when backoffLimitPerIndex is used",
        ),
        pytest.param(
            indexed(1_000_000_000, parallelism=10_000, maxFailedIndexes=10_000, backoffLimitPerIndex=1),
            id="valid parallelism and maxFailedIndexes for unlimited completions when backoffLimitPerIndex is used",
        ),
        pytest.param(
            indexed(
                successPolicy={"rules": [{"succeededIndexes": "0,2-3", "succeededCount": 2}]},
                podFailurePolicy={"rules": [on_exit(action="FailIndex"), on_conditions(DISRUPTION)]},
                backoffLimitPerIndex=2,
            ),
            id="valid success policy, pod failure policy and backoff limit per index",
        ),
    ],
)
def test_a_valid_job_policy_is_accepted(obj: JSON) -> None:
    assert [str(e) for e in validate(obj)] == []
