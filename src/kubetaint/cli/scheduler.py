"""`kubetaint scheduler --kubeconfig PATH [--scheduler-name NAME] [--leader-elect=BOOL]`:
kube-scheduler against any API server — schedules the pods whose spec.schedulerName names it,
binding them through pods/binding, leader-elected on the kube-system/kube-scheduler Lease."""

from __future__ import annotations

import asyncio
import logging
import random
import socket
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from kubetaint.api.version import KUBERNETES_VERSION
from kubetaint.clock.base import Clock
from kubetaint.controlplane.leaderelection import (
    LEASE_DURATION,
    RENEW_DEADLINE,
    RETRY_PERIOD,
    SCHEDULER_LEASE,
    ElectionConfig,
)
from kubetaint.controlplane.leaderelection_host import Builder, Component, run_component
from kubetaint.controlplane.schedhost import SchedulerHost
from kubetaint.registry import Registry
from kubetaint.scheduler.config import ConfigError
from kubetaint.scheduler.scheduler import Scheduler
from kubetaint.store.events import EventRecorder
from kubetaint.store.informer import Informer
from kubetaint.store.interface import StoreError
from kubetaint.store.remote import RemoteStore
from kubetaint.store.remote_config import load_kubeconfig

DEFAULT_SCHEDULER_NAME = "default-scheduler"


def election_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--kubeconfig, --context and kube-scheduler's --leader-elect* flags."""
    options = [
        click.option(
            "--kubeconfig",
            type=click.Path(dir_okay=False, path_type=Path),
            required=True,
            help="The API server to run against.",
        ),
        click.option("--context", default=None, help="Kubeconfig context (default: current-context)."),
        click.option("--leader-elect", type=click.BOOL, default=True, show_default=True),
        click.option("--leader-elect-lease-duration", type=click.FloatRange(min=1), default=LEASE_DURATION),
        click.option("--leader-elect-renew-deadline", type=click.FloatRange(min=1), default=RENEW_DEADLINE),
        click.option("--leader-elect-retry-period", type=click.FloatRange(min=0.01), default=RETRY_PERIOD),
        click.option("--leader-elect-resource-name", default=None, help="The Lease's name."),
        click.option("--leader-elect-resource-namespace", default="kube-system", show_default=True),
        click.option("-v", "--verbose", is_flag=True, help="Log leader election and writes."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def run(options: dict[str, Any], lease: str, build: Builder) -> None:
    """Connect, elect (unless --leader-elect=false), run `build`'s component until a signal."""
    logging.basicConfig(level=logging.INFO if options["verbose"] else logging.WARNING)
    try:
        connection = load_kubeconfig(options["kubeconfig"], options["context"])
    except StoreError as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(1)
    election = None
    if options["leader_elect"]:
        election = ElectionConfig(
            name=options["leader_elect_resource_name"] or lease,
            namespace=options["leader_elect_resource_namespace"],
            identity=f"{socket.gethostname()}_{uuid.uuid4()}",
            lease_duration=options["leader_elect_lease_duration"],
            renew_deadline=options["leader_elect_renew_deadline"],
            retry_period=options["leader_elect_retry_period"],
        )
        try:
            election.check()
        except ValueError as err:
            click.echo(f"error: invalid leader election configuration: {err}", err=True)
            sys.exit(2)

    def say(line: str) -> None:
        click.echo(line)
        sys.stdout.flush()

    # kube-scheduler's client-go User-Agent: the API server records its writes as `kube-scheduler`
    agent = f"kube-scheduler/{KUBERNETES_VERSION} (linux/amd64) kubetaint"
    outcome = asyncio.run(run_component(connection, build, election, on_event=say, user_agent=agent))
    if outcome.code:
        click.echo(f"error: {outcome.message}", err=True)
    sys.exit(outcome.code)


class RemoteScheduler:
    """A SchedulerHost on its own informers, started when leading."""

    def __init__(self, store: RemoteStore, registry: Registry, clock: Clock, scheduler_name: str) -> None:
        self.informers = [Informer(store, r) for r in ("nodes", "pods", "poddisruptionbudgets.policy")]
        config = {"profiles": [{"schedulerName": scheduler_name}]}
        rng = random.Random(random.SystemRandom().getrandbits(64))
        self.host = SchedulerHost(
            registry,
            clock,
            lambda on_active: Scheduler(clock, rng, config=config, on_active=on_active),
            nodes=self.informers[0],
            pods=self.informers[1],
            pdbs=self.informers[2],
            recorder=EventRecorder(store, clock, scheduler_name),
        )

    def start(self) -> None:
        for informer in self.informers:
            informer.start()

    def stop(self) -> None:
        for informer in self.informers:
            informer.stop()
        self.host.stop()


@click.command(
    epilog="""\b
Examples:
  kubetaint scheduler --kubeconfig ./data/kubeconfig
  kubetaint scheduler --kubeconfig prod.yaml --scheduler-name taint-aware --leader-elect=false
""",
)
@election_options
@click.option("--scheduler-name", default=DEFAULT_SCHEDULER_NAME, show_default=True)
def scheduler_command(**options: Any) -> None:
    """Schedule the pods whose spec.schedulerName is --scheduler-name on the cluster of KUBECONFIG."""
    name = str(options["scheduler_name"])

    def build(store: RemoteStore, registry: Registry, clock: Clock) -> Component:
        return RemoteScheduler(store, registry, clock, name)

    try:
        Scheduler(_NoClock(), config={"profiles": [{"schedulerName": name}]})
    except ConfigError as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(2)
    run(options, SCHEDULER_LEASE, build)


class _NoClock:
    """Only for checking the configuration before connecting."""

    def now(self) -> float:
        return 0.0

    def call_at(self, when: float, callback: Any, *, priority: int = 0) -> Any:
        raise NotImplementedError

    def call_later(self, delay: float, callback: Any, *, priority: int = 0) -> Any:
        raise NotImplementedError

    def call_soon(self, callback: Any, *, priority: int = 0) -> Any:
        raise NotImplementedError
