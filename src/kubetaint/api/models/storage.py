"""Models of the storage kinds the scheduler's volume plugins read: v1 PersistentVolume and
PersistentVolumeClaim, storage.k8s.io/v1 StorageClass, CSINode and CSIDriver (mirrors
k8s.io/api core/v1 and storage/v1 types.go): typed decoding of request bodies, so a field of the
wrong JSON type is kube-apiserver's 400. Volume sources are kept as written."""

from __future__ import annotations

from pydantic import Field

from kubetaint.api.models.base import Int32, Int64, K8sModel, Quantity
from kubetaint.api.models.core import ResourceRequirements
from kubetaint.api.models.meta import LabelSelector, ObjectReference, TypedObject, Untyped


class VolumeNodeAffinity(K8sModel):
    required: Untyped | None = None


class PersistentVolumeSpec(K8sModel):
    capacity: dict[str, Quantity] | None = None
    access_modes: list[str] | None = None
    claim_ref: ObjectReference | None = None
    persistent_volume_reclaim_policy: str | None = None
    storage_class_name: str | None = None
    mount_options: list[str] | None = None
    volume_mode: str | None = None
    node_affinity: VolumeNodeAffinity | None = None
    volume_attributes_class_name: str | None = None
    csi: Untyped | None = None


class PersistentVolumeStatus(K8sModel):
    phase: str | None = None
    message: str | None = None
    reason: str | None = None
    last_phase_transition_time: str | None = None


class PersistentVolume(TypedObject):
    spec: PersistentVolumeSpec | None = None
    status: PersistentVolumeStatus | None = None


class PersistentVolumeClaimSpec(K8sModel):
    access_modes: list[str] | None = None
    selector: LabelSelector | None = None
    resources: ResourceRequirements | None = None
    volume_name: str | None = None
    storage_class_name: str | None = None
    volume_mode: str | None = None
    data_source: Untyped | None = None
    data_source_ref: Untyped | None = None
    volume_attributes_class_name: str | None = None


class PersistentVolumeClaimStatus(K8sModel):
    phase: str | None = None
    access_modes: list[str] | None = None
    capacity: dict[str, Quantity] | None = None
    conditions: list[Untyped] | None = None
    allocated_resources: dict[str, Quantity] | None = None


class PersistentVolumeClaim(TypedObject):
    spec: PersistentVolumeClaimSpec | None = None
    status: PersistentVolumeClaimStatus | None = None


class TopologySelectorLabelRequirement(K8sModel):
    key: str | None = None
    values: list[str] | None = None


class TopologySelectorTerm(K8sModel):
    match_label_expressions: list[TopologySelectorLabelRequirement] | None = None


class StorageClass(TypedObject):
    provisioner: str | None = None
    parameters: dict[str, str] | None = None
    reclaim_policy: str | None = None
    mount_options: list[str] | None = None
    allow_volume_expansion: bool | None = None
    volume_binding_mode: str | None = None
    allowed_topologies: list[TopologySelectorTerm] | None = None


class VolumeNodeResources(K8sModel):
    count: Int32 | None = None


class CSINodeDriver(K8sModel):
    name: str | None = None
    node_id: str | None = Field(default=None, alias="nodeID")
    topology_keys: list[str] | None = None
    allocatable: VolumeNodeResources | None = None


class CSINodeSpec(K8sModel):
    drivers: list[CSINodeDriver] | None = None


class CSINode(TypedObject):
    spec: CSINodeSpec | None = None


class CSIDriverSpec(K8sModel):
    attach_required: bool | None = None
    pod_info_on_mount: bool | None = None
    volume_lifecycle_modes: list[str] | None = None
    storage_capacity: bool | None = None
    fs_group_policy: str | None = None
    token_requests: list[Untyped] | None = None
    requires_republish: bool | None = None
    se_linux_mount: bool | None = Field(default=None, alias="seLinuxMount")
    node_allocatable_update_period_seconds: Int64 | None = None


class CSIDriver(TypedObject):
    spec: CSIDriverSpec | None = None
