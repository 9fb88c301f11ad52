"""core/v1 models: Node, Pod, Namespace, Binding, Event and their parts
(mirrors k8s.io/api/core/v1/types.go)."""

from __future__ import annotations

from pydantic import Field

from kubetaint.api.models.base import Int32, Int64, K8sModel, Quantity, Time
from kubetaint.api.models.meta import ObjectMeta, ObjectReference, TypedObject, Untyped


class Taint(K8sModel):
    key: str | None = None
    value: str | None = None
    effect: str | None = None
    time_added: Time | None = None


class Toleration(K8sModel):
    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None
    toleration_seconds: Int64 | None = None


class NodeSpec(K8sModel):
    pod_cidr: str | None = Field(default=None, alias="podCIDR")
    pod_cidrs: list[str] | None = Field(default=None, alias="podCIDRs")
    provider_id: str | None = Field(default=None, alias="providerID")
    unschedulable: bool | None = None
    taints: list[Taint] | None = None


class NodeCondition(K8sModel):
    type: str | None = None
    status: str | None = None
    last_heartbeat_time: Time | None = None
    last_transition_time: Time | None = None
    reason: str | None = None
    message: str | None = None


class NodeStatus(K8sModel):
    capacity: dict[str, Quantity] | None = None
    allocatable: dict[str, Quantity] | None = None
    phase: str | None = None
    conditions: list[NodeCondition] | None = None


class Node(TypedObject):
    spec: NodeSpec | None = None
    status: NodeStatus | None = None


class ResourceRequirements(K8sModel):
    limits: dict[str, Quantity] | None = None
    requests: dict[str, Quantity] | None = None


class Container(K8sModel):
    name: str | None = None
    image: str | None = None
    image_pull_policy: str | None = None
    resources: ResourceRequirements | None = None


class PodSpec(K8sModel):
    containers: list[Container] | None = None
    init_containers: list[Container] | None = None
    node_name: str | None = None
    node_selector: dict[str, str] | None = None
    tolerations: list[Toleration] | None = None
    affinity: Untyped | None = None
    priority: Int32 | None = None
    priority_class_name: str | None = None
    preemption_policy: str | None = None
    scheduler_name: str | None = None
    runtime_class_name: str | None = None
    overhead: dict[str, Quantity] | None = None
    restart_policy: str | None = None
    termination_grace_period_seconds: Int64 | None = None
    active_deadline_seconds: Int64 | None = None
    scheduling_gates: list[Untyped] | None = None


class PodCondition(K8sModel):
    type: str | None = None
    status: str | None = None
    reason: str | None = None
    message: str | None = None
    last_probe_time: Time | None = None
    last_transition_time: Time | None = None


class PodStatus(K8sModel):
    phase: str | None = None
    conditions: list[PodCondition] | None = None
    reason: str | None = None
    message: str | None = None
    nominated_node_name: str | None = None
    host_ip: str | None = Field(default=None, alias="hostIP")
    pod_ip: str | None = Field(default=None, alias="podIP")
    start_time: Time | None = None
    qos_class: str | None = None


class Pod(TypedObject):
    spec: PodSpec | None = None
    status: PodStatus | None = None


class PodTemplateSpec(K8sModel):
    metadata: ObjectMeta | None = None
    spec: PodSpec | None = None


class NamespaceSpec(K8sModel):
    finalizers: list[str] | None = None


class NamespaceStatus(K8sModel):
    phase: str | None = None


class Namespace(TypedObject):
    spec: NamespaceSpec | None = None
    status: NamespaceStatus | None = None


class Binding(TypedObject):
    target: ObjectReference | None = None


class EventSource(K8sModel):
    component: str | None = None
    host: str | None = None


class EventSeries(K8sModel):
    count: Int32 | None = None
    last_observed_time: Time | None = None


class Event(TypedObject):
    """core/v1 Event (involvedObject) and events.k8s.io/v1 Event (regarding, note) share this model."""

    involved_object: ObjectReference | None = None
    regarding: ObjectReference | None = None
    related: ObjectReference | None = None
    reason: str | None = None
    message: str | None = None
    note: str | None = None
    type: str | None = None
    action: str | None = None
    source: EventSource | None = None
    first_timestamp: Time | None = None
    last_timestamp: Time | None = None
    event_time: Time | None = None
    count: Int32 | None = None
    reporting_component: str | None = None
    reporting_controller: str | None = None
    reporting_instance: str | None = None
    series: EventSeries | None = None
    deprecated_source: EventSource | None = None
    deprecated_first_timestamp: Time | None = None
    deprecated_last_timestamp: Time | None = None
    deprecated_count: Int32 | None = None
