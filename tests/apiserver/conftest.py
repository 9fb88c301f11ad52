"""Fixtures: a memory store on a virtual clock behind the app, reached through TestClient; and a
control plane whose engine (admission, validation) serves the app (`plane`, `engine_client`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from kubetaint.apiserver.app import create_app
from kubetaint.clock import VirtualClock
from kubetaint.controlplane import ControlPlane
from kubetaint.store.memory import MemoryStore

from .builders import make_app, make_store, namespace


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


@pytest.fixture
def store(clock: VirtualClock) -> MemoryStore:
    store = make_store(clock)
    store.create("namespaces", namespace("default"))
    return store


@pytest.fixture
def client(store: MemoryStore, clock: VirtualClock) -> Iterator[TestClient]:
    with TestClient(make_app(store, clock), raise_server_exceptions=True) as test_client:
        yield test_client


@pytest.fixture
def plane() -> ControlPlane:
    clock = VirtualClock()
    cp = ControlPlane(MemoryStore(clock), clock, seed=3)
    cp.ensure_system_namespaces()
    return cp


@pytest.fixture
def engine_client(plane: ControlPlane) -> Iterator[TestClient]:
    app = create_app(plane.store, plane.clock, plane.registry)
    with TestClient(app, raise_server_exceptions=True) as test_client:
        yield test_client
