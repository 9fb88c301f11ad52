"""The DaemonSet controller (one pod per eligible node, DaemonSet default tolerations)."""

from kubetaint.controllers.daemonset.controller import DaemonSetController

__all__ = ["DaemonSetController"]
