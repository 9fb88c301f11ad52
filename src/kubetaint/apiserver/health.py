"""`/healthz`, `/livez` and `/readyz` as kube-apiserver serves them (mirrors
apiserver/pkg/server/healthz: handleRootHealth and adaptCheckToHandler).

- Each endpoint runs its checks in order. All pass: `ok` (`?verbose`: one `[+]NAME ok` line per
  check and `NAME check passed`). One fails: 500 with every check's line, the failed ones as
  `[-]NAME failed: reason withheld` (the reason goes to the log), then `NAME check failed`.
- `?exclude=NAME` skips a check (`[+]NAME excluded: ok`); unknown names get a `warn:` line.
- `/healthz/NAME` (and the same under /livez, /readyz) runs one check: `ok`, or 500
  `internal server error: REASON`.

The checks are kube-apiserver's that apply here: `ping` and `log` (always ok), `etcd` in all
three when the store is etcd (storage's health check: AddHealthChecks puts it in healthz, livez
and readyz), `etcd-readiness` in readyz, and `informer-sync` in readyz while the control plane
has not started. Checks read state kept up to date elsewhere (`store.interface.Reachability`):
answering never waits for the store.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from kubetaint.api.goquote import go_quote
from kubetaint.apiserver import query

log = logging.getLogger(__name__)

#: None when healthy, else the reason (logged, and shown by the check's own path).
Check = Callable[[], str | None]
_HEADERS = {"X-Content-Type-Options": "nosniff"}


@dataclass(frozen=True)
class NamedCheck:
    name: str
    check: Check


def _ok() -> str | None:
    return None


PING = NamedCheck("ping", _ok)
LOG = NamedCheck("log", _ok)


def _text(body: str, status: int = 200) -> Response:
    return PlainTextResponse(body, status_code=status, headers=_HEADERS)


def root_health(name: str, checks: Sequence[NamedCheck], request: Request) -> Response:
    """handleRootHealth for endpoint `name` (healthz, livez, readyz)."""
    excluded = set(query.of(request).getlist("exclude"))
    lines: list[str] = []
    failed: list[str] = []
    for check in checks:
        if check.name in excluded:
            excluded.discard(check.name)
            lines.append(f"[+]{check.name} excluded: ok\n")
            continue
        reason = check.check()
        if reason is not None:
            lines.append(f"[-]{check.name} failed: reason withheld\n")
            failed.append(f"[-]{check.name} failed: {reason}")
        else:
            lines.append(f"[+]{check.name} ok\n")
    if excluded:
        names = ",".join(go_quote(n) for n in sorted(excluded))
        lines.append(f"warn: some health checks cannot be excluded: no matches for {names}\n")
    body = "".join(lines)
    if failed:
        log.info("%s check failed: %s", name, "; ".join(failed))
        return _text(f"{body}{name} check failed\n", 500)
    if "verbose" not in query.of(request):
        return _text("ok")
    return _text(f"{body}{name} check passed\n")


def single_health(check: NamedCheck) -> Response:
    """adaptCheckToHandler: one check on its own path."""
    reason = check.check()
    if reason is not None:
        return _text(f"internal server error: {reason}\n", 500)
    return _text("ok")


def health_routes(endpoints: Mapping[str, Sequence[NamedCheck]]) -> list[BaseRoute]:
    """The routes of each endpoint (`/NAME` and `/NAME/CHECK`)."""
    routes: list[BaseRoute] = []
    for name, checks in endpoints.items():
        routes.append(Route(f"/{name}", _root_endpoint(name, checks)))
        routes += [Route(f"/{name}/{check.name}", _single_endpoint(check)) for check in checks]
    return routes


def _root_endpoint(name: str, checks: Sequence[NamedCheck]) -> Callable[[Request], object]:
    async def endpoint(request: Request) -> Response:
        return root_health(name, checks, request)

    return endpoint


def _single_endpoint(check: NamedCheck) -> Callable[[Request], object]:
    async def endpoint(request: Request) -> Response:
        return single_health(check)

    return endpoint


def api_server_checks(
    store_unreachable: Check | None, ready: Callable[[], bool] | None
) -> dict[str, list[NamedCheck]]:
    """kube-apiserver's checks for a store (`store_unreachable` when it is etcd) and a control
    plane that is ready once `ready()`."""
    common = [PING, LOG]
    if store_unreachable is not None:
        common.append(NamedCheck("etcd", store_unreachable))
    readyz = list(common)
    if store_unreachable is not None:
        readyz.append(NamedCheck("etcd-readiness", store_unreachable))
    if ready is not None:
        readyz.append(NamedCheck("informer-sync", lambda: None if ready() else "informers not started yet"))
    return {"healthz": list(common), "livez": list(common), "readyz": readyz}
