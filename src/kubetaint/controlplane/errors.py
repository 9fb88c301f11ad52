"""Errors building a control plane from its settings."""

from __future__ import annotations


class ControlPlaneError(ValueError):
    """A setting a component rejected. `key_path` is True when the message starts with the
    setting's key (`nodeMonitorPeriod: ...`), False when it is a sentence about the settings."""

    def __init__(self, message: str, *, key_path: bool = False) -> None:
        super().__init__(message)
        self.key_path = key_path
