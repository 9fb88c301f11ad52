"""Registry._trusts_heartbeats keeps its answer per resource in the configuration it was found for
(registry.trust.Configuration: the validator, admission chain and plugin list; every lease renewal
batch and node status post asks). It must answer what a fresh configuration answers after any
change: another validator, another chain, none, a plugin list replaced or changed in place, and
asked in turn about several resources."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kubetaint.admission import AdmissionChain
from kubetaint.registry import Registry
from kubetaint.registry.registry import APIValidator
from kubetaint.registry.trust import Configuration
from registry.test_heartbeat_writes import (
    AnyUpdates,
    LeaseUpdates,
    NodeCreates,
    generic_validator,
    make_registry,
)

LEASES = "leases.coordination.k8s.io"
RESOURCES = (LEASES, "nodes", "pods", "leases")


def answers(registry: Registry) -> list[bool]:
    """Each resource's answer, checked against working it out afresh."""
    found = [registry._trusts_heartbeats(resource) for resource in RESOURCES]
    fresh = [
        resource in (LEASES, "nodes")
        and Configuration(registry.validator, registry.admission).trusts_heartbeats(resource)
        for resource in RESOURCES
    ]
    assert found == fresh
    return found


Change = Callable[[Registry], None]


def _set_plugins(registry: Registry, plugins: list[Any]) -> None:
    assert registry.admission is not None
    registry.admission.plugins = plugins


def _add_plugin(registry: Registry, plugin: Any) -> None:
    assert registry.admission is not None
    registry.admission.plugins.append(plugin)


CHANGES = [
    pytest.param(lambda r: None, [True, True, False, False], id="nothing changed: the kept answers"),
    pytest.param(
        lambda r: setattr(r, "validator", generic_validator()),
        [False, False, False, False],
        id="another validator, not recognisably kube-apiserver's",
    ),
    pytest.param(
        lambda r: setattr(r, "validator", APIValidator()), [True, True, False, False], id="a new APIValidator"
    ),
    pytest.param(lambda r: setattr(r, "validator", None), [True, True, False, False], id="no validation"),
    pytest.param(
        lambda r: setattr(r, "admission", None), [True, True, False, False], id="no admission chain"
    ),
    pytest.param(
        lambda r: setattr(r, "admission", AdmissionChain()), [True, True, False, False], id="another chain"
    ),
    pytest.param(
        lambda r: _set_plugins(r, [LeaseUpdates()]), [False, True, False, False], id="plugins replaced"
    ),
    pytest.param(
        lambda r: _add_plugin(r, AnyUpdates()), [False, False, False, False], id="a plugin added in place"
    ),
    pytest.param(
        lambda r: _add_plugin(r, NodeCreates()),
        [True, True, False, False],
        id="a plugin on node creates only",
    ),
]


@pytest.mark.parametrize("change, expected", CHANGES)
@pytest.mark.usefixtures("default_mode")
def test_a_kept_answer_is_the_fresh_answer_after_any_change(change: Change, expected: list[bool]) -> None:
    registry = make_registry()
    assert answers(registry) == [True, True, False, False]
    change(registry)
    assert answers(registry) == expected
    assert answers(registry) == expected, "asked again: the same"


@pytest.mark.usefixtures("default_mode")
def test_a_change_back_is_answered_afresh_too() -> None:
    registry = make_registry()
    chain = registry.admission
    assert chain is not None
    answers(registry)
    _add_plugin(registry, LeaseUpdates())
    assert answers(registry)[0] is False
    chain.plugins.pop()
    assert answers(registry) == [True, True, False, False]
