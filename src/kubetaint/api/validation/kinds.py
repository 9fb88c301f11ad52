"""Per-kind validation for the kinds kubetaint serves (mirrors ValidateNode, ValidatePodCreate/Update,
ValidateNamespace in pkg/apis/core/validation; ValidatePriorityClass in pkg/apis/scheduling/validation;
ValidateRuntimeClass in pkg/apis/node/validation; ValidatePodDisruptionBudget in pkg/apis/policy/validation;
ValidateLease in pkg/apis/coordination/validation; the apps/v1 workloads in pkg/apis/apps/validation)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from operator import is_, is_not
from typing import Any

from kubetaint.api.jsonview import mapping_in as _m
from kubetaint.api.validation import batch, configdata, crd, endpoints, rbac, services, storage
from kubetaint.api.validation import field as f
from kubetaint.api.validation.intstr import int_or_percent
from kubetaint.api.validation.labelselector import has_invalid_label_value, validate_label_selector
from kubetaint.api.validation.memo import STORED_PARTS, stored_part
from kubetaint.api.validation.metaupdate import validate_metadata
from kubetaint.api.validation.names import (
    is_qualified_name,
    is_valid_subdomain_name,
    name_is_dns_label,
    name_is_dns_subdomain,
)
from kubetaint.api.validation.objectmeta import (
    IS_NEGATIVE_ERROR,
    owner_reference_errors,
    validate_labels,
)
from kubetaint.api.validation.podspec import (
    validate_containers_only_for_pod,
    validate_pod_create_rules,
    validate_pod_spec,
)
from kubetaint.api.validation.podupdate import validate_pod_update_rules
from kubetaint.api.validation.quantities import validate_resource_list
from kubetaint.api.validation.statefulset import validate_spec_policies
from kubetaint.api.validation.taints import validate_node_taints, validate_tolerations
from kubetaint.api.validation.topologyspread import CREATE, SpreadOptions, spread_options
from kubetaint.api.validation.workloads import selector_and_template
from kubetaint.speed.memo import Memo

Obj = Mapping[str, Any]
KindValidator = Callable[[Obj, "Obj | None", bool], list[f.FieldError]]
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2_000_001_000, "system-cluster-critical": 2_000_000_000}
PREEMPTION_POLICIES = ("Never", "PreemptLowerPriority")
#: policy.UnhealthyPodEvictionPolicyType values, sorted as upstream lists them
UNHEALTHY_POD_EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")


def _meta(obj: Obj, old: Obj | None, *, namespaced: bool, dns_label: bool = False) -> list[f.FieldError]:
    """The metadata errors of creating `obj` (of updating `old` to it when given)."""
    name_fn = name_is_dns_label if dns_label else name_is_dns_subdomain
    return validate_metadata(obj, old, namespaced=namespaced, name_fn=name_fn)


def validate_node(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
    """ValidateNode: metadata, taints, then status capacity and allocatable quantities."""
    errs = _meta(obj, old, namespaced=False)
    taints = _m(obj, "spec").get("taints")
    if isinstance(taints, list):
        errs.extend(validate_node_taints([t if isinstance(t, Mapping) else {} for t in taints]))
    status = _m(obj, "status")
    for name in ("capacity", "allocatable"):
        errs.extend(validate_resource_list(_m(status, name), f.child("status", name)))
    return errs


def _allow_comparison(allow: bool, old: Obj | None, template: bool = False) -> bool:
    """The gate, or ratcheting: the old pod (or old workload template) already uses Lt/Gt."""
    if allow or old is None:
        return allow
    spec = _m(_m(_m(old, "spec"), "template"), "spec") if template else _m(old, "spec")
    tolerations = spec.get("tolerations")
    return isinstance(tolerations, list) and any(
        isinstance(t, Mapping) and t.get("operator") in ("Lt", "Gt") for t in tolerations
    )


def validate_pod(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
    """validatePodMetadataAndSpec plus the create or update rules."""
    allow = _allow_comparison(allow_comparison, old)
    spec = _m(obj, "spec")
    errs = _meta(obj, old, namespaced=True)
    if old is None:
        errs.extend(_pod_spec_errors(spec, allow))
        errs.extend(validate_pod_create_rules(spec))
    elif stored_part(obj, old, "spec") is not None:  # the stored spec itself: validated before
        errs.extend(
            STORED_PARTS.errors(
                spec,
                ("pod-update", allow),
                lambda: _pod_update_errors(spec, spec, allow, spread_options(spec)),
            )
        )
    else:
        old_spec = _m(old, "spec")
        errs.extend(_pod_update_errors(spec, old_spec, allow, spread_options(old_spec)))
    return errs


#: The metadata fields validate_object_meta_update reads: the names, generation, labels,
#: annotations, owner references and finalizers, and the fields an update may not change.
_CHECKED_META_FIELDS = (
    "name",
    "generateName",
    "namespace",
    "generation",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)
_OWNER_REFERENCES = "ownerReferences"
#: _CHECKED_META_FIELDS but ownerReferences.
_OTHER_META_FIELDS = tuple(name for name in _CHECKED_META_FIELDS if name != "ownerReferences")


def validate_pod_keeping_spec(
    obj: Obj, old: Obj, owner_errors: Callable[[Obj], list[f.FieldError]] = owner_reference_errors
) -> list[f.FieldError]:
    """validate_pod(obj, old, gate) for an update whose spec IS old's spec object, where `old` is a
    pod validate_pod accepted (created, or updated from an earlier pod) with the same gate.

    The spec part cannot fail: old's spec S passed the spec checks with old's gate A, and
    ValidatePodUpdate now checks S with A' = the gate or S's own Lt/Gt tolerations, which is
    never stricter where S needs it (an Lt/Gt toleration passed only with A true, and then
    A' is true too; without one the gate is never read); the update rules of S against S (same
    containers, images already required and unpadded, the same tolerations and scheduling
    gates, no immutable change) hold for any spec the spec checks accept. The metadata checks
    read only _CHECKED_META_FIELDS: when each is old's own value (identity), the create checks
    see what old passed and nothing changed, so no error; when only ownerReferences differs (an
    adoption), only its checks can fail; otherwise they all run as ever. `owner_errors`:
    owner_reference_errors or what answers as it does (a caller's memo).

    Two usual updates are told apart first, for the same answer: one carrying old's metadata
    object itself (a status post, a binding), and one whose metadata holds every field of old's,
    each old's own object, and at most ownerReferences besides while old has none (an orphan's
    adoption): one pass of map over old's few fields instead of the checked fields on both sides."""
    meta, old_meta = _m(obj, "metadata"), _m(old, "metadata")
    if meta is old_meta:
        return []  # every field old's own (a status or binding change)
    if _OWNER_REFERENCES not in old_meta and len(meta) == len(old_meta) + (_OWNER_REFERENCES in meta):
        # an orphan adopted, or meta a copy of old's: when meta holds each of old's fields as
        # old's own object, its one other field, if any, is ownerReferences (one pass of map)
        try:
            kept = all(map(is_, map(meta.__getitem__, old_meta), old_meta.values()))
        except KeyError:  # one of old's fields missing: the general comparison below
            kept = False
        if kept:  # (what the comparison below finds: old has no references)
            return owner_errors(meta) if meta.get(_OWNER_REFERENCES) is not None else []
    # (compared in one pass of map: every pod update keeping its spec asks)
    if any(map(is_not, map(meta.get, _OTHER_META_FIELDS), map(old_meta.get, _OTHER_META_FIELDS))):
        return _meta(obj, old, namespaced=True)
    # at most the owner references differ (an adoption or a release): every other check sees
    # what old passed, and the update rules compare identical values
    if meta.get("ownerReferences") is not old_meta.get("ownerReferences"):
        return owner_errors(meta)
    return []


def validate_pod_like_clean(obj: Obj, allow_comparison: bool) -> list[f.FieldError]:
    """validate_pod for creating `obj` whose spec is, but for nodeName's value, the spec of a pod
    validate_pod accepted on create with the same gate (the caller knows it: pods stamped from
    one template). As for _clean_spec_key, only nodeName's own check can then fail in the spec
    checks; the metadata checks and the create rules (which read nodeName) run as ever."""
    spec = _m(obj, "spec")
    if not _node_name_is_valid(spec):
        return validate_pod(obj, None, allow_comparison)
    errs = _meta(obj, None, namespaced=True)
    errs.extend(validate_pod_create_rules(spec))
    STORED_PARTS.put(spec, ("pod-update", allow_comparison), [])  # as _pod_spec_errors does
    return errs


#: Pod spec contents (nodeName left out) found clean, see _clean_spec_key.
_CLEAN_SPECS: Memo[tuple[str, bool, SpreadOptions], bool] = Memo(
    "api.validation.kinds.clean_specs", limit=1 << 12
)


def _clean_spec_key(spec: Obj, allow: bool, spread: SpreadOptions) -> tuple[str, bool, SpreadOptions] | None:
    """Pods loaded from a template differ in their spec only by nodeName. validate_pod_spec reads
    nodeName only for its DNS-subdomain check, validate_containers_only_for_pod not at all; so a
    spec whose other fields equal a clean spec's is clean exactly when its nodeName passes that
    check. The other fields are compared by repr, which tells every JSON value and type apart
    (1, 1.0, True and "1"; key order only makes a miss). Plain dicts only."""
    if type(spec) is not dict:
        return None
    rest = spec.copy()
    rest.pop("nodeName", None)
    return repr(rest), allow, spread


def _node_name_is_valid(spec: Obj) -> bool:
    node_name = str(spec.get("nodeName") or "")
    return not node_name or is_valid_subdomain_name(node_name)  # (each node's pods ask alike)


def _pod_spec_errors(spec: Obj, allow: bool, spread: SpreadOptions = CREATE) -> list[f.FieldError]:
    key = _clean_spec_key(spec, allow, spread)
    if key is not None and _CLEAN_SPECS.get(key) and _node_name_is_valid(spec):
        errs: list[f.FieldError] = []
    else:
        errs = [
            *validate_pod_spec(spec, "spec", allow_comparison=allow, spread=spread),
            *validate_containers_only_for_pod(spec),
        ]
        if not errs and key is not None:
            _CLEAN_SPECS.put(key, True)
    if not errs:
        # A later update keeping this very spec (once stored) adds only the update rules against
        # itself: the same container count, images already required and unpadded above, and the
        # same tolerations validated again with the same gate, its topology spread constraints
        # with the options drawn from itself (a check it fails is one it is excused from, and
        # one it passes it passes again): none can fail for a clean spec.
        STORED_PARTS.put(spec, ("pod-update", allow), [])
    return errs


def _pod_update_errors(spec: Obj, old_spec: Obj, allow: bool, spread: SpreadOptions) -> list[f.FieldError]:
    return [
        *_pod_spec_errors(spec, allow, spread),
        *validate_pod_update_rules(spec, old_spec, allow_comparison=allow),
    ]


#: IsStandardFinalizerName: the finalizer names that need no domain.
STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})


def validate_namespace(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
    """ValidateNamespace: a DNS-label name, cluster scoped; each spec finalizer a qualified name,
    standard (`kubernetes`) or with a domain (validateFinalizerName)."""
    errs = _meta(obj, old, namespaced=False, dns_label=True)
    spec = obj.get("spec")
    finalizers = spec.get("finalizers") if isinstance(spec, Mapping) else None
    for name in finalizers if isinstance(finalizers, list) else ():
        errs.extend(validate_finalizer_name(str(name), "spec.finalizers"))
    return errs


def validate_namespace_status_update(obj: Obj) -> list[f.FieldError]:
    """ValidateNamespaceStatusUpdate's phase rule: `Active` without a deletionTimestamp,
    `Terminating` with one (upstream's field path is `status.Phase`)."""
    meta = obj.get("metadata")
    deleting = bool(meta.get("deletionTimestamp")) if isinstance(meta, Mapping) else False
    status = obj.get("status")
    phase = str(status.get("phase") or "") if isinstance(status, Mapping) else ""
    if not deleting and phase != "Active":
        return [f.invalid("status.Phase", phase, "may only be 'Active' if `deletionTimestamp` is empty")]
    if deleting and phase != "Terminating":
        return [
            f.invalid("status.Phase", phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")
        ]
    return []


def validate_finalizer_name(name: str, path: str) -> list[f.FieldError]:
    """validateFinalizerName: apimachinery's qualified-name check, then validateKubeFinalizerName."""
    errs = [f.invalid(path, name, msg) for msg in is_qualified_name(name)]
    if "/" not in name and name not in STANDARD_FINALIZERS:
        errs.append(
            f.invalid(path, name, "name is neither a standard finalizer name nor is it fully qualified")
        )
    return errs


def validate_priority_class(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
    """ValidatePriorityClass: reserved `system-` names and the user-definable maximum."""
    errs = _meta(obj, old, namespaced=False)
    name = str(_m(obj, "metadata").get("name") or "")
    value = obj.get("value", 0)
    if name.startswith("system-"):
        reason = _system_class_error(name, value)
        if reason:
            detail = (
                "priority class names with 'system-' prefix are reserved for system use only. "
                f"error: {reason}"
            )
            errs.append(f.forbidden("metadata.name", detail))
    elif isinstance(value, int) and value > HIGHEST_USER_DEFINABLE_PRIORITY:
        detail = f"maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"
        errs.append(f.forbidden("value", detail))
    policy = obj.get("preemptionPolicy")
    if policy is not None and policy not in PREEMPTION_POLICIES:
        errs.append(f.not_supported("preemptionPolicy", policy, PREEMPTION_POLICIES))
    return errs


def _system_class_error(name: str, value: Any) -> str:
    expected = SYSTEM_PRIORITY_CLASSES.get(name)
    if expected is None:
        return f"{name} is not a known system priority class"
    if value != expected:
        return f"value of {name} PriorityClass must be {expected}"
    return ""


def validate_runtime_class(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
    """ValidateRuntimeClass: handler is a DNS label; scheduling node selector and tolerations."""
    errs = _meta(obj, old, namespaced=False)
    handler = str(obj.get("handler") or "")
    errs.extend(f.invalid("handler", handler, msg) for msg in name_is_dns_label(handler))
    scheduling = _m(obj, "scheduling")
    if isinstance(scheduling.get("nodeSelector"), Mapping):
        errs.extend(validate_labels(scheduling["nodeSelector"], "scheduling.nodeSelector"))
    tolerations = scheduling.get("tolerations")
    if isinstance(tolerations, list):
        tols = [t for t in tolerations if isinstance(t, Mapping)]
        errs.extend(validate_tolerations(tols, "scheduling.tolerations", allow_comparison=allow_comparison))
    return errs


def validate_controller_revision(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
    """ValidateControllerRevision (ValidateControllerRevisionUpdate with `old`: data is immutable)."""
    errs = _meta(obj, old, namespaced=True)
    if obj.get("data") is None:
        errs.append(f.required("data", "data is mandatory"))
    revision = obj.get("revision")
    if isinstance(revision, int) and not isinstance(revision, bool) and revision < 0:
        errs.append(f.invalid("revision", revision, IS_NEGATIVE_ERROR))
    if old is not None and obj.get("data") != old.get("data"):
        errs.append(f.invalid("data", _go_raw_extension(obj.get("data")), "field is immutable"))
    return errs


def _go_raw_extension(data: Any) -> f.GoValue:
    """Go's %#v of a runtime.RawExtension holding `data` as JSON bytes."""
    raw = json.dumps(data, separators=(",", ":"), sort_keys=True).encode() if data is not None else b""
    listed = "[]byte(nil)" if data is None else "[]byte{" + ", ".join(f"0x{b:x}" for b in raw) + "}"
    return f.GoValue(data, f"runtime.RawExtension{{Raw:{listed}, Object:runtime.Object(nil)}}")


def validate_lease(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
    """ValidateLease: positive duration, non-negative transitions."""
    errs = _meta(obj, old, namespaced=True)
    spec = _m(obj, "spec")
    duration = spec.get("leaseDurationSeconds")
    if isinstance(duration, int) and duration <= 0:
        errs.append(f.invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    transitions = spec.get("leaseTransitions")
    if isinstance(transitions, int) and transitions < 0:
        errs.append(f.invalid("spec.leaseTransitions", transitions, IS_NEGATIVE_ERROR))
    return errs


def validate_binding(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
    """ValidatePodBinding: the target must name a Node."""
    errs: list[f.FieldError] = []
    target = _m(obj, "target")
    kind = str(target.get("kind") or "")
    if kind and kind != "Node":
        errs.append(f.not_supported("target.kind", kind, ("Node", "<empty>")))
    if not target.get("name"):
        errs.append(f.required("target.name"))
    return errs


def validate_namespaced_meta(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
    """Kinds whose checks kubetaint keeps to metadata (Events, Evictions)."""
    return _meta(obj, old, namespaced=True)


def validate_pdb(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
    """ValidatePodDisruptionBudgetSpec: at most one of minAvailable/maxUnavailable, each int or
    percent, the selector (old invalid label values kept on update), the unhealthy pod policy."""
    errs = _meta(obj, old, namespaced=True)
    spec = _m(obj, "spec")
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        errs.append(
            f.invalid(
                "spec",
                f.GoValue(dict(spec), "policy.PodDisruptionBudgetSpec{...}"),
                "minAvailable and maxUnavailable cannot be both set",
            )
        )
    for name in ("minAvailable", "maxUnavailable"):
        if spec.get(name) is not None:
            errs.extend(int_or_percent(spec[name], f.child("spec", name)))
    old_selector = _m(old, "spec").get("selector") if old is not None else None
    allow_invalid = has_invalid_label_value(old_selector)
    errs.extend(
        validate_label_selector(spec.get("selector"), "spec.selector", allow_invalid_values=allow_invalid)
    )
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in UNHEALTHY_POD_EVICTION_POLICIES:
        errs.append(
            f.not_supported("spec.unhealthyPodEvictionPolicy", policy, UNHEALTHY_POD_EVICTION_POLICIES)
        )
    return errs


def _workload(
    kind: str, *, replicas: bool, strategy: Callable[[Obj], list[f.FieldError]] | None = None
) -> KindValidator:
    def spec_errors(spec: Obj, allow: bool, spread: SpreadOptions) -> list[f.FieldError]:
        errs: list[f.FieldError] = [] if strategy is None else strategy(spec)
        count = spec.get("replicas")
        if replicas and isinstance(count, int) and not isinstance(count, bool) and count < 0:
            errs.append(f.invalid("spec.replicas", count, IS_NEGATIVE_ERROR))
        errs.extend(selector_and_template(kind, spec, allow, spread))
        return errs

    def validate(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
        errs = _meta(obj, old, namespaced=True)
        spec = _m(obj, "spec")
        allow = _allow_comparison(allow_comparison, old, template=True)
        # GetValidationOptionsFromPodTemplate: what the old template already violates may stay
        spread = CREATE if old is None else spread_options(_m(_m(_m(old, "spec"), "template"), "spec"))
        if stored_part(obj, old, "spec") is not None:  # the stored spec itself (a status update)
            errs.extend(
                STORED_PARTS.errors(spec, (kind, allow, spread), lambda: spec_errors(spec, allow, spread))
            )
        else:
            found = spec_errors(spec, allow, spread)
            # recorded for this very spec, which a successful write stores as it is: the first
            # status update keeping it (each ReplicaSet's, after its create) finds them; its old
            # template is then this spec's own, whose options are those of a create when it
            # passed them (a check it fails is one it is excused from)
            STORED_PARTS.put(spec, (kind, allow, spread_options(_m(_m(spec, "template"), "spec"))), found)
            errs.extend(found)
        return errs

    validate.__doc__ = f"Validate{kind}Spec: selector, template labels, template pod spec."
    return validate


_validate_stateful_set_spec = _workload("StatefulSet", replicas=False, strategy=validate_spec_policies)
#: The StatefulSet spec fields an update may change (ValidateStatefulSetUpdate).
STATEFUL_SET_MUTABLE = (
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
)
STATEFUL_SET_FORBIDDEN_UPDATE = (
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
    "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
)


def validate_stateful_set(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
    """ValidateStatefulSet (the rolling update's partition and maxUnavailable, then selector and
    template as the other apps/v1 workloads); on update, only STATEFUL_SET_MUTABLE may change."""
    errs = _validate_stateful_set_spec(obj, old, allow_comparison)
    if old is not None:
        spec, old_spec = _m(obj, "spec"), _m(old, "spec")
        kept = {k: v for k, v in spec.items() if k not in STATEFUL_SET_MUTABLE}
        if kept != {k: v for k, v in old_spec.items() if k not in STATEFUL_SET_MUTABLE}:
            errs.append(f.forbidden("spec", STATEFUL_SET_FORBIDDEN_UPDATE))
    return errs


#: (apiVersion group, kind) -> validator; group "" is the core group.
VALIDATORS: dict[tuple[str, str], KindValidator] = {
    ("", "Node"): validate_node,
    ("", "Pod"): validate_pod,
    ("", "Namespace"): validate_namespace,
    ("", "Binding"): validate_binding,
    ("", "Event"): validate_namespaced_meta,
    ("events.k8s.io", "Event"): validate_namespaced_meta,
    ("policy", "Eviction"): validate_namespaced_meta,
    ("policy", "PodDisruptionBudget"): validate_pdb,
    ("scheduling.k8s.io", "PriorityClass"): validate_priority_class,
    ("node.k8s.io", "RuntimeClass"): validate_runtime_class,
    ("coordination.k8s.io", "Lease"): validate_lease,
    ("apps", "DaemonSet"): _workload("DaemonSet", replicas=False),
    ("apps", "ReplicaSet"): _workload("ReplicaSet", replicas=True),
    ("apps", "Deployment"): _workload("Deployment", replicas=True),
    (rbac.GROUP_NAME, "Role"): rbac.validate_role,
    (rbac.GROUP_NAME, "ClusterRole"): rbac.validate_cluster_role,
    (rbac.GROUP_NAME, "RoleBinding"): rbac.validate_role_binding,
    (rbac.GROUP_NAME, "ClusterRoleBinding"): rbac.validate_cluster_role_binding,
    ("", "ConfigMap"): configdata.validate_config_map,
    ("", "Secret"): configdata.validate_secret,
    ("", "ServiceAccount"): configdata.validate_service_account,
    ("", "Service"): services.validate_service,
    ("", "Endpoints"): endpoints.validate_endpoints,
    ("discovery.k8s.io", "EndpointSlice"): endpoints.validate_endpoint_slice,
    ("apps", "StatefulSet"): validate_stateful_set,
    ("apps", "ControllerRevision"): validate_controller_revision,
    ("batch", "Job"): batch.validate_job,
    ("batch", "CronJob"): batch.validate_cron_job,
    ("", "PersistentVolume"): storage.validate_persistent_volume,
    ("", "PersistentVolumeClaim"): storage.validate_persistent_volume_claim,
    ("storage.k8s.io", "StorageClass"): storage.validate_storage_class,
    ("storage.k8s.io", "CSINode"): storage.validate_csi_node,
    ("storage.k8s.io", "CSIDriver"): storage.validate_csi_driver,
    ("apiextensions.k8s.io", "CustomResourceDefinition"): crd.validate_crd,
}
