"""The namespace controller: empties a namespace being deleted, then finalizes it."""

from kubetaint.controllers.namespace.controller import NamespaceController, NamespaceWriter

__all__ = ["NamespaceController", "NamespaceWriter"]
