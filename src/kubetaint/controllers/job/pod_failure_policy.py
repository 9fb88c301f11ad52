"""A Job's pod failure policy, as pkg/controller/job/pod_failure_policy.go: which rule a failed pod
matches (by the exit codes of its terminated containers or by its conditions, such as the
`DisruptionTarget` condition a taint eviction sets) and what that means for the Job."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

FAIL_JOB = "FailJob"
IGNORE = "Ignore"
COUNT = "Count"
FAIL_INDEX = "FailIndex"


class PolicyMatch(NamedTuple):
    """matchPodFailurePolicy's answer: the Job failure message (a FailJob rule), whether the failure
    counts towards the backoff limits (not for an Ignore rule), and the action of the matched rule."""

    job_failure_message: str | None
    count_failed: bool
    action: str | None


NO_MATCH = PolicyMatch(None, True, None)


def match_pod_failure_policy(policy: Mapping[str, Any] | None, pod: Mapping[str, Any]) -> PolicyMatch:
    """matchPodFailurePolicy: the first rule (in order) that matches the failed pod and has a known
    action; a rule with an unknown action is skipped."""
    if policy is None:
        return NO_MATCH
    meta = pod.get("metadata") or {}
    status = pod.get("status") or {}
    for index, rule in enumerate(policy.get("rules") or []):
        action = rule.get("action")
        if rule.get("onExitCodes") is not None:
            container = _match_on_exit_codes(status, rule["onExitCodes"])
            if container is None:
                continue
            if action == FAIL_JOB:
                exit_code = ((container.get("state") or {}).get("terminated") or {}).get("exitCode")
                message = (
                    f"Container {container.get('name') or ''} for pod {meta.get('namespace') or ''}/"
                    f"{meta.get('name') or ''} failed with exit code {exit_code} matching {action} rule "
                    f"at index {index}"
                )
                return PolicyMatch(message, True, FAIL_JOB)
        elif rule.get("onPodConditions") is not None:
            condition = _match_on_pod_conditions(status, rule["onPodConditions"])
            if condition is None:
                continue
            if action == FAIL_JOB:
                message = (
                    f"Pod {meta.get('namespace') or ''}/{meta.get('name') or ''} has condition "
                    f"{condition.get('type')} matching {action} rule at index {index}"
                )
                return PolicyMatch(message, True, FAIL_JOB)
        else:
            continue
        if action == IGNORE:
            return PolicyMatch(None, False, IGNORE)
        if action == COUNT:
            return PolicyMatch(None, True, COUNT)
        if action == FAIL_INDEX:
            return PolicyMatch(None, True, FAIL_INDEX)
    return NO_MATCH


def _match_on_exit_codes(
    status: Mapping[str, Any], requirement: Mapping[str, Any]
) -> Mapping[str, Any] | None:
    """matchOnExitCodes: the first terminated container (then init container) with a non-zero exit
    code the requirement matches."""
    return _matching_container(status.get("containerStatuses") or (), requirement) or _matching_container(
        status.get("initContainerStatuses") or (), requirement
    )


def _matching_container(
    statuses: Sequence[Mapping[str, Any]], requirement: Mapping[str, Any]
) -> Mapping[str, Any] | None:
    """getMatchingContainerFromList."""
    name = requirement.get("containerName")
    for container in statuses:
        terminated = (container.get("state") or {}).get("terminated")
        if terminated is None:
            continue  # still terminating: no exit code to match
        if name is not None and name != container.get("name"):
            continue
        exit_code = int(terminated.get("exitCode") or 0)
        if exit_code != 0 and _operator_matches(exit_code, requirement):
            return container
    return None


def _operator_matches(exit_code: int, requirement: Mapping[str, Any]) -> bool:
    """isOnExitCodesOperatorMatching: In, NotIn; an unknown operator never matches."""
    values = requirement.get("values") or ()
    if requirement.get("operator") == "In":
        return exit_code in values
    if requirement.get("operator") == "NotIn":
        return exit_code not in values
    return False


def _match_on_pod_conditions(
    status: Mapping[str, Any], patterns: Sequence[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """matchOnPodConditions: the first pod condition whose type and status a pattern names."""
    for condition in status.get("conditions") or ():
        for pattern in patterns:
            if condition.get("type") == pattern.get("type") and condition.get("status") == pattern.get(
                "status"
            ):
                return dict(condition)
    return None
