"""Fixtures: a memory store on a virtual clock behind the app, reached through TestClient."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from kubetaint.clock import VirtualClock
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
