"""`kubetaint up`: a live cluster in the foreground — the API server (HTTPS, authentication and
Node,RBAC authorization by default: `up_serving`), scheduler, controllers and hollow nodes on one
store (SQLite in the data dir by default, so a restart resumes the cluster), a kubeconfig for
kubectl, and a clean stop on Ctrl-C or SIGTERM."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from kubetaint.cli.extras import missing_extra
from kubetaint.cli.scheduler_config import config_option
from kubetaint.cli.server_flags import replica_options, serving_flags
from kubetaint.store.factory import KINDS


def default_data_dir() -> Path:
    """$XDG_DATA_HOME/kubetaint, else ~/.local/share/kubetaint."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "kubetaint"


@click.command(
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  kubetaint up
  kubetaint up --nodes 5 --clock virtual --data-dir ./data
  kubetaint up --store memory --port 0 --insecure-serving
  kubetaint up --store etcd://127.0.0.1:2379 --leader-elect
  KUBECONFIG=./data/kubeconfig kubectl get nodes   # in another shell
""",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=6443, show_default=True, type=click.IntRange(0, 65535), help="Port.")
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where the cluster lives (default: $XDG_DATA_HOME/kubetaint or ~/.local/share/kubetaint).",
)
@click.option("--store", "store_kind", default="sqlite", show_default=True, help=f"Store: {KINDS}.")
@click.option("--nodes", default=3, show_default=True, type=click.IntRange(0, 5000), help="Worker nodes.")
@click.option(
    "--clock", "clock_kind", type=click.Choice(["real", "virtual"]), default="real", show_default=True
)
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write the kubeconfig (default: DATA_DIR/kubeconfig).",
)
@click.option(
    "--controllers/--no-controllers",
    default=True,
    show_default=True,
    help="Run kube-controller-manager's controllers (off: `kubetaint controllers` runs them).",
)
@replica_options
@serving_flags
@config_option
def up_command(**options: Any) -> None:
    """Run the API server, scheduler, controllers and NODES hollow nodes in the foreground.

    The API server serves HTTPS with certificates from DATA_DIR/pki (made on first start),
    authenticates client certificates and bearer tokens, and authorizes with Node,RBAC; the
    kubeconfig it writes (0600) carries the CA and the admin credentials."""
    try:
        from kubetaint.cli.up_run import run_up
    except ModuleNotFoundError as error:
        raise missing_extra("up", error) from None
    run_up(options)
