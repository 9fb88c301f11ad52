"""Many hollow kubelets on one clock, cheaply: one pod informer routes pod changes by
spec.nodeName, and nodes whose heartbeats share a phase share one 10 s timer, so 5,000 nodes
cost a handful of timers while each node still renews its Lease exactly every 10 s.

Mirrors kubemark's hollow-node fleet. Fault names are the scenario format's `fault` values (docs/scenario.md).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock, Handle, format_micro_time
from kubetaint.kubelet.kubelet import HollowKubelet, KubeletSettings, StatusPost
from kubetaint.kubelet.lease import LEASE_RESOURCE, RENEW_TIME
from kubetaint.kubelet.node_status import NodeConfig
from kubetaint.speed.reference import reference_mode
from kubetaint.store.component_informers import ComponentInformers
from kubetaint.store.events import EventQueue
from kubetaint.store.informer import Changes, Informer
from kubetaint.store.interface import JSON, SetField, Store, Update, until_failure

#: The cache key of a `HollowNodePool._bound_pods` entry (key, pod) ...
_KEY = operator.itemgetter(0)
#: How long the kubelets' container events wait in the pool's queue (seconds).
EVENTS_DELAY = 0.5


def _key_order(entry: tuple[tuple[str, str], JSON]) -> tuple[str, str]:
    """... and its key_order (namespace + "/", name): the store's order across namespaces."""
    return entry[0][0] + "/", entry[0][1]


FAULTS = (
    "stop",
    "not-ready",
    "recover",
    "memory-pressure",
    "disk-pressure",
    "pid-pressure",
    "network-unavailable",
    "relieve",
)


class _PhaseGroup:
    """Kubelets whose heartbeat falls at the same offset within the interval.

    Speeds up a quiet round (`HollowNodePool._quiet_round`; off in reference mode and when each
    kubelet writes through its own store): after a round at whose end every member's heartbeat
    is a quiet renewal, the group keeps their leases, in member order (`quiet`), and the next rounds
    renew those as they are, without asking each kubelet, until a member's heartbeat state
    changes (`member_changed`: the kubelet calls it) or its status post falls due. The kubelets
    get the leases last written back when that happens."""

    __slots__ = ("changed", "handle", "members", "oldest_post", "quiet", "quiet_kubelets")

    def __init__(self) -> None:
        self.members: dict[str, HollowKubelet] = {}
        self.handle: Handle | None = None
        #: the leases the last round wrote, each the renewable lease of `quiet_kubelets[i]`
        #: (None: each kubelet is asked), and the earliest last status post among them
        self.quiet: list[JSON] | None = None
        self.quiet_kubelets: list[HollowKubelet] = []
        self.oldest_post = -math.inf
        #: a member's heartbeat state changed since the round began
        self.changed = False

    def member_changed(self) -> None:
        """A member's heartbeat state (or its membership) changes: each kubelet is asked from the
        next round on, and gets the lease last written for it back now."""
        self.changed = True
        quiet = self.quiet
        if quiet is not None:
            self.quiet = None
            for kubelet, lease in zip(self.quiet_kubelets, quiet, strict=True):
                kubelet.lease.renewed_in_place(lease)


class _Renewals:
    """The writes of a heartbeat round not yet made, in turn: either lease renewals that move only
    renewTime to one instant, with the node status posts due between them (written in one commit
    of field writes), or other renewal updates (a commit of `Update`s)."""

    __slots__ = ("_kubelets", "_leases", "_own_stores", "_posts", "_renew", "_store", "_updates", "now")

    def __init__(self, store: Store, *, own_stores: bool = False) -> None:
        self._store = store
        #: each write made through its kubelet's own store (its identity), one at a time
        self._own_stores = own_stores
        self._kubelets: list[HollowKubelet] = []
        #: leases to renew and nodes to post, or (with _updates) renewal updates
        self._leases: list[JSON] = []
        #: position in the lists -> the status post written there (the other positions renew)
        self._posts: dict[int, StatusPost] = {}
        self._updates = False
        #: the instant the pending leases are renewed to: a renewable lease of a kubelet at this
        #: instant joins them as it is (`pending`); NaN (equal to nothing) while renewal updates
        #: are pending
        self.now = math.nan
        self._renew = ""

    def pending(self) -> tuple[list[HollowKubelet], list[JSON]]:
        """The pending kubelets and leases, in order: a renewable lease of a kubelet at `now` may be
        appended to them (with its kubelet) instead of `add_renewable`."""
        return self._kubelets, self._leases

    def add_renewable(self, kubelet: HollowKubelet, lease: JSON, now: float) -> None:
        if now != self.now:  # (never equal while updates are pending)
            self.flush()
            self.now, self._renew = now, format_micro_time(now)
        self._kubelets.append(kubelet)
        self._leases.append(lease)

    def add_update(self, kubelet: HollowKubelet, renewal: JSON) -> None:
        if not self._updates:
            self.flush()
            self._updates = True
            self.now = math.nan
        self._kubelets.append(kubelet)
        self._leases.append(renewal)

    def add_post(self, post: StatusPost) -> None:
        """A status post after the renewals pending (written in their commit)."""
        if self._updates:
            self.flush()
        self._posts[len(self._leases)] = post
        self._kubelets.append(post.kubelet)
        self._leases.append(post.node)

    def _field_writes(self) -> list[SetField]:
        """The pending renewals and posts as field writes, in turn."""
        objects, renew = self._leases, self._renew
        if not self._posts:
            return [SetField(LEASE_RESOURCE, objects, RENEW_TIME, renew)]
        writes: list[SetField] = []
        start = 0
        for at, post in sorted(self._posts.items()):
            if at > start:
                writes.append(SetField(LEASE_RESOURCE, objects[start:at], RENEW_TIME, renew))
            writes.append(post.field_write())
            start = at + 1
        if start < len(objects):
            writes.append(SetField(LEASE_RESOURCE, objects[start:], RENEW_TIME, renew))
        return writes

    def flush(self) -> None:
        """Write what is pending: a failed renewal or post is retried by its kubelet before the rest."""
        kubelets, objects = self._kubelets, self._leases
        if self._own_stores or reference_mode():  # (reference mode: each write on its own)
            self._flush_each()
            return
        while objects:
            posts = self._posts
            if self._updates:
                updates = [Update(LEASE_RESOURCE, obj) for obj in objects]
                stored, err = until_failure(self._store.commit(updates, stop_at_failure=True))
                for kubelet, lease in zip(kubelets, stored, strict=False):
                    kubelet.lease_written(lease)
            else:
                stored, err = until_failure(self._store.commit(self._field_writes(), stop_at_failure=True))
                if not posts:  # (the usual round: renewals only)
                    for kubelet, lease in zip(kubelets, stored, strict=False):
                        kubelet.lease.renewed_in_place(lease)
                else:
                    for at, (kubelet, written) in enumerate(zip(kubelets, stored, strict=False)):
                        post = posts.get(at)
                        if post is not None:
                            kubelet.status_posted(post, written)
                            continue
                        kubelet.lease.renewed_in_place(written)
            if err is None:
                break
            done = len(stored)
            self._failed(kubelets[done], posts.get(done), err)
            del kubelets[: done + 1], objects[: done + 1]
            self._posts = {at - done - 1: post for at, post in posts.items() if at > done}
        kubelets.clear()
        objects.clear()
        self._posts = {}
        self._updates = False

    @staticmethod
    def _failed(kubelet: HollowKubelet, post: StatusPost | None, err: StatusError) -> None:
        """A renewal (`post` None) or status post met `err`: retried as its kubelet retries it."""
        if post is None:
            kubelet.lease_written(None, err)
        elif kubelet.post_conflicted(err):
            kubelet.post_status(attempts=4)  # (the first of nodeStatusUpdateRetry's five failed)

    def _flush_each(self) -> None:
        """`flush` through each kubelet's store: the same writes in the same order, one each."""
        posts = self._posts
        for at, (kubelet, obj) in enumerate(zip(self._kubelets, self._leases, strict=True)):
            post = posts.get(at)
            if post is not None:
                stored, err = until_failure(kubelet.store.commit((post.field_write(),)))
                if stored:
                    kubelet.status_posted(post, stored[0])
            elif self._updates:
                stored, err = until_failure(kubelet.store.commit((Update(LEASE_RESOURCE, obj),)))
                if stored:
                    kubelet.lease_written(stored[0])
            else:
                renewal = SetField(LEASE_RESOURCE, [obj], RENEW_TIME, self._renew)
                stored, err = until_failure(kubelet.store.commit((renewal,)))
                if stored:
                    kubelet.lease.renewed_in_place(stored[0])
            if err is not None:
                self._failed(kubelet, post, err)
        self._kubelets.clear()
        self._leases.clear()
        self._posts = {}
        self._updates = False


class HollowNodePool:
    """Hollow kubelets for many nodes sharing one pod informer and phase-grouped heartbeat timers.

    A `pod_informer` given (unfiltered, over the same store) is started before `start()`, as the
    control plane starts its informers before its kubelets; without one the pool makes its own."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        configs: Iterable[NodeConfig] = (),
        settings: KubeletSettings | None = None,
        pod_informer: Informer | None = None,
        *,
        store_for: Callable[[str], Store] | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.settings = settings or KubeletSettings()
        #: The store each kubelet writes through, by node name (its identity: the API server's
        #: authorization and NodeRestriction); None: the pool's store.
        self.store_for = store_for
        self.kubelets: dict[str, HollowKubelet] = {}
        #: The kubelets' container events, written together every EVENTS_DELAY seconds (through
        #: the pool's store: a kubelet may always create Events, so its identity adds nothing).
        self.event_queue = EventQueue(store, clock, EVENTS_DELAY)
        self._informers = ComponentInformers(store)
        self._informer = self._informers.shared_or_own(pod_informer, "pods")
        self._groups: dict[float, _PhaseGroup] = {}
        self._phase_of: dict[str, float] = {}
        self.started = False
        #: Kubelets keep the pods routed to them instead of reading them back: every pod change
        #: reaches the informer before its write returns (see `kubelet.running`).
        self._views = False
        for config in configs:
            self.add_node(config)

    # membership --------------------------------------------------------------------------------

    def add_node(self, config: NodeConfig) -> HollowKubelet:
        """Add a hollow node; registered at once when the pool is already running."""
        store = self.store if self.store_for is None else self.store_for(config.name)
        kubelet = HollowKubelet(store, self.clock, config, self.settings)
        kubelet.event_queue = self.event_queue
        self.kubelets[config.name] = kubelet
        if self.started:
            kubelet.use_pod_view(self._views)  # its pods are listed at start, then routed here
            self._start_kubelet(kubelet)
        return kubelet

    def __getitem__(self, name: str) -> HollowKubelet:
        return self.kubelets[name]

    def __len__(self) -> int:
        return len(self.kubelets)

    # lifecycle ---------------------------------------------------------------------------------

    def start(self) -> None:
        """Register every node (Node, Lease, status) now and start the heartbeats and pod handling."""
        if self.started:
            return
        self.started = True
        # Each kubelet's view starts from its listing of the pods bound to it (resync_pods), then
        # sees every change through the pod informer (running already, or started below).
        # (reference mode: each kubelet reads its pods from the store, started from a listing)
        self._views = self.store.delivers_synchronously and not reference_mode()
        from_cache = self._cache_is_store()
        bound = self._bound_pods() if from_cache else {}
        for kubelet in self.kubelets.values():
            kubelet.use_pod_view(self._views)
            self._start_kubelet(kubelet, bound.get(kubelet.name, []) if from_cache else None)
        self._informer.add_handlers(self._on_pods, replay=not from_cache)
        self._informers.start()

    def _cache_is_store(self) -> bool:
        """Whether the pod informer's cache holds exactly the stored pods (the very objects): a
        running, unfiltered informer over a store that delivers synchronously. Then `start`
        resyncs each kubelet from the cache grouped by node in one pass (what listing the store
        by spec.nodeName returns, in its order: registering nodes writes no pod) and skips the
        informer's replay of its cache: it would route to each kubelet the pods it has just
        observed, and observing a pod again, nothing else in between, changes nothing."""
        informer = self._informer
        return self._views and not self._informers.owns(informer) and informer.started and informer.unfiltered

    def _bound_pods(self) -> dict[str, list[tuple[tuple[str, str], JSON]]]:
        """The cached pods bound to this pool's nodes, by node, each list in the store's key order,
        each pod with its cache key (its object_key: the kubelet's (namespace, name) of it)."""
        kubelets = self.kubelets
        indexed = self.store.capabilities.pods_by_node
        if indexed is not None:  # the cache is the store's: its node index groups the same pods
            return indexed.keyed_pods_by_node(kubelets)
        # each pod with its cache key (its object_key), sorted on that key alone
        grouped: dict[str, list[tuple[tuple[str, str], JSON]]] = {}
        space: str | None = None
        mixed = False  # pods of more than one namespace
        for key, pod in self._informer.keyed_items():
            spec = pod.get("spec")
            node = spec.get("nodeName") if isinstance(spec, dict) else None
            if isinstance(node, str) and node in kubelets:
                group = grouped.get(node)
                if group is None:
                    group = grouped[node] = []
                group.append((key, pod))
                if key[0] != space:
                    if space is None:
                        space = key[0]
                    else:
                        mixed = True
        # one namespace: the key tuples sort in key order; else key_order's (namespace + "/", name)
        order = _KEY if not mixed else _key_order
        for group in grouped.values():
            group.sort(key=order)  # keys are unique: pods are never compared
        return grouped

    def shutdown(self) -> None:
        """Cancel every timer (the hollow nodes simply vanish, as after `kill`)."""
        for group in self._groups.values():
            group.member_changed()
            for kubelet in group.members.values():
                kubelet.heartbeat_changed = None
            if group.handle is not None:
                group.handle.cancel()
        self._groups.clear()
        self._phase_of.clear()
        self._informers.stop()
        self.event_queue.stop()
        self.started = False
        self._views = False  # changes may go unobserved from now on
        for kubelet in self.kubelets.values():
            kubelet.use_pod_view(False)

    def _start_kubelet(
        self, kubelet: HollowKubelet, bound: list[tuple[tuple[str, str], JSON]] | None = None
    ) -> None:
        """Register, join the heartbeats, and resync from `bound` (the pods bound to the node with
        their keys, see _bound_pods) or, without it, from the store's listing."""
        kubelet.register()
        self._join_group(kubelet)
        kubelet.resync_pods(keyed=bound)

    def _join_group(self, kubelet: HollowKubelet) -> None:
        interval = self.settings.lease_renew_interval
        phase = round(self.clock.now() % interval, 6)
        self._leave_group(kubelet.name)
        group = self._groups.get(phase)
        if group is None:
            group = self._groups[phase] = _PhaseGroup()
            group.handle = self.clock.call_later(interval, lambda: self._beat(phase))
        group.member_changed()
        group.members[kubelet.name] = kubelet
        kubelet.heartbeat_changed = group.member_changed
        self._phase_of[kubelet.name] = phase

    def _leave_group(self, name: str) -> None:
        phase = self._phase_of.pop(name, None)
        if phase is None:
            return
        group = self._groups.get(phase)
        if group is None:
            return
        group.member_changed()
        kubelet = group.members.pop(name, None)
        if kubelet is not None:
            kubelet.heartbeat_changed = None
        if not group.members:
            if group.handle is not None:
                group.handle.cancel()
            del self._groups[phase]

    def _beat(self, phase: float) -> None:
        group = self._groups.get(phase)
        if group is None:
            return
        group.handle = self.clock.call_later(self.settings.lease_renew_interval, lambda: self._beat(phase))
        quiet_rounds = self.store_for is None and not reference_mode()
        if quiet_rounds and group.quiet is not None and self._quiet_round(group):
            return
        group.member_changed()  # (each kubelet asked: its lease given back)
        group.changed = False
        members = list(group.members.values())
        first_now = self.clock.now()
        # Every member's heartbeat in turn. Consecutive renewals that move only renewTime (to
        # the same instant) are written as one field-write batch with the status posts due
        # between them, consecutive other renewals as one update batch: the same writes in the
        # same order, a batch cut short by any other.
        renewals = _Renewals(self.store, own_stores=self.store_for is not None)
        add_renewable = renewals.add_renewable
        pending_kubelets, pending_leases = renewals.pending()
        add_kubelet, add_lease = pending_kubelets.append, pending_leases.append
        now_of = self.clock.now
        for kubelet in members:
            now = now_of()
            lease = kubelet.quiet_renewal(now)
            if lease is not None:  # the usual heartbeat: a renewal and nothing else
                if now == renewals.now:  # (add_renewable's way when the instant is the same)
                    add_kubelet(kubelet)
                    add_lease(lease)
                else:
                    add_renewable(kubelet, lease, now)
                continue
            lease = kubelet.renewable_lease()
            if lease is not None:
                add_renewable(kubelet, lease, now)
            else:
                renewal = kubelet.lease_renewal()
                if renewal is None:
                    renewals.flush()
                    kubelet.heartbeat()
                    continue
                renewals.add_update(kubelet, renewal)
            if kubelet.status_due():
                post = kubelet.status_post()
                if post is not None:
                    renewals.add_post(post)
        renewals.flush()
        if quiet_rounds and members and now_of() == first_now and list(group.members.values()) == members:
            self._keep_quiet(group, members, first_now)

    @staticmethod
    def _keep_quiet(group: _PhaseGroup, members: list[HollowKubelet], now: float) -> None:
        """After a round: when the heartbeat of every member now is a quiet renewal (a status post
        of this round included), the group keeps their leases for the next rounds."""
        leases = []
        for kubelet in members:
            lease = kubelet.quiet_renewal(now)
            if lease is None:
                return
            leases.append(lease)
        group.quiet = leases
        group.quiet_kubelets = members
        group.oldest_post = min(kubelet.last_status_post for kubelet in members)
        group.changed = False

    def _quiet_round(self, group: _PhaseGroup) -> bool:
        """A round of `group`'s quiet leases (`_PhaseGroup`), written as one field write when every
        member's heartbeat now is still a quiet renewal (what `quiet_renewal` answers: nothing
        changed since the last round and no status post falls due); False, with nothing done,
        when a member must be asked. A failed renewal gives the kubelets their leases back, is
        retried by its kubelet, and the round goes on as `_beat` takes it."""
        now = self.clock.now()
        if now - group.oldest_post >= self.settings.node_status_report_frequency:
            return False
        kubelets, leases = group.quiet_kubelets, group.quiet
        assert leases is not None
        group.quiet = None  # (taken by this round)
        group.changed = False
        renewal = SetField(LEASE_RESOURCE, leases, RENEW_TIME, format_micro_time(now))
        stored, err = until_failure(self.store.commit((renewal,), stop_at_failure=True))
        if err is None and not group.changed:
            group.quiet = stored
            return True
        # each kubelet gets its lease back: the one written, or the one it wrote last
        done = len(stored)
        for kubelet, lease in zip(kubelets, stored + leases[done:], strict=True):
            kubelet.lease.renewed_in_place(lease)
        if err is not None:  # (the rest written after the retry, as `_Renewals.flush` goes on)
            _Renewals._failed(kubelets[done], None, err)
            rest = _Renewals(self.store)
            for kubelet, lease in zip(kubelets[done + 1 :], leases[done + 1 :], strict=True):
                rest.add_renewable(kubelet, lease, now)
            rest.flush()
        return True

    # pod routing ---------------------------------------------------------------------------------

    def _route(self, pod: Mapping[str, Any]) -> HollowKubelet | None:
        node = (pod.get("spec") or {}).get("nodeName")
        return self.kubelets.get(node) if node else None

    def _on_pod(self, pod: dict[str, Any]) -> None:
        kubelet = self._route(pod)
        if kubelet is not None:
            kubelet.observe_pod(pod)

    def _on_pod_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        if old.get("spec") is new.get("spec"):  # the same spec object (a metadata or status
            self._on_pod(new)  # change): the same nodeName, so the same kubelet
            return
        moved_from = self._route(old)
        if moved_from is not None and moved_from is not self._route(new):
            # spec.nodeName never changes once set; were it to, the old node's kubelet would no
            # longer see the pod's changes: it reads the store from now on
            moved_from.use_pod_view(False)
        self._on_pod(new)

    def _on_pods(self, changes: Changes) -> None:
        """The pod informer's handler: each change to the kubelet of the pod's node. A pod keeping
        its very spec object (the usual update: an owner or status change) is observed by the
        kubelet of its node directly."""
        kubelets = self.kubelets
        for kind, _, old, pod in changes:
            if kind == "MODIFIED":
                assert old is not None
                spec = pod.get("spec")
                if spec is old.get("spec") and isinstance(spec, dict):
                    node = spec.get("nodeName")  # _route(pod)
                    if node:
                        kubelet = kubelets.get(node)
                        if kubelet is not None:
                            kubelet.observe_pod(pod)
                    continue
                self._on_pod_update(old, pod)
            elif kind == "ADDED":
                self._on_pod(pod)
            else:
                self._on_pod_delete(pod)

    def _on_pod_delete(self, pod: dict[str, Any]) -> None:
        kubelet = self._route(pod)
        if kubelet is not None:
            kubelet.forget_pod(pod)

    # faults --------------------------------------------------------------------------------------

    def fault(self, names: Iterable[str], fault: str, **options: str) -> None:
        """Apply a scenario fault (`stop`, `not-ready`, `recover`, `memory-pressure`, `disk-pressure`,
        `pid-pressure`, `network-unavailable`, `relieve`) to the named nodes, in the given order."""
        if fault not in FAULTS:
            raise ValueError(
                f'unknown fault "{fault}": supported values: ' + ", ".join(f'"{f}"' for f in FAULTS)
            )
        targets = [self.kubelets[name] for name in names if name in self.kubelets]
        for kubelet in targets:
            self._apply(kubelet, fault, options)

    def _apply(self, kubelet: HollowKubelet, fault: str, options: Mapping[str, str]) -> None:
        if fault == "stop":
            kubelet.stop()
            self._leave_group(kubelet.name)
            return
        if fault == "recover":
            rejoin = kubelet.stopped
            kubelet.recover()
            if rejoin:
                self._join_group(kubelet)
            return
        actions: dict[str, Callable[[], None]] = {
            "not-ready": kubelet.not_ready,
            "memory-pressure": lambda: kubelet.memory_pressure(options.get("available", "0")),
            "disk-pressure": kubelet.disk_pressure,
            "pid-pressure": kubelet.pid_pressure,
            "network-unavailable": kubelet.network_unavailable_fault,
            "relieve": kubelet.relieve,
        }
        actions[fault]()
