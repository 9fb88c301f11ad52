"""Scenario `settings` are the control plane's (`kubetaint.controlplane.settings`), re-exported."""

from kubetaint.controlplane.settings import ControlPlaneSettings, SettingsError, parse_settings

#: The scenario's settings, grouped by component.
SimSettings = ControlPlaneSettings

__all__ = ["ControlPlaneSettings", "SettingsError", "SimSettings", "parse_settings"]
