"""Authentication: client certificates verified against `--client-ca-file`, static bearer tokens
from a `--token-auth-file` and the anonymous user (mirrors
apiserver/pkg/authentication/request/x509/x509.go CommonNameUserConversion,
apiserver/plugin/pkg/authenticator/token/tokenfile/tokenfile.go,
apiserver/pkg/authentication/request/bearertoken/bearertoken.go,
apiserver/pkg/authentication/request/anonymous and group.AuthenticatedGroupAdder).

The user of the request being served is kept in `CURRENT_USER` (a context variable the security
middleware sets) so that admission (NodeRestriction) sees who is writing.
"""

from __future__ import annotations

import csv
import io
from contextvars import ContextVar
from pathlib import Path

from kubetaint.api import errors
from kubetaint.api.user import (
    ANONYMOUS_USER,
    AUTHENTICATED_GROUP,
    MASTERS_GROUP,
    NODE_USER_PREFIX,
    NODES_GROUP,
    UNAUTHENTICATED_GROUP,
    UserInfo,
)
from kubetaint.speed.memo import Memo

__all__ = [
    "ANONYMOUS",
    "ANONYMOUS_USER",
    "AUTHENTICATED_GROUP",
    "CURRENT_USER",
    "MASTERS_GROUP",
    "NODES_GROUP",
    "NODE_USER_PREFIX",
    "UNAUTHENTICATED_GROUP",
    "Authenticator",
    "TokenFileError",
    "UserInfo",
    "bearer_token",
    "certificate_user",
    "load_token_file",
    "parse_token_file",
    "unauthorized",
]

ANONYMOUS = UserInfo(ANONYMOUS_USER, "", (UNAUTHENTICATED_GROUP,))
CURRENT_USER: ContextVar[UserInfo | None] = ContextVar("kubetaint_current_user", default=None)


class TokenFileError(Exception):
    """A token file that cannot be read or parsed; the message is meant for users."""


def parse_token_file(text: str, path: str = "") -> dict[str, UserInfo]:
    """Parse token-file CSV: `token,user,uid[,"group1,group2"]` per line, extra columns ignored.

    As upstream: fewer than 3 columns is an error; a record with an empty token is skipped; a
    duplicate token replaces the earlier record; groups split on commas as written.
    """
    tokens: dict[str, UserInfo] = {}
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        for record in reader:
            if not record or record == [""]:
                continue  # Go's csv reader skips empty lines
            if len(record) < 3:
                raise TokenFileError(
                    f"token file '{path}' must have at least 3 columns (token, user name, user uid), "
                    f"found {len(record)}"
                )
            token, name, uid = record[0], record[1], record[2]
            if not token:
                continue
            groups = tuple(record[3].split(",")) if len(record) >= 4 else ()
            tokens[token] = UserInfo(name, uid, groups)
    except csv.Error as exc:
        raise TokenFileError(f"token file '{path}': parse error on line {reader.line_num}: {exc}") from None
    return tokens


def load_token_file(path: str | Path) -> dict[str, UserInfo]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TokenFileError(f"cannot read token file '{path}': {exc}") from None
    return parse_token_file(text, str(path))


def unauthorized() -> errors.StatusError:
    """responsewriters.Unauthorized: `apierrors.NewUnauthorized("Unauthorized")`."""
    return errors.StatusError(401, "Unauthorized", "Unauthorized")


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header, None when there is none
    (a missing header, another scheme or an empty token all mean "no bearer token")."""
    auth = (authorization or "").strip()
    if not auth:
        return None
    parts = auth.split(" ", 2)
    if len(parts) < 2 or parts[0].lower() != "bearer" or not parts[1]:
        return None
    return parts[1]


def certificate_user(der: bytes) -> UserInfo | None:
    """x509.CommonNameUserConversion: the subject's common name is the user name and its
    organizations are the groups; a certificate without a common name authenticates nobody.
    The certificate has already been verified against the client CA by the TLS handshake."""
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    try:
        subject = x509.load_der_x509_certificate(der).subject
    except ValueError:
        return None
    names = [str(a.value) for a in subject.get_attributes_for_oid(NameOID.COMMON_NAME)]
    if not names or not names[0]:
        return None
    groups = tuple(str(a.value) for a in subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME))
    return UserInfo(names[0], "", groups)


#: Parsed client certificates kept per authenticator (a connection presents one per request).
_CERTIFICATE_CACHE_SIZE = 1024


class Authenticator:
    """Client certificates, then bearer tokens, then (when enabled) the anonymous user, in
    kube-apiserver's union order.

    A bearer token that matches no record is a failure even when anonymous access is on
    (union.NewFailOnError). Authenticated users get `system:authenticated` added.
    """

    def __init__(self, tokens: dict[str, UserInfo], *, anonymous: bool) -> None:
        self.tokens = tokens
        self.anonymous = anonymous
        #: DER certificate -> (its user, or None when it names none)
        self._certificates: Memo[bytes, tuple[UserInfo | None]] = Memo(
            "apiserver.authn.certificates", _CERTIFICATE_CACHE_SIZE
        )

    def authenticate(self, authorization: str | None, certificate: bytes | None = None) -> UserInfo | None:
        """The request's user, or None for a 401. `certificate` is the DER client certificate
        the TLS handshake verified (None when the client presented none)."""
        if certificate:
            user = self._certificate_user(certificate)
            if user is not None:
                return _authenticated(user)
        token = bearer_token(authorization)
        if token is None:
            return ANONYMOUS if self.anonymous else None
        user = self.tokens.get(token)
        if user is None:
            return None
        return _authenticated(user)

    def _certificate_user(self, der: bytes) -> UserInfo | None:
        found = self._certificates.get(der)
        if found is None:
            found = self._certificates.put(der, (certificate_user(der),))
        return found[0]


def _authenticated(user: UserInfo) -> UserInfo:
    """group.AuthenticatedGroupAdder: `system:authenticated` unless already present."""
    if AUTHENTICATED_GROUP in user.groups:
        return user
    return UserInfo(user.name, user.uid, (*user.groups, AUTHENTICATED_GROUP))
