"""`kubetaint controllers --kubeconfig PATH [--leader-elect=BOOL]`: kube-controller-manager's
taint-eviction and node-lifecycle controllers against any API server, leader-elected on the
kube-system/kube-controller-manager Lease."""

from __future__ import annotations

from typing import Any

import click

from kubetaint.cli.extras import missing_extra
from kubetaint.cli.server_flags import election_options


@click.command(
    epilog="""\b
Examples:
  kubetaint controllers --kubeconfig ./data/kubeconfig
  kubetaint controllers --kubeconfig prod.yaml --leader-elect=false
""",
)
@election_options
def controllers_command(**options: Any) -> None:
    """Run the taint-eviction and node-lifecycle controllers on the cluster of KUBECONFIG."""
    try:
        from kubetaint.cli.remote_components import run_controllers
    except ModuleNotFoundError as error:
        raise missing_extra("controllers", error) from None
    run_controllers(options)
