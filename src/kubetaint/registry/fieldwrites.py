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
        if all(_trusted(registry, resource, objects) for resource, objects in by_resource.items()):
            results = registry.store.commit(ops, stop_at_failure=stop_at_failure)
            _remember(registry, ops, results)
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


def _trusted(registry: Registry, resource: str, objects: list[JSON]) -> bool:
    """Whether a heartbeat field write of `objects` needs no admission nor validation."""
    if not registry._trusts_heartbeats(resource):
        return False
    spaces = registry._heartbeats.batch_namespaces(resource, objects, registry._configuration())
    return spaces is not None and all(registry._namespace_admits(resource, ns) for ns in spaces)


def _remember(registry: Registry, ops: Sequence[SetField], results: list[Result]) -> None:
    """Record the results of a commit of trusted heartbeat field writes, each resource's together:
    kept as they are (the next round's batch) when every one of them was stored."""
    heartbeats = registry._heartbeats
    stored: dict[str, list[Result]] = {}
    start = 0
    for op in ops:
        end = start + len(op.objects)
        mine = stored.get(op.resource)
        if mine is None:
            mine = stored[op.resource] = []
        mine.extend(results[start:end])
        start = end
    for resource, written in stored.items():
        if any(type(obj) is not dict for obj in written) or len(written) < sum(
            len(op.objects) for op in ops if op.resource == resource
        ):
            heartbeats.remember_results(resource, written)
        else:
            heartbeats.remember_written(
                resource,
                written,  # type: ignore[arg-type]  # (stored objects only)
                frozenset(obj["metadata"].get("namespace") or "" for obj in written),  # type: ignore[index]
            )


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
