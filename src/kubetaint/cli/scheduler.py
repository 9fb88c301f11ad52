"""`kubetaint scheduler --kubeconfig PATH [--scheduler-name NAME] [--leader-elect=BOOL]`:
kube-scheduler against any API server — schedules the pods whose spec.schedulerName names it,
binding them through pods/binding, leader-elected on the kube-system/kube-scheduler Lease
(`kubetaint.cli.remote_components` runs it)."""

from __future__ import annotations

from typing import Any

import click

from kubetaint.cli.extras import missing_extra
from kubetaint.cli.server_flags import election_options

DEFAULT_SCHEDULER_NAME = "default-scheduler"


@click.command(
    epilog="""\b
Examples:
  kubetaint scheduler --kubeconfig ./data/kubeconfig
  kubetaint scheduler --kubeconfig prod.yaml --scheduler-name taint-aware --leader-elect=false
""",
)
@election_options
@click.option("--scheduler-name", default=DEFAULT_SCHEDULER_NAME, show_default=True)
def scheduler_command(**options: Any) -> None:
    """Schedule the pods whose spec.schedulerName is --scheduler-name on the cluster of KUBECONFIG."""
    try:
        from kubetaint.cli.remote_components import run_scheduler
    except ModuleNotFoundError as error:
        raise missing_extra("scheduler", error) from None
    run_scheduler(options)
