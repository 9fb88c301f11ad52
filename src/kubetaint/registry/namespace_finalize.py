"""The namespace `finalize` subresource through the registry: spec.finalizers replaced, and the
namespace removed once none is left on a namespace being deleted."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubetaint.admission import UPDATE, Attributes
from kubetaint.api.user import UserInfo
from kubetaint.core import namespaces
from kubetaint.core.deletion import keep_deletion_fields
from kubetaint.registry.deletion import NAMESPACES
from kubetaint.registry.validator import with_type_meta
from kubetaint.store.interface import JSON, object_key
from kubetaint.store.mutation import check_update_preconditions

if TYPE_CHECKING:
    from kubetaint.registry.registry import Registry


def finalize_namespace(
    registry: Registry, obj: JSON, *, dry_run: bool = False, user: UserInfo | None = None
) -> JSON:
    """The namespace `finalize` subresource: `obj`'s spec.finalizers replace the stored ones
    (status stays); with none left on a namespace being deleted, the namespace is removed
    (kubetaint.core.namespaces)."""
    obj = with_type_meta(NAMESPACES, obj)
    _, name = object_key(obj)
    old = registry.store.get(NAMESPACES, "", name)
    check_update_preconditions(NAMESPACES, obj, old)
    obj = keep_deletion_fields(namespaces.prepare_for_finalize(obj, old), old)
    server = registry.store.capabilities.finalizes_namespaces
    if server is not None:  # the server applies its own finalize
        return server.finalize_namespace(obj, dry_run=dry_run)
    attrs = Attributes(UPDATE, NAMESPACES, obj, old, "", name, "finalize", dry_run, user)
    admitted = registry._admit(attrs, old)
    if namespaces.should_delete_during_update(admitted, old):
        uid = str((old.get("metadata") or {}).get("uid") or "") or None
        return registry.store.delete(NAMESPACES, "", name, uid=uid, dry_run=dry_run)
    return registry.store.update(NAMESPACES, admitted, dry_run=dry_run)
