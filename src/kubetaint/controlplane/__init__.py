"""The control plane both hosts share: the registry write path, the scheduler host, the
controllers and the hollow-node fleet, wired on shared informers (`ControlPlane`)."""

from kubetaint.controlplane.controlplane import SYSTEM_NAMESPACES, ControlPlane
from kubetaint.controlplane.errors import ControlPlaneError
from kubetaint.controlplane.settings import ControlPlaneSettings, parse_settings

__all__ = ["SYSTEM_NAMESPACES", "ControlPlane", "ControlPlaneError", "ControlPlaneSettings", "parse_settings"]
