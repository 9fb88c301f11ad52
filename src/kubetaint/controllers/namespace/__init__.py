"""The namespace controller: empties a namespace being deleted, then finalizes it."""

from kubetaint.controllers.namespace.controller import NamespaceController

__all__ = ["NamespaceController"]
