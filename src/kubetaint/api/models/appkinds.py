"""Models of the kinds application manifests contain: v1 ConfigMap, Secret, ServiceAccount,
Service, Endpoints; discovery.k8s.io/v1 EndpointSlice; apps/v1 StatefulSet; batch/v1 Job and
CronJob (mirrors k8s.io/api core/v1, discovery/v1, apps/v1 and batch/v1 types.go): typed
decoding of request bodies, so a field of the wrong JSON type is kube-apiserver's 400."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from kubetaint.api.models.base import Int32, Int64, IntOrString, K8sModel, Time
from kubetaint.api.models.core import PodTemplateSpec
from kubetaint.api.models.meta import LabelSelector, ObjectReference, TypedObject, Untyped


class ConfigMap(TypedObject):
    immutable: bool | None = None
    data: dict[str, str] | None = None
    binary_data: dict[str, str] | None = None


class Secret(TypedObject):
    immutable: bool | None = None
    data: dict[str, str] | None = None
    string_data: dict[str, str] | None = None
    type: str | None = None


class LocalObjectReference(K8sModel):
    name: str | None = None


class ServiceAccount(TypedObject):
    secrets: list[ObjectReference] | None = None
    image_pull_secrets: list[LocalObjectReference] | None = None
    automount_service_account_token: bool | None = None


class ServicePort(K8sModel):
    name: str | None = None
    protocol: str | None = None
    app_protocol: str | None = None
    port: Int32 | None = None
    target_port: IntOrString | None = None
    node_port: Int32 | None = None


class ServiceSpec(K8sModel):
    ports: list[ServicePort] | None = None
    selector: dict[str, str] | None = None
    cluster_ip: str | None = Field(default=None, alias="clusterIP")
    cluster_ips: list[str] | None = Field(default=None, alias="clusterIPs")
    type: str | None = None
    external_ips: list[str] | None = Field(default=None, alias="externalIPs")
    session_affinity: str | None = None
    load_balancer_ip: str | None = Field(default=None, alias="loadBalancerIP")
    load_balancer_source_ranges: list[str] | None = None
    external_name: str | None = None
    external_traffic_policy: str | None = None
    health_check_node_port: Int32 | None = None
    publish_not_ready_addresses: bool | None = None
    session_affinity_config: Untyped | None = None
    ip_families: list[str] | None = None
    ip_family_policy: str | None = None
    allocate_load_balancer_node_ports: bool | None = None
    load_balancer_class: str | None = None
    internal_traffic_policy: str | None = None
    traffic_distribution: str | None = None


class Service(TypedObject):
    spec: ServiceSpec | None = None
    status: Untyped | None = None


class EndpointAddress(K8sModel):
    ip: str | None = None
    hostname: str | None = None
    node_name: str | None = None
    target_ref: ObjectReference | None = None


class EndpointPort(K8sModel):
    name: str | None = None
    port: Int32 | None = None
    protocol: str | None = None
    app_protocol: str | None = None


class EndpointSubset(K8sModel):
    addresses: list[EndpointAddress] | None = None
    not_ready_addresses: list[EndpointAddress] | None = None
    ports: list[EndpointPort] | None = None


class Endpoints(TypedObject):
    subsets: list[EndpointSubset] | None = None


class Endpoint(K8sModel):
    addresses: list[str] | None = None
    conditions: Untyped | None = None
    hostname: str | None = None
    target_ref: ObjectReference | None = None
    node_name: str | None = None
    zone: str | None = None
    hints: Untyped | None = None


class DiscoveryEndpointPort(K8sModel):
    go_name: ClassVar[str] = "EndpointPort"
    name: str | None = None
    protocol: str | None = None
    port: Int32 | None = None
    app_protocol: str | None = None


class EndpointSlice(TypedObject):
    address_type: str | None = None
    endpoints: list[Endpoint] | None = None
    ports: list[DiscoveryEndpointPort] | None = None


class StatefulSetSpec(K8sModel):
    replicas: Int32 | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec | None = None
    volume_claim_templates: list[Untyped] | None = None
    service_name: str | None = None
    pod_management_policy: str | None = None
    update_strategy: Untyped | None = None
    revision_history_limit: Int32 | None = None
    min_ready_seconds: Int32 | None = None
    persistent_volume_claim_retention_policy: Untyped | None = None
    ordinals: Untyped | None = None


class StatefulSetStatus(K8sModel):
    observed_generation: Int64 | None = None
    replicas: Int32 | None = None
    ready_replicas: Int32 | None = None
    current_replicas: Int32 | None = None
    updated_replicas: Int32 | None = None
    available_replicas: Int32 | None = None


class StatefulSet(TypedObject):
    spec: StatefulSetSpec | None = None
    status: StatefulSetStatus | None = None


class ControllerRevision(TypedObject):
    data: Untyped | None = None
    revision: Int64 | None = None


class JobSpec(K8sModel):
    parallelism: Int32 | None = None
    completions: Int32 | None = None
    active_deadline_seconds: Int64 | None = None
    pod_failure_policy: Untyped | None = None
    success_policy: Untyped | None = None
    backoff_limit: Int32 | None = None
    backoff_limit_per_index: Int32 | None = None
    max_failed_indexes: Int32 | None = None
    selector: LabelSelector | None = None
    manual_selector: bool | None = None
    template: PodTemplateSpec | None = None
    ttl_seconds_after_finished: Int32 | None = None
    completion_mode: str | None = None
    suspend: bool | None = None
    pod_replacement_policy: str | None = None
    managed_by: str | None = None


class JobStatus(K8sModel):
    conditions: list[Untyped] | None = None
    start_time: Time | None = None
    completion_time: Time | None = None
    active: Int32 | None = None
    succeeded: Int32 | None = None
    failed: Int32 | None = None


class Job(TypedObject):
    spec: JobSpec | None = None
    status: JobStatus | None = None


class JobTemplateSpec(K8sModel):
    metadata: Untyped | None = None
    spec: JobSpec | None = None


class CronJobSpec(K8sModel):
    schedule: str | None = None
    time_zone: str | None = None
    starting_deadline_seconds: Int64 | None = None
    concurrency_policy: str | None = None
    suspend: bool | None = None
    job_template: JobTemplateSpec | None = None
    successful_jobs_history_limit: Int32 | None = None
    failed_jobs_history_limit: Int32 | None = None


class CronJobStatus(K8sModel):
    active: list[ObjectReference] | None = None
    last_schedule_time: Time | None = None
    last_successful_time: Time | None = None


class CronJob(TypedObject):
    spec: CronJobSpec | None = None
    status: CronJobStatus | None = None
