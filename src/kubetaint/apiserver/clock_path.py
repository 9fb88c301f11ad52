"""Where a kubetaint server serves its clock (`apiserver.clockapi`), for the clients that call it
(`kubetaint clock`) without loading the server."""

from __future__ import annotations

CLOCK_PATH = "/kubetaint/v1/clock"
