"""Storage helpers the volume plugins and the persistent volume controller share (mirrors
k8s.io/component-helpers/storage/volume pv_helpers.go and helpers.go,
component-helpers/storage/ephemeral, pkg/apis/core/v1/helper MatchTopologySelectorTerms and
cloud-provider/volume/helpers LabelZonesToSet): claim and volume classes, the binder's
FindMatchingVolume, a claim's delayed binding, a generic ephemeral volume's claim name."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.api.jsonview import as_list, as_mapping
from kubetaint.api.quantity import QuantityError, parse_quantity
from kubetaint.api.selectors import label_selector_from_dict

Obj = Mapping[str, Any]

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"
LABEL_MULTI_ZONE_DELIMITER = "__"
#: the beta annotation that takes precedence over spec.storageClassName
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"


def meta(obj: Obj) -> Mapping[str, Any]:
    return as_mapping(obj.get("metadata"))


def spec(obj: Obj) -> Mapping[str, Any]:
    return as_mapping(obj.get("spec"))


def annotations_of(obj: Obj) -> Mapping[str, Any]:
    return as_mapping(meta(obj).get("annotations"))


def storage_class_name(obj: Obj) -> str:
    """GetPersistentVolumeClass / GetPersistentVolumeClaimClass: the beta annotation, else
    spec.storageClassName, else ""."""
    ann = annotations_of(obj)
    if BETA_STORAGE_CLASS_ANNOTATION in ann:
        return str(ann[BETA_STORAGE_CLASS_ANNOTATION])
    return str(spec(obj).get("storageClassName") or "")


def persistent_volume_claim_class(claim: Obj) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation, else spec.storageClassName, else ""."""
    return storage_class_name(claim)


def persistent_volume_class(volume: Obj) -> str:
    """GetPersistentVolumeClass: the beta annotation, else spec.storageClassName, else ""."""
    return storage_class_name(volume)


def has_volumes(pod: Obj) -> bool:
    """Whether the pod lists any volume (the volume plugins' PreFilter skips it otherwise)."""
    spec = pod.get("spec")
    return bool(spec.get("volumes")) if type(spec) is dict else bool(as_mapping(spec).get("volumes"))


def pod_volumes(pod: Obj) -> list[Mapping[str, Any]]:
    return [as_mapping(v) for v in as_list(spec(pod).get("volumes"))]


def claim_name(volume: Mapping[str, Any]) -> str | None:
    """The claim a `persistentVolumeClaim` volume names (None for other volumes)."""
    source = volume.get("persistentVolumeClaim")
    if not isinstance(source, Mapping):
        return None
    return str(source.get("claimName") or "")


def ephemeral_claim_name(pod: Obj, volume: Mapping[str, Any]) -> str:
    """ephemeral.VolumeClaimName: `<pod name>-<volume name>`."""
    return f"{meta(pod).get('name') or ''}-{volume.get('name') or ''}"


def volume_is_for_pod(pod: Obj, pvc: Obj) -> str | None:
    """ephemeral.VolumeIsForPod: None when the claim's controller is the pod, else the error."""
    pod_meta, pvc_meta = meta(pod), meta(pvc)
    uid = pod_meta.get("uid")
    for raw in as_list(pvc_meta.get("ownerReferences")):
        ref = as_mapping(raw)
        if ref.get("controller") and ref.get("uid") == uid and uid:
            return None
    return (
        f"PVC {pvc_meta.get('namespace') or 'default'}/{pvc_meta.get('name') or ''} was not created for "
        f"pod {pod_meta.get('namespace') or 'default'}/{pod_meta.get('name') or ''} (pod is not owner)"
    )


def storage_request(claim: Obj) -> Fraction:
    """spec.resources.requests.storage (0 when absent or malformed)."""
    raw = as_mapping(as_mapping(spec(claim).get("resources")).get("requests")).get("storage")
    return _quantity(raw)


def capacity_of(volume: Obj) -> Fraction:
    """spec.capacity.storage (0 when absent or malformed)."""
    return _quantity(as_mapping(spec(volume).get("capacity")).get("storage"))


def _quantity(raw: Any) -> Fraction:
    if raw is None:
        return Fraction(0)
    try:
        return parse_quantity(raw)
    except QuantityError:
        return Fraction(0)


def match_topology_selector_terms(terms: Any, labels: Mapping[str, str]) -> bool:
    """v1helper.MatchTopologySelectorTerms: no terms match every node; a term without
    expressions matches none; a term matches when every expression's key has one of its values
    (an expression without values makes its term match nothing)."""
    terms = as_list(terms)
    if not terms:
        return True
    for raw in terms:
        expressions = as_list(as_mapping(raw).get("matchLabelExpressions"))
        if not expressions:
            continue
        ok = True
        for raw_expr in expressions:
            expr = as_mapping(raw_expr)
            values = [str(v) for v in as_list(expr.get("values"))]
            key = str(expr.get("key") or "")
            if not values or key not in labels or labels[key] not in values:
                ok = False
                break
        if ok:
            return True
    return False


def label_zones_to_set(value: str) -> frozenset[str] | None:
    """LabelZonesToSet: the `__`-separated zones of a topology label, None when one is empty."""
    zones: set[str] = set()
    for zone in value.split(LABEL_MULTI_ZONE_DELIMITER):
        trimmed = zone.strip()
        if not trimmed:
            return None
        zones.add(trimmed)
    return frozenset(zones)


def is_volume_bound_to_claim(volume: Obj, claim: Obj) -> bool:
    """IsVolumeBoundToClaim: the PV's claimRef names the claim (and its uid, when set)."""
    ref = spec(volume).get("claimRef")
    if not isinstance(ref, Mapping):
        return False
    c_meta = meta(claim)
    if str(c_meta.get("name") or "") != str(ref.get("name") or ""):
        return False
    if str(c_meta.get("namespace") or "default") != str(ref.get("namespace") or ""):
        return False
    uid = ref.get("uid")
    return not uid or uid == c_meta.get("uid")


def _volume_mode(obj: Obj) -> str:
    return str(spec(obj).get("volumeMode") or "Filesystem")


def check_access_modes(claim: Obj, volume: Obj) -> bool:
    """CheckAccessModes: the PV has every access mode the claim asks for."""
    offered = set(as_list(spec(volume).get("accessModes")))
    return all(mode in offered for mode in as_list(spec(claim).get("accessModes")))


class MatchError(ValueError):
    """FindMatchingVolume's error: a claim whose selector cannot be parsed."""


def find_matching_volume(
    claim: Obj,
    volumes: Sequence[Obj],
    affinity_ok: Callable[[Obj], bool] | None,
    excluded: Mapping[str, Any],
    delay_binding: bool,
) -> Obj | None:
    """volume.FindMatchingVolume (with VolumeAttributesClass on, as 1.35): a PV pre-bound to the
    claim when its size suffices (None when its node affinity rejects the node), else the
    smallest Available, unclaimed PV of the claim's class, volume mode, attributes class and
    access modes whose labels the claim's selector matches and whose node affinity accepts the
    node (`affinity_ok`: whether a PV's node affinity accepts the node; None on the persistent
    volume controller's path, which has no node)."""
    requested = storage_request(claim)
    requested_class = persistent_volume_claim_class(claim)
    c_spec = spec(claim)
    raw_selector = c_spec.get("selector")
    selector = None
    if isinstance(raw_selector, Mapping):
        try:
            selector = label_selector_from_dict(raw_selector)
        except StatusError as exc:
            c_meta = meta(claim)
            raise MatchError(
                f"error creating internal label selector for claim: "
                f"{c_meta.get('namespace') or 'default'}/{c_meta.get('name') or ''}: {exc}"
            ) from None
    requested_vac = str(c_spec.get("volumeAttributesClassName") or "")
    smallest: Obj | None = None
    smallest_qty = Fraction(0)
    for volume in volumes:
        name = str(meta(volume).get("name") or "")
        if name in excluded:
            continue
        qty = capacity_of(volume)
        if _volume_mode(claim) != _volume_mode(volume):
            continue
        if meta(volume).get("deletionTimestamp"):
            continue
        node_ok = affinity_ok is None or affinity_ok(volume)
        if is_volume_bound_to_claim(volume, claim):
            if qty < requested:
                continue
            if not node_ok:
                return None
            return volume
        if affinity_ok is None and delay_binding:
            continue
        v_spec = spec(volume)
        if as_mapping(volume.get("status")).get("phase") != "Available":
            continue
        if v_spec.get("claimRef") is not None:
            continue
        if selector is not None and not selector.matches(as_mapping(meta(volume).get("labels"))):
            continue
        if persistent_volume_class(volume) != requested_class:
            continue
        if str(v_spec.get("volumeAttributesClassName") or "") != requested_vac:
            continue
        if not node_ok:
            continue
        if affinity_ok is not None and not check_access_modes(claim, volume):
            continue
        if qty >= requested and (smallest is None or smallest_qty > qty):
            smallest, smallest_qty = volume, qty
    return smallest


def bind_volume_to_claim(volume: Obj, claim: Obj) -> dict[str, Any]:
    """GetBindVolumeToClaim: a copy of the PV with its claimRef naming the claim and, when it was
    not bound to it already, the bound-by-controller annotation."""
    c_meta = meta(claim)
    new_meta = dict(meta(volume))
    new_spec = dict(spec(volume))
    bound_already = is_volume_bound_to_claim(volume, claim)
    ref = as_mapping(new_spec.get("claimRef"))
    if (
        not ref
        or ref.get("name") != c_meta.get("name")
        or ref.get("namespace") != (c_meta.get("namespace") or "default")
        or ref.get("uid") != c_meta.get("uid")
    ):
        new_ref: dict[str, Any] = {
            "kind": "PersistentVolumeClaim",
            "namespace": c_meta.get("namespace") or "default",
            "name": c_meta.get("name") or "",
            "apiVersion": "v1",
        }
        if c_meta.get("uid"):
            new_ref["uid"] = c_meta["uid"]
        if c_meta.get("resourceVersion"):
            new_ref["resourceVersion"] = c_meta["resourceVersion"]
        new_spec["claimRef"] = new_ref
    if not bound_already and ANN_BOUND_BY_CONTROLLER not in as_mapping(new_meta.get("annotations")):
        new_meta["annotations"] = {**as_mapping(new_meta.get("annotations")), ANN_BOUND_BY_CONTROLLER: "yes"}
    return {**volume, "metadata": new_meta, "spec": new_spec}


def is_delay_binding_mode(class_of: Callable[[str], Obj | None], claim: Obj) -> bool:
    """IsDelayBindingMode: the claim's class binds WaitForFirstConsumer (no class or an unknown
    one: no). Raises ValueError for a class without a volumeBindingMode."""
    class_name = persistent_volume_claim_class(claim)
    if not class_name:
        return False
    sc = class_of(class_name)
    if sc is None:
        return False
    mode = sc.get("volumeBindingMode")
    if mode is None:
        raise ValueError(f'VolumeBindingMode not set for StorageClass "{class_name}"')
    return bool(mode == WAIT_FOR_FIRST_CONSUMER)
