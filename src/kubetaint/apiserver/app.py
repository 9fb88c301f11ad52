"""The starlette application: health, version, discovery, OpenAPI and the resource paths
(/api/v1/... and /apis/<group>/<version>/...), every error rendered as a kube `Status`
(mirrors apiserver/pkg/endpoints/installer.go's routes).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from kubetaint.admission import AdmissionChain, AdmissionSettings
from kubetaint.admission.noderestriction import PLUGIN_NAME, NodeRestriction
from kubetaint.admission.settings import IMPLEMENTED_PLUGINS
from kubetaint.api import errors
from kubetaint.api.crd import CustomResource
from kubetaint.api.resources import REVIEW_GROUPS, Resource
from kubetaint.apiserver import discovery, openapi, openapi_v2, query, reviews, streaming
from kubetaint.apiserver.authz import Authorizer
from kubetaint.apiserver.crd_served import CustomResources
from kubetaint.apiserver.durability import DurabilityBarrier
from kubetaint.apiserver.handlers import Handlers
from kubetaint.apiserver.health import api_server_checks, health_routes
from kubetaint.apiserver.limits import Limits
from kubetaint.apiserver.rbac_escalation import add_escalation_checks
from kubetaint.apiserver.rbac_store import StoredPolicy, ensure_bootstrap_policy
from kubetaint.apiserver.resources import lookup, subresource
from kubetaint.apiserver.rest import REST, Target
from kubetaint.apiserver.security import Security, SecurityConfig, SecurityMiddleware
from kubetaint.apiserver.watch import BOOKMARK_INTERVAL, WatchStreamer
from kubetaint.apiserver.wire import decode_object, json_response, media_type, not_found_path, status_response
from kubetaint.clock.base import Clock
from kubetaint.registry import Registry
from kubetaint.registry.validator import no_validation
from kubetaint.store.interface import Store

log = logging.getLogger(__name__)
_METHOD_NOT_ALLOWED = "the server does not allow this method on the requested resource"


def _method_not_allowed() -> errors.StatusError:
    return errors.StatusError(405, "MethodNotAllowed", _METHOD_NOT_ALLOWED)


def parse_target(
    group: str, version: str, parts: list[str], custom: CustomResources | None = None
) -> Target | None:
    """Resolve the path segments after /api/v1 or /apis/<g>/<v> to a target, or None (404);
    `custom`: the custom resources served besides the built-in ones."""
    if not parts or any(not p for p in parts):
        return None
    namespace = ""
    if (
        parts[0] == "namespaces"
        and len(parts) >= 3
        and not (len(parts) == 3 and parts[2] in ("status", "finalize"))
    ):
        namespace, parts = parts[1], parts[2:]
    res = lookup(group, version, parts[0])
    if res is None and custom is not None and len(parts) <= 3:
        res = custom.lookup(group, version, parts[0])
    if res is None or len(parts) > 3:
        return None
    if namespace and not res.namespaced:
        return None
    name = parts[1] if len(parts) > 1 else ""
    sub = parts[2] if len(parts) > 2 else ""
    if sub and subresource(res, sub) is None and not isinstance(res, CustomResource):
        return None  # (a custom resource's unknown subresource is its handler's NotFound)
    if res.namespaced and name and not namespace:
        return None
    return Target(res, namespace, name, sub)


class ApiServer:
    """Request dispatch for one store."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        registry: Registry,
        rng: random.Random,
        bookmark_interval: float,
        *,
        authorizer: Authorizer,
        limits: Limits | None = None,
    ) -> None:
        self.handlers = Handlers(REST(registry, rng, clock), clock, limits)
        self.custom = CustomResources(store)
        self.authorizer = authorizer
        self.durable = DurabilityBarrier(store)
        self.watcher = WatchStreamer(store, clock, bookmark_interval, self.durable)

    async def resource(self, request: Request) -> Response:
        path = request.url.path.strip("/").split("/")
        if path[0] == "api":
            group, version, rest = "", path[1] if len(path) > 1 else "", path[2:]
        else:
            group = path[1] if len(path) > 1 else ""
            version, rest = (path[2] if len(path) > 2 else ""), path[3:]
        try:
            if not rest:
                return self._discovery(request, group, version)
            target = parse_target(group, version, rest, self.custom)
            if target is None:
                return status_response(not_found_path())
            response = await self._dispatch(target, request)
        except errors.StatusError as exc:
            response = status_response(exc)
        if isinstance(response, StreamingResponse):
            return response  # a watch: each batch of events waits for the barrier itself
        try:
            await self.durable.wait()  # answer only once what the answer reflects is on disk
        except errors.StatusError as exc:
            return status_response(exc)
        return response

    def _discovery(self, request: Request, group: str, version: str) -> Response:
        if request.method != "GET":
            raise _method_not_allowed()
        extra = self.custom.served() if "." in group else []
        doc = (
            discovery.api_resource_list(group, version, extra)
            if version
            else discovery.api_group(group, extra)
        )
        if doc is None:
            raise not_found_path()
        return json_response(doc)

    async def _review(self, target: Target, request: Request) -> Response:
        """POST of a review (authorization.k8s.io, authentication.k8s.io): answered, not stored."""
        if request.method != "POST" or target.name:
            raise _method_not_allowed()
        rest = self.handlers.rest
        obj = rest.check_type(target.res, decode_object(await request.body(), media_type(request)))
        if target.res.namespaced:
            obj = rest.check_namespace(target, obj)
        return json_response(reviews.review(target.res, target.namespace, obj, self.authorizer), 201)

    async def _dispatch(self, target: Target, request: Request) -> Response:
        method, h = request.method, self.handlers
        sub = target.subresource
        if isinstance(target.res, CustomResource) and sub:
            _check_custom_subresource(target.res, sub, target.name, method)
        if target.res.group in REVIEW_GROUPS:
            return await self._review(target, request)
        if sub in ("binding", "eviction") or (target.res.plural == "bindings" and not target.res.group):
            if method != "POST" or (not sub and target.name) or not target.namespace:
                raise _method_not_allowed()
            return await (h.evict(target, request) if sub == "eviction" else h.bind(target, request))
        if sub in streaming.STREAMING_SUBRESOURCES:
            return streaming.answer(h.store, target.namespace, target.name, sub, request)
        if sub == "finalize" and method != "PUT":  # FinalizeREST is an Updater only
            raise _method_not_allowed()
        if target.name:
            if method == "GET":
                return h.get(target, request)
            if method == "PUT":
                return await h.update(target, request)
            if method == "PATCH":
                return await h.patch(target, request)
            if method == "DELETE" and not sub:
                return await h.delete(target, request)
            raise _method_not_allowed()
        if method == "GET":
            if query.of(request).flag("watch"):
                return self.watcher.respond(target, request)
            return h.list(target, request)
        if target.res.namespaced and not target.namespace:
            if isinstance(target.res, CustomResource):
                # crdHandler passes a namespaced resource's request without a namespace, but a
                # list or a watch, to its delegate: the server's 404 for an unknown path
                raise not_found_path()
            raise _method_not_allowed()
        if method == "POST":
            if isinstance(target.res, CustomResource) and target.res.terminating:
                raise errors.StatusError(
                    405,
                    "MethodNotAllowed",
                    "create not allowed while custom resource definition is terminating",
                )
            return await h.create(target, request)
        if method == "DELETE":
            return await h.delete_collection(target, request)
        raise _method_not_allowed()


def _check_custom_subresource(res: CustomResource, sub: str, name: str, method: str) -> None:
    """crdHandler's answers on a custom resource's subresources: one the version does not
    declare is the resource's NotFound; status and scale serve get, update and patch, any
    other verb is NewMethodNotSupported."""
    if subresource(res, sub) is None:
        raise errors.not_found(res.store_resource, name)
    verb = {"POST": "create", "DELETE": "delete"}.get(method)
    if verb is not None:
        raise errors.StatusError(
            405,
            "MethodNotAllowed",
            f'{verb} is not supported on resources of kind "{res.store_resource}"',
            group=res.group,
            kind=res.plural,
        )


class APIServerApp(Starlette):
    """The Kubernetes-compatible API (an ASGI app) with the security it is served under: `serve`
    and `BackgroundServer` read `security` for the TLS and client-certificate options, and a live
    cluster's hollow kubelets write through `authorizer` (and NodeRestriction when
    `node_restriction`)."""

    def __init__(
        self,
        *,
        routes: Sequence[BaseRoute],
        middleware: Sequence[Middleware],
        security: SecurityConfig,
        rbac: StoredPolicy,
        authorizer: Authorizer,
        node_restriction: bool,
    ) -> None:
        super().__init__(routes=routes, middleware=middleware)
        self.security = security
        self.rbac = rbac
        self.authorizer = authorizer
        self.node_restriction = node_restriction


def create_app(
    store: Store,
    clock: Clock,
    registry: Registry | None = None,
    *,
    rng: random.Random | None = None,
    server_address: str = "127.0.0.1:6443",
    bookmark_interval: float = BOOKMARK_INTERVAL,
    security: SecurityConfig | None = None,
    extra_routes: Sequence[BaseRoute] = (),
    ready: Callable[[], bool] | None = None,
) -> APIServerApp:
    """The Kubernetes-compatible API over `store`, writing through `registry` (admission,
    validation, the store: a live cluster's control-plane registry; by default one with neither
    admission nor validation, with graceful pod deletion), to which the server adds
    NodeRestriction (with the Node authorizer) and RBAC's escalation checks; `rng` draws
    generateName suffixes; `security` configures authentication, authorization and limits
    (default: loopback, anonymous, AlwaysAllow);
    `extra_routes` are served before the Kubernetes paths; `/readyz` fails with 500 while
    `ready()` is False, and every health endpoint while an etcd store is unreachable
    (`apiserver.health`)."""
    config = security or SecurityConfig()
    if registry is None:
        registry = Registry(
            store, admission=None, validator=no_validation, clock=clock, graceful_pod_deletion=True
        )
    rbac = StoredPolicy(store, clock)
    if "RBAC" in config.modes():
        ensure_bootstrap_policy(store, clock)  # storage_rbac's post-start hook, before serving
    rbac.start()
    chain = Security(config, _pod_node(store), rbac)
    if chain.node_restriction:
        enable_node_restriction(registry)
    add_escalation_checks(registry, lambda: chain.authorizer, chain.policy)
    server = ApiServer(
        store,
        clock,
        registry,
        rng or random.Random(0),
        bookmark_interval,
        authorizer=chain.authorizer,
        limits=config.limits,
    )

    async def version(request: Request) -> Response:
        return json_response(discovery.VERSION_INFO)

    async def core_root(request: Request) -> Response:
        return _root(request, core=True, legacy=discovery.api_versions(server_address))

    async def groups_root(request: Request) -> Response:
        extra = server.custom.served()
        return _root(request, core=False, legacy=discovery.api_group_list(extra), extra=extra)

    async def openapi_index(request: Request) -> Response:
        return json_response(openapi.openapi_index(server.custom.served()))

    async def openapi_doc(request: Request) -> Response:
        parts = request.path_params["path"].strip("/").split("/")
        doc = None
        if len(parts) == 2 and parts[0] == "api":
            doc = openapi.rendered_document("", parts[1])
        elif len(parts) == 3 and parts[0] == "apis":
            extra = server.custom.served() if "." in parts[1] else []
            doc = openapi.document_for(parts[1], parts[2], extra)
        if doc is None:
            return status_response(not_found_path())
        return Response(doc[0], media_type="application/json")

    async def openapi_v2_doc(request: Request) -> Response:
        # Only the protobuf form kubectl asks for; swagger JSON is not served.
        if openapi_v2.PROTOBUF_TYPE not in request.headers.get("accept", ""):
            return status_response(not_found_path())
        return Response(openapi_v2.document(), media_type=openapi_v2.RETURNED_TYPE)

    async def not_found(request: Request) -> Response:
        return status_response(not_found_path())

    verbs = ["GET", "POST", "PUT", "PATCH", "DELETE"]
    routes = [
        *health_routes(api_server_checks(_unreachable(store), ready)),
        Route("/version", version),
        Route("/version/", version),  # the official Python client's VersionApi asks here
        Route("/api", core_root),
        Route("/api/", core_root),  # kube-apiserver serves both; kr8s' discovery asks here
        Route("/apis", groups_root),
        Route("/apis/", groups_root),
        Route("/openapi/v2", openapi_v2_doc),
        Route("/openapi/v3", openapi_index),
        Route("/openapi/v3/{path:path}", openapi_doc),
        *extra_routes,
        Route("/api/{path:path}", server.resource, methods=verbs),
        Route("/apis/{path:path}", server.resource, methods=verbs),
        Route("/{path:path}", not_found, methods=verbs),
    ]
    app = APIServerApp(
        routes=routes,
        middleware=[Middleware(SecurityMiddleware, security=chain)],
        security=config,
        rbac=rbac,
        authorizer=chain.authorizer,
        node_restriction=chain.node_restriction,
    )
    app.add_exception_handler(Exception, _internal_error)
    app.add_exception_handler(HTTPException, _http_error)
    return app


def enable_node_restriction(registry: Registry) -> None:
    """NodeRestriction in the registry's admission chain (kube-apiserver with the Node
    authorizer enables it; it acts on node users' requests only)."""
    if registry.admission is None:
        registry.admission = AdmissionChain(
            AdmissionSettings(disable_admission_plugins=sorted(IMPLEMENTED_PLUGINS))
        )
    if PLUGIN_NAME not in registry.admission.plugin_names:
        registry.admission.add(NodeRestriction())


def _unreachable(store: Store) -> Callable[[], str | None] | None:
    """Why the store's backend does not answer, for a store behind a network."""
    reachability = store.capabilities.reachability
    return reachability.unreachable if reachability is not None else None


def _pod_node(store: Store) -> Callable[[str, str], str | None]:
    """The node a pod is bound to, for the Node authorizer."""

    def pod_node(namespace: str, name: str) -> str | None:
        try:
            pod = store.get("pods", namespace, name)
        except errors.StatusError:
            return None
        spec = pod.get("spec")
        return str(spec.get("nodeName") or "") if isinstance(spec, dict) else ""

    return pod_node


def node_restriction_in(registry: Registry) -> NodeRestriction | None:
    """The NodeRestriction plugin of the registry's admission chain (`enable_node_restriction`
    adds it with the Node authorizer), or None."""
    chain = registry.admission
    if chain is None:
        return None
    return next((plugin for plugin in chain.plugins if isinstance(plugin, NodeRestriction)), None)


def _root(
    request: Request, *, core: bool, legacy: dict[str, object], extra: Sequence[Resource] = ()
) -> Response:
    aggregated = discovery.aggregated_version(request.headers.get("accept"))
    if aggregated is None:
        return json_response(legacy)
    content_type = discovery.AGGREGATED_TYPE if aggregated == "v2" else discovery.AGGREGATED_V2BETA1_TYPE
    return json_response(discovery.aggregated_list(core, aggregated, extra), content_type=content_type)


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own answers (405 for a method a route does not take) as a kube Status."""
    code = exc.status_code if isinstance(exc, HTTPException) else 500
    if code == 405:
        return status_response(_method_not_allowed())
    if code == 404:
        return status_response(not_found_path())
    return status_response(errors.StatusError(code, "", str(getattr(exc, "detail", "")) or "error"))


async def _internal_error(request: Request, exc: Exception) -> Response:
    """Last resort: a bug is a 500 Status with the message, never a traceback page."""
    log.exception("internal error serving %s %s", request.method, request.url.path)
    return status_response(errors.internal_error(str(exc)))
