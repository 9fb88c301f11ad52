"""The Deployment controller (one ReplicaSet per template; simple rollouts)."""

from kubetaint.controllers.deployment.controller import DeploymentController

__all__ = ["DeploymentController"]
