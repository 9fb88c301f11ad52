"""A registry commit of field writes (`SetField`: lease renewals, node status posts): admitted and
validated as the updates of the `with_field` copies, except a heartbeat on objects this registry
stored, whose checks cannot fail (registry.heartbeats): that one is given to the store as it is,
and a heartbeat round's writes in one store commit."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kubetaint.api.errors import StatusError
from kubetaint.registry.heartbeats import HEARTBEAT_FIELDS
from kubetaint.store.interface import JSON, FieldPath, Result, SetField, until_failure, with_field

if TYPE_CHECKING:
    from kubetaint.registry.registry import Registry


def set_field(
    registry: Registry,
    resource: str,
    objects: list[JSON],
    path: FieldPath,
    value: object,
    *,
    stop_at_failure: bool,
) -> list[Result]:
    """A commit of one `SetField` through admission and validation, as the updates of the
    `with_field` copies.

    When the field is the resource's heartbeat field, its checks cannot fail
    (`kubetaint.registry.heartbeats`) and every object is one this registry stored, the store
    is given the field write as it is and the results are recorded as trusted; otherwise the
    copies are admitted and validated as updates."""
    results: list[Result] = []
    while True:
        stored, failure = _until_failure(registry, resource, objects, path, value)
        results.extend(stored)
        if failure is None:
            return results
        results.append(failure)
        objects = objects[len(stored) + 1 :]
        if stop_at_failure or not objects:
            return results


def set_fields(registry: Registry, ops: Sequence[SetField], stop_at_failure: bool) -> list[Result]:
    """A commit of several field writes (a heartbeat round's lease renewals and node status
    posts, in turn): one store commit when each is a heartbeat on objects this registry
    stored (as `_until_failure` finds for one; the objects of each resource checked together),
    else one after another."""
    by_resource: dict[str, list[JSON]] = {}  # each resource's objects, in turn
    for op in ops:
        resource = op.resource
        if HEARTBEAT_FIELDS.get(resource) != op.path:
            break
        objects = by_resource.get(resource)
        if objects is None:
            objects = by_resource[resource] = []
        objects.extend(op.objects)
    else:
        spaces: dict[str, frozenset[str]] = {}
        for resource, objects in by_resource.items():
            trusted = _trusted_namespaces(registry, resource, objects)
            if trusted is None:
                break
            spaces[resource] = trusted
        else:
            results = registry.store.commit(ops, stop_at_failure=stop_at_failure)
            _remember(registry, ops, results, by_resource, spaces)
            return results
    results = []
    for op in ops:
        written = set_field(
            registry, op.resource, op.objects, op.path, op.value, stop_at_failure=stop_at_failure
        )
        results.extend(written)
        if stop_at_failure and written and isinstance(written[-1], StatusError):
            break
    return results


def _trusted_namespaces(registry: Registry, resource: str, objects: list[JSON]) -> frozenset[str] | None:
    """The namespaces of `objects` when a heartbeat field write of them needs no admission nor
    validation, else None."""
    if not registry._trusts_heartbeats(resource):
        return None
    spaces = registry._heartbeats.batch_namespaces(resource, objects, registry._configuration())
    if spaces is None or not all(registry._namespace_admits(resource, ns) for ns in spaces):
        return None
    return spaces


def _remember(
    registry: Registry,
    ops: Sequence[SetField],
    results: list[Result],
    by_resource: dict[str, list[JSON]],
    spaces: dict[str, frozenset[str]],
) -> None:
    """Record the results of a commit of trusted heartbeat field writes (the objects of each
    resource `by_resource`, in `spaces`), each resource's together: kept as they are (the next
    round's batch) when every one of them was stored."""
    heartbeats = registry._heartbeats
    complete = len(results) == sum(map(len, by_resource.values())) and not any(
        isinstance(result, StatusError) for result in results
    )
    if complete and len(by_resource) == 1:
        (resource,) = by_resource
        heartbeats.remember_written(resource, results, spaces[resource])  # type: ignore[arg-type]
        return
    stored: dict[str, list[Result]] = {resource: [] for resource in by_resource}
    start = 0
    for op in ops:
        end = start + len(op.objects)
        stored[op.resource].extend(results[start:end])
        start = end
    for resource, written in stored.items():
        if complete:
            heartbeats.remember_written(resource, written, spaces[resource])  # type: ignore[arg-type]
        else:
            heartbeats.remember_results(resource, written)


def _until_failure(
    registry: Registry, resource: str, objects: list[JSON], path: FieldPath, value: object
) -> tuple[list[JSON], StatusError | None]:
    if HEARTBEAT_FIELDS.get(resource) == path and registry._trusts_heartbeats(resource):
        heartbeats = registry._heartbeats
        spaces = heartbeats.batch_namespaces(resource, objects, registry._configuration())
        if spaces is not None and all(registry._namespace_admits(resource, ns) for ns in spaces):
            results = registry.store.commit((SetField(resource, objects, path, value),), stop_at_failure=True)
            stored, failure = until_failure(results)
            heartbeats.remember_written(resource, stored, spaces)
            return stored, failure
    return registry._update_all(resource, [with_field(obj, path, value) for obj in objects])
