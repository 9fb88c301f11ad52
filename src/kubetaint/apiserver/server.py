"""Running the app under uvicorn: `serve()` for `kubetaint up`, and `BackgroundServer` (a
uvicorn server on a pre-bound socket in a thread) for tests and embedding. Both serve HTTPS
when given `tls` files, and refuse a non-loopback address without TLS and authentication
(`security.check_serving`)."""

from __future__ import annotations

import asyncio
import socket
import threading

import uvicorn
from starlette.applications import Starlette

from kubetaint.apiserver.security import SecurityConfig, check_serving
from kubetaint.apiserver.tls import TLSFiles


def _config(app: Starlette, host: str, port: int, tls: TLSFiles | None) -> uvicorn.Config:
    check_serving(host, tls, getattr(app.state, "security", None) or SecurityConfig())
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=1,
        ssl_certfile=tls.cert_file if tls else None,
        ssl_keyfile=tls.key_file if tls else None,
    )


def serve(app: Starlette, host: str = "127.0.0.1", port: int = 6443, *, tls: TLSFiles | None = None) -> None:
    """Serve until interrupted (uvicorn handles SIGINT/SIGTERM). Raises
    `security.ServingConfigError` for an unsafe configuration before binding."""
    uvicorn.Server(_config(app, host, port, tls)).run()


class BackgroundServer:
    """A uvicorn server in a daemon thread on 127.0.0.1 and a free port (bound before start,
    so `url` is valid at once). Use as a context manager."""

    def __init__(
        self, app: Starlette, host: str = "127.0.0.1", port: int = 0, *, tls: TLSFiles | None = None
    ) -> None:
        config = _config(app, host, port, tls)
        self.scheme = "https" if tls else "http"
        # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets whose proto says TCP,
        # and without it every response waits ~40 ms (Nagle + delayed ACK) between headers and body.
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
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
