"""`kubetaint controllers --kubeconfig PATH [--leader-elect=BOOL]`: kube-controller-manager's
taint-eviction and node-lifecycle controllers against any API server, leader-elected on the
kube-system/kube-controller-manager Lease."""

from __future__ import annotations

from typing import Any

import click

from kubetaint.cli.scheduler import election_options, run
from kubetaint.clock.base import Clock
from kubetaint.controllers.nodelifecycle import NodeLifecycleController
from kubetaint.controllers.tainteviction import TaintEvictionController
from kubetaint.controlplane.leaderelection import CONTROLLER_MANAGER_LEASE
from kubetaint.controlplane.leaderelection_host import Component
from kubetaint.registry import Registry
from kubetaint.store.events import EventRecorder
from kubetaint.store.informer import Informer
from kubetaint.store.remote import RemoteStore

LEASES = "leases.coordination.k8s.io"


class RemoteControllers:
    """The two controllers on shared informers, built and started when leading."""

    def __init__(self, store: RemoteStore, registry: Registry, clock: Clock) -> None:
        self.store, self.registry, self.clock = store, registry, clock
        self.informers: list[Informer] = []
        self.controllers: list[Any] = []

    def start(self) -> None:
        nodes, pods = Informer(self.store, "nodes"), Informer(self.store, "pods")
        leases = Informer(self.store, LEASES, namespace="kube-node-lease")
        self.informers = [nodes, pods, leases]
        self.controllers = [
            NodeLifecycleController(
                self.registry,
                self.clock,
                node_informer=nodes,
                pod_informer=pods,
                lease_informer=leases,
                recorder=EventRecorder(self.store, self.clock, "node-controller"),
            ),
            TaintEvictionController(
                self.registry,
                self.clock,
                pod_informer=pods,
                node_informer=nodes,
                recorder=EventRecorder(self.store, self.clock, "taint-eviction-controller"),
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


@click.command(
    epilog="""\b
Examples:
  kubetaint controllers --kubeconfig ./data/kubeconfig
  kubetaint controllers --kubeconfig prod.yaml --leader-elect=false
""",
)
@election_options
def controllers_command(**options: Any) -> None:
    """Run the taint-eviction and node-lifecycle controllers on the cluster of KUBECONFIG."""

    def build(store: RemoteStore, registry: Registry, clock: Clock) -> Component:
        return RemoteControllers(store, registry, clock)

    run(options, CONTROLLER_MANAGER_LEASE, build)
