"""A kopf operator of the CronTab custom resource for tests/e2e/test_kopf_custom_resources.py: it
records in the status what its creation handler saw, logs the spec changes its update handler
gets, and holds each CronTab with its finalizer until its deletion handler ran."""

from __future__ import annotations

from typing import Any

import kopf


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    settings.watching.server_timeout = 30


@kopf.on.create("stable.example.com", "v1", "crontabs")
def created(spec: Any, patch: kopf.Patch, **_: Any) -> dict[str, str]:
    patch.status["schedule"] = spec.get("cronSpec")
    return {"message": "created"}


@kopf.on.update("stable.example.com", "v1", "crontabs")
def updated(diff: Any, logger: kopf.Logger, **_: Any) -> None:
    for op, field, old, new in diff:
        logger.info(f"{op} {'.'.join(field)}: {old} -> {new}")


@kopf.on.delete("stable.example.com", "v1", "crontabs")
def deleted(name: str, logger: kopf.Logger, **_: Any) -> None:
    logger.info(f"cleaning up after {name}")
