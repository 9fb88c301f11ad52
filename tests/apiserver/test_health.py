"""/healthz, /livez and /readyz in kube-apiserver's healthz format (handleRootHealth,
adaptCheckToHandler), with the etcd checks of a store behind a network."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from kubetaint.apiserver.app import create_app
from kubetaint.clock import VirtualClock
from kubetaint.store.interface import Capabilities
from kubetaint.store.memory import MemoryStore

AWAY = "error getting data from etcd: context deadline exceeded"


class RemoteStore(MemoryStore):
    """A memory store that reports reachability as an etcd store does (`unreachable`, declared
    in its capabilities)."""

    def __init__(self, clock: VirtualClock) -> None:
        super().__init__(clock)
        self.away: str | None = None
        self.capabilities = Capabilities(reachability=self)

    def unreachable(self) -> str | None:
        return self.away


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


@pytest.fixture
def remote(clock: VirtualClock) -> RemoteStore:
    return RemoteStore(clock)


@pytest.fixture
def ready() -> list[bool]:
    return [True]


@pytest.fixture
def client(remote: RemoteStore, clock: VirtualClock, ready: list[bool]) -> Iterator[TestClient]:
    app = create_app(remote, clock, ready=lambda: ready[0])
    with TestClient(app) as test_client:
        yield test_client


@pytest.mark.parametrize(
    ("path", "body"),
    [
        pytest.param(
            "/healthz?verbose", "[+]ping ok\n[+]log ok\n[+]etcd ok\nhealthz check passed\n", id="healthz"
        ),
        pytest.param("/livez?verbose", "[+]ping ok\n[+]log ok\n[+]etcd ok\nlivez check passed\n", id="livez"),
        pytest.param(
            "/readyz?verbose",
            "[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]etcd-readiness ok\n[+]informer-sync ok\nreadyz check passed\n",
            id="readyz",
        ),
        pytest.param("/readyz", "ok", id="not verbose: ok alone"),
        pytest.param("/healthz/etcd", "ok", id="one check on its own path"),
    ],
)
def test_passing_checks_are_listed_when_verbose(client: TestClient, path: str, body: str) -> None:
    answer = client.get(path)
    assert (answer.status_code, answer.text) == (200, body)
    assert answer.headers["content-type"] == "text/plain; charset=utf-8"
    assert answer.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize(
    ("path", "body"),
    [
        pytest.param(
            "/healthz",
            "[+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\nhealthz check failed\n",
            id="healthz lists every check, the reason withheld",
        ),
        pytest.param(
            "/livez?verbose",
            "[+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\nlivez check failed\n",
            id="livez includes etcd too",
        ),
        pytest.param(
            "/readyz",
            "[+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\n[-]etcd-readiness failed: reason withheld\n"
            "[+]informer-sync ok\nreadyz check failed\n",
            id="readyz fails etcd and etcd-readiness",
        ),
        pytest.param(
            "/readyz/etcd-readiness", f"internal server error: {AWAY}\n", id="one check shows its reason"
        ),
    ],
)
def test_an_unreachable_etcd_fails_its_checks_with_500(
    client: TestClient, remote: RemoteStore, path: str, body: str
) -> None:
    remote.away = AWAY
    answer = client.get(path)
    assert (answer.status_code, answer.text) == (500, body)


def test_excluded_checks_pass_and_unknown_exclusions_are_warned_about(
    client: TestClient, remote: RemoteStore
) -> None:
    remote.away = AWAY
    answer = client.get("/healthz?verbose&exclude=etcd&exclude=nope&exclude=also")
    assert (answer.status_code, answer.text) == (
        200,
        "[+]ping ok\n[+]log ok\n[+]etcd excluded: ok\n"
        'warn: some health checks cannot be excluded: no matches for "also","nope"\nhealthz check passed\n',
    )


def test_readyz_fails_informer_sync_until_the_control_plane_has_started(
    client: TestClient, ready: list[bool]
) -> None:
    ready[0] = False
    answer = client.get("/readyz")
    assert answer.status_code == 500
    assert "[-]informer-sync failed: reason withheld\nreadyz check failed\n" in answer.text
    assert client.get("/healthz").text == "ok"


def test_a_store_that_is_not_remote_has_no_etcd_checks() -> None:
    clock = VirtualClock()
    with TestClient(create_app(MemoryStore(clock), clock)) as client:
        assert client.get("/healthz?verbose").text == "[+]ping ok\n[+]log ok\nhealthz check passed\n"
        assert client.get("/healthz/etcd").status_code == 404
