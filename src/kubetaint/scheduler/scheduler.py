"""The scheduler: informer-fed cache and queue, and the synchronous scheduling cycle
(mirrors pkg/scheduler/scheduler.go, eventhandlers.go and schedule_one.go).

A host feeds events (`add_node`, `update_pod`, ...), calls `schedule_one()` (or `run()`), and applies
each `ScheduleResult`: POST the binding, or record FailedScheduling, patch PodScheduled=False and
nominatedNodeName, delete the preemption victims. Nothing here does I/O.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from kubetaint.api.features import FeatureGates, gate_enabled
from kubetaint.api.selectors import LabelSelector
from kubetaint.clock.base import Clock
from kubetaint.scheduler.cache import Cache, IntArray
from kubetaint.scheduler.config import DEFAULT_SCHEDULER_NAME, build_framework, load_profiles
from kubetaint.scheduler.events import (
    ASSIGNED_POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
)
from kubetaint.scheduler.extension_points import CycleState, PostFilterResult, uses_handle
from kubetaint.scheduler.filter_memo import FilterMemo, NodeStatuses
from kubetaint.scheduler.fit_error import (
    NO_NODES_AVAILABLE,
    Diagnosis,
    FitError,
    SchedulingError,
    truncate_message,
)
from kubetaint.scheduler.framework import Framework, go_list
from kubetaint.scheduler.informer_events import InformerEvents
from kubetaint.scheduler.listers import Listers
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.nodes_at import NodesAt
from kubetaint.scheduler.plugins.volume_binding import binding_warnings, prebind_writes
from kubetaint.scheduler.podinfo import PodInfo, make_pod_info, pod_key
from kubetaint.scheduler.queue import QueuedPodInfo, SchedulingQueue
from kubetaint.scheduler.registry import new_in_tree_registry
from kubetaint.scheduler.result import Evaluation, ScheduleResult
from kubetaint.scheduler.search import (
    first_hits,
    narrowed,
    nominated_first,
    num_feasible_nodes_to_find,
    position_in,
    select_host,
)
from kubetaint.scheduler.status import Code, Status
from kubetaint.scheduler.storage_events import StorageInformerEvents
from kubetaint.scheduler.storage_listers import StorageListers
from kubetaint.scheduler.unmodelled import config_warnings, pod_warnings
from kubetaint.speed.reference import reference_mode

__all__ = [
    "PINNED_NODES_TO_FILTER_ONE_BY_ONE",
    "Evaluation",
    "ScheduleResult",
    "Scheduler",
    "num_feasible_nodes_to_find",
]

#: A search PreFilterResult narrowed to at most this many nodes (a DaemonSet pod's node affinity)
#: filters them one by one instead of vectorised over every node: the same verdicts, found faster.
PINNED_NODES_TO_FILTER_ONE_BY_ONE = 16


class Scheduler(InformerEvents, StorageInformerEvents):
    """A kube-scheduler instance over an injected clock and random source."""

    def __init__(
        self,
        clock: Clock,
        rng: random.Random | None = None,
        *,
        config: Mapping[str, Any] | None = None,
        feature_gates: FeatureGates | None = None,
        on_active: Callable[[], None] | None = None,
    ) -> None:
        self.clock = clock
        self.rng = rng if rng is not None else random.Random(0)
        self.cache = Cache()
        #: Namespaces and replica sets (InterPodAffinity's namespaceSelector, PodTopologySpread's
        #: default selector), as the host's informers deliver them.
        self.listers = Listers()
        #: PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes and CSIDrivers (the
        #: volume plugins' listers) and the volume bindings assumed in Reserve
        self.storage = StorageListers()
        registry = new_in_tree_registry(feature_gates)
        specs, self.global_percentage = load_profiles(config)
        #: the configuration's settings kubetaint does not apply (unmodelled.config_warnings)
        self.warnings: list[str] = config_warnings(config, frozenset(registry))
        self.profiles: dict[str, Framework] = {s.scheduler_name: build_framework(s, registry) for s in specs}
        for fw in self.profiles.values():
            for plugin in fw.plugins.values():
                if uses_handle(plugin):
                    plugin.use_handle(self)
        first = next(iter(self.profiles.values()))
        hints: dict[str, list[ClusterEventWithHint]] = {}
        for fw in self.profiles.values():
            for name, registered in fw.events_to_register().items():
                hints.setdefault(name, registered)
        self.queue = SchedulingQueue(
            clock,
            sort_key=first.queue_sort.sort_key,
            pre_enqueue=lambda pi: self.framework_for(pi).run_pre_enqueue(pi),
            hints=hints,
            on_active=on_active,
            pop_from_backoff=gate_enabled(feature_gates, "SchedulerPopFromBackoffQ"),
        )
        self.next_start_node_index = 0
        #: (an attribute so that tests may compare with the vectorised search)
        self.pinned_nodes_to_filter_one_by_one = PINNED_NODES_TO_FILTER_ONE_BY_ONE
        self._pdbs: dict[str, Mapping[str, Any]] = {}
        #: Whether the search over every node takes its filter verdicts from a FilterMemo (an
        #: attribute so that tests may compare with the vectorised filters run afresh).
        self.filter_memo = True
        #: per profile name
        self._filter_memos: dict[str, FilterMemo] = {}

    # ---- profiles and listers ----------------------------------------------------------------
    def framework_for(self, pi: PodInfo) -> Framework:
        name = (pi.pod.get("spec") or {}).get("schedulerName") or DEFAULT_SCHEDULER_NAME
        return self.profiles.get(name) or next(iter(self.profiles.values()))

    def responsible_for(self, pod: Mapping[str, Any]) -> bool:
        return ((pod.get("spec") or {}).get("schedulerName") or DEFAULT_SCHEDULER_NAME) in self.profiles

    def pdbs(self) -> Sequence[Mapping[str, Any]]:
        return list(self._pdbs.values())

    def namespace_labels(self, namespace: str) -> Mapping[str, str] | None:
        return self.listers.namespaces.get(namespace)

    def namespaces_selected(self, selector: LabelSelector) -> frozenset[str]:
        return frozenset(name for name, labels in self.listers.namespaces.items() if selector.matches(labels))

    def replica_set(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        return self.listers.replica_sets.get((namespace, name))

    def stateful_set(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        return self.listers.stateful_sets.get((namespace, name))

    def services(self, namespace: str) -> Iterable[Mapping[str, Any]]:
        return (self.listers.services.get(namespace) or {}).values()

    def selectors_version(self) -> int:
        return self.listers.selectors_version

    def binding_failed(
        self, result: ScheduleResult, error: str, current: Mapping[str, Any] | None
    ) -> ScheduleResult:
        """handleBindingCycleError: the host could not bind `result`'s pod (`error`, the API
        server's message). The Reserve plugins' Unreserve runs, the assumed pod is forgotten (an
        AssignedPodDelete for the pods it kept out), then handleSchedulingFailure with an error
        status: the pod as the informer has it now (`current`; None when it is gone) goes back to
        the queue after its backoff, which grows with its attempts, unless it is gone or bound
        meanwhile. Returns the failure for the host to apply: FailedScheduling,
        PodScheduled=False (SchedulerError), no nominated node."""
        pod = result.pod
        key = pod_key(pod)
        if result.unreserve is not None:  # (VolumeBinding reverts the bindings it assumed)
            result.unreserve()
        assumed = {**pod, "spec": {**(pod.get("spec") or {}), "nodeName": result.node}}
        self.cache.forget_pod(key)
        self.queue.move_on_event(
            ClusterEvent(ASSIGNED_POD, ActionType.Delete, "AssignedPodDelete"), assumed, None
        )
        message = f'running Bind plugin "{result.bind_plugin}": {error}'
        queued = result.queued
        if current is not None and not (current.get("spec") or {}).get("nodeName") and queued is not None:
            queued.pod_info = make_pod_info(current)
            self.queue.add_after_binding_error(queued)
        return ScheduleResult(
            current if current is not None else pod,
            reason="FailedScheduling",
            event_type="Warning",
            message=truncate_message(message),
            condition={
                "type": "PodScheduled",
                "status": "False",
                "reason": "SchedulerError",
                "message": message,
            },
            nominated_node="",
        )

    # ---- the cycle ---------------------------------------------------------------------------
    def run(self, limit: int | None = None) -> list[ScheduleResult]:
        """schedule_one until activeQ is empty (or `limit` cycles)."""
        results: list[ScheduleResult] = []
        while limit is None or len(results) < limit:
            result = self.schedule_one()
            if result is None:
                break
            results.append(result)
        return results

    def schedule_one(self) -> ScheduleResult | None:
        """Pop the next pod and run one scheduling cycle; None when activeQ is empty. The result
        carries the pod's fields the cycle could not judge (`warnings`)."""
        qpi = self.queue.pop()
        if qpi is None:
            return None
        result = self._cycle(qpi)
        warnings = pod_warnings(qpi.pod_info.pod)
        if warnings:
            result.warnings = warnings + result.warnings
        return result

    def _cycle(self, qpi: QueuedPodInfo) -> ScheduleResult:
        pi = qpi.pod_info
        fw = self.framework_for(pi)
        if (pi.pod.get("metadata") or {}).get("deletionTimestamp"):
            self.queue.done(pi.key)
            return ScheduleResult(
                pi.pod,
                reason="FailedScheduling",
                event_type="Warning",
                message=f"skip schedule deleting pod: {pi.namespace}/{pi.name}",
            )
        state = CycleState()
        try:
            node, evaluation, fit_error = self.schedule_pod(fw, state, pi)
        except SchedulingError as exc:
            return self._handle_error(qpi, str(exc))
        if node is not None:
            self.cache.assume_pod(pi, node)
            reserved = fw.run_reserve(state, pi, node)
            if not reserved.is_success():
                fw.run_unreserve(state, pi, node)
                self.cache.forget_pod(pi.key)
                return self._handle_error(
                    qpi, f'running Reserve plugin "{reserved.plugin}": {reserved.message()}'
                )
            bind_plugin = ""
            for binder in fw.bind_plugins:
                status = binder.bind(state, pi, node)
                if status.code != Code.Skip:
                    bind_plugin = binder.name
                    break
            self.queue.done(pi.key)
            return ScheduleResult(
                pi.pod,
                node=node,
                message=f"Successfully assigned {pi.namespace}/{pi.name} to {node}",
                evaluation=evaluation,
                queued=qpi,
                bind_plugin=bind_plugin,
                warnings=binding_warnings(state, written=True),
                prebind_writes=prebind_writes(state),
                unreserve=lambda: fw.run_unreserve(state, pi, node),
            )
        assert fit_error is not None
        return self._handle_failure(fw, state, qpi, fit_error, evaluation)

    def _handle_failure(
        self,
        fw: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        fit_error: FitError,
        evaluation: Evaluation,
    ) -> ScheduleResult:
        pi = qpi.pod_info
        result = ScheduleResult(
            pi.pod, reason="FailedScheduling", event_type="Warning", evaluation=evaluation
        )
        diagnosis = fit_error.diagnosis
        post = self.run_post_filter(fw, state, pi, fit_error)
        if post is not None:
            result.nominated_node = post.nominated_node_name
            result.victims = list(post.victims)
        message = fit_error.error() if fit_error.num_all_nodes > 0 else NO_NODES_AVAILABLE
        result.fit_error = fit_error
        result.message = truncate_message(message)
        result.condition = {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": message,
        }
        uid = (pi.pod.get("metadata") or {}).get("uid") or f"{pi.namespace}/{pi.name}"
        for victim in result.victims:
            meta = victim.get("metadata") or {}
            result.victim_events.append(
                {
                    "namespace": meta.get("namespace") or "default",
                    "name": meta.get("name", ""),
                    "reason": "Preempted",
                    "type": "Normal",
                    "message": f"Preempted by pod {uid} on node {result.nominated_node}",
                }
            )
        qpi.unschedulable_plugins = set(diagnosis.unschedulable_plugins)
        self.queue.add_unschedulable(qpi)
        return result

    def _handle_error(self, qpi: QueuedPodInfo, message: str) -> ScheduleResult:
        """handleSchedulingFailure of an error status: reason SchedulerError, retried after backoff."""
        pi = qpi.pod_info
        result = ScheduleResult(
            pi.pod, reason="FailedScheduling", event_type="Warning", message=truncate_message(message)
        )
        result.condition = {
            "type": "PodScheduled",
            "status": "False",
            "reason": "SchedulerError",
            "message": message,
        }
        qpi.unschedulable_plugins = set()
        qpi.pending_plugins = set()
        self.queue.add_unschedulable(qpi)
        return result

    def run_post_filter(
        self, fw: Framework, state: CycleState, pi: PodInfo, fit_error: FitError
    ) -> PostFilterResult | None:
        """RunPostFilterPlugins (preemption); records its message in the FitError's diagnosis."""
        if fit_error.num_all_nodes == 0:
            return None
        result: PostFilterResult | None = None
        for pl in fw.post_filter_plugins:
            post, status = pl.post_filter(
                state, pi, fit_error.diagnosis.node_to_status, fit_error.diagnosis.absent_status
            )
            if status.reasons:
                fit_error.diagnosis.post_filter_msg = status.message()
            if post is not None:
                result = post
            if status.is_success():
                break
        return result

    def schedule_pod(
        self, fw: Framework, state: CycleState, pi: PodInfo
    ) -> tuple[str | None, Evaluation, FitError | None]:
        """schedulePod: (chosen node, what was evaluated, FitError when nothing fits)."""
        nodes = self.cache.node_list()
        evaluation = Evaluation()
        n = len(nodes)
        if n == 0:
            return None, evaluation, FitError(0, Diagnosis())
        pre = fw.run_pre_filter_plugins(state, pi, nodes)
        status = pre.status
        if not status.is_success():
            diagnosis = Diagnosis(
                absent_status=status,
                pre_filter_msg=status.message(),
                unschedulable_plugins=set(pre.plugins_with_nodes),
            )
            if status.plugin:
                diagnosis.unschedulable_plugins.add(status.plugin)
            return None, evaluation, FitError(n, diagnosis)
        slots: IntArray | None = None  # the feasible nodes' cache slots, when known already
        nominated, nominated_failed = self._nominated_first(fw, state, pi)
        feasible: Sequence[NodeInfo] | None = nominated
        searched: list[NodeInfo] | None = None  # the nodes PreFilterResult narrowed the search to
        absent: Status | None = None
        if pre.node_names is not None:
            searched = self._narrowed(pre.node_names)
            absent = Status(
                Code.UnschedulableAndUnresolvable,
                f"node(s) didn't satisfy plugin(s) {go_list(sorted(pre.plugins_with_nodes))}",
            )
        if feasible is None:
            feasible, slots = self._find_feasible(
                fw, state, pi, nodes, evaluation, searched=searched, nominated_failed=nominated_failed
            )
        evaluation.feasible = feasible
        if not feasible:
            diagnosis = Diagnosis(absent_status=absent, unschedulable_plugins=set(pre.plugins_with_nodes))
            if nominated_failed is not None:  # kept when the search does not reach that node
                diagnosis.node_to_status[nominated_failed[0]] = nominated_failed[1]
                diagnosis.unschedulable_plugins.add(nominated_failed[1].plugin)
            remembered = self._node_statuses(fw, state, pi) if searched is None else None
            if remembered is not None:
                diagnosis.node_to_status = remembered.node_to_status(nodes, nominated_failed)
                diagnosis.unschedulable_plugins.update(remembered.plugins())
                return None, evaluation, FitError(n, diagnosis)
            for ni in nodes if searched is None else searched:
                st = fw.run_filter(state, pi, ni)
                diagnosis.node_to_status[ni.name] = st
                diagnosis.unschedulable_plugins.add(st.plugin)
            return None, evaluation, FitError(n, diagnosis)
        if len(feasible) == 1:
            return feasible[0].name, evaluation, None
        status = fw.run_pre_score(state, pi, feasible)
        if not status.is_success():
            raise SchedulingError(f'running PreScore plugin "{status.plugin}": {status.message()}')
        per_plugin, total = fw.run_score(state, pi, feasible, self.cache, slots)
        evaluation.plugin_scores, evaluation.total_scores = per_plugin, total
        return feasible[self.select_host(total)].name, evaluation, None

    def select_host(self, total: IntArray) -> int:
        """A uniformly random index among the maximal totals (upstream's reservoir sampling)."""
        return select_host(total, self.rng)

    def _nominated_first(
        self, fw: Framework, state: CycleState, pi: PodInfo
    ) -> tuple[list[NodeInfo] | None, tuple[str, Status] | None]:
        return nominated_first(self.cache, fw, state, pi)

    def _narrowed(self, names: frozenset[str]) -> list[NodeInfo]:
        return narrowed(self.cache, names)

    def _find_feasible(
        self,
        fw: Framework,
        state: CycleState,
        pi: PodInfo,
        nodes: list[NodeInfo],
        evaluation: Evaluation,
        *,
        searched: list[NodeInfo] | None = None,
        nominated_failed: tuple[str, Status] | None = None,
    ) -> tuple[Sequence[NodeInfo], IntArray | None]:
        """findNodesThatPassFilters, sequential, over `searched` (the nodes PreFilterResult left, in
        node-tree order) or else every node: from nextStartNodeIndex (modulo the searched count)
        until enough nodes fit; nextStartNodeIndex then moves on by the nodes gone through, modulo
        the count of all nodes. Also the feasible nodes' cache slots when the filters ran
        vectorised (else None).

        A nominated node that failed the filters before the search counts among the nodes gone
        through when the search does not reach it (upstream counts the statuses recorded)."""
        candidates = nodes if searched is None else searched
        n = len(candidates)
        if n == 0:  # PreFilterResult named no existing node: nothing searched
            self._advance(0 if nominated_failed is None else 1, len(nodes))
            evaluation.processed = 0
            return [], np.zeros(0, np.int64)
        pct = fw.percentage_of_nodes_to_score
        k = num_feasible_nodes_to_find(self.global_percentage if pct is None else pct, n)
        if not fw.score_plugins:
            k = 1
        start = self.next_start_node_index % n
        slots: IntArray | None = None
        feasible: Sequence[NodeInfo]
        one_by_one = searched is not None and n <= self.pinned_nodes_to_filter_one_by_one
        if fw.batch_filter and not one_by_one and not reference_mode():
            if searched is None:
                order = self.cache.order()
                mask = (
                    self._filter_memo(fw).ordered_mask(state, pi, self.cache)
                    if self.filter_memo
                    else fw.run_filter_batch(state, pi, self.cache)[order]
                )
            else:
                order = np.fromiter((ni.slot for ni in searched), np.int64, n)
                mask = fw.run_filter_batch(state, pi, self.cache)[order]
            at, processed = first_hits(mask, start, k)  # positions in the searched list
            slots = order[at]
            feasible = NodesAt(candidates, at, slots)
        else:
            found: list[NodeInfo] = []
            processed = 0
            for i in range(n):
                ni = candidates[(start + i) % n]
                processed += 1
                if fw.run_filter(state, pi, ni).is_success():
                    found.append(ni)
                    if len(found) >= k:
                        break
            feasible = found
            if fw.batch_filter and not reference_mode():
                slots = np.fromiter((ni.slot for ni in found), np.int64, len(found))
        extra = 0
        if nominated_failed is not None:
            pos = self._position(nominated_failed[0], searched)
            extra = int(pos is None or (pos - start) % n >= processed)
        self._advance(processed + extra, len(nodes))
        evaluation.processed = processed
        return feasible, slots

    def _node_statuses(self, fw: Framework, state: CycleState, pi: PodInfo) -> NodeStatuses | None:
        """Every node's filter status and their plugins, remembered per filter signature (a
        FilterMemo's `node_statuses`), when the search took its verdicts from the memo."""
        if not (self.filter_memo and fw.batch_filter):
            return None
        return self._filter_memo(fw).node_statuses(state, pi, self.cache)

    def _filter_memo(self, fw: Framework) -> FilterMemo:
        memo = self._filter_memos.get(fw.profile_name)
        if memo is None:
            memo = self._filter_memos[fw.profile_name] = FilterMemo(fw)
        return memo

    def _advance(self, processed: int, num_all_nodes: int) -> None:
        self.next_start_node_index = (self.next_start_node_index + processed) % num_all_nodes

    def _position(self, name: str, searched: list[NodeInfo] | None) -> int | None:
        return position_in(self.cache, name, searched)
