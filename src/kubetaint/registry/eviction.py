"""The pods/eviction subresource on the shared write path (mirrors
pkg/registry/core/pod/storage/eviction.go): a pod covered by a PodDisruptionBudget is deleted only
when the budget allows a disruption, which the eviction consumes; otherwise 429.

The budget's status (disruptionsAllowed, currentHealthy, desiredHealthy, observedGeneration) is
the disruption controller's; this module only reads it and records the disruption.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from kubetaint.admission import CREATE, Attributes
from kubetaint.api import errors
from kubetaint.api.selectors import selector_matches
from kubetaint.api.user import UserInfo
from kubetaint.clock.base import Clock, format_time
from kubetaint.core.conditions import with_disruption_target
from kubetaint.registry.registry import Registry
from kubetaint.store.interface import JSON

PDB_RESOURCE = "poddisruptionbudgets.policy"
#: MaxDisruptedPodSize: evictions not yet confirmed by the disruption controller.
MAX_DISRUPTED_POD_SIZE = 2000
VIOLATION_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget."


def can_ignore_pdb(pod: Mapping[str, Any]) -> bool:
    """canIgnorePDB: terminal, pending and terminating pods are deleted without a budget check."""
    phase = (pod.get("status") or {}).get("phase")
    deleting = bool((pod.get("metadata") or {}).get("deletionTimestamp"))
    return bool(phase in ("Succeeded", "Failed", "Pending") or deleting)


def is_pod_ready(pod: Mapping[str, Any]) -> bool:
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return bool(condition.get("status") == "True")
    return False


def _too_many_requests(cause: str) -> errors.StatusError:
    return errors.StatusError(
        429,
        "TooManyRequests",
        VIOLATION_MESSAGE,
        causes=[{"reason": "DisruptionBudget", "message": cause}],
    )


def _forbidden(name: str, detail: str) -> errors.StatusError:
    return errors.StatusError(
        403,
        "Forbidden",
        f'poddisruptionbudgets.policy "{name}" is forbidden: {detail}',
        name=name,
        group="policy",
        kind="poddisruptionbudgets",
    )


def matching_budgets(registry: Registry, pod: Mapping[str, Any]) -> list[JSON]:
    """getPodDisruptionBudgets: the budgets in the pod's namespace whose selector matches it."""
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    budgets = registry.list(PDB_RESOURCE, namespace=str(meta.get("namespace") or "default")).items
    return [pdb for pdb in budgets if selector_matches((pdb.get("spec") or {}).get("selector"), labels)]


def check_and_decrement(pdb: Mapping[str, Any], pod_name: str, now: float) -> JSON:
    """checkAndDecrement: the budget's new status after one more disruption, or a 403/429."""
    meta = pdb.get("metadata") or {}
    name = str(meta.get("name") or "")
    status = dict(pdb.get("status") or {})
    if int(status.get("observedGeneration") or 0) < int(meta.get("generation") or 0):
        raise _too_many_requests(f"The disruption budget {name} is still being processed by the server.")
    allowed = int(status.get("disruptionsAllowed") or 0)
    if allowed < 0:
        raise _forbidden(name, "pdb disruptions allowed is negative")
    disrupted = dict(status.get("disruptedPods") or {})
    if len(disrupted) > MAX_DISRUPTED_POD_SIZE:
        raise _forbidden(
            name, "DisruptedPods map too big - too many evictions not confirmed by PDB controller"
        )
    if allowed == 0:
        desired = int(status.get("desiredHealthy") or 0)
        current = int(status.get("currentHealthy") or 0)
        raise _too_many_requests(
            f"The disruption budget {name} needs {desired} healthy pods and has {current} currently"
        )
    disrupted[pod_name] = format_time(now)
    status["disruptionsAllowed"] = allowed - 1
    status["disruptedPods"] = disrupted
    if allowed - 1 == 0:
        status["conditions"] = _disruption_allowed_condition(status, now)
    return {**pdb, "status": status}


def _disruption_allowed_condition(status: Mapping[str, Any], now: float) -> list[JSON]:
    """updateDisruptionAllowedCondition with no disruptions left: DisruptionAllowed=False."""
    conditions = [dict(c) for c in status.get("conditions") or [] if c.get("type") != "DisruptionAllowed"]
    old = next((c for c in status.get("conditions") or [] if c.get("type") == "DisruptionAllowed"), None)
    changed = old is None or old.get("status") != "False"
    conditions.append(
        {
            "type": "DisruptionAllowed",
            "status": "False",
            "reason": "InsufficientPods",
            "message": "",
            "observedGeneration": status.get("observedGeneration", 0),
            "lastTransitionTime": format_time(now)
            if changed
            else old.get("lastTransitionTime")
            if old
            else "",
        }
    )
    return conditions


def evict(
    registry: Registry,
    clock: Clock,
    namespace: str,
    name: str,
    *,
    grace_period_seconds: int | None = None,
    eviction: JSON | None = None,
    dry_run: bool = False,
    user: UserInfo | None = None,
) -> JSON:
    """POST pods/NAME/eviction: admission of the Eviction (a CREATE of pods/eviction), then the
    PodDisruptionBudget check and the delete (with the Eviction's deleteOptions grace period);
    returns the pod, or raises. A dry run deletes (dry) without the budget check."""
    pod = registry.get("pods", namespace, name)
    request = eviction if eviction is not None else {"metadata": {"name": name, "namespace": namespace}}
    registry.admit_subresource(
        Attributes(CREATE, "pods", request, pod, namespace, name, "eviction", dry_run, user)
    )
    if dry_run:
        return registry.delete("pods", namespace, name, dry_run=True, user=user)
    if not can_ignore_pdb(pod):
        budgets = matching_budgets(registry, pod)
        if len(budgets) > 1:
            raise errors.StatusError(
                500,
                "InternalError",
                "This pod has more than one PodDisruptionBudget, "
                "which the eviction subresource does not support.",
            )
        if budgets:
            pdb = budgets[0]
            status = pdb.get("status") or {}
            healthy_enough = (
                int(status.get("currentHealthy") or 0) >= int(status.get("desiredHealthy") or 0) > 0
            )
            policy = (pdb.get("spec") or {}).get("unhealthyPodEvictionPolicy") or "IfHealthyBudget"
            unready_ok = not is_pod_ready(pod) and (policy == "AlwaysAllow" or healthy_enough)
            if not unready_ok:
                registry.update_status(PDB_RESOURCE, check_and_decrement(pdb, name, clock.now()))
    _mark_disruption_target(registry, clock, pod)
    return registry.delete("pods", namespace, name, grace_period_seconds=grace_period_seconds, user=user)


def _mark_disruption_target(registry: Registry, clock: Clock, pod: Mapping[str, Any]) -> None:
    """addConditionAndDeletePod: DisruptionTarget=True (EvictionByEvictionAPI) before deleting."""
    status = with_disruption_target(
        pod.get("status"), "EvictionByEvictionAPI", "Eviction API: evicting", format_time(clock.now())
    )
    # Best effort, as upstream: the deletion that follows decides.
    with contextlib.suppress(errors.StatusError):
        registry.update_status("pods", {**pod, "status": status})
