"""User impersonation: `Impersonate-User`, `Impersonate-Group`, `Impersonate-Uid` and
`Impersonate-Extra-<key>` headers (`kubectl --as`, `--as-group`, `--as-uid`) switch the request's
user after the caller is authorized for the `impersonate` verb on each of users, serviceaccounts,
groups, uids and userextras/<key> (mirrors apiserver/pkg/endpoints/filters/impersonation.go).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from kubetaint.api.goquote import go_quote
from kubetaint.apiserver.authn import ANONYMOUS_USER, AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP, UserInfo
from kubetaint.apiserver.authz import Authorizer, forbidden
from kubetaint.apiserver.requestinfo import RequestInfo

USER_HEADER = "impersonate-user"
GROUP_HEADER = "impersonate-group"
UID_HEADER = "impersonate-uid"
EXTRA_PREFIX = "impersonate-extra-"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
AUTHENTICATION_GROUP = "authentication.k8s.io"


@dataclass(frozen=True, slots=True)
class Request:
    """One thing to impersonate (an ObjectReference upstream): kind, namespace, name, and the
    extra key for a UserExtra."""

    kind: str  # User, ServiceAccount, Group, UID or UserExtra
    name: str
    namespace: str = ""
    extra_key: str = ""

    def go_value(self) -> str:
        """`%v` of the ObjectReference (Kind Namespace Name UID APIVersion ResourceVersion FieldPath)."""
        api_version = f"{AUTHENTICATION_GROUP}/v1" if self.kind in ("UserExtra", "UID") else ""
        return f"{{{self.kind} {self.namespace} {self.name}  {api_version}  {self.extra_key}}}"


def _split_service_account(name: str) -> tuple[str, str] | None:
    """serviceaccount.SplitUsername: `system:serviceaccount:<namespace>:<name>`."""
    if not name.startswith(SERVICE_ACCOUNT_PREFIX):
        return None
    parts = name[len(SERVICE_ACCOUNT_PREFIX) :].split(":")
    if len(parts) != 2 or not parts[0] or not parts[1]:
        return None
    return parts[0], parts[1]


class WithoutUserError(Exception):
    """Groups, a uid or extras requested without a user: buildImpersonationRequests' error, which
    the filter answers with responsewriters.InternalError (a plain-text 500, `internal_error_body`)."""


def requests_of(headers: Sequence[tuple[bytes, bytes]]) -> list[Request]:
    """buildImpersonationRequests: what the headers ask to impersonate (empty when none): the
    user, then the groups, the extras and the uid. Raises WithoutUserError for groups, a uid or
    extras without a user, as upstream."""
    found: list[Request] = []
    user = next((v.decode("latin-1") for k, v in headers if k.lower() == USER_HEADER.encode()), "")
    if user:
        account = _split_service_account(user)
        found.append(Request("ServiceAccount", account[1], account[0]) if account else Request("User", user))
    named = [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in headers]
    groups = [Request("Group", text) for name, text in named if name == GROUP_HEADER]
    extras = [
        Request("UserExtra", text, extra_key=unquote(name[len(EXTRA_PREFIX) :]))
        for name, text in named
        if name.startswith(EXTRA_PREFIX)
    ]
    found += groups + extras
    uid = next((v.decode("latin-1") for k, v in headers if k.lower() == UID_HEADER.encode()), "")
    if uid:
        found.append(Request("UID", uid))
    if (groups or extras or uid) and not user:
        listed = " ".join(r.go_value() for r in found)
        raise WithoutUserError(f"requested [{listed}] without impersonating a user")
    return found


#: responsewriters' sanitizer: no error text that looks like HTML.
_SANITIZE = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def internal_error_body(request_uri: bytes, err: Exception) -> bytes:
    """responsewriters.InternalError's body (http.Error: the text and a newline), for the
    request-target `request_uri` as the client sent it."""
    quoted = re.sub(
        r"\\udc([89a-f][0-9a-f])", r"\\x\1", go_quote(request_uri.decode("utf-8", "surrogateescape"))
    )
    return (f"Internal Server Error: {quoted}: {err}".translate(_SANITIZE) + "\n").encode()


_RESOURCES = {"User": "users", "ServiceAccount": "serviceaccounts", "Group": "groups", "UID": "uids"}


def impersonate(user: UserInfo, headers: Sequence[tuple[bytes, bytes]], authorizer: Authorizer) -> UserInfo:
    """The user the request acts as: `user` itself without impersonation headers, else the
    impersonated one once `user` may impersonate each part (a 403 StatusError when not)."""
    wanted = requests_of(headers)
    if not wanted:
        return user
    groups_specified = any(r.kind == "Group" for r in wanted)
    name, uid = "", ""
    groups: list[str] = []
    extra: dict[str, list[str]] = {}
    for request in wanted:
        group, subresource = "", ""
        if request.kind == "UserExtra":
            resource, subresource, group = "userextras", request.extra_key, AUTHENTICATION_GROUP
            extra.setdefault(request.extra_key, []).append(request.name)
        else:
            resource = _RESOURCES[request.kind]
            if request.kind == "UID":
                group, uid = AUTHENTICATION_GROUP, request.name
            elif request.kind == "ServiceAccount":
                name = f"{SERVICE_ACCOUNT_PREFIX}{request.namespace}:{request.name}"
                if not groups_specified:
                    groups = ["system:serviceaccounts", f"system:serviceaccounts:{request.namespace}"]
            elif request.kind == "User":
                name = request.name
            else:
                groups.append(request.name)
        acting = RequestInfo(
            True, "", "impersonate", "apis", group, "", request.namespace, resource, subresource, request.name
        )
        allowed, reason = authorizer.authorize(user, acting)
        if not allowed:
            raise forbidden(user, acting, reason)
    if name != ANONYMOUS_USER:
        if not any(g in (AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP) for g in groups):
            groups.append(AUTHENTICATED_GROUP)
    elif UNAUTHENTICATED_GROUP not in groups:
        groups.append(UNAUTHENTICATED_GROUP)
    return UserInfo(name, uid, tuple(groups), tuple((k, tuple(v)) for k, v in extra.items()))
