"""The apiextensions controllers (naming, establishing and cleaning up CustomResourceDefinitions)
and the garbage collection of the objects custom resources own."""

from kubetaint.controllers.crd.controller import CRDController
from kubetaint.controllers.crd.owners import CustomResourceOwners

__all__ = ["CRDController", "CustomResourceOwners"]
