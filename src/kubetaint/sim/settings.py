"""Scenario `settings` are the control plane's (`kubetaint.controlplane.settings`), re-exported."""

from kubetaint.controlplane.settings import (
    ControlPlaneSettings,
    SettingsError,
    check_settings,
    parse_settings,
)

#: The scenario's settings, grouped by component.
SimSettings = ControlPlaneSettings

__all__ = ["ControlPlaneSettings", "SettingsError", "SimSettings", "check_settings", "parse_settings"]
