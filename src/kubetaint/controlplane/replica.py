"""One of several control-plane replicas on one store (`kubetaint up --leader-elect`): the
scheduler and kube-controller-manager's controllers run only while this replica holds their
Lease (kube-system/kube-scheduler, kube-system/kube-controller-manager), as kube-scheduler's and
kube-controller-manager's `Run` do with leader election enabled (cmd/kube-scheduler/app/server.go,
cmd/kube-controller-manager/app/controllermanager.go).

As upstream, a standby scheduler keeps its informers and queue warm and only its scheduling loop
waits for the Lease; controllers are built and started on acquiring it. Losing a Lease ends the
components (upstream's processes exit with "leaderelection lost"): `on_lost` is called and the
replica is expected to stop; on a normal stop `release()` hands both Leases back
(ReleaseOnCancel) so another replica takes over at once.
"""

from __future__ import annotations

import random
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from kubetaint.controlplane.controlplane import ControlPlane
from kubetaint.controlplane.leaderelection import (
    CONTROLLER_MANAGER_LEASE,
    LEASE_DURATION,
    RENEW_DEADLINE,
    RETRY_PERIOD,
    SCHEDULER_LEASE,
    ElectionConfig,
    LeaderElector,
)


def replica_identity(rng: random.Random) -> str:
    """`<hostname>_<uuid>`, the identity kube-scheduler and kube-controller-manager use."""
    return f"{socket.gethostname()}_{uuid.UUID(int=rng.getrandbits(128), version=4)}"


@dataclass(frozen=True)
class ReplicaElection:
    """This replica's identity and the --leader-elect-* durations (seconds)."""

    identity: str
    lease_duration: float = LEASE_DURATION
    renew_deadline: float = RENEW_DEADLINE
    retry_period: float = RETRY_PERIOD

    def config(self, lease: str) -> ElectionConfig:
        return ElectionConfig(
            name=lease,
            identity=self.identity,
            lease_duration=self.lease_duration,
            renew_deadline=self.renew_deadline,
            retry_period=self.retry_period,
        )

    def check(self) -> None:
        """ValueError with upstream's message when the durations are inconsistent."""
        self.config(SCHEDULER_LEASE).check()


class ElectedControlPlane:
    """Leader election for a `ControlPlane`'s scheduler and controllers (see the module docstring).

    Call `prepare()` before the plane starts (so it starts as a standby) and `start()` after."""

    def __init__(
        self,
        plane: ControlPlane,
        election: ReplicaElection,
        *,
        on_lost: Callable[[str], None],
        on_event: Callable[[str], None] = lambda line: None,
        rng: random.Random | None = None,
    ) -> None:
        election.check()
        self.plane = plane
        self._on_lost = on_lost
        self._on_event = on_event
        rng = rng or random.Random(0)
        self.electors = {
            lease: LeaderElector(
                plane.store,
                plane.clock,
                election.config(lease),
                on_started_leading=partial(self._started, lease),
                on_stopped_leading=partial(self._stopped, lease),
                on_new_leader=partial(self._new_leader, lease),
                rng=random.Random(rng.getrandbits(64)),
            )
            for lease in (SCHEDULER_LEASE, CONTROLLER_MANAGER_LEASE)
        }

    def prepare(self) -> None:
        """Make the plane start as a standby: no scheduling cycle, no controllers."""
        self.plane.run_controllers = False
        self.plane.scheduler_host.leading = False

    def start(self) -> None:
        for elector in self.electors.values():
            elector.start()

    def leading(self, lease: str) -> bool:
        return self.electors[lease].leader

    def _new_leader(self, lease: str, holder: str) -> None:
        self._on_event(f"{lease}: new leader elected: {holder}")

    def _started(self, lease: str) -> None:
        self._on_event(f"{lease}: started leading")
        if lease == SCHEDULER_LEASE:
            self.plane.scheduler_host.lead()
        else:
            self.plane.start_controllers()

    def _stopped(self, lease: str) -> None:
        self.plane.scheduler_host.leading = False
        self.plane.scheduler_host.stop()
        self._on_lost(f"{lease}: leaderelection lost")

    def release(self) -> None:
        """Stop campaigning and hand back the Leases held (ReleaseOnCancel)."""
        for elector in self.electors.values():
            elector.release()
