"""Reading a live cluster in one step: `--kubeconfig`, `--context`, `-n/--namespace` and
`-l/--selector` as kubectl spells them, shared by `snapshot`, `explain` and `whatif`."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from kubetaint.cli.failure import Failure, UsageFailure

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class LiveOptions:
    kubeconfig: str | None
    context: str | None
    namespace: str | None
    selector: str | None

    @property
    def given(self) -> bool:
        """Whether any live-cluster option was given on the command line."""
        return any((self.kubeconfig, self.context, self.namespace, self.selector))


def live_options(func: F) -> F:
    """The four options (the command builds a LiveOptions of them)."""
    func = click.option(
        "-l", "--selector", default=None, metavar="SELECTOR", help="Label selector (a=b,c!=d) for pods."
    )(func)
    func = click.option(
        "-n", "--namespace", default=None, metavar="NS", help="Namespace (default: the context's)."
    )(func)
    func = click.option("--context", default=None, metavar="NAME", help="Kubeconfig context to use.")(func)
    return click.option(
        "--kubeconfig",
        default=None,
        metavar="PATH",
        help="Kubeconfig (default: $KUBECONFIG, then ~/.kube/config).",
    )(func)


def check_selector(selector: str | None) -> None:
    """A usage error for a selector kubectl would not parse."""
    if selector is None:
        return
    from kubetaint.api.errors import StatusError
    from kubetaint.api.selectors import parse_label_selector

    try:
        parse_label_selector(selector)
    except StatusError as err:
        raise UsageFailure(f"--selector: {err.message}") from None


def progress_bar() -> tuple[Callable[[str, int, int], None] | None, Callable[[], None]]:
    """A rich progress bar on stderr when it is a terminal."""
    if not sys.stderr.isatty():
        return None, lambda: None
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn

    bar = Progress(
        TextColumn("listing {task.fields[kind]}"), BarColumn(), console=Console(stderr=True), transient=True
    )
    task = bar.add_task("snapshot", total=1, kind="")
    bar.start()

    def update(kind: str, done: int, total: int) -> None:
        bar.update(task, total=total, completed=done, kind=kind)

    return update, bar.stop


def capture_live(live: LiveOptions, *, name: str, whole: bool = False) -> tuple[dict[str, Any], str]:
    """A snapshot document of the cluster `live` names, and the namespace meant (`-n`, else the
    context's). `whole`: every namespace and pod is read, the options then only pick what is
    reported."""
    from kubetaint.sim.snapshot import SnapshotError

    try:
        from kubetaint.sim.snapshot_capture import capture, connect
    except ModuleNotFoundError as err:
        raise Failure(
            f"reading a live cluster needs the {err.name} package: pip install 'kubetaint[cluster]'"
        ) from None
    check_selector(live.selector)
    update, close = progress_bar()
    try:
        connection = connect(live.kubeconfig, live.context)
        try:
            document = capture(
                connection,
                name=name,
                namespace=None if whole else live.namespace,
                selector=None if whole else live.selector,
                progress=update,
            )
        finally:
            close()
    except SnapshotError as err:
        raise Failure(str(err)) from None
    return document, live.namespace or connection.namespace
