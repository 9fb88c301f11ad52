"""Running the app under uvicorn: `serve()` for `kubetaint up`, and `BackgroundServer` (a
uvicorn server on a pre-bound socket in a thread) for tests and embedding."""

from __future__ import annotations

import asyncio
import socket
import threading

import uvicorn
from starlette.applications import Starlette


def _config(app: Starlette, host: str, port: int) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=1,
    )


def serve(app: Starlette, host: str = "127.0.0.1", port: int = 6443) -> None:
    """Serve until interrupted (uvicorn handles SIGINT/SIGTERM)."""
    uvicorn.Server(_config(app, host, port)).run()


class BackgroundServer:
    """A uvicorn server in a daemon thread on 127.0.0.1 and a free port (bound before start,
    so `url` is valid at once). Use as a context manager."""

    def __init__(self, app: Starlette, host: str = "127.0.0.1", port: int = 0) -> None:
        # proto=IPPROTO_TCP so asyncio sets TCP_NODELAY on accepted sockets (no 40 ms Nagle stalls).
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((host, port))
        self.host, self.port = self._sock.getsockname()[:2]
        self._server = uvicorn.Server(_config(app, self.host, self.port))
        self._thread = threading.Thread(target=self._run, name="kubetaint-apiserver", daemon=True)
        self._ready = threading.Event()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

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
