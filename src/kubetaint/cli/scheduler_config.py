"""`--config FILE` of explain, simulate and up: a KubeSchedulerConfiguration file, as
`kube-scheduler --config` reads it (YAML or JSON, kind KubeSchedulerConfiguration, apiVersion
kubescheduler.config.k8s.io/v1). The file is checked by building the scheduler it configures; the
settings kubetaint does not apply come back as warnings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import yaml

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"

config_option = click.option(
    "--config",
    "config_file",
    default=None,
    metavar="FILE",
    help="A KubeSchedulerConfiguration file for the scheduler, as kube-scheduler --config reads it.",
)


class SchedulerConfigError(ValueError):
    """The file cannot configure the scheduler (one line naming the file)."""


def load_scheduler_config(path: str) -> tuple[dict[str, Any], list[str]]:
    """The configuration in `path` and its warnings (settings kubetaint does not apply)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise SchedulerConfigError(f"{path}: cannot read the scheduler configuration: {err}") from None
    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise SchedulerConfigError(f"{path}: not YAML or JSON: {str(err).splitlines()[0]}") from None
    if not isinstance(config, dict):
        raise SchedulerConfigError(f"{path}: expected a {KIND} object")
    if not text.lstrip().startswith("{"):
        # kube-scheduler's YAML serializer decodes the YAMLToJSON text, whose objects have their
        # keys sorted: strict decoding errors come in that order
        config = _keys_sorted(config)
    kind, api_version = config.get("kind"), config.get("apiVersion")
    if kind != KIND or api_version != API_VERSION:
        raise SchedulerConfigError(
            f'{path}: no kind "{kind}" is registered for version "{api_version}" '
            f"(expected kind {KIND}, apiVersion {API_VERSION})"
        )
    from kubetaint.clock.virtual import VirtualClock  # (imported when a --config is given)
    from kubetaint.scheduler.config import ConfigError
    from kubetaint.scheduler.scheduler import Scheduler

    try:
        scheduler = Scheduler(VirtualClock(), config=config)
    except (ConfigError, ValueError) as err:
        raise SchedulerConfigError(f"{path}: {err}") from None
    return config, list(scheduler.warnings)


def _keys_sorted(value: Any) -> Any:
    """`value` with every mapping's keys in sorted order, as sigs.k8s.io/yaml's YAMLToJSON gives it."""
    if isinstance(value, dict):
        return {key: _keys_sorted(value[key]) for key in sorted(value, key=str)}
    if isinstance(value, list):
        return [_keys_sorted(item) for item in value]
    return value
