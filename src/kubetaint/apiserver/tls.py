"""The serving certificate files (`--tls-cert-file/--tls-private-key-file`, or those of the
PKI `kubetaint up` makes: kubetaint.apiserver.pki) and the kubeconfig that trusts them."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class TLSFiles:
    cert_file: str
    key_file: str


def kubeconfig(
    server: str,
    *,
    ca_pem: bytes | None = None,
    token: str | None = None,
    client_cert_pem: bytes | None = None,
    client_key_pem: bytes | None = None,
) -> dict[str, Any]:
    """A one-context kubeconfig for `server`, trusting `ca_pem` and sending `token` and the
    client certificate `client_cert_pem`/`client_key_pem`."""
    cluster: dict[str, Any] = {"server": server}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    user: dict[str, Any] = {}
    if client_cert_pem is not None and client_key_pem is not None:
        user["client-certificate-data"] = base64.b64encode(client_cert_pem).decode()
        user["client-key-data"] = base64.b64encode(client_key_pem).decode()
    if token:
        user["token"] = token
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "kubetaint", "cluster": cluster}],
        "contexts": [{"name": "kubetaint", "context": {"cluster": "kubetaint", "user": "kubetaint"}}],
        "users": [{"name": "kubetaint", "user": user}],
        "current-context": "kubetaint",
    }
