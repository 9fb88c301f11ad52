"""Reading a kubeconfig into what an HTTP client needs: the server URL, TLS trust (CA data or
file, or insecure-skip-tls-verify), a bearer token (inline or tokenFile) and a client
certificate (files or inline data) — the subset of client-go's clientcmd the components use.

Every problem is a `StoreError` with a one-line message naming the file and the field.
"""

from __future__ import annotations

import base64
import binascii
import os
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kubetaint.store.interface import StoreError


@dataclass(frozen=True)
class Connection:
    """Where and how to reach one API server."""

    server: str
    token: str | None = None
    ca_pem: str | None = None
    insecure: bool = False
    client_cert: tuple[str, str] | None = None
    #: (certificate PEM, key PEM) of `client-certificate-data`/`client-key-data`.
    client_cert_data: tuple[str, str] | None = None

    def ssl_context(self) -> ssl.SSLContext | bool:
        """httpx's `verify=`: a context trusting the CA (and presenting the client cert)."""
        if not self.server.startswith("https://"):
            return True
        if self.insecure:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        else:
            ctx = (
                ssl.create_default_context(cadata=self.ca_pem)
                if self.ca_pem
                else ssl.create_default_context()
            )
        if self.client_cert is not None:
            ctx.load_cert_chain(*self.client_cert)
        elif self.client_cert_data is not None:
            _load_cert_data(ctx, *self.client_cert_data)
        return ctx

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}


def _load_cert_data(ctx: ssl.SSLContext, cert_pem: str, key_pem: str) -> None:
    """ssl loads certificates from files only: both PEMs go through files in a fresh 0700
    directory, removed at once."""
    with tempfile.TemporaryDirectory(prefix="kubetaint-") as folder:
        cert, key = os.path.join(folder, "client.crt"), os.path.join(folder, "client.key")
        for path, text in ((cert, cert_pem), (key, key_pem)):
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "w") as file:
                file.write(text)
        ctx.load_cert_chain(cert, key)


def _data(value: Any, field: str, where: str) -> str:
    try:
        return base64.b64decode(str(value), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        raise StoreError(f"{where}: {field} is not base64 PEM") from None


def _named(doc: dict[str, Any], section: str, name: str, where: str) -> dict[str, Any]:
    for entry in doc.get(section) or []:
        if isinstance(entry, dict) and entry.get("name") == name:
            body = entry.get(section[:-1]) or {}
            if isinstance(body, dict):
                return body
    raise StoreError(f"{where}: no {section[:-1]} named {name!r}")


def _read(path: Path, what: str, where: str) -> str:
    try:
        return path.read_text()
    except OSError as err:
        raise StoreError(f"{where}: cannot read the {what} {path}: {err.strerror}") from None


def _relative(base: Path, value: str) -> Path:
    path = Path(value).expanduser()
    return path if path.is_absolute() else base.parent / path


def load_kubeconfig(path: str | Path, context: str | None = None) -> Connection:
    """The connection of `context` (default: current-context) in the kubeconfig at `path`."""
    file = Path(path).expanduser()
    where = str(file)
    try:
        doc = yaml.safe_load(_read(file, "kubeconfig", where))
    except yaml.YAMLError as err:
        raise StoreError(f"{where}: not a kubeconfig: {str(err).splitlines()[0]}") from None
    if not isinstance(doc, dict):
        raise StoreError(f"{where}: not a kubeconfig (expected a mapping with clusters, users, contexts)")
    name = context or doc.get("current-context")
    if not name:
        raise StoreError(f"{where}: no current-context (pass --context)")
    ctx = _named(doc, "contexts", str(name), where)
    cluster = _named(doc, "clusters", str(ctx.get("cluster") or ""), where)
    user = _named(doc, "users", str(ctx.get("user") or ""), where) if ctx.get("user") else {}
    server = str(cluster.get("server") or "").rstrip("/")
    if not server.startswith(("http://", "https://")):
        raise StoreError(f"{where}: cluster {ctx.get('cluster')!r} has no http(s) server URL")
    ca_pem = None
    if cluster.get("certificate-authority-data"):
        ca_pem = _data(cluster["certificate-authority-data"], "certificate-authority-data", where)
    elif cluster.get("certificate-authority"):
        ca_pem = _read(_relative(file, str(cluster["certificate-authority"])), "CA file", where)
    token = user.get("token")
    if not token and user.get("tokenFile"):
        token = _read(_relative(file, str(user["tokenFile"])), "token file", where).strip()
    cert = cert_data = None
    if user.get("client-certificate-data") and user.get("client-key-data"):
        cert_data = (
            _data(user["client-certificate-data"], "client-certificate-data", where),
            _data(user["client-key-data"], "client-key-data", where),
        )
    elif user.get("client-certificate") and user.get("client-key"):
        cert = (
            str(_relative(file, str(user["client-certificate"]))),
            str(_relative(file, str(user["client-key"]))),
        )
    return Connection(
        server=server,
        token=str(token) if token else None,
        ca_pem=ca_pem,
        insecure=bool(cluster.get("insecure-skip-tls-verify")),
        client_cert=cert,
        client_cert_data=cert_data,
    )
