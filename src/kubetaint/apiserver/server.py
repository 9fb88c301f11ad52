"""Running the app under uvicorn: `serve()`, and `BackgroundServer` (a uvicorn server on a
pre-bound socket in a thread) for tests and embedding; `serving_options` is what `kubetaint up`
(`live.serve_forever`) passes too. All serve HTTPS when given `tls` files, request client
certificates verified against the `--client-ca-file` of the app's SecurityConfig, and refuse a
non-loopback address without TLS and authentication (`security.check_serving`)."""

from __future__ import annotations

import asyncio
import socket
import ssl
import threading
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from kubetaint.apiserver.app import APIServerApp
from kubetaint.apiserver.security import PEER_CERTIFICATE, SecurityConfig, ServingConfigError, check_serving
from kubetaint.apiserver.serving import ListeningSocket, connection_options
from kubetaint.apiserver.tls import TLSFiles


class PeerCertificateProtocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol that hands the connection's TLS client certificate (DER,
    verified by the handshake) to every request of the connection in `scope["state"]`."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        ssl_object = transport.get_extra_info("ssl_object")
        certificate = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
        if certificate:
            self.app_state = {**self.app_state, PEER_CERTIFICATE: certificate}


def serving_options(host: str, tls: TLSFiles | None, config: SecurityConfig) -> dict[str, Any]:
    """uvicorn.Config's TLS options for serving `config` on `host`, after `check_serving` and a
    trial load of every file (ServingConfigError, one line, for any problem)."""
    check_serving(host, tls, config)
    options: dict[str, Any] = {}
    if tls is not None:
        _trial_context(tls, config.client_ca_file)
        options = {
            "ssl_certfile": tls.cert_file,
            "ssl_keyfile": tls.key_file,
            "http": PeerCertificateProtocol,
        }
        if config.client_ca_file:
            options["ssl_ca_certs"] = config.client_ca_file
            options["ssl_cert_reqs"] = ssl.CERT_OPTIONAL
    # timeouts and the connection cap (`serving`), on whichever HTTP protocol serves
    return {**options, **connection_options(config.limits, options.get("http", H11Protocol))}


def _trial_context(tls: TLSFiles, client_ca_file: str | None) -> None:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(tls.cert_file, tls.key_file)
    except (OSError, ssl.SSLError) as exc:
        raise ServingConfigError(
            f"cannot load --tls-cert-file '{tls.cert_file}' with --tls-private-key-file "
            f"'{tls.key_file}': {_reason(exc)}"
        ) from None
    if client_ca_file:
        try:
            context.load_verify_locations(cafile=client_ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise ServingConfigError(
                f"cannot load --client-ca-file '{client_ca_file}': {_reason(exc)}"
            ) from None


def _reason(exc: OSError) -> str:
    if isinstance(exc, ssl.SSLError):
        return str(exc.reason or exc).lower().replace("_", " ")
    return str(exc.strerror or exc)


def _config(app: APIServerApp, host: str, port: int, tls: TLSFiles | None) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=1,
        **serving_options(host, tls, app.security),
    )


def serve(
    app: APIServerApp, host: str = "127.0.0.1", port: int = 6443, *, tls: TLSFiles | None = None
) -> None:
    """Serve until interrupted (uvicorn handles SIGINT/SIGTERM). Raises
    `security.ServingConfigError` for an unsafe configuration before binding."""
    uvicorn.Server(_config(app, host, port, tls)).run()


class BackgroundServer:
    """A uvicorn server in a daemon thread on 127.0.0.1 and a free port (bound before start,
    so `url` is valid at once). Use as a context manager."""

    def __init__(
        self, app: APIServerApp, host: str = "127.0.0.1", port: int = 0, *, tls: TLSFiles | None = None
    ) -> None:
        config = _config(app, host, port, tls)
        self.scheme = "https" if tls else "http"
        # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets whose proto says TCP,
        # and without it every response waits ~40 ms (Nagle + delayed ACK) between headers and body.
        self._sock = ListeningSocket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((host, port))
        self.host, self.port = self._sock.getsockname()[:2]
        config.port = self.port
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, name="kubetaint-apiserver", daemon=True)
        self._ready = threading.Event()

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"

    def _run(self) -> None:
        asyncio.run(self._server.serve(sockets=[self._sock]))

    def start(self) -> BackgroundServer:
        self._thread.start()
        while not self._server.started and self._thread.is_alive():
            self._ready.wait(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._server.force_exit = True
        self._thread.join(5)
        self._sock.close()

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
