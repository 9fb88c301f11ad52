"""The serviceaccounts controller: a `default` ServiceAccount in every active namespace."""

from kubetaint.controllers.serviceaccounts.controller import (
    DEFAULT_SERVICE_ACCOUNTS,
    ServiceAccountsController,
)

__all__ = ["DEFAULT_SERVICE_ACCOUNTS", "ServiceAccountsController"]
