"""`StoreBase`: what every Store shares around its one write method, `commit`.

`create`, `update` and `delete` are one-operation commits that raise the operation's StatusError
(`OneOperationWrites`, also for a store whose reads pass through to another); `list_keyed` lists
and keys each object; the declared capabilities default to off.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence

from kubetaint.api.errors import StatusError
from kubetaint.store.interface import (
    JSON,
    NO_CAPABILITIES,
    Capabilities,
    Create,
    Delete,
    ListResult,
    Result,
    Update,
    WriteOp,
    object_key,
    single_writes,
)


class OneOperationWrites:
    """`create`, `update` and `delete` as one-operation commits of `commit`."""

    def commit(self, ops: Sequence[WriteOp], *, stop_at_failure: bool = False) -> builtins.list[Result]:
        raise NotImplementedError

    def create(self, resource: str, obj: JSON, *, dry_run: bool = False) -> JSON:
        return only(self.commit((Create(resource, obj, dry_run),)))

    def update(self, resource: str, obj: JSON, *, dry_run: bool = False) -> JSON:
        return only(self.commit((Update(resource, obj, dry_run),)))

    def delete(
        self,
        resource: str,
        namespace: str,
        name: str,
        *,
        resource_version: str | None = None,
        uid: str | None = None,
        dry_run: bool = False,
        grace_period_seconds: int | None = None,
    ) -> JSON:
        op = Delete(resource, namespace, name, resource_version, uid, dry_run, grace_period_seconds)
        return only(self.commit((op,)))


class StoreBase(OneOperationWrites):
    """A store's shared methods; a backend implements `commit` and `list`."""

    #: See `Store.delivers_synchronously`.
    delivers_synchronously: bool = False
    #: See `Store.capabilities` (a backend offering more declares it in its constructor).
    capabilities: Capabilities = NO_CAPABILITIES

    def list(self, resource: str) -> ListResult:
        raise NotImplementedError

    def list_keyed(self, resource: str) -> tuple[builtins.list[tuple[tuple[str, str], JSON]], int]:
        listed = self.list(resource)
        return [(object_key(obj), obj) for obj in listed.items], int(listed.resource_version)


def only(results: builtins.list[Result]) -> JSON:
    """The one result of a one-operation commit, raised when it is an error."""
    result = results[0]
    if isinstance(result, StatusError):
        raise result
    return result


class ObjectByObject(StoreBase):
    """A backend that commits each object on its own (etcd, a remote API server): `commit` makes
    the writes one after another, each raising its StatusError."""

    def commit(self, ops: Sequence[WriteOp], *, stop_at_failure: bool = False) -> builtins.list[Result]:
        results: builtins.list[Result] = []
        for write in single_writes(ops):
            try:
                if type(write) is Create:
                    results.append(self._create(write.resource, write.object, write.dry_run))
                elif type(write) is Update:
                    results.append(self._update(write.resource, write.object, write.dry_run))
                else:
                    assert type(write) is Delete
                    results.append(self._delete(write))
            except StatusError as err:
                results.append(err)
                if stop_at_failure:
                    return results
        return results

    def _create(self, resource: str, obj: JSON, dry_run: bool) -> JSON:
        raise NotImplementedError

    def _update(self, resource: str, obj: JSON, dry_run: bool) -> JSON:
        raise NotImplementedError

    def _delete(self, op: Delete) -> JSON:
        raise NotImplementedError
