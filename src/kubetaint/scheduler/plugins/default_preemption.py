"""DefaultPreemption: find nodes where evicting lower-priority pods lets the pod fit
(mirrors pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go and
pkg/scheduler/framework/preemption/preemption.go).

Dry runs use cloned NodeInfos and the profile's Filter plugins; the host deletes the victims.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kubetaint.scheduler.cache import Cache
from kubetaint.scheduler.extension_points import (
    CycleState,
    Handle,
    Plugin,
    PostFilterPlugin,
    PostFilterResult,
    UsesHandle,
)
from kubetaint.scheduler.fit_error import Diagnosis, FitError, NodeToStatus, fit_error_message
from kubetaint.scheduler.framework import Framework
from kubetaint.scheduler.labels import selector_empty, selector_matches
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.plugins import names
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.status import Code, Status

NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
NEVER = "not eligible due to preemptionPolicy=Never."
TERMINATING_ON_NOMINATED = "not eligible due to a terminating pod on the nominated node."
MIN_CANDIDATE_NODES_PERCENTAGE = 10
MIN_CANDIDATE_NODES_ABSOLUTE = 100
_INT32_SHIFT = 2**31


class PreemptionHandle(Protocol):
    cache: Cache
    rng: random.Random

    def framework_for(self, pi: PodInfo) -> Framework: ...

    def pdbs(self) -> Sequence[Mapping[str, Any]]: ...


@dataclass
class Candidate:
    node: str
    victims: list[PodInfo]
    num_pdb_violations: int


def _importance_key(p: PodInfo) -> tuple[int, float]:
    return (-p.priority, p.start_time)


def split_by_pdb(
    victims: list[PodInfo], pdbs: Sequence[Mapping[str, Any]]
) -> tuple[list[PodInfo], list[PodInfo]]:
    """filterPodsWithPDBViolation: (violating, non-violating), each in the given order."""
    allowed = [int(((pdb.get("status") or {}).get("disruptionsAllowed")) or 0) for pdb in pdbs]
    violating: list[PodInfo] = []
    ok: list[PodInfo] = []
    for pi in victims:
        labels = ((pi.pod.get("metadata") or {}).get("labels")) or {}
        violated = False
        if labels:
            for i, pdb in enumerate(pdbs):
                meta = pdb.get("metadata") or {}
                if (meta.get("namespace") or "default") != pi.namespace:
                    continue
                selector = (pdb.get("spec") or {}).get("selector")
                if selector_empty(selector) or not selector_matches(selector, labels):
                    continue
                if pi.name in (((pdb.get("status") or {}).get("disruptedPods")) or {}):
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else ok).append(pi)
    return violating, ok


class DefaultPreemption(Plugin, PostFilterPlugin, UsesHandle):
    name = names.DEFAULT_PREEMPTION

    def __init__(self, args: Mapping[str, Any] | None = None) -> None:
        args = dict(args or {})
        self.min_pct = int(args.get("minCandidateNodesPercentage", MIN_CANDIDATE_NODES_PERCENTAGE))
        self.min_abs = int(args.get("minCandidateNodesAbsolute", MIN_CANDIDATE_NODES_ABSOLUTE))
        self.handle: PreemptionHandle | None = None

    def use_handle(self, handle: Handle) -> None:
        self.handle = handle

    def post_filter(
        self,
        state: CycleState,
        pi: PodInfo,
        node_to_status: Mapping[str, Status],
        absent_status: Status | None = None,
    ) -> tuple[PostFilterResult | None, Status]:
        result, status = self.preempt(state, pi, node_to_status, absent_status)
        if status.reasons:
            return result, Status(status.code, "preemption: " + status.message())
        return result, status

    def num_candidates(self, n: int) -> int:
        return min(max(n * self.min_pct // 100, self.min_abs), n)

    def preempt(
        self,
        state: CycleState,
        pi: PodInfo,
        node_to_status: Mapping[str, Status],
        absent_status: Status | None = None,
    ) -> tuple[PostFilterResult | None, Status]:
        """Preempt. `node_to_status` holds the nodes given a status explicitly; every other node has
        `absent_status` (NodeToStatus's absent-nodes status; by default UnschedulableAndUnresolvable,
        as NewDefaultNodeToStatus says). Only nodes whose status is Unschedulable may be helped by
        removing pods (NodesForStatusCode(Unschedulable))."""
        handle = self.handle
        assert handle is not None, "DefaultPreemption needs a handle"
        absent = absent_status if absent_status is not None else Status(Code.UnschedulableAndUnresolvable)
        nominated_status = node_to_status.get(pi.nominated_node_name, absent)
        eligible, why = self.pod_eligible_to_preempt_others(pi, nominated_status)
        if not eligible:
            return None, Status(Code.Unschedulable, why)
        all_nodes = handle.cache.node_list()
        if isinstance(node_to_status, NodeToStatus) and absent.code != Code.Unschedulable:
            nodes = handle.cache.nodes  # (the statuses' summary names them in node-tree order)
            potential = [nodes[name] for name in node_to_status.unschedulable]
        else:
            potential = [
                ni for ni in all_nodes if node_to_status.get(ni.name, absent).code == Code.Unschedulable
            ]
        if not potential:  # every node's status: "Preemption is not helpful for scheduling"
            message = fit_error_message(len(all_nodes), {NOT_HELPFUL: len(all_nodes)} if all_nodes else {})
            return PostFilterResult(nominated_node_name=""), Status(Code.Unschedulable, message)
        statuses: dict[str, Status] = {
            ni.name: Status(Code.UnschedulableAndUnresolvable, NOT_HELPFUL)
            for ni in all_nodes
            if node_to_status.get(ni.name, absent).code != Code.Unschedulable
        }
        candidates = self.dry_run_preemption(state, pi, potential, statuses, handle)
        if not candidates:
            fit = FitError(len(all_nodes), Diagnosis(node_to_status=statuses))
            return PostFilterResult(nominated_node_name=""), Status(Code.Unschedulable, fit.error())
        best = pick_one_node_for_preemption(candidates)
        return (
            PostFilterResult(best.node, [v.pod for v in best.victims]),
            Status(Code.Success),
        )

    def pod_eligible_to_preempt_others(self, pi: PodInfo, nominated_status: Status) -> tuple[bool, str]:
        """PodEligibleToPreemptOthers: not with preemptionPolicy Never, nor while a lower-priority
        pod on the nominated node (unless the filters found that node UnschedulableAndUnresolvable)
        is terminating because of a preemption."""
        if pi.preemption_policy == "Never":
            return False, NEVER
        if pi.nominated_node_name:
            if nominated_status.code == Code.UnschedulableAndUnresolvable:
                return True, ""
            handle = self.handle
            ni = handle.cache.nodes.get(pi.nominated_node_name) if handle is not None else None
            if ni is not None:
                for p in ni.pods.values():
                    if p.priority < pi.priority and terminating_by_preemption(p.pod):
                        return False, TERMINATING_ON_NOMINATED
        return True, ""

    def dry_run_preemption(
        self,
        state: CycleState,
        pi: PodInfo,
        potential: list[NodeInfo],
        statuses: dict[str, Status],
        handle: PreemptionHandle,
    ) -> list[Candidate]:
        n = len(potential)
        offset = handle.rng.randrange(n)
        wanted = self.num_candidates(n)
        framework = handle.framework_for(pi)
        pdbs = handle.pdbs()
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        for i in range(n):
            ni = potential[(offset + i) % n]
            victims, num_violations, status = select_victims_on_node(state, pi, ni.clone(), framework, pdbs)
            if status.is_success() and victims:
                # (candidateList: each list holds at most numCandidates)
                found = violating if num_violations else non_violating
                if len(found) < wanted:
                    found.append(Candidate(ni.name, victims, num_violations))
                if non_violating and len(non_violating) + len(violating) >= wanted:
                    break
            elif status.is_success():
                statuses[ni.name] = Status(Code.UnschedulableAndUnresolvable, NO_VICTIMS)
            else:
                statuses[ni.name] = status
        return non_violating + violating


def terminating_by_preemption(pod: Mapping[str, Any]) -> bool:
    """podTerminatingByPreemption: deleting, with DisruptionTarget=True for PreemptionByScheduler."""
    if not (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if isinstance(condition, Mapping) and condition.get("type") == "DisruptionTarget":
            return condition.get("status") == "True" and condition.get("reason") == "PreemptionByScheduler"
    return False


def select_victims_on_node(
    state: CycleState, pi: PodInfo, ni: NodeInfo, framework: Framework, pdbs: Sequence[Mapping[str, Any]]
) -> tuple[list[PodInfo], int, Status]:
    """SelectVictimsOnNode: remove every lower-priority pod, then reprieve as many as still fit."""
    lower = [p for p in ni.pods.values() if p.priority < pi.priority]
    for p in lower:
        ni.remove_pod(p)
    if not lower:
        return [], 0, Status(Code.UnschedulableAndUnresolvable, NO_VICTIMS)
    status = framework.run_filter(state, pi, ni)
    if not status.is_success():
        return [], 0, status
    lower.sort(key=_importance_key)
    violating, non_violating = split_by_pdb(lower, pdbs)
    victims: list[PodInfo] = []
    num_violations = 0

    def reprieve(p: PodInfo) -> bool:
        ni.add_pod(p)
        if framework.run_filter(state, pi, ni).is_success():
            return True
        ni.remove_pod(p)
        victims.append(p)
        return False

    for p in violating:
        if not reprieve(p):
            num_violations += 1
    for p in non_violating:
        reprieve(p)
    victims.sort(key=_importance_key)
    return victims, num_violations, Status()


def _earliest_start_of_highest(victims: list[PodInfo]) -> float:
    top = max(v.priority for v in victims)
    return min(v.start_time for v in victims if v.priority == top)


def pick_one_node_for_preemption(candidates: list[Candidate]) -> Candidate:
    """pickOneNodeForPreemption: fewest PDB violations, lowest top victim priority, lowest priority sum,
    fewest victims, latest start among top-priority victims, then the first."""
    for c in candidates:
        if not c.victims:
            return c
    rest = candidates
    for key in (
        lambda c: c.num_pdb_violations,
        lambda c: max(v.priority for v in c.victims),
        lambda c: sum(v.priority + _INT32_SHIFT for v in c.victims),
        lambda c: len(c.victims),
        lambda c: -_earliest_start_of_highest(c.victims),
    ):
        best = min(key(c) for c in rest)
        rest = [c for c in rest if key(c) == best]
        if len(rest) == 1:
            return rest[0]
    return rest[0]
