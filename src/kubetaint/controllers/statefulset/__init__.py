"""The StatefulSet controller (mirrors pkg/controller/statefulset)."""

from kubetaint.controllers.statefulset.controller import StatefulSetController

__all__ = ["StatefulSetController"]
