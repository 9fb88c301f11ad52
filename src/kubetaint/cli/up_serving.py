"""How `kubetaint up` serves: kube-apiserver's secure-serving and authentication/authorization
flags, the PKI in DATA_DIR/pki (`apiserver.pki`) and the kubeconfig that trusts it.

By default the server speaks HTTPS with a serving certificate signed by the cluster CA, verifies
client certificates against that CA (`--client-ca-file`), reads bearer tokens from the generated
`pki/tokens.csv` (`--token-auth-file`), keeps kube-apiserver's `--anonymous-auth=true` and
authorizes with `--authorization-mode=Node,RBAC`. The kubeconfig carries the CA and the admin
credentials (client certificate and token of `kubernetes-admin` in `system:masters`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import yaml
from click.core import ParameterSource

from kubetaint.apiserver.authn import TokenFileError, load_token_file
from kubetaint.apiserver.modes import MODES, UNSUPPORTED_MODES
from kubetaint.apiserver.pki import Pki, PkiError, ensure_pki, write_file
from kubetaint.apiserver.security import SecurityConfig, ServingConfigError
from kubetaint.apiserver.server import serving_options
from kubetaint.apiserver.tls import TLSFiles, kubeconfig

PKI_DIR = "pki"


@dataclass(frozen=True)
class Serving:
    """What the server serves with and what the kubeconfig carries."""

    security: SecurityConfig
    tls: TLSFiles | None
    ca_pem: bytes | None
    client_cert_pem: bytes | None
    client_key_pem: bytes | None
    token: str | None

    @property
    def scheme(self) -> str:
        return "https" if self.tls is not None else "http"

    def credentials_note(self) -> str:
        """What the kubeconfig lacks, for the banner ("" when it carries an admin credential)."""
        if self.tls is None or self.token is not None or self.client_cert_pem is not None:
            return ""
        return " (no admin credential: --client-ca-file and --token-auth-file are yours; add a user of them)"

    def summary(self) -> str:
        """One line for the banner: what protects the server."""
        if self.tls is None:
            return "plain HTTP, no authentication or authorization (--insecure-serving)"
        config = self.security
        anonymous = str(config.anonymous()).lower()
        return (
            f"HTTPS; authentication: client certificates, tokens, --anonymous-auth={anonymous}; "
            f"--authorization-mode={','.join(config.modes())}"
        )


def _modes(value: str) -> tuple[str, ...]:
    """--authorization-mode as kube-apiserver validates it (BuiltInAuthorizationOptions.Validate)."""
    modes = tuple(value.split(",")) if value else ()
    if not modes:
        raise ServingConfigError("at least one authorization-mode must be passed")
    for mode in modes:
        if mode in UNSUPPORTED_MODES:
            raise ServingConfigError(
                f'authorization-mode "{mode}" is not supported by kubetaint (supported: {", ".join(MODES)})'
            )
        if mode not in MODES:
            raise ServingConfigError(f'authorization-mode "{mode}" is not a valid mode')
    if len(set(modes)) != len(modes):
        quoted = " ".join(f'"{mode}"' for mode in modes)
        raise ServingConfigError(f"authorization-mode [{quoted}] has mode specified more than once")
    return modes


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ServingConfigError(f"cannot read {path}: {exc.strerror or exc}") from None


#: The flags that configure authentication and authorization (none applies to --insecure-serving).
AUTH_FLAGS = {
    "tls_cert_file": "--tls-cert-file",
    "tls_private_key_file": "--tls-private-key-file",
    "client_ca_file": "--client-ca-file",
    "token_auth_file": "--token-auth-file",
    "anonymous_auth": "--anonymous-auth",
    "authorization_mode": "--authorization-mode",
}


def _given(options: dict[str, Any]) -> list[str]:
    """The AUTH_FLAGS set on the command line (or the environment), in flag order."""
    context = click.get_current_context(silent=True)
    if context is None:
        return [flag for name, flag in AUTH_FLAGS.items() if options.get(name) is not None]
    given = []
    for name, flag in AUTH_FLAGS.items():
        source = context.get_parameter_source(name)
        if source is not None and source not in (ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP):
            given.append(flag)
    return given


def _insecure(options: dict[str, Any], host: str) -> Serving:
    """--insecure-serving: plain HTTP on a loopback address, as kube-apiserver's former insecure
    port served it: no authentication and no authorization (kubectl sends no credentials over
    plain HTTP: clientcmd applies a user's credentials only to TLS transports)."""
    given = _given(options)
    if given:
        raise ServingConfigError(
            f"--insecure-serving serves plain HTTP without authentication or authorization: "
            f"it cannot be used with {given[0]}"
        )
    security = SecurityConfig(bind_address=host, anonymous_auth=True, authorization_mode=("AlwaysAllow",))
    serving_options(host, None, security)  # refuses a non-loopback address
    return Serving(security, None, None, None, None, None)


def prepare_serving(options: dict[str, Any], data_dir: Path, host: str) -> Serving:
    """The serving configuration of `up`'s flags, after making or completing the PKI.
    Raises ServingConfigError or PkiError (one line) for anything wrong."""
    if options["insecure_serving"]:
        return _insecure(options, host)
    cert_file: Path | None = options["tls_cert_file"]
    key_file: Path | None = options["tls_private_key_file"]
    client_ca: Path | None = options["client_ca_file"]
    token_file: Path | None = options["token_auth_file"]
    if (cert_file is None) != (key_file is None):
        raise ServingConfigError("--tls-cert-file and --tls-private-key-file must be given together")
    modes = _modes(str(options["authorization_mode"]))
    if token_file is not None:
        try:
            load_token_file(token_file)
        except TokenFileError as exc:
            raise ServingConfigError(str(exc)) from None
    pki: Pki = ensure_pki(data_dir / PKI_DIR, host)
    if cert_file is not None and key_file is not None:
        tls = TLSFiles(str(cert_file), str(key_file))
    else:
        tls = TLSFiles(str(pki.serving_cert), str(pki.serving_key))
    security = SecurityConfig(
        bind_address=host,
        token_auth_file=str(token_file or pki.token_file),
        anonymous_auth=bool(options["anonymous_auth"]),
        authorization_mode=modes,
        client_ca_file=str(client_ca or pki.ca_cert),
    )
    serving_options(host, tls, security)  # check_serving and a trial load of every file
    own_ca = client_ca is None
    return Serving(
        security=security,
        tls=tls,
        ca_pem=_read(Path(tls.cert_file)) if cert_file else _read(pki.ca_cert),
        client_cert_pem=_read(pki.admin_cert) if own_ca else None,
        client_key_pem=_read(pki.admin_key) if own_ca else None,
        token=pki.admin_token if token_file is None else None,
    )


def write_kubeconfig(path: Path, server: str, serving: Serving) -> None:
    """The kubeconfig for `server` (0600: it holds the admin credentials)."""
    document = kubeconfig(
        server,
        ca_pem=serving.ca_pem,
        token=serving.token,
        client_cert_pem=serving.client_cert_pem,
        client_key_pem=serving.client_key_pem,
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PkiError(f"cannot create the directory {path.parent}: {exc.strerror or exc}") from None
    write_file(path, yaml.safe_dump(document, sort_keys=False).encode())


__all__ = ["Serving", "prepare_serving", "write_kubeconfig"]
