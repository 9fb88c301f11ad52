"""kube-scheduler and kube-controller-manager's taint controllers against a remote API server
(what `kubetaint scheduler` and `kubetaint controllers` run): connect through a kubeconfig, elect
on their Lease unless told not to, and run the component on its own informers until a signal."""

from __future__ import annotations

import asyncio
import logging
import random
import socket
import sys
import uuid
from typing import Any

import click

from kubetaint.api.version import KUBERNETES_VERSION
from kubetaint.clock.base import Clock
from kubetaint.clock.virtual import VirtualClock
from kubetaint.controllers.nodelifecycle import NodeLifecycleController
from kubetaint.controllers.tainteviction import TaintEvictionController
from kubetaint.controlplane.leaderelection import (
    CONTROLLER_MANAGER_LEASE,
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
from kubetaint.store.remote_events import EventBroadcasterAdapter


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


def _process_rng() -> random.Random:
    """A generator of this process's own (the jitter of a remote component's retries)."""
    return random.Random(random.SystemRandom().getrandbits(64))


class RemoteScheduler:
    """A SchedulerHost on its own informers, started when leading; its events recorded as
    kube-scheduler's EventBroadcasterAdapter records them (events.k8s.io/v1 when served)."""

    def __init__(self, store: RemoteStore, registry: Registry, clock: Clock, scheduler_name: str) -> None:
        self.informers = [Informer(store, r) for r in ("nodes", "pods", "poddisruptionbudgets.policy")]
        config = {"profiles": [{"schedulerName": scheduler_name}]}
        rng = _process_rng()
        self.events = EventBroadcasterAdapter(store, clock, _process_rng())
        self.host = SchedulerHost(
            registry,
            clock,
            lambda on_active: Scheduler(clock, rng, config=config, on_active=on_active),
            nodes=self.informers[0],
            pods=self.informers[1],
            pdbs=self.informers[2],
            recorder=self.events.new_recorder(scheduler_name),
        )

    def start(self) -> None:
        self.events.start()
        for informer in self.informers:
            informer.start()

    def stop(self) -> None:
        for informer in self.informers:
            informer.stop()
        self.host.stop()
        self.events.stop()


LEASES = "leases.coordination.k8s.io"


class RemoteControllers:
    """The two controllers on shared informers, built and started when leading."""

    def __init__(self, store: RemoteStore, registry: Registry, clock: Clock) -> None:
        self.store, self.registry, self.clock = store, registry, clock
        self.informers: list[Informer] = []
        self.controllers: list[Any] = []
        self.recorders: list[EventRecorder] = []

    def start(self) -> None:
        nodes, pods = Informer(self.store, "nodes"), Informer(self.store, "pods")
        leases = Informer(self.store, LEASES, namespace="kube-node-lease")
        self.informers = [nodes, pods, leases]
        self.recorders = [
            EventRecorder(self.store, self.clock, component, rng=_process_rng())
            for component in ("node-controller", "taint-eviction-controller")
        ]
        self.controllers = [
            NodeLifecycleController(
                self.registry,
                self.clock,
                node_informer=nodes,
                pod_informer=pods,
                lease_informer=leases,
                recorder=self.recorders[0],
            ),
            TaintEvictionController(
                self.registry,
                self.clock,
                pod_informer=pods,
                node_informer=nodes,
                recorder=self.recorders[1],
            ),
        ]
        for controller in self.controllers:
            controller.start()
        for informer in self.informers:
            informer.start()

    def stop(self) -> None:
        for informer in self.informers:
            informer.stop()
        for controller in self.controllers:
            controller.stop()
        for recorder in self.recorders:
            recorder.stop()


def run_scheduler(options: dict[str, Any]) -> None:
    """`kubetaint scheduler`: check the scheduler name (exit 2), then run until a signal."""
    name = str(options["scheduler_name"])

    def build(store: RemoteStore, registry: Registry, clock: Clock) -> Component:
        return RemoteScheduler(store, registry, clock, name)

    try:
        Scheduler(VirtualClock(), config={"profiles": [{"schedulerName": name}]})  # the check alone
    except ConfigError as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(2)
    run(options, SCHEDULER_LEASE, build)


def run_controllers(options: dict[str, Any]) -> None:
    """`kubetaint controllers`: run the two controllers until a signal."""
    run(options, CONTROLLER_MANAGER_LEASE, RemoteControllers)
