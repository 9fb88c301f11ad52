"""A live cluster: the API server on the shared control plane (`kubetaint up`).

One asyncio loop runs everything: HTTP handlers write through the control plane's registry, informer
handlers run inside those writes and schedule work on the clock, whose timers are the loop's
(RealClock) or a `LoopVirtualClock` that moves only when asked. Hence no locks: every store
write happens on the loop's thread. With the SQLite store those writes do not wait for the
disk; what leaves the server waits for it instead (`apiserver.durability`). Components work
in time slices (`clock.slices`), so requests are served between them.

With a store behind a network (etcd: `store.interface.Reachability`), a call may wait for the
network; the connections are then served by a front on a thread of its own (`apiserver.front`)
that answers health probes itself and hands every other request to this same loop, answering
`504 Timeout` for one that has waited past its deadline. The changes etcd's watch feed receives
(other servers' writes too) are delivered on this loop as well (`ThreadedDelivery`).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import random
import signal
import socket
import threading
from collections.abc import Callable, Generator
from typing import Any

import uvicorn

from kubetaint.admission.noderestriction import forbidden_labels
from kubetaint.apiserver.app import APIServerApp, create_app, node_restriction_in
from kubetaint.apiserver.clockapi import LoopVirtualClock, clock_routes
from kubetaint.apiserver.front import Front
from kubetaint.apiserver.kubelet_identity import kubelet_stores
from kubetaint.apiserver.kubernetes_service import ensure_kubernetes_service
from kubetaint.apiserver.rbac_store import ensure_bootstrap_policy
from kubetaint.apiserver.security import SecurityConfig
from kubetaint.apiserver.server import serving_options
from kubetaint.apiserver.serving import ListeningSocket
from kubetaint.apiserver.tls import TLSFiles
from kubetaint.clock.base import Clock, format_time
from kubetaint.controlplane import ControlPlane, ControlPlaneSettings
from kubetaint.controlplane.fleet import HOSTNAME_LABEL, ZONE_LABEL
from kubetaint.core.fieldmanager import manager as fieldmanager
from kubetaint.registry.managedfields import KUBELET, record_create
from kubetaint.store.interface import JSON, Store

CONTROL_PLANE_NODE = "control-plane"
CONTROL_PLANE_ROLE = "node-role.kubernetes.io/control-plane"
ZONES = ("zone-a", "zone-b", "zone-c")


def _node(index: int, name: str, zone: str, labels: dict[str, str], taints: list[JSON]) -> JSON:
    """A node numbered as kind numbers them: InternalIP 172.18.0.2 + index, pod CIDR the index-th
    /24 from 10.244.0.0 (10.244.1.0/24 for node-1)."""
    meta: JSON = {"name": name, "labels": {HOSTNAME_LABEL: name, ZONE_LABEL: zone, **labels}}
    spec: JSON = {"podCIDR": f"{ipaddress.IPv4Address('10.244.0.0') + 256 * index}/24"}
    if taints:
        spec["taints"] = taints
    status: JSON = {
        "addresses": [{"type": "InternalIP", "address": str(ipaddress.IPv4Address("172.18.0.2") + index)}]
    }
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": spec, "status": status}


def initial_nodes(workers: int) -> list[JSON]:
    """`control-plane` (tainted NoSchedule, as kubeadm leaves it) and `node-1..N` over three zones."""
    nodes = [
        _node(
            0,
            CONTROL_PLANE_NODE,
            ZONES[0],
            {CONTROL_PLANE_ROLE: ""},
            [{"key": CONTROL_PLANE_ROLE, "effect": "NoSchedule"}],
        )
    ]
    nodes += [_node(i, f"node-{i}", ZONES[(i - 1) % len(ZONES)], {}, []) for i in range(1, workers + 1)]
    return nodes


def kubelet_manifest(node: JSON) -> JSON:
    """The Node as its kubelet is configured to register it: without the labels NodeRestriction
    forbids a kubelet to set (kubeadm adds those as the admin); `node` itself when it has none."""
    labels = node["metadata"].get("labels") or {}
    restricted = forbidden_labels(labels, None)
    if not restricted:
        return node
    kept = {k: v for k, v in labels.items() if k not in restricted}
    return {**node, "metadata": {**node["metadata"], "labels": kept}}


def _as_kubeadm_leaves_it(node: JSON, kubelets_own: JSON, clock: Clock) -> JSON:
    """`node` with the managedFields a kubeadm control-plane Node has: what its kubelet
    registered under `kubelet`, the role label (and taints) kubeadm adds under `kubeadm`."""
    now = format_time(clock.now())
    registered = record_create(kubelets_own, "nodes", KUBELET, now)  # its status is not owned
    return fieldmanager.update(
        registered,
        {"apiVersion": "v1", "kind": "Node", **node},
        fieldmanager.Request("kubeadm", "v1", "", now),
    )


class LiveCluster:
    """The control plane plus the API server app over one store and clock."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        *,
        workers: int,
        seed: int,
        server_address: str,
        security: SecurityConfig | None = None,
        settings: ControlPlaneSettings | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        rng = random.Random(seed)
        # The hollow kubelets write as system:node:<name>, through the server's authorizer and
        # (with Node authorization) NodeRestriction: the app's, asked when a node is added.
        self.plane = ControlPlane(
            store,
            clock,
            rng=random.Random(rng.getrandbits(64)),
            graceful_deletion=True,
            settings=settings,
            # every component's writes carry its managedFields entries, the kubelets' included
            managed_fields=True,
            container_events=True,
            kubelet_stores=lambda kubelet_writes: kubelet_stores(
                kubelet_writes,
                lambda: self.app.authorizer,
                node_restriction=lambda: node_restriction_in(self.plane.registry),
            ),
        )
        self.workers = workers
        self.server_address = server_address
        self.ready = False
        self.app: APIServerApp = create_app(
            store,
            clock,
            self.plane.registry,
            rng=random.Random(rng.getrandbits(64)),
            server_address=server_address,
            extra_routes=clock_routes(clock),
            ready=lambda: self.ready,
            security=security,
        )

    def start(self) -> list[str]:
        """Adopt the stored nodes, add the missing ones of the initial set, start everything.
        Returns the names of the nodes created now (none on a restart of the same cluster).
        On a running event loop, a store that receives changes on a thread of its own (etcd)
        delivers them on this loop, where every write happens."""
        delivery = self.store.capabilities.threaded_delivery
        if delivery is not None:
            with contextlib.suppress(RuntimeError):  # no running loop: the store's own thread
                delivery.deliver_through(asyncio.get_running_loop().call_soon_threadsafe)
        self.plane.ensure_system_namespaces()
        ensure_bootstrap_policy(self.store, self.clock)
        ensure_kubernetes_service(self.store, self.server_address, clock=self.clock)
        stored = self.store.list("nodes").items
        for node in stored:
            self.plane.fleet.adopt(kubelet_manifest(node))
        existing = {str(n["metadata"]["name"]) for n in stored}
        created = []
        for node in initial_nodes(self.workers):
            name = str(node["metadata"]["name"])
            if name not in existing:
                kubelets_own = kubelet_manifest(node)
                if kubelets_own is not node:
                    # labels a kubelet may not set (node-role.kubernetes.io/control-plane): the
                    # Node is created as kubeadm leaves it, by the admin; its kubelet adopts it
                    self.plane.registry.create("nodes", _as_kubeadm_leaves_it(node, kubelets_own, self.clock))
                self.plane.fleet.add(kubelets_own)
                created.append(name)
        self.plane.start()
        if isinstance(self.clock, LoopVirtualClock):
            self.clock.run_pending()
        self.ready = True
        return created

    def stop(self) -> None:
        self.ready = False
        self.plane.stop()


class _Server(uvicorn.Server):
    """uvicorn that stops on SIGINT/SIGTERM without re-raising the signal afterwards, so the
    process can close the store and exit 0, and calls `on_serving` once it serves (listening,
    with its signal handlers in place)."""

    on_serving: Callable[[], None] | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started and self.on_serving is not None:
            self.on_serving()

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        originals = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in originals.items():
                signal.signal(sig, handler)


def listen(host: str, port: int) -> socket.socket:
    """A bound listening socket (OSError when the address is taken or invalid)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY on accepted sockets only when proto says TCP,
    # and without it every keep-alive response waits ~40 ms for a delayed ACK (Nagle).
    sock = ListeningSocket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # one log line at EMFILE
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(2048)
    return sock


async def serve_forever(
    cluster: LiveCluster,
    sock: socket.socket,
    *,
    tls: TLSFiles | None = None,
    on_serving: Callable[[], None] | None = None,
    **config: Any,
) -> None:
    """Serve until SIGINT/SIGTERM (HTTPS with `tls`), then stop the control plane (the caller
    closes the store); `on_serving()` runs once requests and signals are handled. The serving
    configuration goes through `security.check_serving` first: `security.ServingConfigError`
    (one line) for an unsafe one."""
    host = str(sock.getsockname()[0])
    capabilities = cluster.store.capabilities
    fronted = capabilities.reachability is not None
    try:
        app: Any = Front(cluster.app, asyncio.get_running_loop()) if fronted else cluster.app
        server = _Server(
            uvicorn.Config(
                app,
                log_level="warning",
                access_log=False,
                lifespan="off",
                timeout_graceful_shutdown=1,
                **serving_options(host, tls, cluster.app.security),
                **config,
            )
        )
        server.on_serving = on_serving
        if capabilities.durability is not None:
            # Every write on this loop returns once committed; responses and watch events wait for
            # the fsync (apiserver.durability), so the loop serves on while the disk syncs.
            capabilities.durability.defer_durability()
        if fronted:
            await _serve_from_front(server, sock)
        else:
            await server.serve(sockets=[sock])
    finally:
        cluster.stop()
        await asyncio.sleep(0)


async def _serve_from_front(server: _Server, sock: socket.socket) -> None:
    """uvicorn on a thread of its own (`apiserver.front`); this loop keeps the cluster and, in
    the main thread, takes SIGINT/SIGTERM for the server."""
    loop = asyncio.get_running_loop()
    finished: asyncio.Future[None] = loop.create_future()

    def serve() -> None:
        try:
            asyncio.run(server.serve(sockets=[sock]))
        finally:
            with contextlib.suppress(RuntimeError):  # this loop is closed already
                loop.call_soon_threadsafe(_settle, finished)

    signals = (signal.SIGINT, signal.SIGTERM) if threading.current_thread() is threading.main_thread() else ()
    for sig in signals:
        loop.add_signal_handler(sig, server.handle_exit, sig, None)
    front = threading.Thread(target=serve, name="kubetaint-front", daemon=True)
    front.start()
    try:
        await finished
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)
        server.should_exit = True
        await asyncio.to_thread(front.join, 5)


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
