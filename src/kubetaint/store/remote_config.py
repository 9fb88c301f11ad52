"""Reading a kubeconfig into what an HTTP client needs, as kubectl (client-go's clientcmd) does:
the server URL, TLS trust (CA data or file, or insecure-skip-tls-verify), a bearer token (inline
or tokenFile), a client certificate (files or inline data), or credentials from an exec plugin
(client.authentication.k8s.io/v1 and v1beta1 ExecCredential, as EKS, GKE and AKS kubeconfigs
use), a username and password (basic authentication), impersonation (`as`, `as-uid`,
`as-groups`, `as-user-extra`), the cluster's `proxy-url` (http or https), and the context's
namespace. A field kubetaint cannot honour (`tls-server-name`, an `auth-provider`, a socks5 proxy)
is an error, never ignored. Without a path, `$KUBECONFIG` (files joined by `:`, merged:
the first file to set a value wins) or `~/.kube/config` is read.

Every problem is a `StoreError` with a one-line message naming the file and the field.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import ssl
import subprocess
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
    #: the context's namespace ("default" when it names none)
    namespace: str = "default"
    #: the cluster's `proxy-url` (None: the environment's HTTP(S)_PROXY, as client-go)
    proxy: str | None = None
    #: (username, password) for basic authentication, when there is no token
    basic: tuple[str, str] | None = None
    #: the Impersonate-* headers of the user's `as`, `as-uid`, `as-groups` and `as-user-extra`
    impersonate: tuple[tuple[str, str], ...] = ()

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

    def headers(self) -> list[tuple[str, str]]:
        """The credential and impersonation headers of every request (a name may repeat:
        one Impersonate-Group header per group)."""
        headers = list(self.impersonate)
        if self.token:
            headers.append(("Authorization", f"Bearer {self.token}"))
        elif self.basic is not None:
            pair = f"{self.basic[0]}:{self.basic[1]}".encode()
            headers.append(("Authorization", "Basic " + base64.b64encode(pair).decode("ascii")))
        return headers


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
    if section == "contexts":  # clientcmd's errContextNotFound
        raise StoreError(f"{where}: context was not found for specified context: {name}")
    raise StoreError(f"{where}: no {section[:-1]} named {name!r}")


def _read(path: Path, what: str, where: str) -> str:
    try:
        return path.read_text()
    except OSError as err:
        raise StoreError(
            f"{'' if where == str(path) else where + ': '}cannot read the {what} {path}: {err.strerror}"
        ) from None


def _relative(base: Path, value: str) -> Path:
    path = Path(value).expanduser()
    return path if path.is_absolute() else base.parent / path


EXEC_API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
#: How long an exec plugin may take to answer.
EXEC_TIMEOUT = 60.0


def kubeconfig_paths(path: str | Path | None) -> list[Path]:
    """The files to read: `path`, else $KUBECONFIG's, else ~/.kube/config."""
    if path:
        return [Path(path).expanduser()]
    listed = [p for p in os.environ.get("KUBECONFIG", "").split(os.pathsep) if p]
    if listed:
        return [Path(p).expanduser() for p in listed]
    return [Path("~/.kube/config").expanduser()]


def _load_doc(file: Path, where: str, required: bool) -> dict[str, Any]:
    if not required and not file.exists():
        return {}
    try:
        doc = yaml.safe_load(_read(file, "kubeconfig", where))
    except yaml.YAMLError as err:
        raise StoreError(f"{where}: not a kubeconfig: {str(err).splitlines()[0]}") from None
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise StoreError(f"{where}: not a kubeconfig (expected a mapping with clusters, users, contexts)")
    return doc


def _merged(files: list[Path]) -> tuple[dict[str, Any], dict[str, Path]]:
    """The files merged as clientcmd merges them (the first to set a name or value wins), with
    the file each named entry came from (relative paths resolve against it)."""
    merged: dict[str, Any] = {"clusters": [], "users": [], "contexts": []}
    origin: dict[str, Path] = {}
    for file in files:
        doc = _load_doc(file, str(file), required=len(files) == 1)
        if doc.get("current-context") and not merged.get("current-context"):
            merged["current-context"] = doc["current-context"]
        for section in ("clusters", "users", "contexts"):
            if not isinstance(doc.get(section) or [], list):
                raise StoreError(f"{file}: not a kubeconfig: {section} is not a list")
            for entry in doc.get(section) or []:
                if not isinstance(entry, dict):
                    continue
                key = f"{section}/{entry.get('name')}"
                if key not in origin:
                    origin[key] = file
                    merged[section].append(entry)
    return merged, origin


def load_kubeconfig(path: str | Path | None = None, context: str | None = None) -> Connection:
    """The connection of `context` (default: current-context) in the kubeconfig at `path`
    (default: $KUBECONFIG, else ~/.kube/config)."""
    files = kubeconfig_paths(path)
    where = ":".join(str(f) for f in files)
    doc, origin = _merged(files)
    if not any(doc[section] for section in ("clusters", "users", "contexts")) and len(files) > 1:
        raise StoreError(f"{where}: no kubeconfig found")
    name = context or doc.get("current-context")
    if not name:
        raise StoreError(f"{where}: no current-context (pass --context)")
    ctx = _named(doc, "contexts", str(name), where)
    cluster_name = str(ctx.get("cluster") or "")
    cluster = _named(doc, "clusters", cluster_name, where)
    user_name = str(ctx.get("user") or "")
    user = _named(doc, "users", user_name, where) if user_name else {}
    cluster_file = origin.get(f"clusters/{cluster_name}", files[0])
    user_file = origin.get(f"users/{user_name}", files[0])
    server = str(cluster.get("server") or "").rstrip("/")
    if not server.startswith(("http://", "https://")):
        raise StoreError(f"{where}: cluster {ctx.get('cluster')!r} has no http(s) server URL")
    ca_pem = None
    if cluster.get("certificate-authority-data"):
        ca_pem = _data(cluster["certificate-authority-data"], "certificate-authority-data", where)
    elif cluster.get("certificate-authority"):
        ca_pem = _read(_relative(cluster_file, str(cluster["certificate-authority"])), "CA file", where)
    token = user.get("token")
    if not token and user.get("tokenFile"):
        token = _read(_relative(user_file, str(user["tokenFile"])), "token file", where).strip()
    cert = cert_data = None
    if user.get("client-certificate-data") and user.get("client-key-data"):
        cert_data = (
            _data(user["client-certificate-data"], "client-certificate-data", where),
            _data(user["client-key-data"], "client-key-data", where),
        )
    elif user.get("client-certificate") and user.get("client-key"):
        cert = (
            str(_relative(user_file, str(user["client-certificate"]))),
            str(_relative(user_file, str(user["client-key"]))),
        )
    if not token and cert is None and cert_data is None and user.get("exec") is not None:
        if not isinstance(user["exec"], dict):
            raise StoreError(f"{where}: user {user_name!r}: exec is not a mapping")
        token, cert_data = exec_credential(user["exec"], cluster, user_name, user_file, where)
    elif not token and cert is None and cert_data is None and user.get("auth-provider") is not None:
        provider = user["auth-provider"]
        named = provider.get("name") if isinstance(provider, dict) else None
        raise StoreError(
            f"{where}: user {user_name!r}: auth-provider {named or '(unnamed)'} is not supported:"
            " use an exec plugin (client.authentication.k8s.io)"
        )
    if cluster.get("tls-server-name"):
        raise StoreError(
            f"{where}: cluster {cluster_name!r}: tls-server-name is not supported: "
            "name the server by the host its certificate names"
        )
    basic = None
    if not token and user.get("username"):
        basic = (str(user["username"]), str(user.get("password") or ""))
    connection = Connection(
        server=server,
        token=str(token) if token else None,
        ca_pem=ca_pem,
        insecure=bool(cluster.get("insecure-skip-tls-verify")),
        client_cert=cert,
        client_cert_data=cert_data,
        namespace=str(ctx.get("namespace") or "default"),
        proxy=_proxy(cluster, cluster_name, where),
        basic=basic,
        impersonate=_impersonation(user, user_name, where),
    )
    try:
        connection.ssl_context()  # the CA and the client certificate load, or one line now
    except (ssl.SSLError, OSError, ValueError) as err:
        reason = _reason(err)
        raise StoreError(
            f"{where}: cannot use its certificates: {str(reason).lower().replace('_', ' ')}"
        ) from None
    return connection


def _reason(err: Exception) -> object:
    """The short reason an SSL or OS error carries ("CERT_LOAD_FAILED"), else the error itself."""
    if isinstance(err, ssl.SSLError) and err.reason:
        return err.reason
    if isinstance(err, OSError) and err.strerror:
        return err.strerror
    return err


def _proxy(cluster: dict[str, Any], name: str, where: str) -> str | None:
    """The cluster's proxy-url: http and https as client-go takes them (socks5 needs a client
    kubetaint does not ship)."""
    url = cluster.get("proxy-url")
    if not url:
        return None
    text = str(url)
    if not text.startswith(("http://", "https://")):
        scheme = text.split("://", 1)[0] if "://" in text else text
        raise StoreError(
            f"{where}: cluster {name!r}: proxy-url scheme {scheme!r} is not supported (http, https)"
        )
    return text


def _impersonation(user: dict[str, Any], name: str, where: str) -> tuple[tuple[str, str], ...]:
    """client-go's impersonation headers of `as`, `as-uid`, `as-groups` and `as-user-extra`."""
    headers: list[tuple[str, str]] = []
    if user.get("as"):
        headers.append(("Impersonate-User", str(user["as"])))
    if user.get("as-uid"):
        headers.append(("Impersonate-Uid", str(user["as-uid"])))
    groups = user.get("as-groups") or []
    extra = user.get("as-user-extra") or {}
    if not isinstance(groups, list) or not isinstance(extra, dict):
        raise StoreError(f"{where}: user {name!r}: as-groups must be a list and as-user-extra a mapping")
    headers += [("Impersonate-Group", str(group)) for group in groups]
    for key, values in extra.items():
        for value in values if isinstance(values, list) else [values]:
            headers.append((f"Impersonate-Extra-{key}", str(value)))
    return tuple(headers)


def exec_credential(
    spec: dict[str, Any], cluster: dict[str, Any], user: str, base: Path, where: str
) -> tuple[str | None, tuple[str, str] | None]:
    """Run a kubeconfig's exec plugin as client-go does (KUBERNETES_EXEC_INFO in its environment,
    no standard input) and return its token or its client certificate and key."""
    prefix = f"{where}: user {user!r}: exec plugin"
    api_version = spec.get("apiVersion")
    if api_version not in EXEC_API_VERSIONS:
        supported = ", ".join(EXEC_API_VERSIONS)
        raise StoreError(f"{prefix}: invalid apiVersion {api_version!r} (supported: {supported})")
    command = str(spec.get("command") or "")
    if not command:
        raise StoreError(f"{prefix}: command is required")
    mode = spec.get("interactiveMode")
    if api_version.endswith("/v1") and not mode:
        raise StoreError(
            f"{prefix}: interactiveMode must be specified for {user} to use exec authentication plugin"
        )
    if mode == "Always":
        raise StoreError(
            f"{prefix}: interactiveMode Always needs a terminal, and kubetaint runs plugins without one"
        )
    if os.sep in command and not os.path.isabs(command):
        command = str(_relative(base, command))
    info: dict[str, Any] = {
        "apiVersion": api_version,
        "kind": "ExecCredential",
        "spec": {"interactive": False},
    }
    if spec.get("provideClusterInfo"):
        info["spec"]["cluster"] = {
            key: value
            for key, value in (
                ("server", cluster.get("server")),
                ("certificate-authority-data", cluster.get("certificate-authority-data")),
                ("insecure-skip-tls-verify", cluster.get("insecure-skip-tls-verify")),
            )
            if value
        }
    for field in ("args", "env"):
        if not isinstance(spec.get(field) or [], list):
            raise StoreError(f"{prefix}: {field} is not a list")
    env = dict(os.environ)
    for entry in spec.get("env") or []:
        if isinstance(entry, dict) and entry.get("name"):
            env[str(entry["name"])] = str(entry.get("value") or "")
    env["KUBERNETES_EXEC_INFO"] = json.dumps(info)
    args = [command, *(str(a) for a in spec.get("args") or [])]
    hint = f" ({spec['installHint']})" if spec.get("installHint") else ""
    try:
        done = subprocess.run(
            args, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=EXEC_TIMEOUT, check=False
        )
    except FileNotFoundError:
        raise StoreError(f"{prefix}: executable {command} not found{hint}") from None
    except PermissionError:
        raise StoreError(f"{prefix}: executable {command} cannot be run (permission denied)") from None
    except subprocess.TimeoutExpired:
        raise StoreError(f"{prefix}: executable {command} did not answer within {EXEC_TIMEOUT:g}s") from None
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        tail = f": {said[-1]}" if said else ""
        raise StoreError(f"{prefix}: executable {command} failed with exit code {done.returncode}{tail}")
    try:
        credential = json.loads(done.stdout)
    except ValueError:
        raise StoreError(f"{prefix}: decoding stdout: not an ExecCredential JSON object") from None
    if not isinstance(credential, dict) or credential.get("kind") != "ExecCredential":
        raise StoreError(f"{prefix}: decoding stdout: not an ExecCredential")
    if credential.get("apiVersion") != api_version:
        got = credential.get("apiVersion")
        raise StoreError(f"{prefix}: ExecCredential apiVersion {got!r} does not match {api_version!r}")
    status = credential.get("status")
    if not isinstance(status, dict):
        raise StoreError(f"{prefix}: ExecCredential has no status")
    token = status.get("token")
    cert, key = status.get("clientCertificateData"), status.get("clientKeyData")
    if token and isinstance(token, str):
        return token, None
    if isinstance(cert, str) and isinstance(key, str) and cert and key:
        return None, (cert, key)
    raise StoreError(f"{prefix}: ExecCredential status has neither a token nor a client certificate and key")
