"""The `kubetaint` command group; each subcommand lives in its own module under `kubetaint.cli`,
imported only when that subcommand runs (or its help is shown), so `kubetaint --help` and shell
completion stay fast."""

from __future__ import annotations

import importlib
from typing import Any

import click
from click.shell_completion import CompletionItem

from kubetaint import __version__
from kubetaint.api.version import KUBERNETES_VERSION
from kubetaint.cli.exiting import (
    console_running,
    end_on_closed_pipe,
    end_on_failed_write,
    flush_or_end,
    mark_console,
    os_problem,
)
from kubetaint.cli.extras import missing_package
from kubetaint.cli.failure import Failure, UsageFailure

# (command name, module, attribute, one-line help): subcommands register here; the help line is
# what `kubetaint --help` lists without importing the module.
COMMANDS = [
    (
        "validate",
        "kubetaint.cli.validate",
        "validate_command",
        "Validate manifests exactly as kube-apiserver would.",
    ),
    (
        "explain",
        "kubetaint.cli.explain",
        "explain_command",
        "Explain where each pending pod can go and why not.",
    ),
    (
        "simulate",
        "kubetaint.cli.simulate",
        "simulate_command",
        "Run a scenario in virtual time and print its timeline.",
    ),
    ("whatif", "kubetaint.cli.whatif", "whatif_command", "Compare a cluster with and without a change."),
    (
        "snapshot",
        "kubetaint.cli.snapshot",
        "snapshot_command",
        "Capture a live cluster's scheduling objects into a file.",
    ),
    (
        "up",
        "kubetaint.cli.up",
        "up_command",
        "Run a Kubernetes-compatible API server with its control plane.",
    ),
    (
        "clock",
        "kubetaint.cli.clock",
        "clock_group",
        "Read or advance the clock of a `kubetaint up --clock` server.",
    ),
    ("scheduler", "kubetaint.cli.scheduler", "scheduler_command", "Run the scheduler against a cluster."),
    (
        "controllers",
        "kubetaint.cli.controllers",
        "controllers_command",
        "Run the taint controllers against a cluster.",
    ),
]
_BY_NAME = {name: (module, attribute, summary) for name, module, attribute, summary in COMMANDS}


def _needs_extra(name: str, missing: str) -> click.Command:
    """A stand-in for a subcommand whose optional dependencies are not installed (the live server's
    commands without the `server` extra): it says which extra to install, and exits 1."""

    @click.command(
        name=name,
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []},
        help="(needs the server extra: pip install 'kubetaint[server]')",
    )
    def needs_extra() -> None:
        raise Failure(missing_package(name, missing))

    return needs_extra


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use; any input that still gets a Python
    error this deep (nesting past the interpreter's recursion limit, memory) is one `error:` line."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name, *_ in COMMANDS]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = _BY_NAME.get(cmd_name)
        if entry is None:
            return None
        module_name, attribute, _ = entry
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                return None
            if exc.name is None or exc.name.split(".")[0] == "kubetaint":
                raise
            return _needs_extra(cmd_name, exc.name.split(".")[0])
        command: click.Command = getattr(module, attribute)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, summary) for name, _, _, summary in COMMANDS]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        """Subcommand names from the table (nothing imported), then the group's options."""
        items = [
            CompletionItem(name, help=summary)
            for name, _, _, summary in COMMANDS
            if name.startswith(incomplete)
        ]
        return items + click.Command.shell_complete(self, ctx, incomplete)

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as exc:
            raise _one_line(exc) from None
        except BrokenPipeError:
            _closed_pipe()  # while writing --help or --version
            raise
        except OSError as exc:  # --help or --version to an output that cannot be written
            if console_running():
                end_on_failed_write(exc)
            raise

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            raise _one_line(exc) from None
        except BrokenPipeError:
            _closed_pipe()
            raise
        except OSError as exc:  # the output cannot be written (a full disk)
            if console_running():
                end_on_failed_write(exc)
            raise Failure(os_problem(exc)) from None
        except RecursionError:
            raise Failure("the input is nested too deeply") from None
        except MemoryError:
            raise Failure("out of memory (the input is too large)") from None


def _closed_pipe() -> None:
    """The reader of the output went away (`kubetaint simulate FILE | head`): the console program
    ends as kubectl does, by SIGPIPE; in-process callers get the exception."""
    if console_running():
        end_on_closed_pipe()


def _one_line(exc: click.UsageError) -> click.ClickException:
    """A wrong command line as one `error:` line naming the help to read (exit 2), instead of
    click's usage block; running a group without a command still shows its help."""
    if isinstance(exc, click.exceptions.NoArgsIsHelpError):
        return exc
    where = exc.ctx.command_path if exc.ctx is not None else "kubetaint"
    return UsageFailure(f"{exc.format_message()} See '{where} --help'.")


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(
    __version__, prog_name="kubetaint", message=f"%(prog)s %(version)s (Kubernetes {KUBERNETES_VERSION})"
)
def cli() -> None:
    """Kubernetes taints and tolerations: validate, explain, simulate and run a cluster.

    \b
    Examples:
      kubetaint validate pod.yaml
      kubetaint explain nodes.yaml pods.yaml
      kubetaint simulate examples/taint-based-eviction.yaml
      kubetaint whatif drain node-3 -f snapshot.json --fail-on evictions
    """


def _run_console(prog_name: str) -> None:
    mark_console()
    try:
        cli(prog_name=prog_name)
    except BrokenPipeError:
        end_on_closed_pipe()  # while writing an error line to a closed standard error
    finally:
        flush_or_end()  # help, version and usage errors are written at exit


def main() -> None:
    """Console-script entry point."""
    _run_console("kubetaint")


def kubectl_main() -> None:
    """The `kubectl-kubetaint` console script: kubectl runs it for `kubectl kubetaint ...` (a
    kubectl plugin is an executable named kubectl-NAME on the PATH)."""
    _run_console("kubectl kubetaint")
