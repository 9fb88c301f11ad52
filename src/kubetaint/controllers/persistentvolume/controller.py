"""The persistent volume controller's binding (mirrors pkg/controller/volume/persistentvolume/
pv_controller.go syncVolume, syncUnboundClaim and syncBoundClaim, and the bind steps of
pv_controller.go bind): a new volume becomes Available; a claim of Immediate binding, or one a
scheduler pre-bound a volume to (the PV's claimRef written by VolumeBinding's PreBind), is bound
to the best matching volume (FindMatchingVolume without a node); a claim whose volume is gone is
Lost; a volume whose claim is gone is Released.

Not modelled: dynamic provisioning (a claim waiting for a provisioner stays Pending), reclaiming
(a Released volume stays so), events and metrics."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.api.jsonview import as_mapping as _m
from kubetaint.clock.base import Clock
from kubetaint.core.volumes import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    MatchError,
    annotations_of,
    find_matching_volume,
    is_delay_binding_mode,
    is_volume_bound_to_claim,
    persistent_volume_claim_class,
    persistent_volume_class,
)
from kubetaint.store.component_informers import ComponentInformers
from kubetaint.store.informer import EventHandlers, Informer
from kubetaint.store.interface import Store

PVS = "persistentvolumes"
PVCS = "persistentvolumeclaims"
log = logging.getLogger(__name__)


class PersistentVolumeController:
    """Binds claims to volumes and keeps their phases, as kube-controller-manager's."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        *,
        volume_informer: Informer | None = None,
        claim_informer: Informer | None = None,
        class_informer: Informer | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.informers = ComponentInformers(store)
        self.volumes = self.informers.shared_or_own(volume_informer, PVS)
        self.claims = self.informers.shared_or_own(claim_informer, PVCS)
        self.classes = self.informers.shared_or_own(class_informer, "storageclasses.storage.k8s.io")
        self._queue: dict[tuple[str, str, str], None] = {}
        self._draining = False
        self.volumes.add_handlers(
            EventHandlers(
                on_add=lambda pv: self._enqueue(PVS, pv),
                on_update=lambda _old, pv: self._enqueue(PVS, pv),
                on_delete=self._volume_deleted,
            )
        )
        self.claims.add_handlers(
            EventHandlers(
                on_add=lambda pvc: self._enqueue(PVCS, pvc),
                on_update=lambda _old, pvc: self._enqueue(PVCS, pvc),
                on_delete=self._claim_deleted,
            )
        )

    def start(self) -> None:
        self.informers.start()

    def stop(self) -> None:
        self.informers.stop()

    # ---- queue -------------------------------------------------------------------------------
    def _enqueue(self, resource: str, obj: Mapping[str, Any]) -> None:
        meta = _m(obj.get("metadata"))
        namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        self._queue[(resource, namespace, name)] = None
        if not self._draining:
            self._draining = True
            self.clock.call_soon(self._drain)

    def _volume_deleted(self, pv: Mapping[str, Any]) -> None:
        ref = _m(_m(pv.get("spec")).get("claimRef"))
        if ref.get("name"):
            self._queue[(PVCS, str(ref.get("namespace") or "default"), str(ref["name"]))] = None
            if not self._draining:
                self._draining = True
                self.clock.call_soon(self._drain)

    def _claim_deleted(self, pvc: Mapping[str, Any]) -> None:
        name = str(_m(pvc.get("spec")).get("volumeName") or "")
        if name:
            self._queue[(PVS, "", name)] = None
            if not self._draining:
                self._draining = True
                self.clock.call_soon(self._drain)

    def _drain(self) -> None:
        self._draining = False
        queued, self._queue = list(self._queue), {}
        for resource, namespace, name in queued:
            try:
                if resource == PVCS:
                    claim = self.claims.get(namespace, name)
                    if claim is not None:
                        self.sync_claim(claim)
                else:
                    volume = self.volumes.get("", name)
                    if volume is not None:
                        self.sync_volume(volume)
            except StatusError as err:  # a conflict: the next event syncs it again
                log.info("persistentvolume: syncing %s %s/%s: %s", resource, namespace, name, err.message)

    # ---- volumes -----------------------------------------------------------------------------
    def sync_volume(self, volume: Mapping[str, Any]) -> None:
        """syncVolume: Available without a claim or pre-bound to one not yet bound; Bound when its
        claim is bound to it; Released when its claim is gone."""
        ref = _m(_m(volume.get("spec")).get("claimRef"))
        if not ref:
            self._set_volume_phase(volume, "Available")
            return
        claim = self.claims.get(str(ref.get("namespace") or "default"), str(ref.get("name") or ""))
        if not ref.get("uid"):
            # pre-bound (by a user, or by the scheduler's PreBind): the claim's sync binds it
            self._set_volume_phase(volume, "Available")
            if claim is not None:
                self._enqueue(PVCS, claim)
            return
        if claim is None or _m(claim.get("metadata")).get("uid") != ref.get("uid"):
            self._set_volume_phase(volume, "Released")
            return
        volume_name = _m(claim.get("spec")).get("volumeName")
        if volume_name == _m(volume.get("metadata")).get("name"):
            self._set_volume_phase(volume, "Bound")
        elif not volume_name:
            self._enqueue(PVCS, claim)  # the claim is not bound yet: its sync binds it

    def _set_volume_phase(self, volume: Mapping[str, Any], phase: str) -> Mapping[str, Any]:
        status = _m(volume.get("status"))
        if status.get("phase") == phase:
            return volume
        return self.store.update(PVS, {**volume, "status": {**status, "phase": phase}})

    # ---- claims ------------------------------------------------------------------------------
    def sync_claim(self, claim: Mapping[str, Any]) -> None:
        if ANN_BIND_COMPLETED not in annotations_of(claim):
            self._sync_unbound_claim(claim)
        else:
            self._sync_bound_claim(claim)

    def _sync_unbound_claim(self, claim: Mapping[str, Any]) -> None:
        """syncUnboundClaim: bind to a pre-bound or matching volume; a claim of delayed binding
        waits for the scheduler (a volume pre-bound to it by PreBind); a claim to provision
        stays Pending (no provisioner runs)."""
        spec = _m(claim.get("spec"))
        volume_name = str(spec.get("volumeName") or "")
        if not volume_name:
            try:
                delay = is_delay_binding_mode(lambda name: self.classes.get("", name), claim)
            except ValueError:
                return
            class_name = persistent_volume_claim_class(claim)
            candidates = [v for v in self.volumes.items() if persistent_volume_class(v) == class_name]
            try:
                volume = find_matching_volume(claim, candidates, None, {}, delay)
            except MatchError:
                return
            if volume is None:
                if ANN_SELECTED_NODE in annotations_of(claim) or not delay:
                    self._set_claim_phase(claim, "Pending")  # waiting for a provisioner
                return
            self._bind(volume, claim)
            return
        volume = self.volumes.get("", volume_name)
        if volume is None:
            self._set_claim_phase(claim, "Pending")
            return
        ref = _m(volume.get("spec")).get("claimRef")
        if ref is None or is_volume_bound_to_claim(volume, claim):
            self._bind(volume, claim)
        else:
            self._set_claim_phase(claim, "Pending")  # the volume is bound to another claim

    def _sync_bound_claim(self, claim: Mapping[str, Any]) -> None:
        """syncBoundClaim: Lost when its volume is gone or bound elsewhere; else both sides kept
        bound."""
        volume_name = str(_m(claim.get("spec")).get("volumeName") or "")
        volume = self.volumes.get("", volume_name) if volume_name else None
        if volume is None:
            self._set_claim_phase(claim, "Lost")
            return
        ref = _m(_m(volume.get("spec")).get("claimRef"))
        if not ref or is_volume_bound_to_claim(volume, claim):
            self._bind(volume, claim)
        else:
            self._set_claim_phase(claim, "Lost")

    def _set_claim_phase(self, claim: Mapping[str, Any], phase: str) -> None:
        status = _m(claim.get("status"))
        if status.get("phase") != phase:
            self.store.update(PVCS, {**claim, "status": {**status, "phase": phase}})

    def _bind(self, volume: Mapping[str, Any], claim: Mapping[str, Any]) -> None:
        """bind: the volume's claimRef (bound-by-controller when the controller chose it) and
        phase Bound; the claim's volumeName, bind-completed (and bound-by-controller when the
        claim did not name the volume) and status Bound with the volume's modes and capacity."""
        c_meta = _m(claim.get("metadata"))
        v_meta = _m(volume.get("metadata"))
        v_spec = dict(_m(volume.get("spec")))
        ref = _m(v_spec.get("claimRef"))
        namespace, name = str(c_meta.get("namespace") or "default"), str(c_meta.get("name") or "")
        if not (
            ref.get("name") == name
            and ref.get("namespace") == namespace
            and ref.get("uid") == c_meta.get("uid")
        ):
            pre_bound = is_volume_bound_to_claim(volume, claim)
            v_spec["claimRef"] = {
                "kind": "PersistentVolumeClaim",
                "namespace": namespace,
                "name": name,
                "uid": c_meta.get("uid"),
                "apiVersion": "v1",
                "resourceVersion": c_meta.get("resourceVersion"),
            }
            new_meta = dict(v_meta)
            if not pre_bound:
                new_meta["annotations"] = {**_m(v_meta.get("annotations")), ANN_BOUND_BY_CONTROLLER: "yes"}
            volume = self.store.update(PVS, {**volume, "metadata": new_meta, "spec": v_spec})
        volume = self._set_volume_phase(volume, "Bound")
        c_spec = dict(_m(claim.get("spec")))
        c_annotations = dict(_m(c_meta.get("annotations")))
        changed = False
        if c_spec.get("volumeName") != v_meta.get("name"):
            c_spec["volumeName"] = v_meta.get("name")
            c_annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
            changed = True
        if ANN_BIND_COMPLETED not in c_annotations:
            c_annotations[ANN_BIND_COMPLETED] = "yes"
            changed = True
        if changed:
            claim = self.store.update(
                PVCS, {**claim, "metadata": {**c_meta, "annotations": c_annotations}, "spec": c_spec}
            )
        status = dict(_m(claim.get("status")))
        wanted = {
            **status,
            "phase": "Bound",
            "accessModes": list(_m(volume.get("spec")).get("accessModes") or []),
            "capacity": dict(_m(_m(volume.get("spec")).get("capacity"))),
        }
        if wanted != status:
            self.store.update(PVCS, {**claim, "status": wanted})
