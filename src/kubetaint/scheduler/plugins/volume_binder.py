"""The scheduler's volume binder (mirrors pkg/scheduler/framework/plugins/volumebinding/binder.go):
a pod's claims sorted into bound, unbound with delayed binding (WaitForFirstConsumer) and unbound
immediate ones; per node, the bound claims' PVs' node affinity, a matching available PV for each
delayed claim (FindMatchingVolume) or else dynamic provisioning by its StorageClass
(provisioner, allowedTopologies); in Reserve, the chosen PVs and claims assumed (the assume
caches of `scheduler.storage_listers`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubetaint.core.volumes import is_delay_binding_mode as delay_binding_mode
from kubetaint.scheduler.plugins.volume_helpers import (
    ANN_BIND_COMPLETED,
    ANN_SELECTED_NODE,
    NOT_SUPPORTED_PROVISIONER,
    MatchError,
    annotations_of,
    bind_volume_to_claim,
    check_node_affinity,
    claim_name,
    ephemeral_claim_name,
    find_matching_volume,
    match_topology_selector_terms,
    meta,
    persistent_volume_claim_class,
    pod_volumes,
    spec,
    storage_request,
    volume_is_for_pod,
)
from kubetaint.scheduler.storage_listers import StorageListers

Obj = Mapping[str, Any]

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"


class BinderError(ValueError):
    """An error of the binder (the plugin answers it as an Error status)."""


@dataclass
class PodVolumeClaims:
    bound: list[Obj] = field(default_factory=list)
    unbound_delay_binding: list[Obj] = field(default_factory=list)
    unbound_immediate: list[Obj] = field(default_factory=list)
    #: per StorageClass name, the PVs of that class
    unbound_volumes_delay_binding: dict[str, list[Obj]] = field(default_factory=dict)


@dataclass
class PodVolumes:
    """The static bindings (claim, PV) and the claims to provision dynamically on one node."""

    static_bindings: list[tuple[Obj, Obj]] = field(default_factory=list)
    dynamic_provisions: list[Obj] = field(default_factory=list)


def _key(obj: Obj) -> tuple[str, str]:
    m = meta(obj)
    return str(m.get("namespace") or "default"), str(m.get("name") or "")


def is_pvc_fully_bound(pvc: Obj) -> bool:
    """isPVCFullyBound: a volumeName and the bind-completed annotation."""
    return bool(spec(pvc).get("volumeName")) and ANN_BIND_COMPLETED in annotations_of(pvc)


def is_delay_binding_mode(storage: StorageListers, claim: Obj) -> bool:
    """IsDelayBindingMode over the scheduler's StorageClass lister; BinderError for a class
    without a volumeBindingMode."""
    try:
        return delay_binding_mode(storage.storage_class, claim)
    except ValueError as exc:
        raise BinderError(str(exc)) from None


def _volume_claim(storage: StorageListers, pod: Obj, volume: Mapping[str, Any]) -> tuple[bool, Obj | None]:
    """isVolumeBound: (bound, claim) of one volume; a volume without a claim is bound."""
    name = claim_name(volume)
    ephemeral = False
    if name is None:
        if not isinstance(volume.get("ephemeral"), Mapping):
            return True, None
        name, ephemeral = ephemeral_claim_name(pod, volume), True
    namespace = str(meta(pod).get("namespace") or "default")
    pvc = storage.pvc(namespace, name)
    if pvc is None:
        raise BinderError(f'error getting PVC "{namespace}/{name}": persistentvolumeclaim "{name}" not found')
    if ephemeral:
        problem = volume_is_for_pod(pod, pvc)
        if problem is not None:
            raise BinderError(problem)
    return is_pvc_fully_bound(pvc), pvc


def get_pod_volume_claims(storage: StorageListers, pod: Obj) -> PodVolumeClaims:
    """GetPodVolumeClaims."""
    claims = PodVolumeClaims()
    for volume in pod_volumes(pod):
        bound, pvc = _volume_claim(storage, pod, volume)
        if pvc is None:
            continue
        if bound:
            claims.bound.append(pvc)
        elif is_delay_binding_mode(storage, pvc) and not spec(pvc).get("volumeName"):
            claims.unbound_delay_binding.append(pvc)
        else:
            claims.unbound_immediate.append(pvc)
    for pvc in claims.unbound_delay_binding:
        class_name = persistent_volume_claim_class(pvc)
        claims.unbound_volumes_delay_binding[class_name] = storage.pvs_of_class(class_name)
    return claims


def are_pod_volumes_bound(storage: StorageListers, pod: Obj) -> bool:
    for volume in pod_volumes(pod):
        try:
            bound, _ = _volume_claim(storage, pod, volume)
        except BinderError:
            return False
        if not bound:
            return False
    return True


def _check_bound_claims(
    storage: StorageListers, claims: list[Obj], node_labels: Mapping[str, str]
) -> tuple[bool, bool]:
    """checkBoundClaims: (every PV's node affinity accepts the node, every PV exists)."""
    for pvc in claims:
        pv = storage.pv(str(spec(pvc).get("volumeName") or ""))
        if pv is None:
            return True, False
        if not check_node_affinity(pv, node_labels):
            return False, True
    return True, True


def _find_matching_volumes(
    claims: list[Obj], volumes_by_class: dict[str, list[Obj]], node_labels: Mapping[str, str]
) -> tuple[bool, list[tuple[Obj, Obj]], list[Obj]]:
    """findMatchingVolumes: the claims smallest request first, each given the best PV not chosen
    already; (all matched, bindings, the claims left unmatched)."""
    chosen: dict[str, Obj] = {}
    bindings: list[tuple[Obj, Obj]] = []
    unbound: list[Obj] = []
    found = True
    for pvc in sorted(claims, key=storage_request):
        pvs = volumes_by_class.get(persistent_volume_claim_class(pvc), [])
        try:
            pv = find_matching_volume(pvc, pvs, node_labels, chosen)
        except MatchError as exc:
            raise BinderError(str(exc)) from None
        if pv is None:
            unbound.append(pvc)
            found = False
            continue
        chosen[str(meta(pv).get("name") or "")] = pv
        bindings.append((pvc, pv))
    return found, bindings, unbound


def _check_volume_provisions(
    storage: StorageListers, claims: list[Obj], node_labels: Mapping[str, str]
) -> tuple[bool, bool, list[Obj]]:
    """checkVolumeProvisions: (provisioning possible, enough storage, the claims to provision).
    Storage capacity (CSIStorageCapacity) is not modelled: there is always enough."""
    provisions: list[Obj] = []
    for claim in claims:
        namespace, name = _key(claim)
        class_name = persistent_volume_claim_class(claim)
        if not class_name:
            raise BinderError(f'no class for claim "{namespace}/{name}"')
        sc = storage.storage_class(class_name)
        if sc is None:
            raise BinderError(f'failed to find storage class "{class_name}"')
        provisioner = str(sc.get("provisioner") or "")
        if not provisioner or provisioner == NOT_SUPPORTED_PROVISIONER:
            return False, True, []
        if not match_topology_selector_terms(sc.get("allowedTopologies"), node_labels):
            return False, True, []
        provisions.append(claim)
    return True, True, provisions


def find_pod_volumes(
    storage: StorageListers, claims: PodVolumeClaims, node_name: str, node_labels: Mapping[str, str]
) -> tuple[PodVolumes, list[str]]:
    """FindPodVolumes: what the node offers the pod's claims, and the reasons it cannot
    (in upstream's order)."""
    volumes = PodVolumes()
    unbound_ok = bound_ok = sufficient = pvs_found = True
    if claims.bound:
        bound_ok, pvs_found = _check_bound_claims(storage, claims.bound, node_labels)
    if claims.unbound_delay_binding:
        to_match: list[Obj] = []
        to_provision: list[Obj] = []
        stop = False
        for claim in claims.unbound_delay_binding:
            selected = annotations_of(claim).get(ANN_SELECTED_NODE)
            if selected is not None:
                if selected != node_name:
                    unbound_ok = False
                    stop = True
                    break
                to_provision.append(claim)
            else:
                to_match.append(claim)
        if not stop:
            if to_match:
                unbound_ok, volumes.static_bindings, unmatched = _find_matching_volumes(
                    to_match, claims.unbound_volumes_delay_binding, node_labels
                )
                to_provision.extend(unmatched)
            if to_provision:
                unbound_ok, sufficient, volumes.dynamic_provisions = _check_volume_provisions(
                    storage, to_provision, node_labels
                )
    reasons: list[str] = []
    if not bound_ok:
        reasons.append(ERR_REASON_NODE_CONFLICT)
    if not unbound_ok:
        reasons.append(ERR_REASON_BIND_CONFLICT)
    if not sufficient:
        reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
    if not pvs_found:
        reasons.append(ERR_REASON_PV_NOT_EXIST)
    return volumes, reasons


def assume_pod_volumes(storage: StorageListers, pod: Obj, node_name: str, volumes: PodVolumes) -> bool:
    """AssumePodVolumes: the chosen PVs bound to their claims and the claims to provision given
    the node (selected-node annotation), in the assume caches; True when every volume was bound
    already (nothing assumed)."""
    if are_pod_volumes_bound(storage, pod):
        return True
    assumed: list[tuple[Obj, Obj]] = []
    for pvc, pv in volumes.static_bindings:
        new_pv = bind_volume_to_claim(pv, pvc)
        storage.assumed_pvs[str(meta(pv).get("name") or "")] = new_pv
        assumed.append((pvc, new_pv))
    provisioned: list[Obj] = []
    for pvc in volumes.dynamic_provisions:
        clone = {
            **pvc,
            "metadata": {**meta(pvc), "annotations": {**annotations_of(pvc), ANN_SELECTED_NODE: node_name}},
        }
        storage.assumed_pvcs[_key(pvc)] = clone
        provisioned.append(clone)
    volumes.static_bindings = assumed
    volumes.dynamic_provisions = provisioned
    return False


def revert_assumed_pod_volumes(storage: StorageListers, volumes: PodVolumes) -> None:
    """RevertAssumedPodVolumes: the assumed PVs and claims back to the API's objects."""
    for _, pv in volumes.static_bindings:
        storage.assumed_pvs.pop(str(meta(pv).get("name") or ""), None)
    for pvc in volumes.dynamic_provisions:
        storage.assumed_pvcs.pop(_key(pvc), None)
