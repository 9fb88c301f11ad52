"""`RequestStrategy`: what a request's resource strategy does that the registry runs between
mutating and validating admission, as kube-apiserver's generic store runs rest.BeforeCreate and
rest.BeforeUpdate after the mutating admission chain and before the validating one: the
strategy's PrepareForCreate / PrepareForUpdate, then its Validate / ValidateUpdate.

The API server passes one for the kinds whose strategy depends on more than the object (a
custom resource's: its CustomResourceDefinition's schema, subresources and version); the
registry's own steps cover the built-in kinds.
"""

from __future__ import annotations

from typing import Protocol

from kubetaint.admission import Attributes
from kubetaint.store.interface import JSON


class RequestStrategy(Protocol):
    """A resource strategy's steps for one request (create: `old` is None)."""

    def prepare(self, obj: JSON, old: JSON | None) -> JSON:
        """PrepareForCreate / PrepareForUpdate: the object to validate and store."""

    def validate(self, obj: JSON, old: JSON | None) -> None:
        """Validate / ValidateUpdate: raise a 422 `StatusError` when `obj` is invalid."""


class WriteCheck(Protocol):
    """A resource's storage check of creates and updates by a user, run after mutating admission
    and before validation (upstream's policy-based storage: pkg/registry/rbac/*/policybased)."""

    def check(self, attrs: Attributes) -> None:
        """Raise `StatusError` to refuse the write `attrs` describes."""
