"""The apiextensions controllers: naming, establishing and cleaning up CustomResourceDefinitions."""

from kubetaint.controllers.crd.controller import CRDController, CRDWriter

__all__ = ["CRDController", "CRDWriter"]
