"""kr8s against `kubetaint up`: its discovery (`api_resources`, which reads `/api/` and
`/apis/`), CRUD through its objects, a watch resumed from a resourceVersion, JSON and merge
patches, eviction, and its own `Node.cordon()` and `Node.taint()`. kr8s offers no server-side
apply and patches with `application/merge-patch+json` or `application/json-patch+json` only."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from ..harness import POLL_TIMEOUT, UpServer
from .checks import NODE, TAINT, configmap, eviction, namespace, pod

NS = "kr8s"
T = TypeVar("T")


def run(cluster: UpServer, check: Callable[[Any], Awaitable[T]]) -> T:
    """`check(api)` on a fresh event loop with kr8s' asyncio API on the kubeconfig."""

    async def main() -> T:
        import kr8s.asyncio

        api = await kr8s.asyncio.api(kubeconfig=str(cluster.kubeconfig))
        try:
            return await check(api)
        finally:
            if api._session is not None:  # kr8s keeps its HTTP session per event loop
                await api._session.aclose()

    return asyncio.run(main())


async def until(probe: Callable[[], Awaitable[bool]], what: str) -> None:
    deadline = asyncio.get_running_loop().time() + POLL_TIMEOUT
    while not await probe():
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.1)


@pytest.fixture(scope="module", autouse=True)
def _namespace(cluster: UpServer) -> None:
    async def create(api: Any) -> None:
        from kr8s.asyncio.objects import Namespace

        await Namespace(namespace(NS), api=api).create()

    run(cluster, create)


def test_discovery_reads_the_core_and_group_lists(cluster: UpServer) -> None:
    async def check(api: Any) -> set[str]:
        return {f"{r['name']}.{r['version']}" for r in await api.api_resources()}

    names = run(cluster, check)
    assert {"pods.v1", "nodes.v1", "deployments.apps/v1", "poddisruptionbudgets.policy/v1"} <= names


def test_create_get_patch_delete(cluster: UpServer) -> None:
    async def check(api: Any) -> None:
        from kr8s.asyncio.objects import ConfigMap

        created = ConfigMap(
            {**configmap("crud", colour="blue"), "metadata": {"name": "crud", "namespace": NS}}, api=api
        )
        await created.create()
        assert created.metadata.uid
        fetched = await ConfigMap.get("crud", namespace=NS, api=api)
        assert fetched.raw["data"] == {"colour": "blue"}
        await fetched.patch({"data": {"colour": "green"}})
        await fetched.refresh()
        assert fetched.raw["data"] == {"colour": "green"}
        await fetched.patch([{"op": "add", "path": "/data/size", "value": "L"}], type="json")
        assert fetched.raw["data"] == {"colour": "green", "size": "L"}
        await fetched.delete()
        assert not await fetched.exists()

    run(cluster, check)


def test_a_watch_resumes_from_the_last_resource_version(cluster: UpServer) -> None:
    async def check(api: Any) -> list[tuple[str, str]]:
        from kr8s.asyncio.objects import ConfigMap

        listed = [cm async for cm in api.get("configmaps", namespace=NS, label_selector="watched=yes")]
        assert listed == []
        version = await _list_version(api)
        target = ConfigMap(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "w", "namespace": NS, "labels": {"watched": "yes"}},
            },
            api=api,
        )
        await target.create()
        events: list[tuple[str, str]] = []
        async for kind, obj in api.watch(
            "configmaps", namespace=NS, label_selector="watched=yes", since=version
        ):
            events.append((kind, obj.name))
            version = obj.metadata.resourceVersion
            break
        await target.delete()
        async for kind, obj in api.watch(
            "configmaps", namespace=NS, label_selector="watched=yes", since=version
        ):
            events.append((kind, obj.name))
            break
        return events

    assert run(cluster, check) == [("ADDED", "w"), ("DELETED", "w")]


async def _list_version(api: Any) -> str:
    async with api.call_api("GET", version="v1", url="configmaps", namespace=NS) as response:
        return str(response.json()["metadata"]["resourceVersion"])


def test_an_evicted_pod_goes(cluster: UpServer) -> None:
    async def check(api: Any) -> None:
        from kr8s.asyncio.objects import Pod

        target = Pod({**pod("evicted"), "metadata": {**pod("evicted")["metadata"], "namespace": NS}}, api=api)
        await target.create()
        await target.wait("condition=Ready", timeout=POLL_TIMEOUT)
        async with api.call_api(
            "POST",
            version="v1",
            url="pods/evicted/eviction",
            namespace=NS,
            content=json.dumps(eviction("evicted", NS)),
        ) as response:
            assert response.status_code == 201

        async def gone() -> bool:
            return not await target.exists()

        await until(gone, "the evicted pod to go")

    run(cluster, check)


def test_cordon_and_taint_a_node(cluster: UpServer) -> None:
    async def check(api: Any) -> None:
        from kr8s.asyncio.objects import Node

        node = await Node.get(NODE, api=api)
        await node.cordon()
        assert node.unschedulable is True
        await node.taint(TAINT["key"], TAINT["value"], effect=TAINT["effect"])
        assert TAINT["key"] in {t["key"] for t in node.taints}
        await node.taint(TAINT["key"], TAINT["value"], effect=TAINT["effect"] + "-")
        await node.uncordon()
        await node.refresh()
        assert node.unschedulable is False
        assert TAINT["key"] not in {t["key"] for t in node.taints}

    run(cluster, check)
