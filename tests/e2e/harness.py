"""Runs `python -m kubetaint up` as a subprocess on a fresh data dir and a free port, and drives
it with the real kubectl (fresh KUBECACHEDIR), the `kubetaint` CLI and the Python client, all
through the kubeconfig the server writes (HTTPS, the cluster CA and the admin credentials)."""

from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import httpx

from kubetaint.store.remote_config import Connection, load_kubeconfig

KUBECTL = shutil.which("kubectl")
#: The official JavaScript client's package (its node_modules installed by scripts/setup).
JS_CLIENT = Path(__file__).resolve().parent / "js"
#: Start-up and polling bounds (generous: they only bound a failure, never decide a pass).
START_TIMEOUT = 30.0
POLL_TIMEOUT = 15.0
#: What a `--leader-elect` replica prints of its elections (controlplane.replica).
ELECTION_LINE = re.compile(r"^[a-z-]+: (started leading|new leader elected: .*)$")
T = TypeVar("T")


class UpServer:
    """One `kubetaint up` process."""

    def __init__(self, workdir: Path, *args: str, data_dir: Path | None = None) -> None:
        self.workdir = workdir
        self.data_dir = data_dir or workdir / "data"
        self.kubeconfig = self.data_dir / "kubeconfig"
        self.args = args
        self.env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(workdir),
            "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
            "KUBECONFIG": str(self.kubeconfig),
            "KUBECACHEDIR": str(workdir / "kubecache"),
        }
        self.proc: subprocess.Popen[str] | None = None
        self._pump_thread: threading.Thread | None = None
        self._lines: queue.Queue[str] = queue.Queue()
        self.url = ""
        self.banner: list[str] = []
        #: leader election lines printed before the banner
        self.elections: list[str] = []
        self.connection = Connection(server="")
        self.scheme = "http" if "--insecure-serving" in args else "https"

    def start(self) -> UpServer:
        """Start the process and wait for its banner and a first answer; a start that fails
        leaves no process and no open pipe behind (the next test would be blamed for them)."""
        try:
            return self._start()
        except BaseException:
            self._abandon()
            raise

    def _abandon(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=START_TIMEOUT)
        if self._pump_thread is not None:
            self._pump_thread.join(START_TIMEOUT)  # it ends at the end of the output
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()

    def _start(self) -> UpServer:
        cmd = [sys.executable, "-m", "kubetaint", "up", "--data-dir", str(self.data_dir), "--port", "0"]
        self.proc = subprocess.Popen(
            [*cmd, *self.args],
            env=self.env,
            cwd=self.workdir,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._pump_thread = threading.Thread(target=self._pump, daemon=True)
        self._pump_thread.start()
        first = self._read_line()
        expected = f"kubetaint is serving a cluster at {self.scheme}://"
        # a --leader-elect replica may report its elections before the banner (printed once it
        # serves): "<lease>: started leading" or "<lease>: new leader elected: <holder>"
        while ELECTION_LINE.match(first) and not first.startswith(expected):
            self.elections.append(first)
            first = self._read_line()
        assert first.startswith(expected), first + self._stderr()
        self.url = first.split(" at ", 1)[1].split()[0]
        self.banner.append(first)
        while not self.banner[-1].startswith("Press Ctrl-C"):
            self.banner.append(self._read_line())
        self.connection = load_kubeconfig(self.kubeconfig)
        assert self.connection.server == self.url
        # The banner comes just before the server starts serving (and handling SIGTERM/SIGINT):
        # wait for a first answer, so that a test stopping the server at once stops it cleanly.
        eventually(self._answers, "the server to answer")
        return self

    def _answers(self) -> bool:
        try:
            self.get("/healthz")
        except httpx.TransportError:
            return False
        return True

    def _pump(self) -> None:
        """Stdout lines into a queue (a thread: a blocking read has no timeout)."""
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line.rstrip("\n"))
        self._lines.put("")

    def _read_line(self) -> str:
        try:
            line = self._lines.get(timeout=START_TIMEOUT)
        except queue.Empty:
            raise AssertionError("kubetaint up printed nothing" + self._stderr()) from None
        assert line or self.proc is None or self.proc.poll() is None, "kubetaint up exited" + self._stderr()
        return line

    def rest_of_output(self) -> str:
        lines = []
        while True:
            line = self._lines.get(timeout=START_TIMEOUT)
            if not line and (self.proc is None or self.proc.poll() is not None) and self._lines.empty():
                return "\n".join(lines)
            lines.append(line)

    def _stderr(self) -> str:
        if self.proc is None or self.proc.poll() is None or self.proc.stderr is None:
            return ""
        return "\nstderr: " + self.proc.stderr.read()

    def stop(self, sig: int = signal.SIGTERM) -> tuple[int, str, str]:
        """Signal the process by PID; returns (exit code, rest of stdout, stderr)."""
        assert self.proc is not None and self.proc.stderr is not None
        os.kill(self.proc.pid, sig)
        code = self.proc.wait(timeout=START_TIMEOUT)
        err = self.proc.stderr.read()
        self.proc.stderr.close()
        out = self.rest_of_output()
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        return code, out, err

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.stop(signal.SIGKILL)

    def client(self, *, credentials: bool = True, timeout: float = 10) -> httpx.Client:
        """An HTTP client trusting the cluster CA, with the kubeconfig's credentials (its client
        certificate and token; none with `credentials=False`)."""
        connection = self.connection
        if not credentials:
            connection = Connection(server=connection.server, ca_pem=connection.ca_pem)
        return httpx.Client(
            base_url=self.url,
            verify=connection.ssl_context(),
            headers=connection.headers(),
            timeout=timeout,
        )

    def get(self, path: str, **params: Any) -> httpx.Response:
        with self.client() as client:
            return client.get(path, params=params or None)

    @contextmanager
    def stream(self, path: str, params: dict[str, Any], timeout: float = 10) -> Iterator[httpx.Response]:
        with self.client(timeout=timeout) as client, client.stream("GET", path, params=params) as response:
            yield response

    def kubectl(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        assert KUBECTL is not None
        result = subprocess.run(
            [KUBECTL, *args],
            env=self.env,
            cwd=self.workdir,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if ok:
            assert result.returncode == 0, result.stderr
        return result

    def kubetaint(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "kubetaint", *args],
            env=self.env,
            cwd=self.workdir,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )


def eventually(probe: Callable[[], T | None], what: str) -> T:
    """The first truthy result of `probe` (asynchronous work such as scheduling finishes soon)."""
    deadline = time.monotonic() + POLL_TIMEOUT
    while True:
        value = probe()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def client_node_package() -> Path:
    """tests/e2e/js with @kubernetes/client-node installed, for `node` to run its scripts; skips
    the test only where node or npm is not installed. scripts/setup installs the locked packages
    (`npm ci`); a checkout whose lock file is newer than its node_modules gets them here."""
    import pytest

    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        pytest.skip("node and npm are not installed on this machine")
    stamp = JS_CLIENT / "node_modules" / ".package-lock.json"
    lock = JS_CLIENT / "package-lock.json"
    if not stamp.exists() or stamp.stat().st_mtime < lock.stat().st_mtime:
        result = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=JS_CLIENT,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert result.returncode == 0, result.stderr
    return JS_CLIENT
