"""`kubernetes-asyncio` (the asyncio port of the official client) against `kubetaint up`:
discovery, CRUD, an informer's list+watch resumed from a resourceVersion, the three patch types,
eviction, tainting and cordoning a node, and server-side apply."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from ..harness import POLL_TIMEOUT, UpServer
from .checks import NODE, TAINT, configmap, eviction, namespace, pod

NS = "kubernetes-asyncio"
T = TypeVar("T")


def run(cluster: UpServer, check: Callable[[Any], Awaitable[T]]) -> T:
    """`check(api_client)` on a fresh event loop with a client loaded from the kubeconfig."""

    async def main() -> T:
        from kubernetes_asyncio import config

        api_client = await config.new_client_from_config(config_file=str(cluster.kubeconfig))
        async with api_client:
            return await check(api_client)

    return asyncio.run(main())


async def until(probe: Callable[[], Awaitable[bool]], what: str) -> None:
    deadline = asyncio.get_running_loop().time() + POLL_TIMEOUT
    while not await probe():
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.1)


@pytest.fixture(scope="module", autouse=True)
def _namespace(cluster: UpServer) -> None:
    async def create(api: Any) -> None:
        from kubernetes_asyncio import client

        await client.CoreV1Api(api).create_namespace(namespace(NS))

    run(cluster, create)


def test_discovery(cluster: UpServer) -> None:
    async def check(api: Any) -> None:
        from kubernetes_asyncio import client

        assert (await client.CoreApi(api).get_api_versions()).versions == ["v1"]
        groups = {g.name for g in (await client.ApisApi(api).get_api_versions()).groups}
        assert {"apps", "policy"} <= groups
        resources = await client.AppsV1Api(api).get_api_resources()
        assert {"deployments", "deployments/scale", "daemonsets"} <= {r.name for r in resources.resources}

    run(cluster, check)


def test_create_read_replace_delete(cluster: UpServer) -> None:
    async def check(api: Any) -> None:
        from kubernetes_asyncio import client
        from kubernetes_asyncio.client.rest import ApiException

        core = client.CoreV1Api(api)
        await core.create_namespaced_config_map(NS, configmap("crud", colour="blue"))
        read = await core.read_namespaced_config_map("crud", NS)
        read.data["colour"] = "green"
        assert (await core.replace_namespaced_config_map("crud", NS, read)).data == {"colour": "green"}
        await core.delete_namespaced_config_map("crud", NS)
        with pytest.raises(ApiException) as missing:
            await core.read_namespaced_config_map("crud", NS)
        assert missing.value.status == 404

    run(cluster, check)


def test_an_informer_lists_then_watches_and_resumes_from_the_last_resource_version(cluster: UpServer) -> None:
    async def check(api: Any) -> list[tuple[str, str]]:
        from kubernetes_asyncio import client, watch

        core = client.CoreV1Api(api)
        version = (await core.list_namespaced_pod(NS)).metadata.resource_version
        await core.create_namespaced_pod(NS, pod("watched"))
        events: list[tuple[str, str]] = []
        async with watch.Watch().stream(
            core.list_namespaced_pod, NS, resource_version=version, timeout_seconds=5
        ) as stream:
            async for event in stream:
                events.append((event["type"], event["object"].status.phase or ""))
                version = event["object"].metadata.resource_version
                break
        await core.delete_namespaced_pod("watched", NS, grace_period_seconds=0)
        async with watch.Watch().stream(
            core.list_namespaced_pod, NS, resource_version=version, timeout_seconds=10
        ) as stream:
            async for event in stream:
                events.append((event["type"], ""))
                if event["type"] == "DELETED":
                    break
        return events

    events = run(cluster, check)
    assert events[0] == ("ADDED", "Pending")
    assert events[-1] == ("DELETED", "")
    assert {kind for kind, _ in events[1:-1]} <= {"MODIFIED"}


@pytest.mark.parametrize(
    ("content_type", "body", "expected"),
    [
        pytest.param(
            "application/strategic-merge-patch+json",
            {"data": {"b": "2"}},
            {"a": "1", "b": "2"},
            id="strategic",
        ),
        pytest.param("application/merge-patch+json", {"data": {"a": None}}, {}, id="JSON merge"),
        pytest.param(
            "application/json-patch+json",
            [{"op": "replace", "path": "/data/a", "value": "9"}],
            {"a": "9"},
            id="JSON",
        ),
    ],
)
def test_patch_types(cluster: UpServer, content_type: str, body: Any, expected: dict[str, str]) -> None:
    async def check(api: Any) -> dict[str, str]:
        from kubernetes_asyncio import client

        core = client.CoreV1Api(api)
        name = "patch-" + content_type.split("/")[1].split("-patch", maxsplit=1)[0]
        await core.create_namespaced_config_map(NS, configmap(name, a="1"))
        patched = await core.patch_namespaced_config_map(name, NS, body, _content_type=content_type)
        return patched.data or {}

    assert run(cluster, check) == expected


def test_an_evicted_pod_goes(cluster: UpServer) -> None:
    async def check(api: Any) -> None:
        from kubernetes_asyncio import client

        core = client.CoreV1Api(api)
        await core.create_namespaced_pod(NS, pod("evicted"))

        async def running() -> bool:
            return (await core.read_namespaced_pod("evicted", NS)).status.phase == "Running"

        await until(running, "the pod to run")
        await core.create_namespaced_pod_eviction("evicted", NS, eviction("evicted", NS))

        async def gone() -> bool:
            return not (await core.list_namespaced_pod(NS, field_selector="metadata.name=evicted")).items

        await until(gone, "the evicted pod to go")

    run(cluster, check)


def test_taint_and_cordon_a_node(cluster: UpServer) -> None:
    async def check(api: Any) -> None:
        from kubernetes_asyncio import client

        core = client.CoreV1Api(api)
        before = (await core.read_node(NODE)).spec
        taints = [t.to_dict() for t in before.taints or []]
        await core.patch_node(NODE, {"spec": {"taints": [*taints, TAINT], "unschedulable": True}})
        node = await core.read_node(NODE)
        assert node.spec.unschedulable is True
        assert TAINT["key"] in {t.key for t in node.spec.taints}
        await core.patch_node(NODE, {"spec": {"taints": taints or None, "unschedulable": None}})
        after = (await core.read_node(NODE)).spec
        assert after.unschedulable is None and after.taints == before.taints

    run(cluster, check)


def test_server_side_apply(cluster: UpServer) -> None:
    async def check(api: Any) -> list[tuple[str, str]]:
        from kubernetes_asyncio import client

        core = client.CoreV1Api(api)
        applied = await core.patch_namespaced_config_map(
            "applied",
            NS,
            configmap("applied", owner="asyncio"),
            field_manager="asyncio",
            _content_type="application/apply-patch+yaml",
        )
        assert applied.data == {"owner": "asyncio"}
        return [(m.manager, m.operation) for m in applied.metadata.managed_fields]

    assert run(cluster, check) == [("asyncio", "Apply")]
