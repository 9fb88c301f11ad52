"""The ReplicaSet controller, plus the work queue and pod helpers the workload controllers share."""

from kubetaint.controllers.replicaset.controller import ReplicaSetController

__all__ = ["ReplicaSetController"]
