"""The CronJob controller (mirrors pkg/controller/cronjob)."""

from kubetaint.controllers.cronjob.controller import CronJobController

__all__ = ["CronJobController"]
