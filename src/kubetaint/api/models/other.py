"""Models outside core/v1: apps/v1 workloads, policy/v1, scheduling.k8s.io/v1, node.k8s.io/v1,
coordination.k8s.io/v1 and meta/v1 Status (mirrors the matching k8s.io/api packages)."""

from __future__ import annotations

from kubetaint.api.models.base import Int32, Int64, IntOrString, K8sModel, Quantity, Time
from kubetaint.api.models.core import PodTemplateSpec, Toleration
from kubetaint.api.models.meta import LabelSelector, TypedObject, Untyped


class LeaseSpec(K8sModel):
    holder_identity: str | None = None
    lease_duration_seconds: Int32 | None = None
    acquire_time: Time | None = None
    renew_time: Time | None = None
    lease_transitions: Int32 | None = None


class Lease(TypedObject):
    spec: LeaseSpec | None = None


class PodDisruptionBudgetSpec(K8sModel):
    min_available: IntOrString | None = None
    max_unavailable: IntOrString | None = None
    selector: LabelSelector | None = None
    unhealthy_pod_eviction_policy: str | None = None


class PodDisruptionBudgetStatus(K8sModel):
    observed_generation: Int64 | None = None
    disrupted_pods: dict[str, Time] | None = None
    disruptions_allowed: Int32 | None = None
    current_healthy: Int32 | None = None
    desired_healthy: Int32 | None = None
    expected_pods: Int32 | None = None


class PodDisruptionBudget(TypedObject):
    spec: PodDisruptionBudgetSpec | None = None
    status: PodDisruptionBudgetStatus | None = None


class Eviction(TypedObject):
    delete_options: Untyped | None = None


class PriorityClass(TypedObject):
    value: Int32 | None = None
    global_default: bool | None = None
    description: str | None = None
    preemption_policy: str | None = None


class Overhead(K8sModel):
    pod_fixed: dict[str, Quantity] | None = None


class Scheduling(K8sModel):
    node_selector: dict[str, str] | None = None
    tolerations: list[Toleration] | None = None


class RuntimeClass(TypedObject):
    handler: str | None = None
    overhead: Overhead | None = None
    scheduling: Scheduling | None = None


class DaemonSetSpec(K8sModel):
    selector: LabelSelector | None = None
    template: PodTemplateSpec | None = None
    update_strategy: Untyped | None = None
    min_ready_seconds: Int32 | None = None
    revision_history_limit: Int32 | None = None


class WorkloadStatus(K8sModel):
    observed_generation: Int64 | None = None
    replicas: Int32 | None = None
    ready_replicas: Int32 | None = None
    available_replicas: Int32 | None = None
    current_number_scheduled: Int32 | None = None
    desired_number_scheduled: Int32 | None = None
    number_ready: Int32 | None = None
    number_misscheduled: Int32 | None = None


class DaemonSet(TypedObject):
    spec: DaemonSetSpec | None = None
    status: WorkloadStatus | None = None


class ReplicaSetSpec(K8sModel):
    replicas: Int32 | None = None
    min_ready_seconds: Int32 | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec | None = None


class ReplicaSet(TypedObject):
    spec: ReplicaSetSpec | None = None
    status: WorkloadStatus | None = None


class DeploymentSpec(K8sModel):
    replicas: Int32 | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec | None = None
    strategy: Untyped | None = None
    min_ready_seconds: Int32 | None = None
    revision_history_limit: Int32 | None = None
    paused: bool | None = None
    progress_deadline_seconds: Int32 | None = None


class Deployment(TypedObject):
    spec: DeploymentSpec | None = None
    status: WorkloadStatus | None = None


class StatusCause(K8sModel):
    reason: str | None = None
    message: str | None = None
    field: str | None = None


class StatusDetails(K8sModel):
    name: str | None = None
    group: str | None = None
    kind: str | None = None
    uid: str | None = None
    causes: list[StatusCause] | None = None
    retry_after_seconds: Int32 | None = None


class Status(K8sModel):
    api_version: str | None = None
    kind: str | None = None
    metadata: Untyped | None = None
    status: str | None = None
    message: str | None = None
    reason: str | None = None
    details: StatusDetails | None = None
    code: Int32 | None = None
