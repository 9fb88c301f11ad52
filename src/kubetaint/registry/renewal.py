"""Lease renewals the registry need not admit and validate again.

A kubelet renews its node Lease every 10 s by writing the lease it last wrote with only
spec.renewTime moved. kube-apiserver admits and validates every such update; here, when the
lease being replaced is the very object this registry admitted, validated and stored (identity,
not equality: nobody else wrote it since), and the update differs from it only in renewTime,
the outcome is known: no admission plugin in the chain acts on leases (checked per batch), and
ValidateLease (pkg/apis/coordination/validation) reads the object metadata, which the renewal
carries unchanged, and leaseDurationSeconds/leaseTransitions/strategy/preferredHolder, never
renewTime. So the renewal is stored as the generic path would store it, with its own
resourceVersion and watch event; only the checks that cannot fail are skipped.
"""

from __future__ import annotations

from kubetaint.store.interface import JSON, object_key

#: The resource whose renewals are recognised, and the one field a renewal changes.
RENEWABLE = "leases.coordination.k8s.io"
RENEWED_FIELD = "renewTime"


def is_renewal(obj: JSON, old: JSON) -> bool:
    """Whether `obj` is `old` with only spec.renewTime set (or moved), carrying old's own
    metadata object (so its preconditions are old's)."""
    old_meta = old.get("metadata")
    if old_meta is None or obj.get("metadata") is not old_meta or obj.keys() != old.keys():
        return False
    for key, value in obj.items():
        if key != "spec" and value is not old[key] and value != old[key]:
            return False
    spec, old_spec = obj.get("spec"), old.get("spec")
    if type(spec) is not dict or type(old_spec) is not dict:
        return False
    for key, value in spec.items():
        if key != RENEWED_FIELD and (key not in old_spec or old_spec[key] != value):
            return False
    return len(spec) - (RENEWED_FIELD in spec) == len(old_spec) - (RENEWED_FIELD in old_spec)


class RenewalTrust:
    """The leases a registry admitted, validated and stored, as the store returned them."""

    def __init__(self) -> None:
        self._valid: dict[tuple[str, str], JSON] = {}

    def remember(self, resource: str, stored: JSON) -> None:
        """`stored` passed admission and validation (the store's result of that write)."""
        if resource == RENEWABLE:
            self._valid[object_key(stored)] = stored

    def remember_all(self, resource: str, keys: list[tuple[str, str]], stored: list[JSON]) -> None:
        """`stored` (the store's results of a batch, as far as it got) passed admission and
        validation; `keys` are the batch's (namespace, name) pairs, in order."""
        if resource == RENEWABLE:
            self._valid.update(zip(keys, stored, strict=False))

    def renews_valid(self, resource: str, key: tuple[str, str], obj: JSON, old: JSON) -> bool:
        """Whether `obj` (stored under `key`) renews `old`, a lease this registry validated."""
        return resource == RENEWABLE and self._valid.get(key) is old and is_renewal(obj, old)

    def __len__(self) -> int:
        return len(self._valid)
