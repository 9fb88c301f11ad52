"""The simulated cluster: every component built from the scenario's settings, in one place, on one
virtual clock and one store, with seeded randomness (uids, generated names, scheduler ties).

Writes from components and scenario events go through the Registry (admission + validation).
Initial objects are bulk-loaded into the store before any informer starts, so each component
lists them once instead of handling 150,000 individual events.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from kubetaint.admission import AdmissionChain, AdmissionSettings
from kubetaint.admission.settings import SettingsError as AdmissionSettingsError
from kubetaint.api import validation
from kubetaint.api.errors import StatusError
from kubetaint.api.features import FeatureGates
from kubetaint.clock import VirtualClock
from kubetaint.registry import Registry, StoreLookup, Validator
from kubetaint.scheduler.config import ConfigError
from kubetaint.scheduler.scheduler import Scheduler
from kubetaint.sim.kinds import kind_of
from kubetaint.sim.nodes import NodeFleet
from kubetaint.sim.scenario import Scenario, ScenarioError
from kubetaint.sim.schedhost import SchedulerHost
from kubetaint.sim.timeline import TimelineRecorder
from kubetaint.sim.wiring import start_controllers
from kubetaint.store.events import EventRecorder
from kubetaint.store.informer import Informer
from kubetaint.store.interface import JSON, StoreOptions
from kubetaint.store.memory import MemoryStore

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def seeded_uids(rng: random.Random) -> Callable[[], str]:
    """RFC 4122 version-4 uids drawn from `rng` (reproducible by seed)."""

    def factory() -> str:
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))

    return factory


def build_validator(feature_gates: FeatureGates) -> Validator:
    """kube-apiserver object validation (kubetaint.api.validation) for the kinds it knows."""
    supported = set(validation.supported_kinds())

    def validate(resource: str, obj: JSON, old: JSON | None) -> None:
        api_version = str(obj.get("apiVersion") or "")
        group, kind = validation.api_group(api_version), str(obj.get("kind") or "")
        if (group, kind) not in supported:
            return
        errors = validation.validate(obj, old=old, feature_gates=feature_gates)
        if errors:
            name = str((obj.get("metadata") or {}).get("name") or "")
            raise StatusError.from_status(validation.invalid_status(kind, name, errors, group))

    return validate


class Cluster:
    """Clock, store, registry, scheduler host, controllers and hollow nodes for one scenario."""

    def __init__(self, scenario: Scenario, *, seed: int | None = None) -> None:
        self.scenario = scenario
        self.seed = scenario.seed if seed is None else seed
        root = random.Random(self.seed)
        self.clock = VirtualClock()
        self.start = self.clock.now()
        gates = dict(scenario.feature_gates)
        self.feature_gates = gates
        self.store = MemoryStore(
            self.clock,
            options=StoreOptions(history_size=1000),
            uid_factory=seeded_uids(random.Random(root.getrandbits(64))),
        )
        try:
            admission_settings = AdmissionSettings.from_dict(
                {**scenario.settings.admission, "featureGates": gates}
            )
            chain = AdmissionChain(admission_settings, StoreLookup(self.store))
        except (AdmissionSettingsError, TypeError) as err:
            raise ScenarioError(f"spec.settings: {err}") from None
        self.registry = Registry(
            self.store,
            admission=chain,
            validator=build_validator(gates),
            rng=random.Random(root.getrandbits(64)),
        )
        self.timeline = TimelineRecorder(self.clock.now, self.start)
        self.informers: dict[str, Informer] = {}
        scheduler_rng = random.Random(root.getrandbits(64))
        self.controller_rng = random.Random(root.getrandbits(64))
        config = scenario.settings.scheduler_config

        def make_scheduler(on_active: Callable[[], None]) -> Scheduler:
            try:
                return Scheduler(
                    self.clock, scheduler_rng, config=config, feature_gates=gates, on_active=on_active
                )
            except ConfigError as err:
                raise ScenarioError(f"spec.settings: {err}") from None

        self.scheduler_host = SchedulerHost(
            self.registry,
            self.clock,
            make_scheduler,
            nodes=self.informer("nodes"),
            pods=self.informer("pods"),
            pdbs=self.informer("poddisruptionbudgets.policy"),
            recorder=EventRecorder(self.store, self.clock, "default-scheduler"),
        )
        self.fleet = NodeFleet(self)
        self.controllers: list[Any] = []
        self.started = False

    def informer(self, resource: str, namespace: str = "") -> Informer:
        """The shared informer of `resource` (one cache per resource for every component)."""
        key = f"{resource}/{namespace}"
        informer = self.informers.get(key)
        if informer is None:
            informer = self.informers[key] = Informer(self.store, resource, namespace=namespace)
        return informer

    # setup -------------------------------------------------------------------------------------

    def load(self) -> None:
        """Namespaces, the scenario's objects (by kind rank, then file order) and the node groups."""
        for name in SYSTEM_NAMESPACES:
            self.store.create(
                "namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
            )
        objects = sorted(
            enumerate(self.scenario.objects), key=lambda item: (kind_of(item[1]).load_rank, item[0])
        )
        for index, obj in objects:
            self.create_object(obj, self.scenario.object_where[index] if self.scenario.object_where else "")
        self.fleet.load_groups(self.scenario.node_groups)

    def create_object(self, obj: Mapping[str, Any], where: str = "") -> JSON:
        """Create one manifest through the registry; ScenarioError names the object and field."""
        kind = kind_of(obj)
        meta = obj.get("metadata") or {}
        namespace = str(meta.get("namespace") or "default")
        if kind.namespaced:
            self._ensure_namespace(namespace)
        try:
            created = self.registry.create(kind.resource, _fresh(obj))
        except StatusError as err:
            raise ScenarioError(f"{where}{_describe(obj)}: {_status_text(err)}") from None
        if kind.kind == "Node":
            self.fleet.adopt(created)
        return created

    def _ensure_namespace(self, namespace: str) -> None:
        try:
            self.store.get("namespaces", "", namespace)
        except StatusError:
            self.store.create(
                "namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
            )

    def begin(self) -> None:
        """Start recording, every informer, the controllers and the hollow nodes (at t=0)."""
        if self.started:
            return
        self.started = True
        self.timeline.record_creates = False
        self.store.subscribe(self.timeline.on_change)
        self.controllers = start_controllers(self)
        for informer in list(self.informers.values()):
            informer.start()
        self.fleet.start()
        self.timeline.record_creates = True


def _fresh(obj: Mapping[str, Any]) -> JSON:
    """A manifest as a create request: server-set metadata dropped, top level copied."""
    meta = {
        k: v
        for k, v in (obj.get("metadata") or {}).items()
        if k not in ("resourceVersion", "uid", "creationTimestamp")
    }
    return {**obj, "metadata": meta}


def _describe(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    name = meta.get("name") or meta.get("generateName") or ""
    namespace = meta.get("namespace")
    return f"{obj.get('kind')} {namespace}/{name}" if namespace else f"{obj.get('kind')} {name}"


def _status_text(err: StatusError) -> str:
    if err.causes:
        causes = "; ".join(
            f"{c.get('field')}: {c.get('message')}" if c.get("field") else str(c.get("message"))
            for c in err.causes
        )
        return f"{err.message} ({causes})" if causes not in err.message else err.message
    return err.message
