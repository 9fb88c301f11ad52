"""What `kubetaint up` runs (`kubetaint.cli.up` declares its flags): the serving configuration,
the listening socket, the store, the live cluster and its replica role, the banner, and a clean
stop on Ctrl-C or SIGTERM."""

from __future__ import annotations

import asyncio
import random
import socket
import sys
from functools import partial
from pathlib import Path
from typing import Any

import click

from kubetaint.apiserver.clockapi import LoopVirtualClock
from kubetaint.apiserver.live import CONTROL_PLANE_NODE, LiveCluster, listen, serve_forever
from kubetaint.apiserver.pki import PkiError, private_dir
from kubetaint.apiserver.security import ServingConfigError
from kubetaint.cli.clock_state import ClockStateError, resumed_time, save_time
from kubetaint.cli.scheduler_config import SchedulerConfigError, load_scheduler_config
from kubetaint.cli.up import default_data_dir
from kubetaint.cli.up_replica import Replica, ReplicaElection, replica_election
from kubetaint.cli.up_serving import Serving, prepare_serving, write_kubeconfig
from kubetaint.clock import RealClock
from kubetaint.clock.base import Clock
from kubetaint.controlplane import ControlPlaneSettings
from kubetaint.store.factory import open_store
from kubetaint.store.interface import StoreError


def _server_url(scheme: str, host: str, port: int) -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else "::1" if host == "::" else host
    return f"{scheme}://[{shown}]:{port}" if ":" in shown else f"{scheme}://{shown}:{port}"


def _banner(
    *,
    url: str,
    kubeconfig: Path,
    store: str,
    clock: str,
    nodes: list[str],
    created: list[str],
    security: str = "",
    note: str = "",
) -> str:
    resumed = "" if created == nodes else f" (resumed: {len(nodes) - len(created)} nodes already stored)"
    workers = [n for n in nodes if n != CONTROL_PLANE_NODE]
    lines = [
        f"kubetaint is serving a cluster at {url}{resumed}",
        f"  store: {store}   clock: {clock}   nodes: {len(nodes)} "
        f"({CONTROL_PLANE_NODE} is tainted node-role.kubernetes.io/control-plane:NoSchedule)",
        f"  kubeconfig: {kubeconfig}{note}",
        *([f"  security: {security}"] if security else []),
        "",
        "Try, in another shell:",
        f"  export KUBECONFIG={kubeconfig}",
        "  kubectl get nodes",
    ]
    if workers:
        lines.append(f"  kubectl taint nodes {workers[0]} dedicated=gpu:NoSchedule")
    lines += [
        "  kubectl run web --image=nginx && kubectl get pods -o wide",
        "  kubectl describe node " + (workers[0] if workers else CONTROL_PLANE_NODE),
    ]
    if clock == "virtual":
        lines.append("  kubetaint clock advance 1h")
    lines += ["", "Press Ctrl-C to stop."]
    return "\n".join(lines)


async def _run(
    sock: socket.socket,
    *,
    store_kind: str,
    data_dir: Path,
    nodes: int,
    clock_kind: str,
    kubeconfig: Path,
    url: str,
    address: str,
    serving: Serving,
    controllers: bool = True,
    election: ReplicaElection | None = None,
    kubelets: bool = True,
    scheduler_config: dict[str, Any] | None = None,
) -> int:
    loop = asyncio.get_running_loop()
    real = RealClock(loop)
    clock: Clock = real
    if clock_kind == "virtual":
        # a stored cluster resumes its virtual clock where it stood (kubetaint.cli.clock_state)
        persistent = store_kind != "memory"
        try:
            start = resumed_time(data_dir, real.now()) if persistent else real.now()
        except ClockStateError as err:
            click.echo(f"error: {err}", err=True)
            return 1
        virtual = LoopVirtualClock(start, loop)
        if persistent:
            virtual.on_advance = partial(save_time, data_dir)
        clock = virtual
    try:
        store = open_store(store_kind, data_dir=data_dir, clock=clock)
    except StoreError as err:
        click.echo(f"error: {err}", err=True)
        return 1
    try:
        cluster = LiveCluster(
            store,
            clock,
            workers=nodes,
            seed=random.SystemRandom().getrandbits(64),
            server_address=address,
            security=serving.security,
            # --config: the scheduler's KubeSchedulerConfiguration
            settings=None
            if scheduler_config is None
            else ControlPlaneSettings(scheduler_config=scheduler_config),
        )
        cluster.plane.run_controllers = controllers
        if serving.ca_pem is not None:  # kube-controller-manager's root CA: the serving CA
            cluster.plane.root_ca = serving.ca_pem.decode()
        this = Replica(cluster.plane, election, kubelets=kubelets)
        created = cluster.start()
        this.start()
        write_kubeconfig(kubeconfig, url, serving)
        names = sorted(str(n["metadata"]["name"]) for n in store.list("nodes").items)
        where = f"sqlite in {data_dir}" if store_kind == "sqlite" else store_kind
        banner = _banner(
            url=url,
            kubeconfig=kubeconfig,
            store=where,
            clock=clock_kind,
            nodes=names,
            created=created,
            security=serving.summary(),
            note=serving.credentials_note(),
        )

        def announce() -> None:
            # Once serving: Ctrl-C right after the banner stops the server cleanly.
            click.echo(banner)
            sys.stdout.flush()

        try:
            await serve_forever(cluster, sock, tls=serving.tls, on_serving=announce)
        finally:
            this.release()
    except (StoreError, ServingConfigError, PkiError) as err:
        click.echo(f"error: {err}", err=True)
        return 1
    finally:
        store.close()
    if this.lost:
        click.echo(f"error: {this.lost}", err=True)
        return 1
    click.echo("kubetaint stopped.")
    return 0


def run_up(options: dict[str, Any]) -> None:
    """`kubetaint up` with its parsed flags: serve until stopped, then exit with the outcome."""
    scheduler_config: dict[str, Any] | None = None
    if options.get("config_file"):
        try:
            scheduler_config, warnings = load_scheduler_config(str(options["config_file"]))
        except SchedulerConfigError as err:
            click.echo(f"error: {err}", err=True)
            sys.exit(1)
        for warning in warnings:
            click.echo(f"warning: {warning}", err=True)
    host, port, nodes = str(options["host"]), int(options["port"]), int(options["nodes"])
    store_kind, clock_kind = str(options["store_kind"]), str(options["clock_kind"])
    data_dir: Path | None = options["data_dir"]
    kubeconfig: Path | None = options["kubeconfig"]
    directory = (data_dir or default_data_dir()).expanduser()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        click.echo(f"error: cannot create the data directory {directory}: {err.strerror}", err=True)
        sys.exit(1)
    try:
        private_dir(directory)
        serving = prepare_serving(options, directory, host)
    except (ServingConfigError, PkiError) as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(1)
    try:
        sock = listen(host, port)
    except OSError as err:
        click.echo(f"error: cannot listen on {host}:{port}: {err.strerror or err}", err=True)
        sys.exit(1)
    election = replica_election(options)
    bound_port = sock.getsockname()[1]
    url = _server_url(serving.scheme, host, bound_port)
    code = asyncio.run(
        _run(
            sock,
            store_kind=store_kind,
            data_dir=directory,
            nodes=nodes,
            clock_kind=clock_kind,
            kubeconfig=(kubeconfig or directory / "kubeconfig").expanduser().absolute(),
            url=url,
            address=f"{host}:{bound_port}",
            serving=serving,
            controllers=bool(options["controllers"]),
            election=election,
            kubelets=bool(options["kubelets"]),
            scheduler_config=scheduler_config,
        )
    )
    sys.exit(code)
