"""Heartbeat writes the registry need not admit and validate again.

Every 10 s each kubelet renews its node Lease (the lease it last wrote with spec.renewTime
moved), and every few minutes it posts its node status (the node it read with
status.conditions' heartbeat times moved). kube-apiserver admits and validates every such update.
Here, when the object being replaced is at the resourceVersion this registry admitted, validated
and stored it at, under the same configuration (`registry.trust.Configuration`: nobody wrote it
since), and the update carries that object's metadata and differs from it only in the heartbeat
field, the outcome is known:

- no admission plugin acts on updates of the resource (`Configuration.trusts_heartbeats`);
- kube-apiserver's validation never reads the heartbeat field: ValidateLease
  (pkg/apis/coordination/validation) checks the metadata, leaseDurationSeconds,
  leaseTransitions, strategy and preferredHolder, not renewTime; ValidateNode checks the
  metadata, taints and status quantities, not conditions. The rest is what passed before.

So the write is stored as the generic path would store it, with its own resourceVersion and
watch event; only checks that cannot fail are skipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kubetaint.api.errors import StatusError
from kubetaint.registry.podtrust import same_version
from kubetaint.store.interface import JSON

if TYPE_CHECKING:
    from kubetaint.registry.trust import Configuration

#: resource -> (part, field): the one field a heartbeat write changes.
HEARTBEAT_FIELDS: dict[str, tuple[str, str]] = {
    "leases.coordination.k8s.io": ("spec", "renewTime"),
    "nodes": ("status", "conditions"),
}


def is_heartbeat(resource: str, obj: JSON, old: JSON) -> bool:
    """Whether `obj` is `old` with only the heartbeat field of `resource` set (or changed),
    carrying old's metadata (so its preconditions are old's)."""
    part_field = HEARTBEAT_FIELDS.get(resource)
    if part_field is None:
        return False
    part, field = part_field
    old_meta, meta = old.get("metadata"), obj.get("metadata")
    if old_meta is None or (meta is not old_meta and meta != old_meta):
        return False
    new_part, old_part = obj.get(part), old.get(part)
    if type(new_part) is not dict or type(old_part) is not dict or field not in new_part:
        return False
    # compared in C: the part with old's field replaced, then the object with old's part replaced
    return {**old_part, field: new_part[field]} == new_part and {**old, part: new_part} == obj


class HeartbeatTrust:
    """The heartbeat objects a registry admitted, validated and stored, as the store returned them
    (at the resourceVersion they were stored at), with their type meta (apiVersion and kind:
    `with_type_meta` would not copy them), for the configuration they passed.

    Speeds up a round of lease renewals: the results of the last heartbeat field write are kept
    as one list (`batch_namespaces` trusts a batch equal to it with one list comparison, and
    `remember_written` keeps the round's results as they are), entered key by key only when
    something else asks. Off with the registry's reference mode (nothing is trusted)."""

    def __init__(self) -> None:
        self._valid: dict[str, dict[tuple[str, str], JSON]] = {r: {} for r in HEARTBEAT_FIELDS}
        #: per resource, the results of the last heartbeat field write not yet in `_valid`, with
        #: their namespaces
        self._last: dict[str, tuple[list[JSON], frozenset[str]]] = {}
        self._config: Configuration | None = None

    def _under(self, config: Configuration) -> None:
        """Void what was recorded under another configuration."""
        if self._config is not config:
            for valid in self._valid.values():
                valid.clear()
            self._last.clear()
            self._config = config

    def _settled(self, resource: str) -> dict[tuple[str, str], JSON] | None:
        """The trusted objects of `resource` by key (None: not a heartbeat resource), the last
        field write's results entered."""
        valid = self._valid.get(resource)
        last = self._last.pop(resource, None)
        if last is not None and valid is not None:
            for obj in last[0]:
                meta = obj["metadata"]
                valid[meta.get("namespace") or "", meta["name"]] = obj
        return valid

    def remember(self, resource: str, key: tuple[str, str], stored: JSON, config: Configuration) -> None:
        """`stored` (the store's result of a write under `key`) passed admission and validation."""
        valid = self._settled(resource)
        if valid is not None:
            self._under(config)
            if _typed(stored):
                valid[key] = stored
            else:
                valid.pop(key, None)

    def remember_all(
        self, resource: str, keys: list[tuple[str, str]], stored: list[JSON], config: Configuration
    ) -> None:
        """`stored` (the store's results of a batch, as far as it got) passed admission and
        validation; `keys` are the batch's (namespace, name) pairs, in order."""
        valid = self._settled(resource)
        if valid is not None:
            self._under(config)
            for key, obj in zip(keys, stored, strict=False):
                if _typed(obj):
                    valid[key] = obj
                else:
                    valid.pop(key, None)

    def batch_namespaces(
        self, resource: str, objects: list[JSON], config: Configuration
    ) -> frozenset[str] | None:
        """The namespaces of `objects` when each is (equal to) an object this registry validated
        and stored under its key, under `config` (so a heartbeat field write on them needs no
        admission nor validation: the store's resourceVersion precondition tells that each is
        current); None when one is not. The usual round renews the results of the last one: they
        are compared as one list."""
        if self._config is not config:
            return None
        last = self._last.get(resource)
        if last is not None and last[0] == objects:
            return last[1]
        valid = self._settled(resource)
        if valid is None:
            return None
        trusted = valid.get
        spaces: set[str] = set()
        for obj in objects:
            meta = obj.get("metadata")
            if type(meta) is not dict:
                return None
            namespace = meta.get("namespace") or ""
            known = trusted((namespace, meta.get("name") or ""))
            if known is None or (known is not obj and known != obj):
                return None
            spaces.add(namespace)
        return frozenset(spaces)

    def remember_written(self, resource: str, stored: list[JSON], namespaces: frozenset[str]) -> None:
        """`stored`, a heartbeat field write's results on trusted objects in `namespaces`, passed
        what those did: kept as they are, the next round's batch."""
        if resource not in self._valid:
            return
        last = self._last.get(resource)
        if last is not None and len(last[0]) != len(stored):
            self._settled(resource)  # (a write cut short: the objects it did not reach stay trusted)
        self._last[resource] = (stored, namespaces)

    def remember_results(self, resource: str, results: Sequence[JSON | StatusError]) -> None:
        """`results`, a heartbeat field write's on trusted objects (among other writes of one
        commit), passed what those did: each stored object is trusted under its key."""
        valid = self._settled(resource)
        if valid is None:
            return
        for obj in results:
            if type(obj) is dict and _typed(obj):
                meta = obj["metadata"]
                valid[meta.get("namespace") or "", meta["name"]] = obj

    def forget(self, resource: str, key: tuple[str, str]) -> None:
        """The object under `key` is being deleted: nothing to remember about it any more."""
        valid = self._settled(resource)
        if valid is not None:
            valid.pop(key, None)

    def beats_valid(
        self, resource: str, key: tuple[str, str], obj: JSON, old: JSON, config: Configuration
    ) -> bool:
        """Whether `obj` (stored under `key`) is a heartbeat on `old`, the object at the
        resourceVersion this registry validated under `config`."""
        valid = self._settled(resource)
        if valid is None or self._config is not config:
            return False
        known = valid.get(key)
        return known is not None and same_version(known, old) and is_heartbeat(resource, obj, old)

    def __len__(self) -> int:
        return sum(len(self._settled(resource) or ()) for resource in self._valid)


def _typed(obj: JSON) -> bool:
    """Whether `obj` carries its type meta (an admission plugin may have dropped it)."""
    return bool(obj.get("apiVersion")) and bool(obj.get("kind"))
