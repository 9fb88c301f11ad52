"""The flags of the server commands (`up`, `scheduler`, `controllers`): kube-apiserver's serving
and authorization flags, kube-scheduler's and kube-controller-manager's leader-election flags.
They are declared on light imports only, so `--help` of those commands shows without loading the
server; what runs them is imported when a command runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from kubetaint.api.componentconfig import LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD
from kubetaint.apiserver.modes import MODES

DEFAULT_AUTHORIZATION_MODE = "Node,RBAC"


def serving_flags(command: Callable[..., Any]) -> Callable[..., Any]:
    """kube-apiserver's flags, same names and meanings, plus --insecure-serving."""
    path = click.Path(dir_okay=False, path_type=Path)
    options = [
        click.option(
            "--tls-cert-file",
            type=path,
            default=None,
            help="Serving certificate (PEM, chain allowed) for HTTPS; default: DATA_DIR/pki/apiserver.crt, "
            "signed by the cluster CA DATA_DIR/pki/ca.crt and made on first start.",
        ),
        click.option(
            "--tls-private-key-file", type=path, default=None, help="Private key of --tls-cert-file (PEM)."
        ),
        click.option(
            "--client-ca-file",
            type=path,
            default=None,
            help="Client certificates signed by these CAs authenticate as their CommonName in the groups "
            "of their Organizations; default: DATA_DIR/pki/ca.crt.",
        ),
        click.option(
            "--token-auth-file",
            type=path,
            default=None,
            help="Bearer tokens, one 'token,user,uid,\"group1,group2\"' line each; default: "
            "DATA_DIR/pki/tokens.csv, made on first start with an admin token.",
        ),
        click.option(
            "--anonymous-auth",
            type=click.BOOL,
            default=True,
            show_default=True,
            is_flag=False,
            flag_value=True,
            metavar="BOOL",
            help="Serve requests without credentials as system:anonymous (what it may do is up to "
            "authorization); false: they get 401.",
        ),
        click.option(
            "--authorization-mode",
            default=DEFAULT_AUTHORIZATION_MODE,
            show_default=True,
            help=f"Comma-separated authorizers, tried in order: {', '.join(MODES)}. "
            "system:masters may always do everything.",
        ),
        click.option(
            "--insecure-serving",
            is_flag=True,
            help="Serve plain HTTP instead of HTTPS, on a loopback address only, without authentication "
            "or authorization (as kube-apiserver's former insecure port).",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def replica_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--leader-elect, the --leader-elect-* durations and --kubelets/--no-kubelets."""
    options = [
        click.option(
            "--leader-elect",
            is_flag=True,
            help="Run the scheduler and controllers only while holding their Lease (several replicas).",
        ),
        click.option(
            "--leader-elect-lease-duration",
            type=click.FloatRange(min=1),
            default=LEASE_DURATION,
            show_default=True,
        ),
        click.option(
            "--leader-elect-renew-deadline",
            type=click.FloatRange(min=1),
            default=RENEW_DEADLINE,
            show_default=True,
        ),
        click.option(
            "--leader-elect-retry-period",
            type=click.FloatRange(min=0.01),
            default=RETRY_PERIOD,
            show_default=True,
        ),
        click.option(
            "--kubelets/--no-kubelets",
            default=True,
            show_default=True,
            help="Run the hollow kubelets (off: another replica runs them).",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def election_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--kubeconfig, --context and kube-scheduler's --leader-elect* flags."""
    options = [
        click.option(
            "--kubeconfig",
            type=click.Path(dir_okay=False, path_type=Path),
            required=True,
            help="The API server to run against.",
        ),
        click.option("--context", default=None, help="Kubeconfig context (default: current-context)."),
        click.option("--leader-elect", type=click.BOOL, default=True, show_default=True),
        click.option("--leader-elect-lease-duration", type=click.FloatRange(min=1), default=LEASE_DURATION),
        click.option("--leader-elect-renew-deadline", type=click.FloatRange(min=1), default=RENEW_DEADLINE),
        click.option("--leader-elect-retry-period", type=click.FloatRange(min=0.01), default=RETRY_PERIOD),
        click.option("--leader-elect-resource-name", default=None, help="The Lease's name."),
        click.option("--leader-elect-resource-namespace", default="kube-system", show_default=True),
        click.option("-v", "--verbose", is_flag=True, help="Log leader election and writes."),
    ]
    for option in reversed(options):
        command = option(command)
    return command
