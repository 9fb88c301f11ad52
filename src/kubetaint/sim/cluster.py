"""The simulated cluster: the shared control plane (`kubetaint.controlplane.ControlPlane`) on a
virtual clock and an in-memory store, built from the scenario's settings, with seeded randomness
(uids, generated names, scheduler ties), plus the scenario's objects, node groups and timeline.

Writes from components and scenario events go through the Registry (admission + validation).
Initial objects are bulk-loaded into the store before any informer starts, so each component
lists them once instead of handling 150,000 individual events.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.clock import VirtualClock
from kubetaint.controlplane import SYSTEM_NAMESPACES, ControlPlane, ControlPlaneError
from kubetaint.sim.decoding import DecodeMemo, check_decodable
from kubetaint.sim.decoding import describe as _describe
from kubetaint.sim.kinds import Kind, kind_of
from kubetaint.sim.nodes import load_groups
from kubetaint.sim.scenario import Scenario, ScenarioError
from kubetaint.sim.source import Where
from kubetaint.sim.timeline import TimelineRecorder
from kubetaint.speed.reference import reference_mode
from kubetaint.store.informer import Informer
from kubetaint.store.interface import JSON, StoreOptions
from kubetaint.store.memory import MemoryStore

__all__ = ["SYSTEM_NAMESPACES", "Cluster", "SeededUidStream", "check_decodable", "seeded_uids"]


#: The bits uuid.UUID(version=4) overwrites (variant and version) and what it sets them to.
_UUID_KEEP = ~((0xC000 << 48) | (0xF000 << 64)) & ((1 << 128) - 1)
_UUID_V4 = (0x8000 << 48) | (4 << 76)


def seeded_uids(rng: random.Random) -> Callable[[], str]:
    """RFC 4122 version-4 uids drawn from `rng` (reproducible by seed)."""

    def factory() -> str:
        # str(uuid.UUID(int=..., version=4)) spelled out: the variant and version bits set, then
        # 8-4-4-4-12 hex digits (a uid per object: 150,000 of them for a large scenario)
        value = rng.getrandbits(128) & _UUID_KEEP | _UUID_V4
        h = value.to_bytes(16).hex()  # f"{value:032x}", a little faster
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    return factory


class SeededUidStream:
    """`seeded_uids(random.Random(seed))`'s uids, drawn from the generator `batch` at a time.

    The stream owns its generator (made from `seed`, used for nothing else), so drawing ahead
    changes no value and no order: CPython's getrandbits(128 * n) is made of the same 32-bit
    words, in the same order, as n calls of getrandbits(128), the first call's words lowest. One
    draw and one pass of string slicing per batch replace a draw and a conversion per uid."""

    def __init__(self, seed: int, batch: int = 1024) -> None:
        self._rng = random.Random(seed)
        self._batch = batch
        bits = 128 * batch
        self._keep = int.from_bytes(_UUID_KEEP.to_bytes(16) * batch)
        self._set = int.from_bytes(_UUID_V4.to_bytes(16) * batch)
        self._bits = bits
        #: The uids drawn and not yet given, the next one last.
        self._pending: list[str] = []

    def __call__(self) -> str:
        pending = self._pending
        if not pending:
            self._refill()
        return pending.pop()

    def _refill(self) -> None:
        value = self._rng.getrandbits(self._bits) & self._keep | self._set
        # big-endian hex: the last drawn uid's digits first, the first's last (popped first)
        h = value.to_bytes(self._bits // 8).hex()
        self._pending[:] = [
            f"{h[o : o + 8]}-{h[o + 8 : o + 12]}-{h[o + 12 : o + 16]}-{h[o + 16 : o + 20]}-{h[o + 20 : e]}"
            for o, e in zip(range(0, 32 * self._batch, 32), range(32, 32 * self._batch + 1, 32), strict=True)
        ]


def _scenario_error(err: ControlPlaneError) -> ScenarioError:
    return ScenarioError(f"spec.settings.{err}" if err.key_path else f"spec.settings: {err}")


class Cluster:
    """The control plane, timeline and scenario objects of one scenario."""

    def __init__(self, scenario: Scenario, *, seed: int | None = None) -> None:
        self.scenario = scenario
        self.seed = scenario.seed if seed is None else seed
        root = random.Random(self.seed)
        self.clock = VirtualClock()
        self.start = self.clock.now()
        self.feature_gates = dict(scenario.feature_gates)
        self.store = MemoryStore(
            self.clock,
            options=StoreOptions(history_size=1000),
            uid_factory=SeededUidStream(root.getrandbits(64)),
        )
        try:
            self.plane = ControlPlane(
                self.store, self.clock, settings=scenario.settings, feature_gates=self.feature_gates, rng=root
            )
        except ControlPlaneError as err:
            raise _scenario_error(err) from None
        self.registry = self.plane.registry
        self.scheduler_host = self.plane.scheduler_host
        self.fleet = self.plane.fleet
        self.timeline = TimelineRecorder(self.clock.now, self.start)
        self.started = False

    @property
    def controllers(self) -> list[Any]:
        return self.plane.controllers

    def informer(self, resource: str, namespace: str = "") -> Informer:
        """The shared informer of `resource` (one cache per resource for every component)."""
        return self.plane.informer(resource, namespace)

    # setup -------------------------------------------------------------------------------------

    def load(self) -> None:
        """Namespaces, the scenario's objects (by kind rank, then file order) and the node groups.
        The objects declare the cluster's state (as restoring etcd would): they are created with
        `restore`, so pods keep the status the scenario gives them."""
        self.plane.ensure_system_namespaces()  # Active, with the kubernetes finalizer, as kube-apiserver's
        objects = self.scenario.objects
        kinds = [kind_of(obj) for obj in objects]
        ranks = [kind.load_rank for kind in kinds]
        wheres = self.scenario.object_where
        # pods of one template share their admission and their decoding verdict; a namespace
        # ensured once exists for the rest of the load (nothing is deleted meanwhile)
        decoding = DecodeMemo()
        namespaces: set[str] = set()
        # consecutive pods are created as one run (one Registry.commit): each still decoded,
        # and its namespace ensured, in turn; the run is stored before any other write and before
        # a decoding refusal is raised, so every write and message is one create's after another
        run: _PodRun = ([], [])
        # an object refused is skipped and the load goes on, so that every refusal is reported
        # at once (the run never starts)
        problems: list[str] = []
        # in reference mode each object is created on its own, its namespace ensured each time
        runs = not reference_mode()
        known = namespaces if runs else None
        with self.registry.bulk_creates():
            for index in sorted(range(len(objects)), key=ranks.__getitem__):  # stable: file order
                where = wheres[index] if wheres else ""
                obj, kind = objects[index], kinds[index]
                if kind.resource != "pods" or not runs:
                    self._create_run(run, problems)
                    try:
                        self._create(obj, kind, where, decoding, known, restore=True)
                    except ScenarioError as err:
                        problems.append(str(err))
                    continue
                try:
                    decoding.check(obj, where)
                except ScenarioError as err:
                    problems.append(str(err))
                    continue
                namespace = str((obj.get("metadata") or {}).get("namespace") or "default")
                if namespace not in namespaces:
                    self._create_run(run, problems)
                    self.plane.ensure_namespace(namespace)
                    namespaces.add(namespace)
                run[0].append(_fresh(obj))
                run[1].append((obj, where))
                if len(run[0]) >= _RUN_LIMIT:
                    self._create_run(run, problems)
            self._create_run(run, problems)
        if problems:
            shown = problems[:MAX_PROBLEMS]
            if len(problems) > MAX_PROBLEMS:
                shown.append(f"... and {len(problems) - MAX_PROBLEMS} more objects refused")
            raise ScenarioError("\n".join(shown))
        load_groups(self.fleet, self.scenario.node_groups)

    def _create_run(self, run: _PodRun, problems: list[str]) -> None:
        """Create the pending pods of `run` (create requests, and each manifest with its place)
        and empty it; each pod refused adds its message to `problems`, as `_create` would raise
        it, and the rest of the run is still created."""
        requests, manifests = run
        try:
            while requests:
                created, failure = self.registry.create_pods(requests, restore=True)
                if failure is None:
                    break
                obj, where = manifests[len(created)]
                problems.append(f"{where}{_describe(obj)}: {_status_text(failure)}")
                del requests[: len(created) + 1]
                del manifests[: len(created) + 1]
        finally:
            requests.clear()
            manifests.clear()

    def create_object(self, obj: Mapping[str, Any], where: str | Where = "") -> JSON:
        """Create one manifest through the registry, as a client's create request (a pod gets the
        pod strategy's status); ScenarioError names the object and field."""
        return self._create(obj, kind_of(obj), where, None, None)

    def _create(
        self,
        obj: Mapping[str, Any],
        kind: Kind,
        where: str | Where,
        decoding: DecodeMemo | None,
        namespaces: set[str] | None,
        *,
        restore: bool = False,
    ) -> JSON:
        """create_object of a manifest of `kind`, with the decode verdicts of `decoding` and the
        namespaces known to exist (`namespaces`) when given; `restore`: the manifest declares
        existing state (`Registry.create`'s `restore`: the scenario being loaded)."""
        if decoding is not None:
            decoding.check(obj, where)
        else:
            check_decodable(obj, where)
        if kind.namespaced:
            namespace = str((obj.get("metadata") or {}).get("namespace") or "default")
            if namespaces is None or namespace not in namespaces:
                self.plane.ensure_namespace(namespace)
                if namespaces is not None:
                    namespaces.add(namespace)
        request = _fresh(obj)
        if kind.kind == "Job":
            request = self._with_uid(request)
        try:
            created = self.registry.create(kind.resource, request, restore=restore)
        except StatusError as err:
            raise ScenarioError(f"{where}{_describe(obj)}: {_status_text(err)}") from None
        if kind.kind == "Node":
            self.fleet.adopt(created)
        return created

    def _with_uid(self, request: JSON) -> JSON:
        """A Job's create request with the uid the generic store gives it, drawn from the
        cluster's seeded randomness (the registry's defaulting generates its selector from it)."""
        uid = str(uuid.UUID(int=self.plane.controller_rng.getrandbits(128), version=4))
        return {**request, "metadata": {**request["metadata"], "uid": uid}}

    def begin(self) -> None:
        """Start recording, every informer, the controllers and the hollow nodes (at t=0)."""
        if self.started:
            return
        self.started = True
        self.timeline.record_creates = False
        for resource in self.timeline.RESOURCES:  # not the ~10^6 lease renewals of a long run
            self.store.subscribe(self.timeline.on_change, resource)
        self.plane.scheduler_events.watchers.append(self.timeline.recorded)
        try:
            self.plane.start()
        except ControlPlaneError as err:
            raise _scenario_error(err) from None
        self.timeline.record_creates = True


#: Pods loaded by one Registry.commit at most: few enough that a run's pods, admitted one after
#: another, are still in the processor's caches when the store writes them (4,096 took about 6%
#: longer to load 150,000 pods).
_RUN_LIMIT = 256
#: Refused objects listed before the rest are counted.
MAX_PROBLEMS = 100
#: A run of pods to create: their create requests, and each manifest with its place.
_PodRun = tuple[list[JSON], list[tuple[Mapping[str, Any], "str | Where"]]]

#: Metadata the server sets: a manifest's own values are dropped from a create request.
_SERVER_SET = ("resourceVersion", "uid", "creationTimestamp")


def _fresh(obj: Mapping[str, Any]) -> JSON:
    """A manifest as a create request: server-set metadata dropped (top level and metadata
    copied then). A plain manifest without any is the request as it is: the registry changes
    nothing it is given (it copies what it sets)."""
    meta_in = obj.get("metadata")
    if type(obj) is dict and type(meta_in) is dict and meta_in.keys().isdisjoint(_SERVER_SET):
        return obj
    meta = {
        k: v
        for k, v in (obj.get("metadata") or {}).items()
        if k not in ("resourceVersion", "uid", "creationTimestamp")
    }
    return {**obj, "metadata": meta}


def _status_text(err: StatusError) -> str:
    if err.causes:
        causes = "; ".join(
            f"{c.get('field')}: {c.get('message')}" if c.get("field") else str(c.get("message"))
            for c in err.causes
        )
        return f"{err.message} ({causes})" if causes not in err.message else err.message
    return err.message
