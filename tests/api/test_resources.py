"""The resource table and its lookups."""

from __future__ import annotations

import pytest

from kubetaint.api.resources import (
    RESOURCES,
    SUBRESOURCE_KINDS,
    by_api_version_kind,
    by_plural,
)

SHORT_NAMES = [
    ("no", "nodes"),
    ("po", "pods"),
    ("ns", "namespaces"),
    ("ev", "events"),
    ("pdb", "poddisruptionbudgets"),
    ("pc", "priorityclasses"),
    ("ds", "daemonsets"),
    ("rs", "replicasets"),
    ("deploy", "deployments"),
]


@pytest.mark.parametrize(("short", "plural"), SHORT_NAMES)
def test_short_names_are_upstreams(short: str, plural: str) -> None:
    resource = by_plural(plural)
    assert resource is not None and short in resource.short_names


@pytest.mark.parametrize(
    ("api_version", "kind", "plural", "namespaced"),
    [
        pytest.param("v1", "Node", "nodes", False, id="nodes are cluster scoped"),
        pytest.param("v1", "Pod", "pods", True, id="pods are namespaced"),
        pytest.param("events.k8s.io/v1", "Event", "events", True, id="the events group has its own Event"),
        pytest.param("coordination.k8s.io/v1", "Lease", "leases", True, id="leases"),
        pytest.param(
            "scheduling.k8s.io/v1", "PriorityClass", "priorityclasses", False, id="priority classes"
        ),
        pytest.param("node.k8s.io/v1", "RuntimeClass", "runtimeclasses", False, id="runtime classes"),
        pytest.param("apps/v1", "Deployment", "deployments", True, id="deployments"),
    ],
)
def test_by_api_version_kind(api_version: str, kind: str, plural: str, namespaced: bool) -> None:
    resource = by_api_version_kind(api_version, kind)
    assert resource is not None
    assert (resource.plural, resource.namespaced, resource.api_version) == (plural, namespaced, api_version)
    assert resource.list_kind == f"{kind}List"


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [
        ("v1", "Deployment"),
        ("apps/v1beta1", "Deployment"),
        ("v1", "ReplicationController"),
        ("policy/v1", "Eviction"),
    ],
)
def test_unknown_gvk(api_version: str, kind: str) -> None:
    assert by_api_version_kind(api_version, kind) is None


def test_eviction_and_binding_are_pod_subresources() -> None:
    assert SUBRESOURCE_KINDS[("policy/v1", "Eviction")] == ("pods", "eviction")
    pods = by_plural("pods")
    assert pods is not None and {"binding", "eviction", "status"} <= set(pods.subresources)
    nodes = by_plural("nodes")
    assert nodes is not None and "status" in nodes.subresources


def test_bindings_only_create() -> None:
    bindings = by_plural("bindings")
    assert bindings is not None and bindings.verbs == ("create",)


def test_namespaces_have_no_deletecollection() -> None:
    namespaces = by_api_version_kind("v1", "Namespace")
    assert namespaces is not None and "deletecollection" not in namespaces.verbs


def test_table_is_consistent() -> None:
    assert len({(r.group, r.plural) for r in RESOURCES}) == len(RESOURCES)
    assert by_plural("events", "events.k8s.io") is not None
    assert by_api_version_kind("v1", "Event") is not None
