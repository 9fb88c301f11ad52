"""The serviceaccounts controller: a `default` ServiceAccount in every active namespace."""

from kubetaint.controllers.serviceaccounts.controller import ServiceAccountsController

__all__ = ["ServiceAccountsController"]
