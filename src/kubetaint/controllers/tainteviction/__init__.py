"""Taint eviction controller: NoExecute taint-based pod deletion (mirrors pkg/controller/tainteviction)."""

from kubetaint.controllers.tainteviction.controller import CONTROLLER_NAME, TaintEvictionController
from kubetaint.controllers.tainteviction.timed_workers import TimedWorker, TimedWorkerQueue

__all__ = ["CONTROLLER_NAME", "TaintEvictionController", "TimedWorker", "TimedWorkerQueue"]
