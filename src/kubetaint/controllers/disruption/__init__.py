"""The disruption controller (PodDisruptionBudget status)."""

from kubetaint.controllers.disruption.controller import DisruptionController

__all__ = ["DisruptionController"]
