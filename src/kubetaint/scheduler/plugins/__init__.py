"""Scheduler plugins, one per module, named as upstream."""
