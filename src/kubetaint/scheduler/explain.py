"""`kubetaint explain`: place the unbound pods of a set of manifests in scheduling order and report,
per pod and node, the filter verdict, the untolerated taint with a toleration that fixes it, the
scores and the chosen node (docs/output-formats.md, "Explain JSON").

Every node is filtered for the report; the chosen node is the one the scheduler's own cycle picks
(with numFeasibleNodesToFind sampling, so in clusters of 100+ nodes only the sampled feasible nodes
carry scores). Pods placed earlier consume resources for later ones.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from typing import Any

from kubetaint.api.features import FeatureGates, comparison_operators_enabled
from kubetaint.clock.virtual import VirtualClock
from kubetaint.core.heap import collections_deferred
from kubetaint.core.matching import do_not_schedule_taints_filter, find_matching_untolerated_taint
from kubetaint.core.storage_defaults import with_storage_defaults
from kubetaint.scheduler.cache import IntArray
from kubetaint.scheduler.extension_points import CycleState
from kubetaint.scheduler.fit_error import SchedulingError
from kubetaint.scheduler.framework import Framework, go_list
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.plugins import names
from kubetaint.scheduler.plugins.node_affinity import required_matcher
from kubetaint.scheduler.plugins.node_selector import compile_preferred
from kubetaint.scheduler.plugins.node_unschedulable import UNSCHEDULABLE_TAINT
from kubetaint.scheduler.plugins.volume_binding import binding_warnings
from kubetaint.scheduler.podinfo import PodInfo, make_pod_info
from kubetaint.scheduler.resources import InputError, object_ref, quantity
from kubetaint.scheduler.scheduler import Scheduler
from kubetaint.scheduler.status import Code, Status
from kubetaint.scheduler.unmodelled import pod_warnings

JSON = dict[str, Any]


class ExplainError(ValueError):
    """Input explain cannot work with; the message names the object and field."""


def _flatten(objects: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    out: list[Mapping[str, Any]] = []
    for obj in objects:
        if not isinstance(obj, Mapping):
            raise ExplainError(f"expected Kubernetes objects, got {type(obj).__name__}")
        if str(obj.get("kind", "")).endswith("List") and isinstance(obj.get("items"), list):
            out.extend(_flatten(obj["items"]))
        else:
            out.append(obj)
    return out


def _with_kind(obj: Mapping[str, Any], kind: str) -> Mapping[str, Any]:
    return obj if obj.get("kind") else {**obj, "kind": kind}


def resolve_priorities(
    pods: list[Mapping[str, Any]], classes: list[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """The Priority admission plugin: spec.priority (and preemptionPolicy) from the PriorityClass."""
    by_name = {(c.get("metadata") or {}).get("name", ""): c for c in classes}
    default = next((c for c in classes if c.get("globalDefault")), None)
    out: list[Mapping[str, Any]] = []
    for pod in pods:
        name = (pod.get("spec") or {}).get("priorityClassName")
        cls = by_name.get(name) if name else default
        if cls is None and not name:  # nothing to resolve: the pod as given (no copy)
            out.append(pod)
            continue
        spec = dict(pod.get("spec") or {})
        if name and cls is None:
            raise ExplainError(
                f'{object_ref(pod)}: spec.priorityClassName: Invalid value: "{name}": '
                f"no PriorityClass with name {name} was found"
            )
        if cls is not None:
            value = cls.get("value", 0)
            if not isinstance(value, int):
                raise ExplainError(f"{object_ref(cls)}: value: Invalid value: {value!r}: must be an integer")
            spec["priority"] = value
            spec.setdefault("preemptionPolicy", cls.get("preemptionPolicy") or "PreemptLowerPriority")
        out.append({**pod, "spec": spec})
    return out


def _taint_json(taint: Mapping[str, Any]) -> JSON:
    out: JSON = {"key": taint.get("key", "")}
    if taint.get("value"):
        out["value"] = taint["value"]
    out["effect"] = taint.get("effect", "")
    return out


def suggested_toleration(taint: Mapping[str, Any]) -> JSON:
    """A toleration that tolerates exactly this taint."""
    if taint.get("value"):
        return {
            "key": taint.get("key", ""),
            "operator": "Equal",
            "value": taint["value"],
            "effect": taint.get("effect", ""),
        }
    return {"key": taint.get("key", ""), "operator": "Exists", "effect": taint.get("effect", "")}


def _check_pod(pi: PodInfo) -> None:
    ref = object_ref(pi.pod)
    if pi.has_required_affinity:
        required_matcher(pi)
    compile_preferred(pi.pod, ref)


def _check_node(node: Mapping[str, Any]) -> None:
    status = node.get("status") or {}
    for field in ("allocatable", "capacity"):
        for name, raw in (status.get(field) or {}).items():
            quantity(name, raw, node, f"status.{field}.{name}")
    if not (node.get("metadata") or {}).get("name"):
        raise InputError(
            object_ref(node), "metadata.name", "Required value: name or generateName is required"
        )


def explain(objects: Sequence[Mapping[str, Any]], **options: Any) -> JSON:
    """Place the unbound pods of `objects` on its nodes, in scheduling order, and explain each
    decision: the explain JSON document (see the documentation's "Timeline and explain JSON").

    Args:
        objects: Nodes and Pods (and any PriorityClasses, RuntimeClasses, ...) as JSON dicts.
        **options: `pod="ns/name"` (report only that pod), `seed`, `feature_gates`, `config`
            (a KubeSchedulerConfiguration).

    Returns:
        `{"pods": [...]}`: per pod the result, the chosen node or upstream's message, and every
        node's verdict, untolerated taint, suggested toleration and scores; `warnings` (per pod,
        and for the configuration at the top) name what the scheduler does not model.
    """
    try:
        with collections_deferred():  # a cluster's worth of long-lived objects, built at once
            return _explain(objects, **options)
    except InputError as exc:
        raise ExplainError(str(exc)) from None


def _explain(
    objects: Sequence[Mapping[str, Any]],
    *,
    pod: str | None = None,
    seed: int = 0,
    feature_gates: FeatureGates | None = None,
    config: Mapping[str, Any] | None = None,
) -> JSON:
    flat = _flatten(objects)
    nodes = [_with_kind(o, "Node") for o in flat if o.get("kind") == "Node"]
    pods = [_with_kind(o, "Pod") for o in flat if o.get("kind") == "Pod"]
    classes = [o for o in flat if o.get("kind") == "PriorityClass"]
    pdbs = [o for o in flat if o.get("kind") == "PodDisruptionBudget"]
    if not nodes:
        raise ExplainError("no nodes: explain needs at least one Node object in the input")
    pods = resolve_priorities(pods, classes)
    scheduler = Scheduler(VirtualClock(), random.Random(seed), config=config, feature_gates=feature_gates)
    enable_cmp = comparison_operators_enabled(feature_gates)
    for node in nodes:
        _check_node(node)
        scheduler.add_node(node)
    for pdb in pdbs:
        scheduler.add_pdb(pdb)
    for obj in flat:  # InterPodAffinity's namespaceSelector, PodTopologySpread's default selector
        if obj.get("kind") == "Namespace":
            scheduler.add_namespace(obj)
        elif obj.get("kind") == "ReplicaSet":
            scheduler.add_replica_set(obj)
        elif obj.get("kind") == "StatefulSet":
            scheduler.add_stateful_set(obj)
        elif obj.get("kind") == "Service":
            scheduler.add_service(obj)
        else:  # the volume plugins' claims, volumes, classes and CSINodes, as stored
            scheduler.add_storage_object(with_storage_defaults(dict(obj)))
    pending: list[PodInfo] = []
    for p in pods:
        bound = scheduler.cache.add_pod(p)  # a bound pod's info, as the cache holds it (built once)
        pi = make_pod_info(p) if bound is None else bound
        _check_pod(pi)
        if bound is None:
            pending.append(pi)
    order = sorted(range(len(pending)), key=lambda i: (-pending[i].priority, i))
    if pod is not None and not any(f"{pending[i].namespace}/{pending[i].name}" == pod for i in order):
        raise ExplainError(f"pod {pod} not found among the unbound pods of the input")
    reports: list[JSON] = []
    answered: dict[str, JSON] = {}  # per question, the report of a pod that fit nowhere
    for i in order:
        pi = pending[i]
        question = _question(pi.pod)
        earlier = answered.get(question)
        if earlier is not None:
            report = {**earlier, "namespace": pi.namespace, "name": pi.name}
        else:
            started_at = scheduler.next_start_node_index
            report = _explain_pod(scheduler, pi, enable_cmp)
            if (
                report["result"] == "Unschedulable"
                and "nominatedNode" not in report
                and scheduler.next_start_node_index == started_at
            ):
                answered[question] = dict(report)
            else:  # the cluster, a nomination or the search's start changed: ask afresh
                answered.clear()
        warnings = pod_warnings(pi.pod) + report.pop("bindingWarnings", [])
        if warnings:
            report["warnings"] = warnings
        if pod is None or f"{pi.namespace}/{pi.name}" == pod:
            reports.append(report)
    document: JSON = {"pods": reports}
    if scheduler.warnings:
        document["warnings"] = list(scheduler.warnings)
    return document


def _question(pod: Mapping[str, Any]) -> str:
    """What a scheduling cycle reads of a pending pod (all but its name): pods asking the same
    question of an unchanged cluster get the same answer, as the pods of one template do."""
    meta = pod.get("metadata") or {}
    asked = [
        meta.get("namespace") or "default",
        meta.get("labels"),
        meta.get("ownerReferences"),
        pod.get("spec"),
        (pod.get("status") or {}).get("nominatedNodeName"),
    ]
    return json.dumps(asked, sort_keys=True, default=str)


def _explain_pod(scheduler: Scheduler, pi: PodInfo, enable_cmp: bool) -> JSON:
    fw = scheduler.framework_for(pi)
    state = CycleState()
    try:
        node, evaluation, fit_error = scheduler.schedule_pod(fw, state, pi)
    except SchedulingError as exc:
        verdicts = _verdicts(scheduler, fw, pi, {})
        return {
            "namespace": pi.namespace,
            "name": pi.name,
            "result": "SchedulerError",
            "node": None,
            "message": str(exc),
            "nodes": [
                _node_entry(ni, verdicts[ni.name], None, pi, enable_cmp) for ni in scheduler.cache.node_list()
            ],
        }
    verdicts = _verdicts(scheduler, fw, pi, fit_error.diagnosis.node_to_status if fit_error else {})
    scores: dict[str, JSON] = {}
    feasible = evaluation.feasible
    per_plugin: dict[str, IntArray] = evaluation.plugin_scores
    total: IntArray | None = evaluation.total_scores
    # The cycle skips scoring a lone feasible node; it is scored for the report (trivially maximal).
    if len(feasible) == 1 and fw.run_pre_score(state, pi, feasible).is_success():
        per_plugin, total = fw.run_score(state, pi, feasible, scheduler.cache)
    if total is not None:
        for j, ni in enumerate(feasible):
            scores[ni.name] = {
                "scores": {name: int(arr[j]) for name, arr in per_plugin.items()},
                "totalScore": int(total[j]),
            }
    result: JSON = {"namespace": pi.namespace, "name": pi.name}
    if node is not None:
        result.update(
            result="Scheduled", node=node, message=f"Successfully assigned {pi.namespace}/{pi.name} to {node}"
        )
    else:
        assert fit_error is not None
        post = scheduler.run_post_filter(fw, state, pi, fit_error)
        message = fit_error.error() if fit_error.num_all_nodes else "no nodes available to schedule pods"
        result.update(result="Unschedulable", node=None, message=message)
        if post is not None and post.nominated_node_name:
            result["nominatedNode"] = post.nominated_node_name
            result["victims"] = [_pod_name(v) for v in post.victims]
    result["nodes"] = [
        _node_entry(ni, verdicts[ni.name], scores.get(ni.name), pi, enable_cmp)
        for ni in scheduler.cache.node_list()
    ]
    if node is not None:
        scheduler.cache.assume_pod(pi, node)
        fw.run_reserve(state, pi, node)  # (VolumeBinding assumes the claims' bindings)
        bindings = binding_warnings(state, written=False)
        if bindings:
            result["bindingWarnings"] = bindings
    return result


def _verdicts(
    scheduler: Scheduler, fw: Framework, pi: PodInfo, known: Mapping[str, Status]
) -> dict[str, Status]:
    """Every node's filter verdict for `pi`. `known`: the verdicts the cycle recorded already (a
    FitError's NodeToStatus: when nothing fits, the cycle filters every node it searched, as
    upstream's diagnosis does); only the other nodes are filtered here."""
    verdicts = dict(known)
    missing = [ni for ni in scheduler.cache.node_list() if ni.name not in verdicts]
    if not missing:
        return verdicts
    report_state = CycleState()
    pre = fw.run_pre_filter_plugins(report_state, pi, scheduler.cache.node_list())
    for ni in missing:
        if not pre.status.is_success():
            verdicts[ni.name] = pre.status
        elif pre.node_names is not None and ni.name not in pre.node_names:
            # findNodesThatFitPod filters only the PreFilterResult's nodes; the others have the
            # absent-nodes status, as in the message (attributed here to the narrowing plugins)
            verdicts[ni.name] = Status(
                Code.UnschedulableAndUnresolvable,
                f"node(s) didn't satisfy plugin(s) {go_list(sorted(pre.plugins_with_nodes))}",
                plugin=", ".join(sorted(pre.plugins_with_nodes)),
            )
        else:
            verdicts[ni.name] = fw.run_filter(report_state, pi, ni)
    return verdicts


def _pod_name(pod: Mapping[str, Any]) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}"


def _node_entry(ni: NodeInfo, status: Status, scored: JSON | None, pi: PodInfo, enable_cmp: bool) -> JSON:
    entry: JSON = {"name": ni.name, "feasible": status.is_success()}
    if not status.is_success():
        entry["filter"] = {"plugin": status.plugin, "code": status.code.name, "reason": status.message()}
        taint: Mapping[str, Any] | None = None
        if status.plugin == names.TAINT_TOLERATION:
            taint, _ = find_matching_untolerated_taint(
                ni.taints, pi.tolerations, do_not_schedule_taints_filter, enable_cmp
            )
        elif status.plugin == names.NODE_UNSCHEDULABLE:
            taint = UNSCHEDULABLE_TAINT
        if taint is not None:
            entry["untoleratedTaint"] = _taint_json(taint)
            entry["suggestedToleration"] = suggested_toleration(taint)
    elif scored is not None:
        entry.update(scored)
    return entry
