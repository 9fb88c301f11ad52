"""Where a DaemonSet's pods belong (pkg/controller/daemon/daemon_controller.go
NodeShouldRunDaemonPod and predicates; util.GetTargetNodeName; ReplaceDaemonSetPodNodeNameNodeAffinity).

- shouldRun: the template's nodeName (if any) is the node, the node affinity/selector matches,
  and no NoSchedule/NoExecute taint is untolerated by the pod (with the DaemonSet tolerations);
- shouldContinueRunning: as shouldRun, except that only NoExecute taints count.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from kubetaint.core.daemonset import add_or_update_daemon_pod_tolerations
from kubetaint.core.matching import NO_EXECUTE, do_not_schedule_taints_filter, find_matching_untolerated_taint
from kubetaint.core.nodeaffinity import required_node_affinity_matches
from kubetaint.speed.memo import Memo

JSON = dict[str, Any]


def daemon_pod_spec(ds: Mapping[str, Any]) -> JSON:
    """The template spec with the DaemonSet tolerations (NewPod / CreatePodTemplate)."""
    spec = dict(((ds.get("spec") or {}).get("template") or {}).get("spec") or {})
    spec["tolerations"] = add_or_update_daemon_pod_tolerations(spec)["tolerations"]
    return spec


#: id(template spec) -> (the template spec, a deep copy of it, its daemon spec), for the last one
_LAST_SPEC: Memo[int, tuple[Any, Any, JSON]] = Memo("controllers.daemonset.placement.daemon_spec", limit=1)


def _daemon_spec_for_placement(ds: Mapping[str, Any]) -> JSON:
    """daemon_pod_spec(ds) for reading only, remembered for the last template (a sync asks once
    per node); a template changed in place since is noticed by comparing with a copy."""
    template: Any = ((ds.get("spec") or {}).get("template") or {}).get("spec")
    last = _LAST_SPEC.get(id(template))
    if last is not None and last[0] is template and last[1] == template:
        return last[2]
    spec = daemon_pod_spec(ds)
    _LAST_SPEC.put(id(template), (template, copy.deepcopy(template), spec))
    return spec


def daemon_pod_spec_copy(ds: Mapping[str, Any]) -> JSON:
    """daemon_pod_spec(ds): a new dict whose values are the remembered spec's (read-only: the
    template's own and the DaemonSet tolerations list, shared by every pod made from it)."""
    return dict(_daemon_spec_for_placement(ds))


def node_should_run_daemon_pod(
    node: Mapping[str, Any], ds: Mapping[str, Any], *, enable_comparison: bool = False
) -> tuple[bool, bool]:
    """(shouldRun, shouldContinueRunning) for the DaemonSet on the node."""
    return _should_run(node, _daemon_spec_for_placement(ds), enable_comparison)


class PlacementMemo:
    """node_should_run_daemon_pod remembered per node: a sync asks for every node (twice), and
    between syncs most nodes and the DaemonSet stay the same (read-only) objects. An entry holds
    what the answer reads of the node (its labels and spec objects: a status write keeps both)
    and the placement spec it was computed for (the spec is rebuilt when the template changes,
    even in place), so any change to either computes it afresh."""

    def __init__(self) -> None:
        self._entries: Memo[str, tuple[Any, Any, JSON, bool, tuple[bool, bool]]] = Memo(
            "controllers.daemonset.placement.should_run", limit=1 << 16
        )

    def should_run(
        self, node: Mapping[str, Any], ds: Mapping[str, Any], *, enable_comparison: bool = False
    ) -> tuple[bool, bool]:
        return self.should_run_for(node, _daemon_spec_for_placement(ds), enable_comparison)

    def placement(
        self, ds: Mapping[str, Any], *, enable_comparison: bool = False
    ) -> Callable[[Mapping[str, Any]], tuple[bool, bool]]:
        """`should_run` for one pass over the nodes: the placement spec is worked out once (the
        DaemonSet does not change during the pass)."""
        spec = _daemon_spec_for_placement(ds)
        # (a partial, not a lambda: a sync asks twice for every node)
        return functools.partial(self.should_run_for, spec=spec, enable_comparison=enable_comparison)

    def verdicts(
        self, nodes: Sequence[Mapping[str, Any]], ds: Mapping[str, Any], *, enable_comparison: bool = False
    ) -> list[tuple[bool, bool]]:
        """`should_run(node, ds)` of each node in turn (a pass over the nodes: the placement spec
        is worked out once, the remembered answers looked up in one loop)."""
        spec = _daemon_spec_for_placement(ds)
        entries, should_run_for = self._entries, self.should_run_for
        answers: list[tuple[bool, bool]] = []
        for node in nodes:
            meta = node.get("metadata") or {}
            entry = entries.get(str(meta.get("name") or ""))
            if (
                entry is not None
                and entry[0] is meta.get("labels")
                and entry[1] is node.get("spec")
                and entry[2] is spec
                and entry[3] == enable_comparison
            ):
                answers.append(entry[4])
            else:
                answers.append(should_run_for(node, spec, enable_comparison))
        return answers

    def should_run_for(
        self, node: Mapping[str, Any], spec: JSON, enable_comparison: bool
    ) -> tuple[bool, bool]:
        meta = node.get("metadata") or {}
        name = str(meta.get("name") or "")
        labels, node_spec = meta.get("labels"), node.get("spec")
        entry = self._entries.get(name)
        if (
            entry is not None
            and entry[0] is labels
            and entry[1] is node_spec
            and entry[2] is spec
            and entry[3] == enable_comparison
        ):
            return entry[4]
        result = _should_run(node, spec, enable_comparison)
        self._entries.put(name, (labels, node_spec, spec, enable_comparison, result))
        return result

    def forget(self, name: str) -> None:
        self._entries.discard(name)


def _should_run(node: Mapping[str, Any], spec: JSON, enable_comparison: bool) -> tuple[bool, bool]:
    node_name = str((node.get("metadata") or {}).get("name") or "")
    if spec.get("nodeName") and spec["nodeName"] != node_name:
        return False, False
    pod = {"spec": spec}
    if not required_node_affinity_matches(pod, node):
        return False, False
    taints = (node.get("spec") or {}).get("taints") or []
    tolerations = spec["tolerations"]
    found, error = find_matching_untolerated_taint(
        taints, tolerations, do_not_schedule_taints_filter, enable_comparison
    )
    if found is None and error is None:
        return True, True
    no_execute, error = find_matching_untolerated_taint(
        taints, tolerations, lambda t: t.get("effect") == NO_EXECUTE, enable_comparison
    )
    return False, no_execute is None and error is None


def target_node_name(pod: Mapping[str, Any]) -> str | None:
    """GetTargetNodeName: spec.nodeName, else the single metadata.name In value of the affinity."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    for term in required.get("nodeSelectorTerms") or []:
        for field in term.get("matchFields") or []:
            values = field.get("values") or []
            if field.get("key") == "metadata.name" and field.get("operator") == "In" and len(values) == 1:
                return str(values[0])
    return None


def unscheduled_pods_without_node(
    nodes: Iterable[Mapping[str, Any]], by_node: Mapping[str, list[JSON]]
) -> list[JSON]:
    """getUnscheduledPodsWithoutNode: the pods not yet bound (no spec.nodeName) whose target node
    does not exist; the scheduler can never place them and PodGC never deletes them, so the
    DaemonSet controller deletes them (upstream walks a map; here target nodes in name order)."""
    existing = {str(node["metadata"]["name"]) for node in nodes}
    return [
        pod
        for name in sorted(by_node)
        if name not in existing
        for pod in by_node[name]
        if not (pod.get("spec") or {}).get("nodeName")
    ]


def node_name_affinity(affinity: Mapping[str, Any] | None, node_name: str) -> JSON:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: the required terms become exactly one
    `metadata.name In [node]` field term; preferred terms and pod (anti-)affinity are kept."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
    result = dict(affinity or {})
    node_affinity = dict(result.get("nodeAffinity") or {})
    required = dict(node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    required["nodeSelectorTerms"] = [term]
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = required
    result["nodeAffinity"] = node_affinity
    return result
