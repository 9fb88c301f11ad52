"""`ControlPlane`: the one wiring of kube-apiserver's write path (admission + validation through a
Registry), kube-scheduler, kube-controller-manager's controllers and the hollow kubelets, on one
store and one injected clock, every component fed by shared informers (one cache per resource).

The simulator (`kubetaint.sim.cluster.Cluster`) and `kubetaint up` both build exactly this; they differ
only in the clock (virtual or real), the store and where objects come from.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

from kubetaint.admission import AdmissionChain, AdmissionSettings
from kubetaint.admission.settings import SettingsError as AdmissionSettingsError
from kubetaint.api.errors import StatusError
from kubetaint.api.features import FeatureGates
from kubetaint.clock.base import Clock, format_time
from kubetaint.controlplane.errors import ControlPlaneError
from kubetaint.controlplane.fleet import NodeFleet
from kubetaint.controlplane.schedhost import STORAGE_RESOURCES, SchedulerHost
from kubetaint.controlplane.settings import ControlPlaneSettings
from kubetaint.controlplane.wiring import Controller, start_controllers
from kubetaint.registry import Registry, StoreLookup, api_validator
from kubetaint.registry.managedfields import (
    KUBE_APISERVER,
    KUBE_CONTROLLER_MANAGER,
    KUBE_SCHEDULER,
    KUBELET,
    ManagerWrites,
    record_create,
)
from kubetaint.scheduler.config import ConfigError
from kubetaint.scheduler.scheduler import Scheduler
from kubetaint.store.eventseries import EventsV1Broadcaster, StoreSink
from kubetaint.store.informer import Informer
from kubetaint.store.interface import JSON, Store

#: The namespaces kube-apiserver creates at start-up (the system namespaces controller).
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def admission_chain(store: Store, settings: Mapping[str, Any], feature_gates: FeatureGates) -> AdmissionChain:
    """kube-apiserver's admission plugins configured from the admission settings."""
    try:
        admission_settings = AdmissionSettings.from_dict({**settings, "featureGates": dict(feature_gates)})
        return AdmissionChain(admission_settings, StoreLookup(store))
    except (AdmissionSettingsError, TypeError) as err:
        raise ControlPlaneError(str(err)) from None


def _system_namespace_managed_fields(namespace: JSON, now: str) -> JSON:
    """The system namespace with kube-apiserver's entry: its system namespaces controller creates
    it by name, decoding defaults the name label (SetDefaults_Namespace) and the create strategy
    adds the `kubernetes` finalizer and the phase (owned by no one)."""
    requested = {k: v for k, v in namespace.items() if k not in ("spec", "status")}
    recorded = record_create(requested, "namespaces", KUBE_APISERVER, now)
    return {**namespace, "metadata": recorded["metadata"]}


class ControlPlane:
    """Registry, scheduler host, controllers and hollow-node fleet over one store and clock.

    `rng` (or a `seed`) draws, in this order, the registry's generateName suffixes, the
    scheduler's tie-breaks and the controllers' randomness, so a seed reproduces a run.
    Construction wires everything; `start()` lists the store once per informer and starts the
    controllers and kubelets; `stop()` unsubscribes and cancels their timers.
    """

    def __init__(
        self,
        store: Store,
        clock: Clock,
        *,
        settings: ControlPlaneSettings | None = None,
        feature_gates: FeatureGates | None = None,
        seed: int | None = None,
        rng: random.Random | None = None,
        graceful_deletion: bool = False,
        kubelet_stores: Callable[[Store], Callable[[str], Store]] | None = None,
        managed_fields: bool = False,
        container_events: bool = False,
    ) -> None:
        self.store = store
        self.clock = clock
        self.settings = settings or ControlPlaneSettings()
        self.feature_gates: FeatureGates = dict(feature_gates or {})
        root = rng if rng is not None else random.Random(seed)
        self.registry = Registry(
            store,
            admission=admission_chain(store, self.settings.admission, self.feature_gates),
            validator=api_validator(self.feature_gates),
            rng=random.Random(root.getrandbits(64)),
            clock=clock,
            graceful_pod_deletion=graceful_deletion,
        )
        #: True: the components' creates and updates carry the managedFields entries of their field
        #: managers (registry.managedfields; `kubetaint up`); False: none (the simulator).
        self.managed_fields = managed_fields
        #: kube-controller-manager's controllers write through this.
        self.controller_writes = self.writes_of(KUBE_CONTROLLER_MANAGER)
        self.informers: dict[str, Informer] = {}
        scheduler_rng = random.Random(root.getrandbits(64))
        self.controller_rng = random.Random(root.getrandbits(64))
        #: kube-scheduler's events.k8s.io/v1 broadcaster (its watchers see every event recorded)
        self.scheduler_events = EventsV1Broadcaster(StoreSink(store), clock)
        self.scheduler_host = SchedulerHost(
            self.registry,
            clock,
            self._scheduler_factory(scheduler_rng),
            nodes=self.informer("nodes"),
            pods=self.informer("pods"),
            pdbs=self.informer("poddisruptionbudgets.policy"),
            recorder=self.scheduler_events.new_recorder("default-scheduler"),
            namespaces=self.informer("namespaces"),
            # (PodTopologySpread's default constraints take the selectors of a pod's Services and
            # of its controlling ReplicaSet or StatefulSet)
            replica_sets=self.informer("replicasets.apps"),
            stateful_sets=self.informer("statefulsets.apps"),
            services=self.informer("services"),
            storage={resource: self.informer(resource) for resource in STORAGE_RESOURCES},
            writes=self.writes_of(KUBE_SCHEDULER),
        )
        # (each hollow kubelet writes through the registry, or through the store
        # `kubelet_stores(registry)` gives for its node: a live server's node identities)
        kubelet_writes = self.writes_of(KUBELET)
        self.fleet = NodeFleet(
            kubelet_writes,
            clock,
            pod_informer=self.informer("pods"),
            store_for=kubelet_stores(kubelet_writes) if kubelet_stores is not None else None,
        )
        #: True: the kubelets record their pods' container events (`kubetaint up`); False: not (the
        #: simulator, for speed).
        self.fleet.pool.settings.container_events = container_events
        self.controllers: list[Controller] = []
        #: False leaves kube-controller-manager's controllers to another process (`up --no-controllers`).
        self.run_controllers = True
        #: False leaves the hollow kubelets to another replica (`up --no-kubelets`).
        self.run_kubelets = True
        #: The CA bundle (PEM) the root-ca-cert-publisher puts in every namespace's
        #: `kube-root-ca.crt`; None runs no publisher (a simulation, an insecure server).
        self.root_ca: str | None = None
        #: The informers of controllers started by `start_controllers` (a leader-elected replica).
        self.controller_informers: list[Informer] = []
        self.started = False

    def writes_of(self, manager: str) -> Registry | ManagerWrites:
        """What the component whose field manager is `manager` writes through: the registry, or
        (with `managed_fields`) its view recording that manager's managedFields entries."""
        if not self.managed_fields:
            return self.registry
        return ManagerWrites(self.registry, manager, self.clock)

    def _scheduler_factory(self, rng: random.Random) -> Callable[[Callable[[], None]], Scheduler]:
        config = self.settings.scheduler_config

        def make(on_active: Callable[[], None]) -> Scheduler:
            try:
                return Scheduler(
                    self.clock, rng, config=config, feature_gates=self.feature_gates, on_active=on_active
                )
            except ConfigError as err:
                raise ControlPlaneError(str(err)) from None

        return make

    def informer(self, resource: str, namespace: str = "") -> Informer:
        """The shared informer of `resource` (one cache per resource for every component)."""
        key = f"{resource}/{namespace}"
        informer = self.informers.get(key)
        if informer is None:
            informer = self.informers[key] = Informer(self.store, resource, namespace=namespace)
        return informer

    def ensure_system_namespaces(self) -> None:
        """Create the system namespaces that do not exist yet (straight to the store)."""
        for name in SYSTEM_NAMESPACES:
            self.ensure_namespace(name)

    def ensure_namespace(self, name: str) -> None:
        try:
            self.store.get("namespaces", "", name)
        except StatusError:
            # as kube-apiserver's system namespaces controller leaves them (kubectl shows Active)
            namespace = {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}},
                "spec": {"finalizers": ["kubernetes"]},
                "status": {"phase": "Active"},
            }
            if self.managed_fields:
                namespace = _system_namespace_managed_fields(namespace, format_time(self.clock.now()))
            try:
                self.store.create("namespaces", namespace)
            except StatusError as err:
                if err.code != 409:  # another replica created it meanwhile
                    raise

    def start(self) -> None:
        """Build and start the controllers, list every informer once, then start the kubelets."""
        if self.started:
            return
        self.started = True
        self.ensure_system_namespaces()  # kube-apiserver creates them before serving
        self.scheduler_events.start()
        self.controllers = start_controllers(self) if self.run_controllers else []
        self.start_informers()
        if self.run_kubelets:
            self.fleet.start()

    def start_informers(self) -> None:
        """Start the informers not started yet (those of controllers built later, too)."""
        for informer in list(self.informers.values()):
            informer.start()

    def start_controllers(self) -> None:
        """Build and start kube-controller-manager's controllers on a running plane (a replica
        that has just acquired the kube-controller-manager Lease). As kube-controller-manager's
        Run does, they get informers of their own, started after the controllers, so each
        controller sees the current state once, as adds, after its start."""
        if self.controllers:
            return
        shared, self.informers = self.informers, {}
        try:
            self.controllers = start_controllers(self)
            own = list(self.informers.values())
        finally:
            self.informers = shared
        self.controller_informers = own
        for informer in own:
            informer.start()

    def stop(self) -> None:
        """Stop delivering events and cancel the components' timers (idempotent)."""
        if not self.started:
            return
        self.started = False
        for informer in [*self.informers.values(), *self.controller_informers]:
            informer.stop()
        for controller in self.controllers:
            controller.stop()
        self.fleet.stop()
        self.scheduler_host.stop()
        self.scheduler_events.stop()
