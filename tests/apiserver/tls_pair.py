"""The serving certificate `kubetaint up` makes (its PKI in a folder), its CA, and a kubeconfig
that trusts it."""

from __future__ import annotations

from pathlib import Path

import yaml

from kubetaint.apiserver.pki import CA_CERT, ensure_pki
from kubetaint.apiserver.tls import TLSFiles, kubeconfig


def serving_pair(directory: Path) -> TLSFiles:
    pki = ensure_pki(directory, "127.0.0.1")
    return TLSFiles(str(pki.serving_cert), str(pki.serving_key))


def ca_of(tls: TLSFiles) -> bytes:
    """The PEM of the CA that signed `tls` (the PKI's CA certificate next to it)."""
    return (Path(tls.cert_file).parent / CA_CERT).read_bytes()


def kubeconfig_yaml(server: str, *, ca_pem: bytes, token: str) -> str:
    return yaml.safe_dump(kubeconfig(server, ca_pem=ca_pem, token=token), sort_keys=False)
