"""Whether etcd answers, probed in a background thread (mirrors apiserver's storagebackend
factory newETCD3Check: a read of `<prefix>/health` with a 2 s timeout, at most one probe a
second, the last result answering in between).

kube-apiserver probes when a health endpoint is asked, and that request waits for the probe;
here the probes run on their own thread, so `/healthz`, `/livez` and `/readyz` answer at once
from the last one, and the store's calls fail fast (503) while etcd is away instead of each
waiting for its own timeout (away: a refused connection, or two probes timing out in a row).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from typing import Any

import requests

from kubetaint.store.etcd_codec import b64

log = logging.getLogger(__name__)

#: storagebackend.DefaultHealthcheckTimeout.
PROBE_TIMEOUT = 2.0
#: The probe rate: kube-apiserver's limiter allows one probe every half timeout.
PROBE_INTERVAL = PROBE_TIMEOUT / 2


TIMED_OUT = "context deadline exceeded"
#: Probes that time out in a row before calls fail fast: one slow answer on a loaded machine is
#: not an outage (a refused connection is, at once).
TIMEOUTS_FOR_AWAY = 2


class EtcdHealth:
    """Probes etcd at `url` every `interval` seconds. `error()` is the last probe's failure (what
    health checks report), `away()` whether calls should fail fast: at once for a refused
    connection, after TIMEOUTS_FOR_AWAY probes timing out in a row. `on_recovered` runs (in the
    probe thread) when etcd answers again after failing."""

    def __init__(
        self,
        url: str,
        prefix: str,
        *,
        interval: float = PROBE_INTERVAL,
        timeout: float = PROBE_TIMEOUT,
        on_recovered: Callable[[], None] = lambda: None,
    ) -> None:
        self._base = url
        self._url = f"{url}/v3/kv/range"
        self._body: dict[str, Any] = {
            "key": b64(prefix.rstrip("/") + "/health"),
            "limit": 1,
            "keys_only": True,
        }
        self._interval = interval
        self._timeout = timeout
        self._on_recovered = on_recovered
        self._error: str | None = None
        self._away: str | None = None
        self._timeouts = 0
        self._stop = threading.Event()
        self._session = requests.Session()
        self._thread = threading.Thread(target=self._run, name="etcd-health", daemon=True)
        self._thread.start()

    def error(self) -> str | None:
        """None while etcd answers its probes, else why the last one failed."""
        return self._error

    def away(self) -> str | None:
        """Why calls should fail at once (etcd is known to be away), else None."""
        return self._away

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            error = self.probe()
            self._timeouts = self._timeouts + 1 if error == TIMED_OUT else 0
            failed_before, self._error = self._error, error
            if error is None or error != TIMED_OUT or self._timeouts >= TIMEOUTS_FOR_AWAY:
                self._away = error
            if failed_before is None and error is not None:
                log.warning("etcd at %s does not answer: %s", self._base, error)
            elif failed_before is not None and error is None:
                log.warning("etcd at %s answers again", self._base)
                self._on_recovered()

    def probe(self) -> str | None:
        """One probe now: None when etcd answered, else the error."""
        try:
            response = self._session.post(self._url, json=self._body, timeout=self._timeout)
        except requests.Timeout:
            return TIMED_OUT
        except requests.RequestException as err:
            return connection_reason(str(err))
        if response.status_code != 200:
            return f"{response.status_code} {response.text.strip()[:200]}"
        return None

    def stop(self) -> None:
        self._stop.set()
        if threading.current_thread() is not self._thread:
            self._thread.join(self._timeout + 1)
        self._session.close()


def connection_reason(text: str) -> str:
    """The useful part of a requests connection error (`[Errno 111] Connection refused`)."""
    found = re.search(r"\[Errno -?\d+\] [^'\")]+", text)
    if found:
        return found[0]
    if "timed out" in text or "Timeout" in text:
        return "connection timed out"
    return text
