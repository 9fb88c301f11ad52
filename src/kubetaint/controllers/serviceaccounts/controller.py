"""The serviceaccounts controller: every active namespace gets the `default` ServiceAccount, and
gets it back when it is deleted (mirrors pkg/controller/serviceaccount/serviceaccounts_controller.go:
namespaces added or updated, and ServiceAccounts deleted, queue their namespace; syncNamespace
creates each missing account of the list, ignoring AlreadyExists and a namespace that is
terminating)."""

from __future__ import annotations

from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock
from kubetaint.controllers.sorted_queue import NameQueueController
from kubetaint.store.informer import EventHandlers, Informer
from kubetaint.store.interface import Store, object_key

JSON = dict[str, Any]
#: serviceaccountcontroller.DefaultServiceAccountsControllerOptions: the accounts each namespace gets.
DEFAULT_SERVICE_ACCOUNTS = ("default",)
SERVICE_ACCOUNTS = "serviceaccounts"


class ServiceAccountsController(NameQueueController[Store]):
    """Ensures the listed ServiceAccounts exist in each active namespace."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        *,
        namespace_informer: Informer | None = None,
        service_account_informer: Informer | None = None,
        names: tuple[str, ...] = DEFAULT_SERVICE_ACCOUNTS,
    ) -> None:
        super().__init__(store, clock, self.sync_namespace, "serviceaccounts")
        self.names = names
        self.namespaces = self.informers.shared_or_own(namespace_informer, "namespaces")
        self.accounts = self.informers.shared_or_own(service_account_informer, SERVICE_ACCOUNTS)
        self.namespaces.add_handlers(
            EventHandlers(
                on_add=lambda ns: self.queue.add(object_key(ns)[1]),
                on_update=lambda old, new: self.queue.add(object_key(new)[1]),
            )
        )
        self.accounts.add_handlers(
            EventHandlers(on_delete=self._account_deleted),
            replay=False,
        )

    def _account_deleted(self, account: JSON) -> None:
        namespace, name = object_key(account)
        if name in self.names:
            self.queue.add(namespace)

    def sync_namespace(self, namespace: str) -> None:
        """syncNamespace: create each missing account when the namespace is active."""
        ns = self.namespaces.get("", namespace)
        if ns is None:
            return
        status = ns.get("status") if isinstance(ns.get("status"), dict) else {}
        if (status or {}).get("phase") != "Active":
            return
        for name in self.names:
            if self.accounts.get(namespace, name) is not None:
                continue
            account = {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": name, "namespace": namespace},
            }
            try:
                self.store.create(SERVICE_ACCOUNTS, account)
            except StatusError as err:
                # AlreadyExists, or a namespace now terminating (or gone): nothing to do
                if err.code not in (403, 404, 409):
                    raise
