"""The defaulting step of the write path: what kube-apiserver's decoder applies to a request's
object before admission (the SetDefaults_* functions of each kind's API group), and the
strategies' PrepareForCreate / PrepareForUpdate that do not depend on the request (a new
object's status, a Job's generated selector, a CustomResourceDefinition's generation and stored
versions). `Registry.create` and `Registry.update` run it for every write, so an HTTP request
and an in-process write (the simulator, the controllers) store the same object.

The kinds are declared in `DEFAULTERS` (by API group and kind), the create and update
preparations in `PREPARE_FOR_CREATE` and `PREPARE_FOR_UPDATE`. Pods take the registry's own
pod path: `pod_prepared_for_create` (SetDefaults_Pod's requests and the pod strategy's
PrepareForCreate) on every create, except where the registry loads declared state (a scenario or
snapshot: `restore=True`), whose pods keep their status. What stays with the HTTP handlers
(apiserver.rest) is what an HTTP request alone has: a Service's ClusterIP and NodePort
allocation (from the `defaulted` Service, as kube-apiserver allocates after decoding) and custom
resources' schemas."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from kubetaint.api import crd as crds
from kubetaint.api.daemonset_generation import daemonset_prepared_for_create, daemonset_prepared_for_update
from kubetaint.api.quantity import QuantityError
from kubetaint.core.defaults import RBAC_GROUP, default_pod_requests, default_role_binding
from kubetaint.core.label_keys_merge import with_label_keys_merged
from kubetaint.core.qos import pod_qos_class
from kubetaint.core.secrets import stored_secret
from kubetaint.core.services import default_service
from kubetaint.core.workload_defaults import DEFAULTERS as WORKLOAD_DEFAULTERS
from kubetaint.core.workload_defaults import with_generated_selector

JSON = dict[str, Any]

GroupKind = tuple[str, str]
_CRD: GroupKind = (crds.GROUP, "CustomResourceDefinition")

#: SetDefaults_* by (API group, kind): the workload, endpoint and storage kinds', Services'
#: (with the IP family fields a single-stack IPv4 cluster's REST storage fills), RBAC bindings',
#: Secrets' (with the v1 conversion merging `stringData` into `data`) and
#: CustomResourceDefinitions'.
DEFAULTERS: dict[GroupKind, Callable[[JSON], JSON]] = {
    **WORKLOAD_DEFAULTERS,
    ("", "Service"): default_service,
    ("", "Secret"): stored_secret,
    (RBAC_GROUP, "RoleBinding"): default_role_binding,
    (RBAC_GROUP, "ClusterRoleBinding"): default_role_binding,
    _CRD: crds.with_defaults,
}


def _status_reset(status: JSON) -> Callable[[JSON], JSON]:
    def reset(obj: JSON) -> JSON:
        return {**obj, "status": dict(status)}

    return reset


#: The strategies' PrepareForCreate by (API group, kind), run before the kind's defaults: a
#: DaemonSet at template generation 1 or more, a PersistentVolume or claim with an empty status
#: (phase Pending by default), a Service with an empty load balancer status, a
#: CustomResourceDefinition at generation 1 with only its storage version stored.
PREPARE_FOR_CREATE: dict[GroupKind, Callable[[JSON], JSON]] = {
    ("apps", "DaemonSet"): daemonset_prepared_for_create,
    ("", "PersistentVolume"): _status_reset({}),
    ("", "PersistentVolumeClaim"): _status_reset({}),
    ("", "Service"): _status_reset({"loadBalancer": {}}),
    _CRD: crds.prepare_for_create,
}

#: The strategies' PrepareForUpdate by (API group, kind) that depend on the stored object alone,
#: run after the kind's defaults: a DaemonSet keeps its template generation, the next one when its
#: template changes; a CustomResourceDefinition keeps its stored status, adds its
#: storage version to status.storedVersions and moves to the next generation when its spec
#: changes.
PREPARE_FOR_UPDATE: dict[GroupKind, Callable[[JSON, JSON], JSON]] = {
    ("apps", "DaemonSet"): daemonset_prepared_for_update,
    _CRD: crds.prepare_for_update,
}


def _group_kind(obj: JSON) -> GroupKind:
    return str(obj.get("apiVersion") or "").rpartition("/")[0], str(obj.get("kind") or "")


def defaulted(obj: JSON) -> JSON:
    """`obj` (typed: apiVersion and kind set) with its kind's defaults; `obj` itself for a kind
    not declared."""
    defaulter = DEFAULTERS.get(_group_kind(obj))
    return defaulter(obj) if defaulter is not None else obj


def defaulted_for_create(obj: JSON) -> JSON:
    """`defaulted`, after the kind's PrepareForCreate (`PREPARE_FOR_CREATE`), and for a Job
    carrying its uid (the generic store's, drawn by its creator) without `manualSelector`, the
    selector and template labels generated from it (generateSelector)."""
    group_kind = _group_kind(obj)
    prepare = PREPARE_FOR_CREATE.get(group_kind)
    if prepare is not None:
        obj = prepare(obj)
    defaulter = DEFAULTERS.get(group_kind)
    if defaulter is None:
        return obj
    obj = defaulter(obj)
    if group_kind == ("batch", "Job") and ((obj.get("metadata") or {}).get("uid")):
        obj = with_generated_selector(obj)
    return obj


def defaulted_for_update(obj: JSON, old: JSON) -> JSON:
    """`defaulted`, then the kind's PrepareForUpdate against the stored `old`
    (`PREPARE_FOR_UPDATE`); `obj` itself for a kind declared in neither."""
    group_kind = _group_kind(obj)
    defaulter = DEFAULTERS.get(group_kind)
    if defaulter is not None:
        obj = defaulter(obj)
    prepare = PREPARE_FOR_UPDATE.get(group_kind)
    return prepare(obj, old) if prepare is not None else obj


#: The PodScheduled condition the pod strategy adds to a pod created with scheduling gates
#: (applySchedulingGatedCondition; reason v1.PodReasonSchedulingGated).
SCHEDULING_GATED_REASON = "SchedulingGated"
SCHEDULING_GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"


def pod_prepared_for_create(
    pod: JSON, now: str | None = None, defaults: Callable[[JSON], JSON] = default_pod_requests
) -> JSON:
    """The pod strategy's PrepareForCreate, for every pod created through the registry (an HTTP
    request and a component's create alike): the pod's requests defaulted (SetDefaults_Pod) and
    its status reset to phase Pending with the QoS class of those requests (GetPodQOS: a
    `status.qosClass` the request carries is kept, as upstream reads it before the reset; left
    unset for a malformed quantity: validation rejects the pod right after). A pod created with
    `spec.schedulingGates` starts with the condition PodScheduled False, reason SchedulingGated
    (applySchedulingGatedCondition), its lastTransitionTime `now` when given. Then the pod's
    own label values of its pod (anti-)affinity terms' matchLabelKeys/mismatchLabelKeys and of its
    topology spread constraints' matchLabelKeys are merged into their labelSelector
    (mutatePodAffinity, mutateTopologySpreadConstraints: kubetaint.core.label_keys_merge), before
    validation sees the pod. The generation (1) is the store's. Loading declared state
    (`Registry.create(..., restore=True)`) skips this step: a scenario's or snapshot's pods keep
    the status and the selectors they are written with (the scheduler applies the keys when it
    reads a pod, which changes nothing a merged selector selects).
    `defaults`: SetDefaults_Pod's request defaulting (a run of creates' RunDefaults)."""
    pod = defaults(pod)
    status: JSON = {"phase": "Pending"}
    with contextlib.suppress(QuantityError, TypeError, AttributeError):
        status["qosClass"] = pod_qos_class(pod)
    spec = pod.get("spec")
    if type(spec) is dict and spec.get("schedulingGates"):
        # the zero lastProbeTime serializes as null (metav1.Time), as in the kubelet's conditions
        condition: JSON = {"type": "PodScheduled", "status": "False", "lastProbeTime": None}
        if now is not None:
            condition["lastTransitionTime"] = now
        condition["reason"] = SCHEDULING_GATED_REASON
        condition["message"] = SCHEDULING_GATED_MESSAGE
        status["conditions"] = [condition]
    return with_label_keys_merged({**pod, "status": status})
