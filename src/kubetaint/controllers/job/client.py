"""The store a Job or CronJob controller writes through: a Store whose deletes take a propagation
policy (the registry's), as the Jobs they delete must take their pods with them."""

from __future__ import annotations

from typing import Protocol

from kubetaint.store.interface import JSON, Store


class PropagatingStore(Store, Protocol):
    """A Store whose delete takes kube-apiserver's `propagationPolicy`."""

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
        propagation_policy: str | None = None,
    ) -> JSON: ...
