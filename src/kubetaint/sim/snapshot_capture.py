"""`kubetaint snapshot`'s capture: LIST every kept kind of a live cluster through a kubeconfig with
the official `kubernetes` client (the optional `cluster` extra, imported lazily) — read-only, GET
and LIST only — and build the snapshot document (kubetaint.sim.snapshot).

Objects are read as the raw JSON the server sent (`_preload_content=False`), so fields the client
models do not know, and `timeAdded` on taints, are kept byte for byte. The capture time is the
server's `Date` header of the first response (no local wall clock).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from email.utils import parsedate_to_datetime
from typing import Any

from kubetaint.sim.snapshot import SnapshotError, SnapshotInfo, build_snapshot
from kubetaint.store.interface import JSON

#: (kind, apiVersion, client API class, list method, namespaced list argument or None).
LISTS: tuple[tuple[str, str, str, str, str | None], ...] = (
    ("Namespace", "v1", "CoreV1Api", "list_namespace", None),
    ("PriorityClass", "scheduling.k8s.io/v1", "SchedulingV1Api", "list_priority_class", None),
    ("RuntimeClass", "node.k8s.io/v1", "NodeV1Api", "list_runtime_class", None),
    ("Node", "v1", "CoreV1Api", "list_node", None),
    ("Lease", "coordination.k8s.io/v1", "CoordinationV1Api", "list_namespaced_lease", "kube-node-lease"),
    (
        "PodDisruptionBudget",
        "policy/v1",
        "PolicyV1Api",
        "list_pod_disruption_budget_for_all_namespaces",
        None,
    ),
    ("Deployment", "apps/v1", "AppsV1Api", "list_deployment_for_all_namespaces", None),
    ("ReplicaSet", "apps/v1", "AppsV1Api", "list_replica_set_for_all_namespaces", None),
    ("DaemonSet", "apps/v1", "AppsV1Api", "list_daemon_set_for_all_namespaces", None),
    ("StatefulSet", "apps/v1", "AppsV1Api", "list_stateful_set_for_all_namespaces", None),
    ("Pod", "v1", "CoreV1Api", "list_pod_for_all_namespaces", None),
)

Progress = Callable[[str, int, int], None]  # (kind, done, total)


def _client() -> Any:
    try:
        import kubernetes
    except ImportError:
        raise SnapshotError(
            "the kubernetes client is not installed: pip install 'kubetaint[cluster]'"
        ) from None
    return kubernetes


def api_client(kubeconfig: str | None) -> Any:
    """A kubernetes ApiClient for `kubeconfig` (or $KUBECONFIG / ~/.kube/config)."""
    kubernetes = _client()
    try:
        return kubernetes.config.new_client_from_config(config_file=kubeconfig)
    except Exception as err:  # the client raises several unrelated types for a bad kubeconfig
        where = kubeconfig or "the default kubeconfig"
        raise SnapshotError(f"cannot load {where}: {_one_line(err)}") from None


def capture(client: Any, *, name: str = "snapshot", progress: Progress | None = None) -> JSON:
    """Read every kept kind through `client` and return the snapshot document."""
    kubernetes = _client()
    info = SnapshotInfo()
    objects: list[JSON] = []
    for done, (kind, api_version, api_class, method, namespace) in enumerate(LISTS):
        if progress is not None:
            progress(kind, done, len(LISTS))
        api = getattr(kubernetes.client, api_class)(client)
        args = (namespace,) if namespace is not None else ()
        try:
            response = getattr(api, method)(*args, _preload_content=False)
        except kubernetes.client.exceptions.ApiException as err:
            if err.status == 404 and kind != "Node":
                continue  # an API group this server does not serve
            raise SnapshotError(f"cannot list {kind}: {err.status} {err.reason}") from None
        except Exception as err:  # connection refused, TLS, timeouts: urllib3 raises many types
            raise SnapshotError(f"cannot connect to the cluster: {_one_line(err)}") from None
        if info.captured_at is None:
            info.captured_at = _server_time(response)
        for item in json.loads(response.data).get("items") or []:
            objects.append({**item, "apiVersion": api_version, "kind": kind})
    info.server_version = _server_version(kubernetes, client)
    if progress is not None:
        progress("done", len(LISTS), len(LISTS))
    return build_snapshot(objects, info, name=name)


def _server_time(response: Any) -> str | None:
    date = (getattr(response, "headers", None) or {}).get("Date")
    if not date:
        return None
    try:
        return parsedate_to_datetime(date).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (TypeError, ValueError):
        return None


def _server_version(kubernetes: Any, client: Any) -> str:
    # GET /version (the client's VersionApi asks for "/version/", which not every server serves).
    try:
        headers: dict[str, str] = {}
        token = client.configuration.get_api_key_with_prefix("BearerToken")
        if token:
            headers["authorization"] = token
        response = client.call_api("GET", client.configuration.host + "/version", header_params=headers)
        response.read()
        return str(json.loads(response.data).get("gitVersion") or "")
    except Exception:  # older clients: another call_api signature
        pass
    try:
        return str(kubernetes.client.VersionApi(client).get_code().git_version)
    except Exception:  # /version is optional for a snapshot
        return ""


def _one_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[-1] if text else type(err).__name__
