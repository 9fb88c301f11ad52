"""Paged lists and list+watch against `kubetaint up` with the official Python client: pages
(`limit`/`_continue`) are one snapshot at the first page's resourceVersion whatever is written
between them, and a watch from that resourceVersion brings the client's copy to the server's
state, as an informer relies on."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .harness import UpServer


@pytest.fixture(scope="module")
def core_v1(real_server: UpServer) -> Iterator[Any]:
    from kubernetes import client, config

    api_client = config.new_client_from_config(config_file=str(real_server.kubeconfig))
    try:
        yield client.CoreV1Api(api_client)
    finally:
        api_client.close()


def _namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def test_paged_lists_are_a_snapshot_and_a_watch_from_it_converges(core_v1: Any) -> None:
    from kubernetes import watch

    for i in range(5):
        core_v1.create_namespace(_namespace(f"paged-{i}"))
    whole = core_v1.list_namespace()
    expected = {ns.metadata.name: ns.metadata.resource_version for ns in whole.items}

    first = core_v1.list_namespace(limit=2)
    assert first.metadata.resource_version == whole.metadata.resource_version
    assert first.metadata.remaining_item_count == len(expected) - 2
    pages = [first]
    written = 0
    while pages[-1].metadata._continue:
        core_v1.create_namespace(_namespace(f"between-{written}"))  # after every key listed so far
        core_v1.delete_namespace(f"paged-{written}")
        written += 1
        pages.append(core_v1.list_namespace(limit=2, _continue=pages[-1].metadata._continue))
    assert written >= 2
    assert {p.metadata.resource_version for p in pages} == {first.metadata.resource_version}
    listed = {ns.metadata.name: ns.metadata.resource_version for p in pages for ns in p.items}
    assert listed == expected

    copy = dict(listed)
    target = {ns.metadata.name for ns in core_v1.list_namespace().items}
    stream = watch.Watch()
    for event in stream.stream(
        core_v1.list_namespace, resource_version=first.metadata.resource_version, timeout_seconds=5
    ):
        name = event["object"].metadata.name
        if event["type"] == "DELETED":
            copy.pop(name, None)
        else:
            copy[name] = event["object"].metadata.resource_version
        if set(copy) == target:
            stream.stop()
    assert set(copy) == target
