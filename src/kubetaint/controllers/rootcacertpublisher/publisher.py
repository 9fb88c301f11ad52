"""kube-controller-manager's root-ca-cert-publisher (mirrors
pkg/controller/certificates/rootcacertpublisher/publisher.go): every namespace gets the
`kube-root-ca.crt` ConfigMap with the cluster's CA bundle as `ca.crt` and the annotation that
describes it, and gets it back when it is deleted or changed. Namespaces added, or updated while
active, and that ConfigMap updated or deleted queue their namespace; syncNamespace creates the
ConfigMap when it is missing (ignoring a namespace gone or terminating) and restores its data and
annotation when they differ."""

from __future__ import annotations

from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock
from kubetaint.controllers.sorted_queue import NameQueueController
from kubetaint.store.informer import EventHandlers, Informer
from kubetaint.store.interface import Store, object_key

JSON = dict[str, Any]
ROOT_CA_CERT_CONFIG_MAP_NAME = "kube-root-ca.crt"
DESCRIPTION_ANNOTATION = "kubernetes.io/description"
DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints "
    "such as the internal service IP or kubernetes.default.svc. "
    "No other usage is guaranteed across distributions of Kubernetes clusters."
)
CONFIG_MAPS = "configmaps"


class Publisher(NameQueueController[Store]):
    """Keeps `kube-root-ca.crt` with `root_ca` (PEM) in every namespace."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        root_ca: str,
        *,
        namespace_informer: Informer | None = None,
        config_map_informer: Informer | None = None,
    ) -> None:
        super().__init__(store, clock, self.sync_namespace, "root-ca-cert-publisher")
        self.root_ca = root_ca
        self.namespaces = self.informers.shared_or_own(namespace_informer, "namespaces")
        self.config_maps = self.informers.shared_or_own(config_map_informer, CONFIG_MAPS)
        self.config_maps.add_handlers(
            EventHandlers(
                on_update=lambda old, new: self._config_map_changed(new),
                on_delete=self._config_map_changed,
            ),
            replay=False,
        )
        self.namespaces.add_handlers(
            EventHandlers(
                on_add=lambda ns: self.queue.add(object_key(ns)[1]), on_update=self._namespace_updated
            )
        )

    def _config_map_changed(self, config_map: JSON) -> None:
        namespace, name = object_key(config_map)
        if name == ROOT_CA_CERT_CONFIG_MAP_NAME and namespace:
            self.queue.add(namespace)

    def _namespace_updated(self, old: JSON, new: JSON) -> None:
        status = new.get("status") if isinstance(new.get("status"), dict) else {}
        if (status or {}).get("phase") == "Active":
            self.queue.add(object_key(new)[1])

    def sync_namespace(self, namespace: str) -> None:
        """syncNamespace"""
        data = {"ca.crt": self.root_ca}
        current = self.config_maps.get(namespace, ROOT_CA_CERT_CONFIG_MAP_NAME)
        if current is None:
            config_map = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": ROOT_CA_CERT_CONFIG_MAP_NAME,
                    "namespace": namespace,
                    "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION},
                },
                "data": data,
            }
            try:
                self.store.create(CONFIG_MAPS, config_map)
            except StatusError as err:
                # don't retry a create if the namespace doesn't exist or is terminating (or the
                # ConfigMap is there already)
                if err.code not in (403, 404, 409):
                    raise
            return
        meta = current.get("metadata") or {}
        annotations = dict(meta.get("annotations") or {})
        if current.get("data") == data and annotations.get(DESCRIPTION_ANNOTATION):
            return
        annotations[DESCRIPTION_ANNOTATION] = DESCRIPTION
        updated = {**current, "data": data, "metadata": {**meta, "annotations": annotations}}
        try:
            self.store.update(CONFIG_MAPS, updated)
        except StatusError as err:
            if err.code not in (404, 409):  # gone, or changed since: its event queues it again
                raise
