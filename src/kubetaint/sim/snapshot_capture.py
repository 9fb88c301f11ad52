"""`kubetaint snapshot`'s capture: LIST every kept kind of a live cluster over HTTP(S) with the
kubeconfig reader of `kubetaint.store.remote_config` (tokens, client certificates, exec plugins,
as kubectl reads them) — read-only, GET and LIST only, in pages of 500 as kubectl asks — and
build the snapshot document (kubetaint.sim.snapshot).

Objects are kept as the raw JSON the server sent, so fields the simulator's models do not know,
and `timeAdded` on taints, are kept byte for byte. The capture time is the server's `Date` header
of the first response (no local wall clock).

`namespace` limits the namespaced kinds to one namespace and `selector` (a label selector, as
`kubectl -l`) the pods and their workloads; nodes, namespaces and cluster-wide kinds are always
read whole, since scheduling needs them all.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

import httpx

from kubetaint.sim.snapshot import SnapshotError, SnapshotInfo, build_snapshot
from kubetaint.store.interface import JSON, StoreError
from kubetaint.store.remote_config import Connection, load_kubeconfig

#: Items per LIST page (kubectl's --chunk-size default).
PAGE = 500
#: Seconds a request may take; connecting (TCP and the TLS handshake) may take CONNECT_TIMEOUT,
#: as client-go's transport allows a TLS handshake 10 s.
TIMEOUT = 60.0
CONNECT_TIMEOUT = 10.0


@dataclass(frozen=True)
class Listed:
    """One kind a snapshot reads: its kind, apiVersion, collection path (cluster-wide), whether
    it is namespaced, the fixed namespace it is read from (leases), and whether `-l` applies."""

    kind: str
    api_version: str
    resource: str
    namespaced: bool
    fixed_namespace: str | None = None
    selectable: bool = False

    def path(self, namespace: str | None) -> str:
        prefix = "/api/v1" if self.api_version == "v1" else f"/apis/{self.api_version}"
        where = self.fixed_namespace or (namespace if self.namespaced else None)
        if where:
            return f"{prefix}/namespaces/{where}/{self.resource}"
        return f"{prefix}/{self.resource}"


LISTS: tuple[Listed, ...] = (
    Listed("Namespace", "v1", "namespaces", False),
    Listed("PriorityClass", "scheduling.k8s.io/v1", "priorityclasses", False),
    Listed("RuntimeClass", "node.k8s.io/v1", "runtimeclasses", False),
    Listed("StorageClass", "storage.k8s.io/v1", "storageclasses", False),
    Listed("CSIDriver", "storage.k8s.io/v1", "csidrivers", False),
    Listed("Node", "v1", "nodes", False),
    Listed("CSINode", "storage.k8s.io/v1", "csinodes", False),
    Listed("PersistentVolume", "v1", "persistentvolumes", False),
    Listed("PersistentVolumeClaim", "v1", "persistentvolumeclaims", True),
    Listed("Lease", "coordination.k8s.io/v1", "leases", True, fixed_namespace="kube-node-lease"),
    Listed("PodDisruptionBudget", "policy/v1", "poddisruptionbudgets", True),
    Listed("Deployment", "apps/v1", "deployments", True, selectable=True),
    Listed("ReplicaSet", "apps/v1", "replicasets", True, selectable=True),
    Listed("DaemonSet", "apps/v1", "daemonsets", True, selectable=True),
    Listed("StatefulSet", "apps/v1", "statefulsets", True, selectable=True),
    Listed("Pod", "v1", "pods", True, selectable=True),
)

Progress = Callable[[str, int, int], None]  # (kind, done, total)


def connect(kubeconfig: str | None, context: str | None = None) -> Connection:
    """The connection a kubeconfig (default: $KUBECONFIG, ~/.kube/config) and context describe."""
    try:
        return load_kubeconfig(kubeconfig, context)
    except StoreError as err:
        raise SnapshotError(str(err)) from None


def _status_message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.reason_phrase
    if isinstance(body, dict) and body.get("message"):
        return str(body["message"])
    return response.reason_phrase


def _list(
    client: httpx.Client, listed: Listed, namespace: str | None, selector: str | None
) -> tuple[list[JSON], httpx.Response | None]:
    items: list[JSON] = []
    first: httpx.Response | None = None
    params: dict[str, str] = {"limit": str(PAGE)}
    if selector and listed.selectable:
        params["labelSelector"] = selector
    while True:
        try:
            response = client.get(listed.path(namespace), params=params)
        except httpx.HTTPError as err:
            raise SnapshotError(f"cannot connect to the cluster: {_one_line(err)}") from None
        if response.status_code == 404 and listed.kind != "Node":
            return [], first  # an API group this server does not serve
        if response.status_code != 200:
            message = _status_message(response)
            raise SnapshotError(f"cannot list {listed.resource}: {response.status_code}: {message}")
        first = first or response
        try:
            body = response.json()
        except ValueError:
            raise SnapshotError(f"cannot list {listed.resource}: the answer is not JSON") from None
        items.extend(i for i in body.get("items") or [] if isinstance(i, dict))
        token = (body.get("metadata") or {}).get("continue")
        if not token:
            return items, first
        params["continue"] = str(token)


def capture(
    connection: Connection,
    *,
    name: str = "snapshot",
    namespace: str | None = None,
    selector: str | None = None,
    progress: Progress | None = None,
) -> JSON:
    """Read every kept kind through `connection` and return the snapshot document."""
    info = SnapshotInfo()
    objects: list[JSON] = []
    try:
        verify = connection.ssl_context()
    except (OSError, ValueError) as err:
        raise SnapshotError(f"cannot set up TLS for {connection.server}: {_one_line(err)}") from None
    with httpx.Client(
        base_url=connection.server,
        verify=verify,
        headers=connection.headers(),
        proxy=connection.proxy,
        timeout=httpx.Timeout(TIMEOUT, connect=CONNECT_TIMEOUT),
    ) as client:
        for done, listed in enumerate(LISTS):
            if progress is not None:
                progress(listed.kind, done, len(LISTS))
            items, response = _list(client, listed, namespace, selector)
            if info.captured_at is None and response is not None:
                info.captured_at = _server_time(response)
            objects.extend({**item, "apiVersion": listed.api_version, "kind": listed.kind} for item in items)
        info.server_version = _server_version(client)
    if progress is not None:
        progress("done", len(LISTS), len(LISTS))
    return build_snapshot(objects, info, name=name)


def _server_time(response: httpx.Response) -> str | None:
    date = response.headers.get("Date")
    if not date:
        return None
    try:
        return parsedate_to_datetime(date).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (TypeError, ValueError):
        return None


def _server_version(client: httpx.Client) -> str:
    try:
        response = client.get("/version")
        return str(json.loads(response.text).get("gitVersion") or "") if response.status_code == 200 else ""
    except (httpx.HTTPError, ValueError, AttributeError):  # /version is optional for a snapshot
        return ""


def _one_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[-1] if text else type(err).__name__


__all__ = ["LISTS", "Listed", "Progress", "capture", "connect"]
