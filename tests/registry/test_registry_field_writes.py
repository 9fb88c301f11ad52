"""Registry.update_field_many (a batch of lease renewals told what changes) stores, refuses and
validates exactly as Registry.update_many of the renewed copies: trusted renewals skip only
checks that cannot fail; leases changed behind the registry's back, missing or stale leases,
admission plugins acting on lease updates and other validators take the generic way."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

import pytest

from kubetaint.admission import AdmissionChain
from kubetaint.admission.attributes import UPDATE, Attributes
from kubetaint.admission.plugin import AdmissionPlugin, ObjectLookup
from kubetaint.api.errors import StatusError
from kubetaint.api.validation import validate
from kubetaint.clock import VirtualClock
from kubetaint.registry import Registry
from kubetaint.registry.registry import APIValidator
from kubetaint.store.changes import each_event
from kubetaint.store.interface import JSON, WatchEvent, with_field
from kubetaint.store.memory import MemoryStore
from store.commits import update_field_many, update_many

LEASES = "leases.coordination.k8s.io"
NS = "kube-node-lease"
RENEW = ("spec", "renewTime")


def with_namespaces(store: MemoryStore, *names: str) -> MemoryStore:
    """The namespaces NamespaceLifecycle must find for the objects written in them."""
    for name in names:
        store.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return store


def lease(name: str) -> JSON:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "holderIdentity": name,
            "leaseDurationSeconds": 40,
            "renewTime": "2026-01-01T00:00:00.000000Z",
        },
    }


def stamp(i: int) -> str:
    return f"2026-01-01T00:00:{i:02d}.000000Z"


class LabelLeaseUpdates(AdmissionPlugin):
    """A mutating plugin on lease updates (none of kubetaint's is): it labels what it admits."""

    name = "LabelLeaseUpdates"
    operations = frozenset({UPDATE})
    mutating = True
    resources = frozenset({"leases"})

    def admit(self, attrs: Attributes, lookup: ObjectLookup) -> Any:
        obj = dict(attrs.object or {})
        meta = dict(obj.get("metadata") or {})
        meta["labels"] = {"admitted": "yes"}
        return {**obj, "metadata": meta}


def make_registry(plugins: list[AdmissionPlugin] | None = None, validator: Any = None) -> Registry:
    counter = itertools.count()
    store = with_namespaces(
        MemoryStore(VirtualClock(), uid_factory=lambda: f"uid-{next(counter)}"), "kube-node-lease"
    )
    chain = AdmissionChain()
    chain.plugins = [*chain.plugins, *(plugins or [])]
    return Registry(store, admission=chain, validator=validator)


def other_validator(resource: str, obj: JSON, old: JSON | None) -> None:
    """kube-apiserver's validation, not recognisably so (the registry cannot trust it)."""
    errs = validate(obj, old=old)
    if errs:
        raise StatusError(422, "Invalid", "; ".join(f"{e.field}: {e.message}" for e in errs))


#: set-up: (registry) -> the batch, after renewing once through the registry (now trusted)
Setup = Callable[[Registry], list[JSON]]


def renewed_once(registry: Registry) -> list[JSON]:
    created = [registry.create(LEASES, lease(n)) for n in "abc"]
    stored, err = update_many(registry, LEASES, [with_field(obj, RENEW, stamp(1)) for obj in created])
    assert err is None
    return stored


def just_created(registry: Registry) -> list[JSON]:
    return [registry.create(LEASES, lease(n)) for n in "abc"]


def invalid_behind_the_back(registry: Registry) -> list[JSON]:
    a, b, c = renewed_once(registry)
    bad = registry.store.update(LEASES, with_field(b, ("spec", "leaseDurationSeconds"), 0))
    return [a, bad, c]


def valid_behind_the_back(registry: Registry) -> list[JSON]:
    a, b, c = renewed_once(registry)
    fine = registry.store.update(LEASES, with_field(b, ("spec", "leaseDurationSeconds"), 30))
    return [a, fine, c]


def stale(registry: Registry) -> list[JSON]:
    a, b, c = renewed_once(registry)
    registry.update(LEASES, with_field(b, ("spec", "holderIdentity"), "other"))
    return [a, b, c]


def deleted(registry: Registry) -> list[JSON]:
    a, b, c = renewed_once(registry)
    registry.delete(LEASES, NS, "b")
    return [a, b, c]


def without_type_meta(registry: Registry) -> list[JSON]:
    a, b, c = renewed_once(registry)
    return [a, {k: v for k, v in b.items() if k not in ("apiVersion", "kind")}, c]


def same_instant(registry: Registry) -> list[JSON]:
    a, b, c = renewed_once(registry)
    return [a, b, c]  # renewed to stamp(1) again below when the value is stamp(1)


SETUPS = [
    pytest.param(renewed_once, id="leases the registry stored and the store holds"),
    pytest.param(just_created, id="leases only created so far"),
    pytest.param(invalid_behind_the_back, id="a lease made invalid behind the registry's back"),
    pytest.param(valid_behind_the_back, id="a lease changed validly behind the registry's back"),
    pytest.param(stale, id="a lease someone else updated since: conflict"),
    pytest.param(deleted, id="a deleted lease: not found"),
    pytest.param(without_type_meta, id="a lease without apiVersion and kind"),
]
REGISTRIES = [
    pytest.param(make_registry, id="kubetaint's registry"),
    pytest.param(lambda: make_registry([LabelLeaseUpdates()]), id="a plugin acting on lease updates"),
    pytest.param(lambda: make_registry(validator=other_validator), id="another validator"),
]


def run(make: Callable[[], Registry], setup: Setup, fast: bool, value: str) -> tuple[Any, ...]:
    registry = make()
    objects = setup(registry)
    seen: list[WatchEvent] = []
    registry.subscribe(each_event(seen.append))
    if fast:
        stored, err = update_field_many(registry, LEASES, objects, RENEW, value)
    else:
        stored, err = update_many(registry, LEASES, [with_field(obj, RENEW, value) for obj in objects])
    # a second round from what the first stored: trust must have followed the first
    again, err2 = (
        update_field_many(registry, LEASES, stored, RENEW, stamp(3))
        if fast
        else update_many(registry, LEASES, [with_field(obj, RENEW, stamp(3)) for obj in stored])
    )
    errors = [None if e is None else (e.code, e.reason, e.message) for e in (err, err2)]
    events = [(e.type, e.resource_version, dumps(e.object), dumps(e.old_object)) for e in seen]
    return dumps(stored), dumps(again), errors, events, dumps(registry.list(LEASES).items)


def dumps(value: Any) -> str:
    return json.dumps(value)  # key order included


@pytest.mark.parametrize("make", REGISTRIES)
@pytest.mark.parametrize("setup", SETUPS)
@pytest.mark.parametrize("value", [stamp(2), stamp(1)], ids=["a later instant", "the same instant"])
def test_a_field_write_through_the_registry_is_update_many_of_the_copies(
    make: Callable[[], Registry], setup: Setup, value: str
) -> None:
    assert run(make, setup, True, value) == run(make, setup, False, value)


@pytest.fixture
def validated(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    check = APIValidator.__call__

    def spy(self: APIValidator, resource: str, obj: JSON, old: JSON | None) -> None:
        calls.append(obj["metadata"]["name"])
        check(self, resource, obj, old)

    monkeypatch.setattr(APIValidator, "__call__", spy)
    return calls


@pytest.mark.usefixtures("default_mode")
def test_trusted_renewals_are_written_without_validation_and_others_with(validated: list[str]) -> None:
    registry = make_registry()
    leases = renewed_once(registry)
    validated.clear()
    stored, err = update_field_many(registry, LEASES, leases, RENEW, stamp(2))
    assert err is None and validated == []
    registry.store.update(LEASES, with_field(stored[1], ("spec", "leaseDurationSeconds"), 30))
    current = [registry.get(LEASES, NS, n) for n in "abc"]
    update_field_many(registry, LEASES, current, RENEW, stamp(3))
    assert validated == ["b"], "the lease the registry did not store is validated, the others trusted"


def test_a_field_write_on_another_field_is_validated(validated: list[str]) -> None:
    registry = make_registry()
    leases = renewed_once(registry)
    validated.clear()
    stored, err = update_field_many(registry, LEASES, leases, ("spec", "leaseDurationSeconds"), 0)
    assert stored == [] and err is not None and err.code == 422 and validated == ["a"]
