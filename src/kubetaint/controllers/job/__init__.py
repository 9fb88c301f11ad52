"""The Job controller (mirrors pkg/controller/job)."""

from kubetaint.controllers.job.controller import JobController

__all__ = ["JobController"]
