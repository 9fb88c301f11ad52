"""What a command says when an optional dependency it needs is not installed: the package and
the extra that brings it, one line, exit 1."""

from __future__ import annotations

from kubetaint.cli.failure import Failure


def missing_package(command: str, missing: str, extra: str = "server") -> str:
    """The message: `kubetaint up needs the starlette package: pip install 'kubetaint[server]'`."""
    return f"kubetaint {command} needs the {missing} package: pip install 'kubetaint[{extra}]'"


def missing_extra(command: str, error: ModuleNotFoundError, extra: str = "server") -> Failure:
    """The Failure for `error`, raised while importing what `command` runs; an error in kubetaint's
    own modules is not a missing extra and is raised again."""
    top = (error.name or "").split(".")[0]
    if top in ("", "kubetaint"):
        raise error
    return Failure(missing_package(command, top, extra))
