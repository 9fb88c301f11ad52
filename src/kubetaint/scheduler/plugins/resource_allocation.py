"""Scoring strategies shared by NodeResourcesFit and NodeResourcesBalancedAllocation
(mirrors noderesources/resource_allocation.go, least_allocated.go, most_allocated.go,
requested_to_capacity_ratio.go, balanced_allocation.go and helper/shape_score.go).

Inputs are matrices [nodes, resources] of allocatable and requested-including-the-pod; every scorer
is vectorised with Go's integer arithmetic so batch and per-node scoring agree exactly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from kubetaint.api.validation import field as f
from kubetaint.scheduler.cache import Cache, IntArray
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.resources import CPU, EPHEMERAL_STORAGE, MEMORY
from kubetaint.scheduler.status import MAX_NODE_SCORE

Matrix = npt.NDArray[np.int64]
ResourceSpec = tuple[str, int]  # (name, weight)
DEFAULT_RESOURCES: tuple[ResourceSpec, ...] = ((CPU, 1), (MEMORY, 1))
_BASIC = (CPU, MEMORY, EPHEMERAL_STORAGE)


def pod_request_list(requests: dict[str, int], resources: Sequence[ResourceSpec]) -> list[int]:
    return [requests.get(name, 0) for name, _ in resources]


def inputs_from_cache(
    cache: Cache, slots: IntArray, resources: Sequence[ResourceSpec], pod_req: list[int], use_requested: bool
) -> tuple[Matrix, Matrix]:
    """(allocatable, requested+pod) for the given slots; (0, 0) for a scalar the pod doesn't request."""
    n = len(slots)
    alloc = np.zeros((n, len(resources)), np.int64)
    req = np.zeros((n, len(resources)), np.int64)
    for i, (name, _) in enumerate(resources):
        if pod_req[i] == 0 and name not in _BASIC:
            continue
        col = cache.columns.get(name)
        if col is None:
            continue
        alloc[:, i] = cache.alloc[slots, col]
        if not use_requested and name == CPU:
            used = cache.nonzero_cpu[slots]
        elif not use_requested and name == MEMORY:
            used = cache.nonzero_memory[slots]
        else:
            used = cache.req[slots, col]
        req[:, i] = used + pod_req[i]
    return alloc, req


def inputs_from_nodes(
    nodes: Sequence[NodeInfo], resources: Sequence[ResourceSpec], pod_req: list[int], use_requested: bool
) -> tuple[Matrix, Matrix]:
    alloc = np.zeros((len(nodes), len(resources)), np.int64)
    req = np.zeros((len(nodes), len(resources)), np.int64)
    for j, ni in enumerate(nodes):
        for i, (name, _) in enumerate(resources):
            if pod_req[i] == 0 and name not in _BASIC:
                continue
            alloc[j, i] = ni.allocatable.get(name, 0)
            if not use_requested and name == CPU:
                used = ni.nonzero_cpu
            elif not use_requested and name == MEMORY:
                used = ni.nonzero_memory
            else:
                used = ni.requested.get(name, 0)
            req[j, i] = used + pod_req[i]
    return alloc, req


def _weighted(per_resource: Matrix, alloc: Matrix, weights: IntArray) -> IntArray:
    present = alloc != 0
    w = np.where(present, weights, 0)
    weight_sum = w.sum(axis=1)
    total = (per_resource * w).sum(axis=1)
    out: IntArray = np.where(weight_sum > 0, total // np.maximum(weight_sum, 1), 0)
    return out


def least_allocated(alloc: Matrix, req: Matrix, weights: IntArray) -> IntArray:
    """leastRequestedScore: (capacity-requested)*100/capacity; 0 when over capacity."""
    safe = np.maximum(alloc, 1)
    per = np.where((alloc == 0) | (req > alloc), 0, ((alloc - req) * MAX_NODE_SCORE) // safe)
    return _weighted(per, alloc, weights)


def most_allocated(alloc: Matrix, req: Matrix, weights: IntArray) -> IntArray:
    """mostRequestedScore: requested*100/capacity, requested capped at capacity."""
    safe = np.maximum(alloc, 1)
    per = np.where(alloc == 0, 0, (np.minimum(req, alloc) * MAX_NODE_SCORE) // safe)
    return _weighted(per, alloc, weights)


def _go_div(a: int, b: int) -> int:
    """Go's truncating integer division."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def broken_linear(shape: Sequence[tuple[int, int]], p: int) -> int:
    """helper.BuildBrokenLinearFunction over (utilization, score) points."""
    for i, (util, score) in enumerate(shape):
        if p <= util:
            if i == 0:
                return shape[0][1]
            prev_util, prev_score = shape[i - 1]
            return prev_score + _go_div((score - prev_score) * (p - prev_util), util - prev_util)
    return shape[-1][1]


def requested_to_capacity_ratio(
    alloc: Matrix, req: Matrix, weights: IntArray, shape: Sequence[tuple[int, int]]
) -> IntArray:
    """requestedToCapacityRatioScorer: shape scores (0-10) scaled by 10, rounded weighted mean."""
    scaled = [(u, s * (MAX_NODE_SCORE // 10)) for u, s in shape]
    out = np.zeros(len(alloc), np.int64)
    for j in range(len(alloc)):
        node_score = weight_sum = 0
        for i in range(alloc.shape[1]):
            a, r = int(alloc[j, i]), int(req[j, i])
            if a == 0:
                continue
            util = 100 if r > a else r * 100 // a
            s = broken_linear(scaled, util)
            if s > 0:
                node_score += s * int(weights[i])
                weight_sum += int(weights[i])
        # Go's math.Round rounds halves away from zero (numpy would round them to even).
        out[j] = 0 if weight_sum == 0 else math.floor(node_score / weight_sum + 0.5)
    return out


def balanced(alloc: Matrix, req: Matrix) -> IntArray:
    """balancedResourceScorer: (1 - std of the capped usage fractions) * 100, truncated."""
    n, r = alloc.shape
    if r == 2:
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = np.minimum(req.astype(np.float64) / alloc.astype(np.float64), 1.0)
        both = (alloc[:, 0] != 0) & (alloc[:, 1] != 0)
        spread = np.where(both, np.abs((frac[:, 0] - frac[:, 1]) / 2), 0.0)
        out: IntArray = ((1 - spread) * MAX_NODE_SCORE).astype(np.int64)
        return out
    result = np.zeros(n, np.int64)
    for j in range(n):
        fractions = [min(float(req[j, i]) / float(alloc[j, i]), 1.0) for i in range(r) if alloc[j, i] != 0]
        std: float = 0.0
        if len(fractions) == 2:
            std = abs((fractions[0] - fractions[1]) / 2)
        elif len(fractions) > 2:
            mean = sum(fractions) / len(fractions)
            std = float(np.sqrt(sum((f - mean) * (f - mean) for f in fractions) / len(fractions)))
        result[j] = int((1 - std) * MAX_NODE_SCORE)
    return result


def parse_resources(
    args: dict[str, Any], default: Sequence[ResourceSpec], path: str = "resources", *, balanced: bool = False
) -> tuple[ResourceSpec, ...]:
    """The args' `resources` list (a weight left out is 1, as defaulting sets it), checked as
    ValidateNodeResourcesFitArgs' validateResources (weights in (0, 100]) or, for `balanced`,
    ValidateNodeResourcesBalancedAllocationArgs (no repeated name, every weight 1); the errors
    aggregated as upstream reports them, under `path`."""
    specs, errs = resource_specs(args, default, path, balanced=balanced)
    if errs:
        raise ValueError(errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]")
    return specs


def resource_specs(
    args: dict[str, Any], default: Sequence[ResourceSpec], path: str, *, balanced: bool = False
) -> tuple[tuple[ResourceSpec, ...], list[str]]:
    """parse_resources' specs and its errors, not raised."""
    raw = args.get("resources")
    if not raw:
        return tuple(default), []
    out: list[ResourceSpec] = []
    errs: list[str] = []
    seen: set[str] = set()
    for i, entry in enumerate(raw if isinstance(raw, list) else []):
        item = entry if isinstance(entry, dict) else {}
        name = str(item.get("name", ""))
        weight = item.get("weight", 1)
        where = f"{path}[{i}]"
        if balanced:
            if name in seen:
                errs.append(str(f.duplicate(f"{where}.name", name)))
            seen.add(name)
            if weight != 1:
                errs.append(str(f.invalid(f"{where}.weight", weight, "must be 1")))
        elif not isinstance(weight, int) or isinstance(weight, bool) or weight <= 0 or weight > 100:
            errs.append(
                str(
                    f.invalid(
                        f"{where}.weight", weight, f"resource weight of {name} not in valid range (0, 100]"
                    )
                )
            )
        out.append((name, weight if isinstance(weight, int) else 1))
    return tuple(out), errs


def shape_errors(shape: Any, path: str) -> list[str]:
    """validateFunctionShape: at least one point, utilization increasing, utilization in [0, 100]
    and score in [0, 10]."""
    points = shape if isinstance(shape, list) else []
    if not points:
        return [str(f.required(path, "at least one point must be specified"))]
    errs: list[str] = []
    util = [p.get("utilization", 0) if isinstance(p, dict) else 0 for p in points]
    score = [p.get("score", 0) if isinstance(p, dict) else 0 for p in points]
    for i in range(1, len(points)):
        if util[i - 1] >= util[i]:
            errs.append(
                str(
                    f.invalid(
                        f"{path}[{i}].utilization", util[i], "values must be sorted in increasing order"
                    )
                )
            )
            break
    for i in range(len(points)):
        if not 0 <= util[i] <= 100:
            errs.append(str(f.invalid(f"{path}[{i}].utilization", util[i], "not in valid range [0, 100]")))
        if not 0 <= score[i] <= 10:
            errs.append(str(f.invalid(f"{path}[{i}].score", score[i], "not in valid range [0, 10]")))
    return errs
