"""The serving security chain as one ASGI middleware: authentication (401), request info,
authorization (403), open watches per client (429), the request body limit (413) and the list
page cap, in kube-apiserver's filter order (mirrors apiserver/pkg/server/config.go
DefaultBuildHandlerChain), plus the check that refuses unsafe serving configurations.

`SecurityConfig` is what `kubetaint up` passes (its flags are kube-apiserver's):
`--client-ca-file`, `--token-auth-file`, `--anonymous-auth`, `--authorization-mode`,
`--rbac-policy-file` (kubetaint's: a YAML file of RBAC objects), `--tls-cert-file`/
`--tls-private-key-file` (see `tls`). The TLS client certificate of the connection, verified
against `--client-ca-file` by the handshake, is in `scope["state"][PEER_CERTIFICATE]` (DER; see
`server`). The authenticated user is on `request.state.user` and in `authn.CURRENT_USER`.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kubetaint.api import errors
from kubetaint.apiserver import authz
from kubetaint.apiserver.authn import (
    ANONYMOUS,
    CURRENT_USER,
    Authenticator,
    TokenFileError,
    UserInfo,
    load_token_file,
    unauthorized,
)
from kubetaint.apiserver.impersonation import WithoutUserError, impersonate, internal_error_body
from kubetaint.apiserver.limits import Limits, WatchCounter, cap_limit, too_large, too_many_requests
from kubetaint.apiserver.query import Query
from kubetaint.apiserver.query import attach as attach_query
from kubetaint.apiserver.query import store as store_query
from kubetaint.apiserver.rbac import PolicyFileError, load_policy_file
from kubetaint.apiserver.rbac_store import StoredPolicy, bootstrap_policy
from kubetaint.apiserver.requestinfo import request_info
from kubetaint.apiserver.tls import TLSFiles
from kubetaint.apiserver.wire import status_response

#: Probes answer anonymous callers even when anonymous auth is off (what kube-apiserver's
#: AuthenticationConfiguration `anonymous.conditions` is commonly set to).
HEALTH_PATHS = ("/healthz", "/livez", "/readyz")
#: Where the serving layer puts the connection's verified client certificate (DER bytes).
PEER_CERTIFICATE = "kubetaint.peer_certificate"
_BODY_METHODS = ("POST", "PUT", "PATCH", "DELETE")


class ServingConfigError(Exception):
    """A configuration the server refuses to serve with; the message is one line for users."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class SecurityConfig:
    """Authentication, authorization and limits. Library defaults: on loopback without a token
    file or client CA, anonymous requests are allowed everything (AlwaysAllow); with either,
    authorization is Node,RBAC and anonymous requests are refused (401) unless
    `anonymous_auth=True`. `kubetaint up` sets every field from its flags."""

    bind_address: str = "127.0.0.1"
    token_auth_file: str | None = None
    anonymous_auth: bool | None = None
    authorization_mode: tuple[str, ...] | None = None
    rbac_policy_file: str | None = None
    client_ca_file: str | None = None
    limits: Limits = field(default_factory=Limits)

    def authenticates(self) -> bool:
        """Whether any authenticator besides the anonymous one is configured."""
        return self.token_auth_file is not None or self.client_ca_file is not None

    def anonymous(self) -> bool:
        if self.anonymous_auth is not None:
            return self.anonymous_auth
        return is_loopback(self.bind_address) and not self.authenticates()

    def modes(self) -> tuple[str, ...]:
        if self.authorization_mode is not None:
            return self.authorization_mode
        return ("Node", "RBAC") if self.authenticates() else ("AlwaysAllow",)


def check_serving(host: str, tls: TLSFiles | None, config: SecurityConfig) -> None:
    """Refuse to listen on a non-loopback address without TLS and authentication."""
    if is_loopback(host):
        return
    if tls is None:
        raise ServingConfigError(
            f"refusing to serve on non-loopback address {host} without TLS: "
            "plain HTTP (--insecure-serving) is for loopback addresses only"
        )
    if not config.authenticates():
        raise ServingConfigError(
            f"refusing to serve on non-loopback address {host} without authentication: "
            "pass --token-auth-file or --client-ca-file"
        )
    if config.anonymous() and "AlwaysAllow" in config.modes():
        raise ServingConfigError(
            f"refusing to serve on non-loopback address {host} with --anonymous-auth and "
            "--authorization-mode=AlwaysAllow: anyone could do anything"
        )


class Security:
    """The built chain: an authenticator, an authorizer, limits and the watch counter."""

    def __init__(
        self, config: SecurityConfig, pod_node: authz.PodNode, rbac: StoredPolicy | None = None
    ) -> None:
        """Raises ServingConfigError (one line) for an unreadable token or policy file or an
        unknown authorization mode. RBAC evaluates `rbac` (the stored objects) plus the policy
        file's objects; without `rbac`, the bootstrap policy plus the file's."""
        try:
            tokens = load_token_file(config.token_auth_file) if config.token_auth_file else {}
            extra = load_policy_file(config.rbac_policy_file) if config.rbac_policy_file else None
            if rbac is not None:
                rbac.extra = extra
                source: authz.PolicySource = rbac.policy
            else:
                static = bootstrap_policy() if extra is None else bootstrap_policy().extended(extra)
                source = lambda: static  # noqa: E731
            self.policy = source
            self.authorizer = authz.build_authorizer(config.modes(), source, pod_node)
        except (TokenFileError, PolicyFileError, ValueError) as exc:
            raise ServingConfigError(str(exc)) from None
        self.config = config
        self.node_restriction = "Node" in config.modes()
        self.authenticator = Authenticator(tokens, anonymous=config.anonymous())
        self.limits = config.limits
        self.watches = WatchCounter(config.limits.max_watches_per_client)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


async def _reply(err: errors.StatusError, scope: Scope, receive: Receive, send: Send) -> None:
    response = status_response(err)
    if err.retry_after_seconds is not None:
        response.headers["Retry-After"] = str(err.retry_after_seconds)
    await response(scope, receive, send)


async def _plain_internal_error(err: Exception, scope: Scope, receive: Receive, send: Send) -> None:
    """responsewriters.InternalError: a plain-text 500 naming the request-target (http.Error)."""
    target = bytes(scope.get("raw_path") or scope["path"].encode())
    query = bytes(scope.get("query_string") or b"")
    body = internal_error_body(target + b"?" + query if query else target, err)
    headers = {"Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff"}
    await Response(body, status_code=500, headers=headers)(scope, receive, send)


class SecurityMiddleware:
    """Pure ASGI (so that `CURRENT_USER` set here is seen by the handlers' task)."""

    def __init__(self, app: ASGIApp, security: Security) -> None:
        self.app = app
        self.security = security

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        sec, method, path = self.security, scope["method"], scope["path"]
        authorization = _header(scope, b"authorization")
        certificate = (scope.get("state") or {}).get(PEER_CERTIFICATE)
        user = sec.authenticator.authenticate(authorization, certificate)
        if user is None and authorization is None and path in HEALTH_PATHS:
            user = ANONYMOUS
        if user is None:
            await _reply(unauthorized(), scope, receive, send)
            return
        try:
            user = impersonate(user, scope.get("headers", []), sec.authorizer)
        except errors.StatusError as err:
            await _reply(err, scope, receive, send)
            return
        except WithoutUserError as err:
            await _plain_internal_error(err, scope, receive, send)
            return
        query = self._query(scope)
        info = request_info(method, path, query.first_values())
        allowed, reason = sec.authorizer.authorize(user, info)
        if not allowed:
            await _reply(authz.forbidden(user, info, reason), scope, receive, send)
            return
        scope.setdefault("state", {})["user"] = user
        token = CURRENT_USER.set(user)
        try:
            if info.verb == "watch":
                client = scope.get("client") or ("", 0)
                key = f"{user.name}@{client[0]}" if user.anonymous else user.name
                if not sec.watches.acquire(key):
                    await _reply(too_many_requests(), scope, receive, send)
                    return
                try:
                    await self._serve(scope, receive, send, method)
                finally:
                    sec.watches.release(key)
                return
            await self._serve(scope, receive, send, method)
        finally:
            CURRENT_USER.reset(token)

    def _query(self, scope: Scope) -> Query:
        """The request's query, parsed here once for every later reader (`query.of`), with an
        explicit `limit` above the page cap lowered to it."""
        query = cap_limit(attach_query(scope), self.security.limits.max_list_page)
        store_query(scope, query)
        return query

    async def _serve(self, scope: Scope, receive: Receive, send: Send, method: str) -> None:
        limits = self.security.limits
        if method not in _BODY_METHODS:
            await self.app(scope, receive, send)
            return
        body = await _read_body(scope, receive, limits.max_request_body_bytes)
        if body is None:
            return  # the client went away
        if isinstance(body, errors.StatusError):
            await _reply(body, scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)


async def _read_body(scope: Scope, receive: Receive, limit: int) -> bytes | errors.StatusError | None:
    declared = _header(scope, b"content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > limit:
        return too_large(limit)
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return too_large(limit)
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


__all__ = [
    "HEALTH_PATHS",
    "PEER_CERTIFICATE",
    "Security",
    "SecurityConfig",
    "SecurityMiddleware",
    "ServingConfigError",
    "UserInfo",
    "check_serving",
    "is_loopback",
]
