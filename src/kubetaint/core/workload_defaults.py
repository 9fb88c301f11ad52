"""The defaults kube-apiserver gives the kinds kubetaint stores without running them
(SetDefaults_EndpointPort of v1 and discovery.k8s.io/v1, SetDefaults_StatefulSet in
pkg/apis/apps/v1/defaults.go, SetDefaults_Job and SetDefaults_CronJob in
pkg/apis/batch/v1/defaults.go, with v1.35's default feature gates), so a stored object reads as
upstream's does. Each returns a new object; the argument is not changed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubetaint.core.storage_defaults import STORAGE_DEFAULTERS

JSON = dict[str, Any]


def _spec(obj: JSON) -> JSON:
    spec = obj.get("spec")
    return dict(spec) if isinstance(spec, dict) else {}


def default_stateful_set(obj: JSON) -> JSON:
    """SetDefaults_StatefulSet: OrderedReady, RollingUpdate with partition 0 and maxUnavailable 1
    (MaxUnavailableStatefulSet), Retain/Retain PVC retention (StatefulSetAutoDeletePVC), 1 replica,
    10 revisions."""
    spec = _spec(obj)
    if not spec.get("podManagementPolicy"):
        spec["podManagementPolicy"] = "OrderedReady"
    strategy = dict(spec["updateStrategy"]) if isinstance(spec.get("updateStrategy"), dict) else {}
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
        strategy.setdefault("rollingUpdate", {})
    rolling = strategy.get("rollingUpdate")
    if strategy["type"] == "RollingUpdate" and isinstance(rolling, dict):
        strategy["rollingUpdate"] = {"partition": 0, **rolling}
        if strategy["rollingUpdate"].get("maxUnavailable") is None:
            strategy["rollingUpdate"]["maxUnavailable"] = 1
    spec["updateStrategy"] = strategy
    retention = spec.get("persistentVolumeClaimRetentionPolicy")
    retention = dict(retention) if isinstance(retention, dict) else {}
    retention.setdefault("whenDeleted", "Retain")
    retention.setdefault("whenScaled", "Retain")
    spec["persistentVolumeClaimRetentionPolicy"] = retention
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    return {**obj, "spec": spec}


def default_daemon_set(obj: JSON) -> JSON:
    """SetDefaults_DaemonSet: RollingUpdate with maxUnavailable 1 and maxSurge 0, 10 revisions."""
    spec = _spec(obj)
    strategy = dict(spec["updateStrategy"]) if isinstance(spec.get("updateStrategy"), dict) else {}
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.get("rollingUpdate")
        rolling = dict(rolling) if isinstance(rolling, dict) else {}
        if rolling.get("maxUnavailable") is None:
            rolling["maxUnavailable"] = 1
        if rolling.get("maxSurge") is None:
            rolling["maxSurge"] = 0
        strategy["rollingUpdate"] = rolling
    spec["updateStrategy"] = strategy
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    return {**obj, "spec": spec}


def _job_spec_defaults(spec: JSON) -> JSON:
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    spec.setdefault("parallelism", 1)
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = 2**31 - 1 if spec.get("backoffLimitPerIndex") is not None else 6
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    if spec.get("podReplacementPolicy") is None:  # JobPodReplacementPolicy (GA since 1.34)
        spec["podReplacementPolicy"] = (
            "Failed" if spec.get("podFailurePolicy") is not None else "TerminatingOrFailed"
        )
    return spec


def default_job(obj: JSON) -> JSON:
    """SetDefaults_Job: one completion at a time, backoffLimit 6, NonIndexed, not suspended, the
    pod replacement policy, and the template's labels as the Job's when it has none."""
    spec = _job_spec_defaults(_spec(obj))
    out = {**obj, "spec": spec}
    template = spec.get("template") if isinstance(spec.get("template"), dict) else {}
    labels = (template.get("metadata") or {}).get("labels") if isinstance(template, dict) else None
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    if isinstance(labels, dict) and isinstance(meta, dict) and not meta.get("labels"):
        out["metadata"] = {**meta, "labels": dict(labels)}
    return out


def default_cron_job(obj: JSON) -> JSON:
    """SetDefaults_CronJob: Allow, not suspended, 3 successful and 1 failed Job kept."""
    spec = _spec(obj)
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    return {**obj, "spec": spec}


def _port_protocols(ports: Any, name: bool = False) -> Any:
    if not isinstance(ports, list):
        return ports
    unset = {"protocol": "TCP", **({"name": ""} if name else {})}
    return [{**unset, **port} if isinstance(port, dict) else port for port in ports]


def default_endpoints(obj: JSON) -> JSON:
    """SetDefaults_EndpointPort: each subset's ports are TCP unless said otherwise."""
    subsets = obj.get("subsets")
    if not isinstance(subsets, list):
        return obj
    fixed = [
        {**s, "ports": _port_protocols(s["ports"])} if isinstance(s, dict) and "ports" in s else s
        for s in subsets
    ]
    return {**obj, "subsets": fixed}


def default_endpoint_slice(obj: JSON) -> JSON:
    """discovery/v1 SetDefaults_EndpointPort: a port's name is "" and its protocol TCP when unset."""
    if not isinstance(obj.get("ports"), list):
        return obj
    return {**obj, "ports": _port_protocols(obj["ports"], name=True)}


DEFAULTERS: dict[tuple[str, str], Callable[[JSON], JSON]] = {
    ("", "Endpoints"): default_endpoints,
    ("discovery.k8s.io", "EndpointSlice"): default_endpoint_slice,
    ("apps", "StatefulSet"): default_stateful_set,
    ("apps", "DaemonSet"): default_daemon_set,
    ("batch", "Job"): default_job,
    ("batch", "CronJob"): default_cron_job,
    **STORAGE_DEFAULTERS,
}


#: The Job labels upstream's strategy puts on a Job's pod template (batch.JobNameLabel and
#: batch.ControllerUidLabel, and their legacy names).
JOB_NAME_LABELS = ("job-name", "batch.kubernetes.io/job-name")
CONTROLLER_UID_LABELS = ("controller-uid", "batch.kubernetes.io/controller-uid")
CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"


def with_generated_selector(job: JSON) -> JSON:
    """generateSelector (pkg/registry/batch/job/strategy.go), for a Job created without
    `manualSelector: true` and carrying its uid: the template gets the job-name and
    controller-uid labels it lacks, the selector matches the controller uid."""
    spec = _spec(job)
    if spec.get("manualSelector") is True:
        return job
    meta = job.get("metadata") if isinstance(job.get("metadata"), dict) else {}
    name, uid = str((meta or {}).get("name") or ""), str((meta or {}).get("uid") or "")
    template = dict(spec["template"]) if isinstance(spec.get("template"), dict) else {}
    template_meta = dict(template["metadata"]) if isinstance(template.get("metadata"), dict) else {}
    labels = dict(template_meta["labels"]) if isinstance(template_meta.get("labels"), dict) else {}
    for key in JOB_NAME_LABELS:
        labels.setdefault(key, name)
    for key in CONTROLLER_UID_LABELS:
        labels.setdefault(key, uid)
    spec["template"] = {**template, "metadata": {**template_meta, "labels": labels}}
    selector = dict(spec["selector"]) if isinstance(spec.get("selector"), dict) else {}
    match = dict(selector["matchLabels"]) if isinstance(selector.get("matchLabels"), dict) else {}
    match.setdefault(CONTROLLER_UID_LABEL, uid)
    spec["selector"] = {**selector, "matchLabels": match}
    return {**job, "spec": spec}
