"""Builders for the InterPodAffinity and PodTopologySpread tables (upstream's test helpers:
createPodWithAffinityTerms, st.MakePod / st.MakeNode)."""

from __future__ import annotations

import random
from typing import Any

from kubetaint.clock.virtual import VirtualClock
from kubetaint.scheduler.extension_points import CycleState
from kubetaint.scheduler.podinfo import make_pod_info
from kubetaint.scheduler.scheduler import Scheduler
from kubetaint.scheduler.status import Code, Status

JSON = dict[str, Any]


def expr(key: str, op: str, *values: str) -> JSON:
    out: JSON = {"key": key, "operator": op}
    if values:
        out["values"] = list(values)
    return out


def term(topology_key: str, *expressions: JSON, namespaces: list[str] | None = None, **extra: Any) -> JSON:
    """A PodAffinityTerm whose labelSelector has the given matchExpressions."""
    out: JSON = {"labelSelector": {"matchExpressions": list(expressions)}, "topologyKey": topology_key}
    if namespaces is not None:
        out["namespaces"] = namespaces
    out.update(extra)
    return out


def weighted(weight: int, t: JSON) -> JSON:
    return {"weight": weight, "podAffinityTerm": t}


def make_node(name: str, labels: dict[str, str] | None = None, taints: list[JSON] | None = None) -> JSON:
    alloc = {"cpu": "100", "memory": "100Gi", "pods": "1000"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"taints": taints or []},
        "status": {"allocatable": alloc, "capacity": dict(alloc)},
    }


_SEQ = iter(range(1_000_000))


def make_pod(
    name: str = "",
    *,
    namespace: str = "default",
    node: str = "",
    labels: dict[str, str] | None = None,
    affinity: list[JSON] | None = None,
    anti_affinity: list[JSON] | None = None,
    preferred_affinity: list[JSON] | None = None,
    preferred_anti_affinity: list[JSON] | None = None,
    spread: list[JSON] | None = None,
    node_selector: dict[str, str] | None = None,
    tolerations: list[JSON] | None = None,
    terminating: bool = False,
    owner: JSON | None = None,
) -> JSON:
    name = name or f"p{next(_SEQ)}"
    spec: JSON = {"containers": [{"name": "c", "image": "x"}]}
    if node:
        spec["nodeName"] = node
    pod_affinity: JSON = {}
    if affinity is not None or preferred_affinity is not None:
        pod_affinity["podAffinity"] = {}
        if affinity is not None:
            pod_affinity["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = affinity
        if preferred_affinity is not None:
            pod_affinity["podAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] = (
                preferred_affinity
            )
    if anti_affinity is not None or preferred_anti_affinity is not None:
        pod_affinity["podAntiAffinity"] = {}
        if anti_affinity is not None:
            pod_affinity["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = anti_affinity
        if preferred_anti_affinity is not None:
            pod_affinity["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] = (
                preferred_anti_affinity
            )
    if pod_affinity:
        spec["affinity"] = pod_affinity
    if spread is not None:
        spec["topologySpreadConstraints"] = spread
    if node_selector:
        spec["nodeSelector"] = node_selector
    if tolerations:
        spec["tolerations"] = tolerations
    meta: JSON = {
        "name": name,
        "namespace": namespace,
        "uid": f"uid-{namespace}-{name}",
        "labels": labels or {},
    }
    if terminating:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    if owner is not None:
        meta["ownerReferences"] = [owner]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def scheduler_with(nodes: list[JSON], pods: list[JSON], config: JSON | None = None) -> Scheduler:
    sched = Scheduler(VirtualClock(), random.Random(0), config=config)
    for n in nodes:
        sched.add_node(n)
    for p in pods:
        sched.cache.add_pod(p)
    return sched


def filter_statuses(sched: Scheduler, plugin: str, pod: JSON) -> dict[str, Status]:
    """PreFilter then Filter of one plugin on every node (a skipped plugin passes every node);
    the vectorised filter must agree with the one-node filter."""
    pi = make_pod_info(pod)
    fw = sched.framework_for(pi)
    pl = fw.plugins[plugin]
    state = CycleState()
    nodes = sched.cache.node_list()
    status = pl.pre_filter(state, pi, nodes)
    out: dict[str, Status] = {}
    if status.code == Code.Skip:
        return {ni.name: Status() for ni in nodes}
    assert status.is_success(), status
    batch = pl.filter_batch(state, pi, sched.cache)
    for ni in nodes:
        out[ni.name] = pl.filter(state, pi, ni)
        if batch is not None:
            assert bool(batch[ni.slot]) == out[ni.name].is_success(), ni.name
    return out


def scores(sched: Scheduler, plugin: str, pod: JSON, names: list[str] | None = None) -> dict[str, int]:
    """PreScore, Score and NormalizeScore of one plugin over the named nodes (default all);
    a skipped plugin scores 0 everywhere."""
    pi = make_pod_info(pod)
    fw = sched.framework_for(pi)
    pl = fw.plugins[plugin]
    state = CycleState()
    nodes = [ni for ni in sched.cache.node_list() if names is None or ni.name in names]
    pre_score = getattr(pl, "pre_score", None)  # (a plugin without PreScore scores as is)
    status = pre_score(state, pi, nodes) if pre_score is not None else Status()
    if status.code == Code.Skip:
        return {ni.name: 0 for ni in nodes}
    assert status.is_success(), status
    import numpy as np

    slots = np.array([ni.slot for ni in nodes], np.int64)
    raw = pl.score_batch(state, pi, sched.cache, slots)
    one_by_one = [pl.score(state, pi, ni) for ni in nodes]
    assert list(raw) == one_by_one
    normalize = getattr(pl, "normalize_score", None)
    normalized = normalize(state, pi, raw) if normalize is not None else raw
    return {ni.name: int(s) for ni, s in zip(nodes, normalized, strict=True)}
