"""A private etcd for tests: free ports, a temporary data dir, stopped by its PID."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx

ETCD_BINARY = shutil.which("etcd") or ("/usr/bin/etcd" if os.path.exists("/usr/bin/etcd") else None)
SKIP_REASON = "etcd binary not found (run .ci/install-etcd: apt-get install -y etcd-server)"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class EtcdServer:
    """One etcd member listening on 127.0.0.1; `url` is its client URL."""

    def __init__(self, data_dir: Path) -> None:
        assert ETCD_BINARY is not None, SKIP_REASON
        self.data_dir = data_dir
        self.client_port, self.peer_port = free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.client_port}"
        peer = f"http://127.0.0.1:{self.peer_port}"
        self._log = open(data_dir / "etcd.log", "wb")  # noqa: SIM115 (closed in stop)
        self._command = [
            ETCD_BINARY,
            "--name=test",
            f"--data-dir={data_dir / 'data'}",
            f"--listen-client-urls={self.url}",
            f"--advertise-client-urls={self.url}",
            f"--listen-peer-urls={peer}",
            f"--initial-advertise-peer-urls={peer}",
            f"--initial-cluster=test={peer}",
            "--log-level=error",
            "--logger=zap",
        ]
        self.process = subprocess.Popen(self._command, stdout=self._log, stderr=subprocess.STDOUT)
        self._wait_healthy()

    def pause(self) -> None:
        """SIGSTOP: etcd keeps its connections but answers nothing (a hung member)."""
        os.kill(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.process.pid, signal.SIGCONT)

    def kill(self) -> None:
        """SIGKILL: connections are refused until `restart()`."""
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def restart(self) -> None:
        """Start again on the same ports and data (after `kill()`)."""
        self.process = subprocess.Popen(self._command, stdout=self._log, stderr=subprocess.STDOUT)
        self._wait_healthy()

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"etcd exited: {(self.data_dir / 'etcd.log').read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/health", timeout=1).json().get("health") == "true":
                    return
            except (httpx.HTTPError, ValueError):
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("etcd did not become healthy within 20 s")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGCONT)  # a paused etcd cannot take SIGTERM
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self._log.close()
