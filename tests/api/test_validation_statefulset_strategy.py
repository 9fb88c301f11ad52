"""A StatefulSet's rolling update parameters as validateRollingUpdateStatefulSet checks them
(pkg/apis/apps/validation): partition >= 0, maxUnavailable a positive integer or a percentage
from 1% to 100%."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.api.validation import validate

PATH = "spec.updateStrategy.rollingUpdate"
PERCENT = (
    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or "
    "'93%', regex used for validation is '[0-9]+%')"
)


def statefulset(strategy: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
            "updateStrategy": strategy,
        },
    }


def rolling(**fields: Any) -> dict[str, Any]:
    return {"type": "RollingUpdate", "rollingUpdate": fields}


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        pytest.param(rolling(partition=0, maxUnavailable=2), [], id="an integer"),
        pytest.param(rolling(partition=0, maxUnavailable="100%"), [], id="100 percent"),
        pytest.param(rolling(partition=0, maxUnavailable="1%"), [], id="1 percent"),
        pytest.param(rolling(partition=0), [], id="unset"),
        pytest.param({"type": "OnDelete"}, [], id="OnDelete has no rolling update"),
        pytest.param(
            rolling(partition=-1),
            [f"{PATH}.partition: Invalid value: -1: must be greater than or equal to 0"],
            id="a negative partition",
        ),
        pytest.param(
            rolling(partition=0, maxUnavailable=0),
            [
                f'{PATH}.maxUnavailable: Invalid value: intstr.IntOrString{{Type:0, IntVal:0, StrVal:""}}: cannot be 0'
            ],
            id="zero",
        ),
        pytest.param(
            rolling(partition=0, maxUnavailable="0%"),
            [
                f'{PATH}.maxUnavailable: Invalid value: intstr.IntOrString{{Type:1, IntVal:0, StrVal:"0%"}}: '
                "cannot be 0"
            ],
            id="zero percent",
        ),
        pytest.param(
            rolling(partition=0, maxUnavailable=-2),
            [
                f'{PATH}.maxUnavailable: Invalid value: intstr.IntOrString{{Type:0, IntVal:-2, StrVal:""}}: '
                "must be greater than or equal to 0"
            ],
            id="negative",
        ),
        pytest.param(
            rolling(partition=0, maxUnavailable="150%"),
            [
                f'{PATH}.maxUnavailable: Invalid value: intstr.IntOrString{{Type:1, IntVal:0, StrVal:"150%"}}: '
                "must not be greater than 100%"
            ],
            id="above 100 percent",
        ),
        pytest.param(
            rolling(partition=0, maxUnavailable="two"),
            [
                f'{PATH}.maxUnavailable: Invalid value: intstr.IntOrString{{Type:1, IntVal:0, StrVal:"two"}}: '
                f"{PERCENT}",
                f'{PATH}.maxUnavailable: Invalid value: intstr.IntOrString{{Type:1, IntVal:0, StrVal:"two"}}: '
                "cannot be 0",
            ],
            id="not a number: an invalid percentage whose IntValue is 0",
        ),
        pytest.param(
            rolling(partition=0, maxUnavailable="3"),
            [
                f'{PATH}.maxUnavailable: Invalid value: intstr.IntOrString{{Type:1, IntVal:0, StrVal:"3"}}: '
                f"{PERCENT}"
            ],
            id="a number as a string is not a percentage",
        ),
        pytest.param(
            rolling(partition=-1, maxUnavailable=0),
            [
                f"{PATH}.partition: Invalid value: -1: must be greater than or equal to 0",
                f'{PATH}.maxUnavailable: Invalid value: intstr.IntOrString{{Type:0, IntVal:0, StrVal:""}}: cannot be 0',
            ],
            id="partition first",
        ),
    ],
)
def test_rolling_update_parameters(strategy: dict[str, Any], expected: list[str]) -> None:
    assert [str(e) for e in validate(statefulset(strategy))] == expected


def test_an_update_is_validated_too() -> None:
    old = statefulset(rolling(partition=0, maxUnavailable=1))
    new = statefulset(rolling(partition=0, maxUnavailable="0%"))
    assert [e.field for e in validate(new, old=old)] == [f"{PATH}.maxUnavailable"]


def test_the_error_comes_before_the_specs_other_errors() -> None:
    obj = statefulset(rolling(partition=0, maxUnavailable=0))
    obj["spec"]["replicas"] = -1
    assert [e.field for e in validate(obj)] == [f"{PATH}.maxUnavailable", "spec.replicas"]


def spec_with(**fields: Any) -> dict[str, Any]:
    obj = statefulset(rolling(partition=0))
    obj["spec"].update(fields)
    return obj


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(
            spec_with(podManagementPolicy="Burst"),
            ["spec.podManagementPolicy: Invalid value: \"Burst\": must be 'OrderedReady' or 'Parallel'"],
            id="an unknown pod management policy",
        ),
        pytest.param(spec_with(podManagementPolicy=""), [], id="an empty policy is defaulted first"),
        pytest.param(
            spec_with(updateStrategy={"type": "Recreate"}),
            [
                'spec.updateStrategy: Invalid value: apps.StatefulSetUpdateStrategy{Type:"Recreate", '
                "RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}: "
                "must be 'RollingUpdate' or 'OnDelete'"
            ],
            id="an unknown strategy type",
        ),
        pytest.param(
            spec_with(updateStrategy={"type": "OnDelete", "rollingUpdate": {"partition": 2}}),
            [
                "spec.updateStrategy.rollingUpdate: Invalid value: apps.RollingUpdateStatefulSetStrategy"
                "{Partition:2, MaxUnavailable:(*intstr.IntOrString)(nil)}: "
                "only allowed for updateStrategy 'RollingUpdate'"
            ],
            id="OnDelete with a rolling update",
        ),
        pytest.param(
            spec_with(persistentVolumeClaimRetentionPolicy={"whenDeleted": "Keep", "whenScaled": "Delete"}),
            [
                'spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep": '
                'supported values: "Retain", "Delete"'
            ],
            id="an unknown claim retention policy",
        ),
        pytest.param(
            spec_with(minReadySeconds=-1, ordinals={"start": -2}),
            [
                "spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0",
                "spec.ordinals.start: Invalid value: -2: must be greater than or equal to 0",
            ],
            id="negative minReadySeconds and start ordinal",
        ),
        pytest.param(
            spec_with(podManagementPolicy="Burst", minReadySeconds=-1, replicas=-1),
            [
                "spec.podManagementPolicy: Invalid value: \"Burst\": must be 'OrderedReady' or 'Parallel'",
                "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
                "spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0",
            ],
            id="in ValidateStatefulSetSpec's order",
        ),
    ],
)
def test_the_other_spec_policies(obj: dict[str, Any], expected: list[str]) -> None:
    assert [str(e) for e in validate(obj)] == expected
