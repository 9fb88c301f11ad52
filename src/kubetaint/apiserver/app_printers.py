"""Table columns and cells of the kinds ordinary applications use, as kube-apiserver prints them
(mirrors printConfigMap, printSecret, printServiceAccount, printService, printEndpoints,
printEndpointSlice, printStatefulSet, printJob and printCronJob of
pkg/printers/internalversion/printers.go, rendered Wide as the apiserver does). Column
descriptions are the SwaggerDoc of the fields they show."""

from __future__ import annotations

import ipaddress
from typing import Any

from kubetaint.api.jsonview import as_list, meta_of
from kubetaint.apiserver.printing import (
    AGE_COLUMN,
    JSON,
    NAME_COLUMN,
    Cells,
    age_of,
    as_dict,
    col,
    count_of,
    human_duration,
    since,
    swagger_doc,
)
from kubetaint.apiserver.workload_printers import (
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    format_label_selector,
    format_labels,
    layout_container_cells,
)
from kubetaint.clock.base import parse_time

_CORE = "io.k8s.api.core.v1."
_BATCH = "io.k8s.api.batch.v1."


def _name(obj: JSON) -> Any:
    return meta_of(obj).get("name", "")


CONFIG_MAP_COLUMNS = [NAME_COLUMN, col("Data", swagger_doc(_CORE + "ConfigMap", "data")), AGE_COLUMN]


def print_config_map(obj: JSON, now: float) -> Cells:
    return [_name(obj), len(as_dict(obj.get("data"))) + len(as_dict(obj.get("binaryData"))), age_of(obj, now)]


SECRET_COLUMNS = [
    NAME_COLUMN,
    col("Type", swagger_doc(_CORE + "Secret", "type")),
    col("Data", swagger_doc(_CORE + "Secret", "data")),
    AGE_COLUMN,
]


def print_secret(obj: JSON, now: float) -> Cells:
    return [_name(obj), str(obj.get("type") or ""), len(as_dict(obj.get("data"))), age_of(obj, now)]


SERVICE_ACCOUNT_COLUMNS = [
    NAME_COLUMN,
    col("Secrets", swagger_doc(_CORE + "ServiceAccount", "secrets")),
    AGE_COLUMN,
]


def print_service_account(obj: JSON, now: float) -> Cells:
    return [_name(obj), len(as_list(obj.get("secrets"))), age_of(obj, now)]


_SERVICE_SPEC = _CORE + "ServiceSpec"
SERVICE_COLUMNS = [
    NAME_COLUMN,
    col("Type", swagger_doc(_SERVICE_SPEC, "type")),
    col("Cluster-IP", swagger_doc(_SERVICE_SPEC, "clusterIP")),
    col("External-IP", swagger_doc(_SERVICE_SPEC, "externalIPs")),
    col("Port(s)", swagger_doc(_SERVICE_SPEC, "ports")),
    AGE_COLUMN,
    col("Selector", swagger_doc(_SERVICE_SPEC, "selector"), priority=1),
]


def make_port_string(ports: list[Any]) -> str:
    """makePortString: `port/protocol`, or `port:nodePort/protocol`, comma-joined."""
    pieces = []
    for port in map(as_dict, ports):
        node_port = count_of(port.get("nodePort"))
        number, protocol = count_of(port.get("port")), port.get("protocol") or ""
        pieces.append(f"{number}:{node_port}/{protocol}" if node_port > 0 else f"{number}/{protocol}")
    return ",".join(pieces)


def _load_balancer_ips(status: JSON) -> str:
    """loadBalancerStatusStringer (wide): the ingress IPs or hostnames, sorted and unique."""
    found = set()
    for ingress in map(as_dict, as_list(as_dict(status.get("loadBalancer")).get("ingress"))):
        if ingress.get("ip"):
            found.add(str(ingress["ip"]))
        elif ingress.get("hostname"):
            found.add(str(ingress["hostname"]))
    return ",".join(sorted(found))


def service_external_ip(obj: JSON) -> str:
    """getServiceExternalIP (wide)."""
    spec = as_dict(obj.get("spec"))
    external = [str(ip) for ip in as_list(spec.get("externalIPs"))]
    kind = spec.get("type")
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) if external else "<none>"
    if kind == "LoadBalancer":
        ips = _load_balancer_ips(as_dict(obj.get("status")))
        if external:
            return ",".join([*(ips.split(",") if ips else []), *external])
        return ips or "<pending>"
    if kind == "ExternalName":
        return str(spec.get("externalName") or "")
    return "<unknown>"


def print_service(obj: JSON, now: float) -> Cells:
    spec = as_dict(obj.get("spec"))
    cluster_ips = as_list(spec.get("clusterIPs"))
    return [
        _name(obj),
        str(spec.get("type") or ""),
        str(cluster_ips[0]) if cluster_ips else "<none>",
        service_external_ip(obj),
        make_port_string(as_list(spec.get("ports"))) or "<none>",
        age_of(obj, now),
        format_labels(spec.get("selector")),
    ]


ENDPOINTS_COLUMNS = [
    NAME_COLUMN,
    col("Endpoints", swagger_doc(_CORE + "Endpoints", "subsets")),
    AGE_COLUMN,
]


def _join_host_port(host: str, port: int) -> str:
    """net.JoinHostPort: IPv6 addresses in brackets."""
    try:
        is_v6 = ipaddress.ip_address(host).version == 6
    except ValueError:
        is_v6 = ":" in host
    return f"[{host}]:{port}" if is_v6 else f"{host}:{port}"


def format_endpoints(obj: JSON) -> str:
    """formatEndpoints: up to three addresses (`ip:port` per port), then `+ N more...`."""
    subsets = [as_dict(s) for s in as_list(obj.get("subsets"))]
    if not subsets:
        return "<none>"
    found: list[str] = []
    most, more, count = 3, False, 0
    for subset in subsets:
        addresses = [str(as_dict(a).get("ip") or "") for a in as_list(subset.get("addresses"))]
        ports = [as_dict(p) for p in as_list(subset.get("ports"))]
        if not ports:
            count += len(addresses)
            for ip in addresses:
                if len(found) == most:
                    more = True
                    break
                found.append(ip)
            continue
        for port in ports:
            count += len(addresses)
            for ip in addresses:
                if len(found) == most:
                    more = True
                    break
                found.append(_join_host_port(ip, count_of(port.get("port"))))
    text = ",".join(found)
    return f"{text} + {count - most} more..." if more else text


def _list_with_more(found: list[str], more: bool, count: int, most: int) -> str:
    """listWithMoreString."""
    text = ",".join(found)
    if more:
        return f"{text} + {count - most} more..."
    return text or "<unset>"


_SLICE = "io.k8s.api.discovery.v1.EndpointSlice"
ENDPOINT_SLICE_COLUMNS = [
    NAME_COLUMN,
    col("AddressType", swagger_doc(_SLICE, "addressType")),
    col("Ports", swagger_doc(_SLICE, "ports")),
    col("Endpoints", swagger_doc(_SLICE, "endpoints")),
    AGE_COLUMN,
]


def format_discovery_ports(ports: list[Any]) -> str:
    """formatDiscoveryPorts: the port numbers (a name, or `*`, when unset)."""
    found: list[str] = []
    most, more, count = 3, False, 0
    for port in map(as_dict, ports):
        if len(found) < most:
            if port.get("port") is not None:
                found.append(str(count_of(port.get("port"))))
            elif port.get("name") is not None:
                found.append(str(port.get("name")))
            else:
                found.append("*")
        elif len(found) == most:
            more = True
        count += 1
    return _list_with_more(found, more, count, most)


def format_discovery_endpoints(endpoints: list[Any]) -> str:
    """formatDiscoveryEndpoints: the first three addresses."""
    found: list[str] = []
    most, more, count = 3, False, 0
    for endpoint in map(as_dict, endpoints):
        for address in as_list(endpoint.get("addresses")):
            if len(found) < most:
                found.append(str(address))
            elif len(found) == most:
                more = True
            count += 1
    return _list_with_more(found, more, count, most)


def print_endpoint_slice(obj: JSON, now: float) -> Cells:
    return [
        _name(obj),
        str(obj.get("addressType") or ""),
        format_discovery_ports(as_list(obj.get("ports"))),
        format_discovery_endpoints(as_list(obj.get("endpoints"))),
        age_of(obj, now),
    ]


def print_endpoints(obj: JSON, now: float) -> Cells:
    return [_name(obj), format_endpoints(obj), age_of(obj, now)]


STATEFUL_SET_COLUMNS = [
    NAME_COLUMN,
    col("Ready", "Number of the pod with ready state"),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
]


def print_stateful_set(obj: JSON, now: float) -> Cells:
    spec, status = as_dict(obj.get("spec")), as_dict(obj.get("status"))
    desired = count_of(spec["replicas"]) if "replicas" in spec else 1  # SetDefaults_StatefulSet
    names, images = layout_container_cells(spec.get("template"))
    return [_name(obj), f"{count_of(status.get('readyReplicas'))}/{desired}", age_of(obj, now), names, images]


CONTROLLER_REVISION_COLUMNS = [
    NAME_COLUMN,
    col("Controller", "Controller of the object"),
    col("Revision", swagger_doc("io.k8s.api.apps.v1.ControllerRevision", "revision")),
    AGE_COLUMN,
]


def print_controller_revision(obj: JSON, now: float) -> Cells:
    """printControllerRevision: the controller as `<kind>.<group>/<name>` (formatResourceName)."""
    controller = "<none>"
    for ref in map(as_dict, as_list(as_dict(obj.get("metadata")).get("ownerReferences"))):
        if ref.get("controller") is True:
            group = str(ref.get("apiVersion") or "").rpartition("/")[0]
            kind = str(ref.get("kind") or "")
            group_kind = f"{kind}.{group}" if group else kind
            controller = (
                f"{group_kind.lower()}/{ref.get('name') or ''}" if group_kind else str(ref.get("name") or "")
            )
            break
    return [_name(obj), controller, count_of(obj.get("revision")), age_of(obj, now)]


_SELECTOR_COLUMN = col("Selector", swagger_doc(_BATCH + "JobSpec", "selector"), priority=1)
JOB_COLUMNS = [
    NAME_COLUMN,
    col("Status", "Status of the job."),
    col("Completions", swagger_doc(_BATCH + "JobStatus", "succeeded")),
    col("Duration", "Time required to complete the job."),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    _SELECTOR_COLUMN,
]

#: printJob's order: the first condition type found (status True) names the status.
_JOB_STATUS_CONDITIONS = (("Complete", "Complete"), ("Failed", "Failed"))
_JOB_LATER_CONDITIONS = (
    ("Suspended", "Suspended"),
    ("FailureTarget", "FailureTarget"),
    ("SuccessCriteriaMet", "SuccessCriteriaMet"),
)


def _has_condition(status: JSON, kind: str) -> bool:
    return any(
        as_dict(c).get("type") == kind and as_dict(c).get("status") == "True"
        for c in as_list(status.get("conditions"))
    )


def job_status(obj: JSON) -> str:
    """printJob's STATUS: Complete, Failed, Terminating, Suspended, FailureTarget,
    SuccessCriteriaMet or Running."""
    status = as_dict(obj.get("status"))
    for kind, shown in _JOB_STATUS_CONDITIONS:
        if _has_condition(status, kind):
            return shown
    if meta_of(obj).get("deletionTimestamp"):
        return "Terminating"
    for kind, shown in _JOB_LATER_CONDITIONS:
        if _has_condition(status, kind):
            return shown
    return "Running"


def _job_completions(spec: JSON, status: JSON) -> str:
    succeeded = count_of(status.get("succeeded"))
    if spec.get("completions") is not None:
        return f"{succeeded}/{count_of(spec.get('completions'))}"
    parallelism = count_of(spec.get("parallelism"))
    return f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"


def _job_duration(status: JSON, now: float) -> str:
    start, end = status.get("startTime"), status.get("completionTime")
    if not isinstance(start, str) or not start:
        return ""
    try:
        begun = parse_time(start)
        if not isinstance(end, str) or not end:
            return human_duration(now - begun)
        return human_duration(parse_time(end) - begun)
    except ValueError:
        return ""


def print_job(obj: JSON, now: float) -> Cells:
    spec, status = as_dict(obj.get("spec")), as_dict(obj.get("status"))
    names, images = layout_container_cells(spec.get("template"))
    return [
        _name(obj),
        job_status(obj),
        _job_completions(spec, status),
        _job_duration(status, now),
        age_of(obj, now),
        names,
        images,
        format_label_selector(spec.get("selector")),
    ]


_CRON_SPEC, _CRON_STATUS = _BATCH + "CronJobSpec", _BATCH + "CronJobStatus"
CRON_JOB_COLUMNS = [
    NAME_COLUMN,
    col("Schedule", swagger_doc(_CRON_SPEC, "schedule")),
    col("Timezone", swagger_doc(_CRON_SPEC, "timeZone")),
    col("Suspend", swagger_doc(_CRON_SPEC, "suspend"), type_="boolean"),
    col("Active", swagger_doc(_CRON_STATUS, "active"), type_="integer"),
    col("Last Schedule", swagger_doc(_CRON_STATUS, "lastScheduleTime")),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    _SELECTOR_COLUMN,
]


def _bool_pointer(value: Any) -> str:
    """printBoolPtr."""
    if isinstance(value, bool):
        return "True" if value else "False"
    return "<unset>"


def print_cron_job(obj: JSON, now: float) -> Cells:
    spec, status = as_dict(obj.get("spec")), as_dict(obj.get("status"))
    job_spec = as_dict(as_dict(spec.get("jobTemplate")).get("spec"))
    names, images = layout_container_cells(job_spec.get("template"))
    last = status.get("lastScheduleTime")
    time_zone = spec.get("timeZone")
    return [
        _name(obj),
        str(spec.get("schedule") or ""),
        str(time_zone) if time_zone is not None else "<none>",
        _bool_pointer(spec.get("suspend")),
        len(as_list(status.get("active"))),
        since(last, now) if last is not None else "<none>",
        age_of(obj, now),
        names,
        images,
        format_label_selector(job_spec.get("selector")),
    ]


APP_PRINTERS = {
    "configmaps": (CONFIG_MAP_COLUMNS, print_config_map),
    "secrets": (SECRET_COLUMNS, print_secret),
    "serviceaccounts": (SERVICE_ACCOUNT_COLUMNS, print_service_account),
    "services": (SERVICE_COLUMNS, print_service),
    "endpoints": (ENDPOINTS_COLUMNS, print_endpoints),
    "endpointslices.discovery.k8s.io": (ENDPOINT_SLICE_COLUMNS, print_endpoint_slice),
    "statefulsets.apps": (STATEFUL_SET_COLUMNS, print_stateful_set),
    "controllerrevisions.apps": (CONTROLLER_REVISION_COLUMNS, print_controller_revision),
    "jobs.batch": (JOB_COLUMNS, print_job),
    "cronjobs.batch": (CRON_JOB_COLUMNS, print_cron_job),
}
