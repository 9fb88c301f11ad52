"""Batch writes as tests spell them, each one `Store.commit` (the store's one write method)."""

from __future__ import annotations

from kubetaint.api.errors import StatusError
from kubetaint.store.interface import (
    JSON,
    Create,
    FieldPath,
    Result,
    SetField,
    Store,
    Update,
    until_failure,
)


def update_many(store: Store, resource: str, objects: list[JSON]) -> tuple[list[JSON], StatusError | None]:
    """One commit of the updates of `objects`, stopping at the first failure."""
    return until_failure(store.commit([Update(resource, obj) for obj in objects], stop_at_failure=True))


def update_each(store: Store, resource: str, objects: list[JSON]) -> list[Result]:
    """One commit of the updates of `objects`, each its own result."""
    return store.commit([Update(resource, obj) for obj in objects])


def create_many(store: Store, resource: str, objects: list[JSON]) -> tuple[list[JSON], StatusError | None]:
    """One commit of the creates of `objects`, stopping at the first failure."""
    return until_failure(store.commit([Create(resource, obj) for obj in objects], stop_at_failure=True))


def update_field_many(
    store: Store, resource: str, objects: list[JSON], path: FieldPath, value: object
) -> tuple[list[JSON], StatusError | None]:
    """One commit of a field write, stopping at the first failure."""
    return until_failure(store.commit((SetField(resource, objects, path, value),), stop_at_failure=True))
