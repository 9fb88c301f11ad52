"""The node lease a kubelet renews: `kube-node-lease/<node>` (coordination.k8s.io/v1 Lease)
with holderIdentity = node, leaseDurationSeconds 40 and renewTime (MicroTime) = now, owned by the
Node. Mirrors pkg/kubelet/nodelease and component-helpers/apimachinery/lease/controller.go: it
updates the lease it last wrote (resourceVersion precondition) and reads the store again only
after a conflict or when the lease is missing (then it is created).
"""

from __future__ import annotations

import logging

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import format_micro_time
from kubetaint.store.interface import JSON, Store

LEASE_RESOURCE = "leases.coordination.k8s.io"
LEASE_NAMESPACE = "kube-node-lease"
#: the field a renewal moves (a kubetaint.store.interface.FieldPath)
RENEW_TIME = ("spec", "renewTime")
log = logging.getLogger(__name__)


class NodeLease:
    """Renews one node's Lease through a store."""

    def __init__(self, store: Store, node_name: str, duration_seconds: int = 40) -> None:
        self.store = store
        self.name = node_name
        self.duration_seconds = duration_seconds
        self._lease: JSON | None = None
        #: `_lease` is ours (holder and duration as this kubelet writes them): renewing it moves
        #: only spec.renewTime
        self._plain = False
        #: `renewable()`, kept as an attribute: a pool asks every 10 s for each of thousands of nodes
        self.renewable_lease: JSON | None = None

    def renewable(self) -> JSON | None:
        """The lease last written when renewing it moves only its spec.renewTime (a pool then
        writes many in one `SetField` commit and reports back with
        `renewed_in_place`), else None (`renewal` then says what to write)."""
        return self._lease if self._plain else None

    def renewal(self, now: float) -> JSON | None:
        """The update that renews the lease last written (None when it must be read first):
        `renew` writes it; a pool writes many at once and reports back with `renewed`/`failed`."""
        lease = self._lease
        if lease is None:
            return None
        return self._renewed_copy(lease, format_micro_time(now))

    def _is_plain(self, lease: JSON | None) -> bool:
        """Whether renewing `lease` moves only its renewTime: a spec object with this node as the
        holder and this kubelet's duration."""
        spec = lease.get("spec") if lease is not None else None
        if type(spec) is not dict:
            return False
        held = spec.get("holderIdentity")
        duration = spec.get("leaseDurationSeconds")
        return (
            type(held) is str
            and held == self.name
            and type(duration) is int
            and duration == self.duration_seconds
        )

    def _renewed_copy(self, lease: JSON, renew: str) -> JSON:
        spec: JSON = lease.get("spec") or {}
        if self._is_plain(lease):
            # the usual renewal of our own lease: only renewTime moves (same keys, same order)
            return {**lease, "spec": {**spec, "renewTime": renew}}
        spec = {
            **spec,
            "holderIdentity": self.name,
            "leaseDurationSeconds": self.duration_seconds,
            "renewTime": renew,
        }
        return {**lease, "spec": spec}

    def renewed(self, stored: JSON | None) -> None:
        """`stored` is the lease as last written (None: unknown, read it before the next renewal)."""
        self._lease = stored
        self._plain = self._is_plain(stored)
        self.renewable_lease = stored if self._plain else None

    def renewed_in_place(self, stored: JSON) -> None:
        """`stored` is the result of renewing the `renewable` lease (so it is plain still)."""
        self._lease = self.renewable_lease = stored

    def failed(self, err: StatusError, now: float) -> bool:
        """The `renewal` write failed: as `renew` does after a failed first attempt, read the lease
        again (or create it) and retry once. True when that succeeded."""
        log.info("node %s: lease renewal failed: %s", self.name, err.message)
        self.renewed(None)
        return self.renew(now, attempts=1)

    def renew(self, now: float, attempts: int = 2) -> bool:
        """Set renewTime to `now`; True when the write succeeded."""
        renew = format_micro_time(now)
        lease = self._lease
        for _ in range(attempts):
            if lease is None:
                try:
                    lease = self.store.get(LEASE_RESOURCE, LEASE_NAMESPACE, self.name)
                except StatusError:
                    self.renewed(self._create(renew))
                    return self._lease is not None
            try:
                self.renewed(self.store.update(LEASE_RESOURCE, self._renewed_copy(lease, renew)))
                return True
            except StatusError as err:
                log.info("node %s: lease renewal failed: %s", self.name, err.message)
                self.renewed(None)
                lease = None
        return False

    def _create(self, renew: str) -> JSON | None:
        """A missing lease is created, owned by the Node (no lease without its node)."""
        try:
            node = self.store.get("nodes", "", self.name)
        except StatusError:
            return None
        lease: JSON = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": self.name,
                "namespace": LEASE_NAMESPACE,
                "ownerReferences": [
                    {
                        "apiVersion": "v1",
                        "kind": "Node",
                        "name": self.name,
                        "uid": node["metadata"].get("uid", ""),
                    }
                ],
            },
            "spec": {
                "holderIdentity": self.name,
                "leaseDurationSeconds": self.duration_seconds,
                "renewTime": renew,
            },
        }
        try:
            return self.store.create(LEASE_RESOURCE, lease)
        except StatusError as err:
            log.info("node %s: lease creation failed: %s", self.name, err.message)
            return None
