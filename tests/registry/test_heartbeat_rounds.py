"""Rounds of lease renewals through the registry (`SetField` commits of spec.renewTime): a round
renewing the results of the round before is trusted as one list (registry.heartbeats keeps the
last round's results whole), and what the registry validated or stored in between, a round cut
short by a failure, a lease written behind the registry's back and another configuration are
answered as the key-by-key trust answers them."""

from __future__ import annotations

import pytest

from kubetaint.api.errors import StatusError
from kubetaint.api.validation import validate
from kubetaint.registry import Registry
from kubetaint.registry.registry import APIValidator
from kubetaint.store.interface import JSON, SetField, until_failure
from registry.test_heartbeat_writes import (
    LEASES,
    NAMESPACE,
    generic_validator,
    lease,
    make_registry,
    renewed,
    stamp,
)

RENEW = ("spec", "renewTime")


@pytest.fixture
def validated(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """kube-apiserver's validation run on every object the registry's APIValidator is asked
    about, recording the names of the objects validated."""
    calls: list[str] = []

    def check(self: APIValidator, resource: str, obj: JSON, old: JSON | None) -> None:
        calls.append(obj["metadata"]["name"])
        errs = validate(obj, old=old, feature_gates=self.feature_gates)
        if errs:
            raise StatusError(422, "Invalid", "; ".join(f"{e.field}: {e.message}" for e in errs))

    monkeypatch.setattr(APIValidator, "__call__", check)
    return calls


def renew_round(registry: Registry, leases: list[JSON], i: int) -> tuple[list[JSON], StatusError | None]:
    """One round: the renewTime of every lease in `leases` set to stamp(i), as a kubelet pool
    writes it."""
    return until_failure(registry.commit((SetField(LEASES, leases, RENEW, stamp(i)),), stop_at_failure=True))


def created(registry: Registry, names: str) -> list[JSON]:
    return [registry.create(LEASES, lease(name)) for name in names]


@pytest.mark.usefixtures("default_mode")
def test_rounds_renewing_the_last_results_are_never_validated(validated: list[str]) -> None:
    registry = make_registry()
    current = created(registry, "abc")
    for i in range(1, 6):
        current, err = renew_round(registry, current, i)
        assert err is None
    assert validated == ["a", "b", "c"]  # the creates
    assert [obj["spec"]["renewTime"] for obj in current] == [stamp(5)] * 3
    assert registry.get(LEASES, NAMESPACE, "b") is current[1]


@pytest.mark.usefixtures("default_mode")
def test_a_round_of_other_leases_or_in_pieces_is_trusted_key_by_key(validated: list[str]) -> None:
    registry = make_registry()
    a, b, c = created(registry, "abc")
    first, _ = renew_round(registry, [a, b, c], 1)
    pieces = [renew_round(registry, [obj], 2)[0][0] for obj in first]  # a round cut by status posts
    again, err = renew_round(registry, pieces, 3)
    assert err is None and validated == ["a", "b", "c"]
    subset, err = renew_round(registry, again[1:], 4)
    assert err is None and validated == ["a", "b", "c"]
    assert [obj["metadata"]["name"] for obj in subset] == ["b", "c"]


@pytest.mark.usefixtures("default_mode")
def test_a_lease_updated_through_the_registry_between_rounds_stays_trusted(validated: list[str]) -> None:
    registry = make_registry()
    current, _ = renew_round(registry, created(registry, "abc"), 1)
    moved = registry.update(LEASES, renewed(current[1], stamp(2), leaseDurationSeconds=30))
    assert validated == ["a", "b", "c", "b"]
    current, err = renew_round(registry, [current[0], moved, current[2]], 3)
    assert err is None and validated == ["a", "b", "c", "b"]
    assert current[1]["spec"]["leaseDurationSeconds"] == 30


def test_a_lease_changed_behind_the_registrys_back_is_validated_in_the_next_round() -> None:
    registry = make_registry()
    current, _ = renew_round(registry, created(registry, "abc"), 1)
    bad = registry.store.update(LEASES, renewed(current[1], stamp(2), leaseDurationSeconds=0))
    stored, err = renew_round(registry, [current[0], bad, current[2]], 3)
    assert err is not None and err.code == 422 and "spec.leaseDurationSeconds" in err.message
    assert [obj["metadata"]["name"] for obj in stored] == ["a"]
    assert registry.get(LEASES, NAMESPACE, "c") is current[2]


def test_a_stale_lease_in_a_round_repeated_from_the_last_results_is_a_conflict() -> None:
    registry = make_registry()
    old = created(registry, "abc")
    current, _ = renew_round(registry, old, 1)
    stored, err = renew_round(registry, [current[0], old[1], current[2]], 2)
    assert err is not None and err.code == 409
    assert [obj["metadata"]["name"] for obj in stored] == ["a"]
    rest, err = renew_round(registry, [registry.get(LEASES, NAMESPACE, n) for n in "abc"], 3)
    assert err is None and [obj["spec"]["renewTime"] for obj in rest] == [stamp(3)] * 3


@pytest.mark.usefixtures("default_mode")
def test_a_round_cut_short_leaves_the_leases_it_did_not_reach_trusted(validated: list[str]) -> None:
    registry = make_registry()
    old = created(registry, "abc")
    current, _ = renew_round(registry, old, 1)
    stored, err = renew_round(registry, [current[0], old[1], current[2]], 2)  # b is stale
    assert err is not None and len(stored) == 1
    later, err = renew_round(registry, [stored[0], current[1], current[2]], 3)
    assert err is None and validated == ["a", "b", "c"]
    assert [obj["spec"]["renewTime"] for obj in later] == [stamp(3)] * 3


def test_the_last_round_is_not_trusted_under_another_validator(validated: list[str]) -> None:
    registry = make_registry()
    current, _ = renew_round(registry, created(registry, "ab"), 1)
    validated.clear()
    registry.validator = generic_validator()
    current, err = renew_round(registry, current, 2)
    assert err is None and validated == ["a", "b"]
    current, err = renew_round(registry, current, 3)
    assert err is None and validated == ["a", "b", "a", "b"]


def test_rounds_store_what_the_generic_path_stores() -> None:
    fast, slow = make_registry(), make_registry(generic_validator())
    fast_current, slow_current = created(fast, "abcd"), created(slow, "abcd")
    for i in range(1, 5):
        fast_current, fast_err = renew_round(fast, fast_current, i)
        slow_current, slow_err = renew_round(slow, slow_current, i)
        assert fast_err is None and slow_err is None
        assert fast_current == slow_current
    assert fast.current_resource_version() == slow.current_resource_version()
