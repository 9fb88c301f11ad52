"""`kubetaint up` as one of several replicas on one store (etcd): `--leader-elect` runs the
scheduler and controllers only while this replica holds the kube-scheduler /
kube-controller-manager Lease (kube-scheduler's and kube-controller-manager's flags and
defaults), and `--no-kubelets` leaves the hollow kubelets to one other replica — kubelets are
per-node agents, never leader-elected upstream, so exactly one replica should run them.

Losing a Lease stops the replica with exit code 1 ("leaderelection lost"), as upstream's
components exit; SIGTERM/Ctrl-C hands the Leases back so another replica takes over at once.
"""

from __future__ import annotations

import random
import signal
import sys
from typing import Any

import click

from kubetaint.controlplane import ControlPlane
from kubetaint.controlplane.replica import ElectedControlPlane, ReplicaElection, replica_identity

__all__ = ["Replica", "ReplicaElection", "replica_election"]


def replica_election(options: dict[str, Any]) -> ReplicaElection | None:
    """The election `--leader-elect` asks for (exit 2 on inconsistent durations), else None."""
    if not options.get("leader_elect"):
        return None
    election = ReplicaElection(
        identity=replica_identity(random.SystemRandom()),
        lease_duration=float(options["leader_elect_lease_duration"]),
        renew_deadline=float(options["leader_elect_renew_deadline"]),
        retry_period=float(options["leader_elect_retry_period"]),
    )
    try:
        election.check()
    except ValueError as err:
        click.echo(f"error: invalid leader election configuration: {err}", err=True)
        sys.exit(2)
    return election


def _say(line: str) -> None:
    click.echo(line)
    sys.stdout.flush()


class Replica:
    """The replica side of one `up` run: prepare before the plane starts, start after."""

    def __init__(self, plane: ControlPlane, election: ReplicaElection | None, *, kubelets: bool) -> None:
        self.lost = ""
        plane.run_kubelets = kubelets
        self.elected = (
            None
            if election is None
            else ElectedControlPlane(
                plane, election, on_lost=self._lost, on_event=_say, rng=random.SystemRandom()
            )
        )
        if self.elected is not None:
            self.elected.prepare()

    def _lost(self, message: str) -> None:
        self.lost = message
        signal.raise_signal(signal.SIGTERM)  # the server stops as on SIGTERM, then exits 1

    def start(self) -> None:
        if self.elected is not None:
            self.elected.start()

    def release(self) -> None:
        if self.elected is not None and not self.lost:
            self.elected.release()
