"""Taint eviction controller: NoExecute taint-based pod deletion (mirrors pkg/controller/tainteviction)."""

from kubetaint.controllers.tainteviction.controller import TaintEvictionController
from kubetaint.controllers.tainteviction.timed_workers import TimedWorkerQueue

__all__ = ["TaintEvictionController", "TimedWorkerQueue"]
