"""`RemoteStore`: the Store protocol against any Kubernetes API server over HTTP (client-go's
REST client, informers' list+watch and the subresources components write through).

- `subscribe()` handlers see every change of each resource listed while subscribed: the first
  such list starts a `Reflector` (list+watch, resumed from resourceVersion, re-list on 410), so
  the in-process `Informer` works unchanged. Handlers run through `dispatch` (by default in the
  reflector's thread under a lock; `kubetaint scheduler` hands them to its event loop).
- `update()` sends what changed where the API takes it: spec/metadata with PUT, status with PUT
  on the `status` subresource, a pod's first `spec.nodeName` as a `pods/binding` POST — so the
  registry helpers (`update_status`, `bind`) and the controllers' plain updates work unchanged.
- `evict()` POSTs `pods/eviction`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import httpx

from kubetaint.api import resources
from kubetaint.api.errors import StatusError
from kubetaint.store.base import ObjectByObject
from kubetaint.store.changes import BatchHandler, ChangeBatch
from kubetaint.store.interface import (
    JSON,
    Capabilities,
    Delete,
    ListResult,
    StoreError,
    WatchEvent,
    object_key,
)
from kubetaint.store.remote_config import Connection
from kubetaint.store.remote_watch import Reflector, RemoteWatch

Dispatch = Callable[[Callable[[], None]], None]
REQUEST_TIMEOUT = 30.0


def resource_path(resource: str, namespace: str = "", name: str = "", subresource: str = "") -> str:
    """The REST path of `resource` (`pods`, `leases.coordination.k8s.io`)."""
    plural, _, group = resource.partition(".")
    info = resources.by_plural(plural, group)
    version = info.version if info is not None else "v1"
    namespaced = info.namespaced if info is not None else bool(namespace)
    path = f"/apis/{group}/{version}" if group else f"/api/{version}"
    if namespaced and namespace:
        path += f"/namespaces/{namespace}"
    path += f"/{plural}"
    if name:
        path += f"/{name}"
    if subresource:
        path += f"/{subresource}"
    return path


def _type_meta(resource: str) -> JSON:
    plural, _, group = resource.partition(".")
    info = resources.by_plural(plural, group)
    return {"apiVersion": info.api_version, "kind": info.kind} if info is not None else {}


def has_status(resource: str) -> bool:
    plural, _, group = resource.partition(".")
    info = resources.by_plural(plural, group)
    return info is not None and "status" in info.subresources


def _without(obj: JSON, *keys: str) -> JSON:
    meta = {
        k: v for k, v in (obj.get("metadata") or {}).items() if k not in ("resourceVersion", "managedFields")
    }
    return {**{k: v for k, v in obj.items() if k not in keys}, "metadata": meta}


class RemoteStore(ObjectByObject):
    """A Store over an API server's REST API (see the module docstring)."""

    def __init__(
        self, connection: Connection, *, dispatch: Dispatch | None = None, user_agent: str | None = None
    ) -> None:
        self.connection = connection
        self.capabilities = Capabilities(finalizes_namespaces=self)
        #: the User-Agent of every request (the API server names its writes' field manager after it)
        self.user_agent = user_agent
        self._client = self._make_client()
        self._handlers: list[BatchHandler] = []
        self._reflectors: dict[str, Reflector] = {}
        self._lock = threading.RLock()
        self._dispatch = dispatch or self._locked

    def _make_client(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.connection.server,
            headers=[
                *self.connection.headers(),
                ("Accept", "application/json"),
                *([("User-Agent", self.user_agent)] if self.user_agent else []),
            ],
            verify=self.connection.ssl_context(),
            proxy=self.connection.proxy,
            timeout=httpx.Timeout(REQUEST_TIMEOUT, read=None),
        )

    def _locked(self, call: Callable[[], None]) -> None:
        with self._lock:
            call()

    # HTTP ----------------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        """One request (`body` sent as `content_type`); API errors as StatusError, transport
        errors as StoreError."""
        try:
            response = self._client.request(
                method,
                path,
                params=params,
                content=None if body is None else json.dumps(body),
                headers={"Content-Type": content_type} if body is not None else None,
                timeout=REQUEST_TIMEOUT,
            )
        except httpx.HTTPError as err:
            raise StoreError(f"cannot reach the API server at {self.connection.server}: {err}") from None
        try:
            payload = response.json() if response.content else {}
        except ValueError:
            payload = {}
        if response.status_code >= 400:
            if isinstance(payload, dict) and payload.get("kind") == "Status":
                raise StatusError.from_status(payload)
            raise StatusError(response.status_code, "", response.text.strip()[:200] or response.reason_phrase)
        return payload

    # reads ---------------------------------------------------------------------------------

    def serves(self, group_version: str) -> bool:
        """Whether the server serves `group_version` (`events.k8s.io/v1`), as discovery's
        ServerResourcesForGroupVersion tells a client: any error, an unreachable server's
        included, is a no."""
        path = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
        try:
            self.request("GET", path)
        except (StatusError, StoreError):
            return False
        return True

    def get(self, resource: str, namespace: str, name: str) -> JSON:
        obj: JSON = self.request("GET", resource_path(resource, namespace, name))
        return obj

    def list(
        self,
        resource: str,
        *,
        namespace: str = "",
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int = 0,
        continue_token: str | None = None,
        resource_version: int | None = None,
    ) -> ListResult:
        if self._handlers and resource not in self._reflectors:
            self._reflect(resource)
        params = {
            k: v
            for k, v in {
                "labelSelector": label_selector,
                "fieldSelector": field_selector,
                "limit": str(limit) if limit else None,
                "continue": continue_token,
                "resourceVersion": str(resource_version) if resource_version is not None else None,
                "resourceVersionMatch": "Exact" if resource_version is not None else None,
            }.items()
            if v
        }
        body = self.request("GET", resource_path(resource, namespace), params=params)
        meta = body.get("metadata") or {}
        type_meta = _type_meta(resource)
        return ListResult(
            [{**type_meta, **item} for item in body.get("items") or []],
            str(meta.get("resourceVersion") or "0"),
            meta.get("continue") or None,
            meta.get("remainingItemCount"),
        )

    def watch(
        self,
        resource: str,
        *,
        namespace: str = "",
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> RemoteWatch:
        path = resource_path(resource, namespace)
        if label_selector or field_selector:
            query = "&".join(
                f"{k}={v}"
                for k, v in (("labelSelector", label_selector), ("fieldSelector", field_selector))
                if v
            )
            path = f"{path}?{query}"
        rv = resource_version if resource_version is not None else str(self.current_resource_version())
        return RemoteWatch(self._make_client, path, resource, rv)

    def current_resource_version(self) -> int:
        return int(self.list("namespaces", limit=1).resource_version)

    # informers -----------------------------------------------------------------------------

    def subscribe(self, handler: BatchHandler, resource: str | None = None) -> Callable[[], None]:
        if resource is not None:
            inner = handler

            def handler(batch: ChangeBatch) -> None:
                mine = batch.only(resource)
                if mine is not None:
                    inner(mine)

        self._handlers.append(handler)

        def unsubscribe() -> None:
            if handler in self._handlers:
                self._handlers.remove(handler)

        return unsubscribe

    def _reflect(self, resource: str) -> None:
        reflector = Reflector(
            resource,
            resource_path(resource),
            self._make_client,
            lambda: self.list(resource),
            self._deliver,
        )
        self._reflectors[resource] = reflector
        reflector.start(self.list(resource))

    def _deliver(self, event: WatchEvent) -> None:
        """A change the reflector saw: one batch (the API server's watch has no commits)."""
        batch = ChangeBatch((event,))

        def call() -> None:
            for handler in list(self._handlers):
                handler(batch)

        self._dispatch(call)

    def known(self, resource: str, namespace: str, name: str) -> JSON | None:
        """The newest object the reflector of `resource` has seen (None when not reflected)."""
        reflector = self._reflectors.get(resource)
        return reflector.objects.get((namespace, name)) if reflector is not None else None

    # writes --------------------------------------------------------------------------------

    def _create(self, resource: str, obj: JSON, dry_run: bool) -> JSON:
        namespace, _ = object_key(obj)
        params = {"dryRun": "All"} if dry_run else None
        created: JSON = self.request("POST", resource_path(resource, namespace), body=obj, params=params)
        return created

    def _update(self, resource: str, obj: JSON, dry_run: bool) -> JSON:
        """PUT what changed: the object, its status subresource, or a binding (module docstring)."""
        namespace, name = object_key(obj)
        current = self._current(resource, obj)
        params = {"dryRun": "All"} if dry_run else None
        if resource == "pods" and current is not None and self._binds(current, obj):
            node = str(obj["spec"]["nodeName"])
            return self.bind(namespace, name, node)
        status_changed = has_status(resource) and (
            current is None or obj.get("status") != current.get("status")
        )
        rest_changed = current is None or _without(obj, "status") != _without(current, "status")
        result: JSON = obj
        if rest_changed or not status_changed:
            result = self.request("PUT", resource_path(resource, namespace, name), body=obj, params=params)
        if status_changed:
            meta = {**(obj.get("metadata") or {})}
            if rest_changed:
                meta["resourceVersion"] = (result.get("metadata") or {}).get("resourceVersion")
            body = {**obj, "metadata": meta}
            result = self.request(
                "PUT", resource_path(resource, namespace, name, "status"), body=body, params=params
            )
        return result

    def _current(self, resource: str, obj: JSON) -> JSON | None:
        namespace, name = object_key(obj)
        known = self.known(resource, namespace, name)
        wanted = (obj.get("metadata") or {}).get("resourceVersion")
        if known is not None and (known.get("metadata") or {}).get("resourceVersion") == wanted:
            return known
        try:
            return self.get(resource, namespace, name)
        except StatusError as err:
            if err.code == 404:
                return None
            raise

    @staticmethod
    def _binds(current: JSON, obj: JSON) -> bool:
        return not (current.get("spec") or {}).get("nodeName") and bool(
            (obj.get("spec") or {}).get("nodeName")
        )

    def update_status(self, resource: str, obj: JSON, *, dry_run: bool = False) -> JSON:
        namespace, name = object_key(obj)
        params = {"dryRun": "All"} if dry_run else None
        result: JSON = self.request(
            "PUT", resource_path(resource, namespace, name, "status"), body=obj, params=params
        )
        return result

    def finalize_namespace(self, obj: JSON, *, dry_run: bool = False) -> JSON:
        """PUT namespaces/NAME/finalize (FinalizesNamespaces)."""
        _, name = object_key(obj)
        params = {"dryRun": "All"} if dry_run else None
        result: JSON = self.request(
            "PUT", resource_path("namespaces", "", name, "finalize"), body=obj, params=params
        )
        return result

    def bind(self, namespace: str, name: str, node: str) -> JSON:
        """POST pods/NAME/binding; returns the bound pod."""
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": namespace},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        self.request("POST", resource_path("pods", namespace, name, "binding"), body=binding)
        return self.get("pods", namespace, name)

    def evict(self, namespace: str, name: str) -> JSON:
        """POST pods/NAME/eviction (429 while a PodDisruptionBudget forbids it)."""
        eviction = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": name, "namespace": namespace},
        }
        result: JSON = self.request("POST", resource_path("pods", namespace, name, "eviction"), body=eviction)
        return result

    def _delete(self, op: Delete) -> JSON:
        options: JSON = {"apiVersion": "v1", "kind": "DeleteOptions"}
        preconditions = {k: v for k, v in (("uid", op.uid), ("resourceVersion", op.resource_version)) if v}
        if preconditions:
            options["preconditions"] = preconditions
        if op.dry_run:
            options["dryRun"] = ["All"]
        if op.grace_period_seconds is not None:
            options["gracePeriodSeconds"] = op.grace_period_seconds
        path = resource_path(op.resource, op.namespace, op.name)
        result: JSON = self.request("DELETE", path, body=options)
        return result

    def close(self) -> None:
        for reflector in self._reflectors.values():
            reflector.stop()
        self._client.close()
