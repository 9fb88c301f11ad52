"""The persistent volume controller's binding of claims to volumes."""

from kubetaint.controllers.persistentvolume.controller import PersistentVolumeController

__all__ = ["PersistentVolumeController"]
