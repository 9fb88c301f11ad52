"""The root-ca-cert-publisher: `kube-root-ca.crt` with the CA bundle and its description in every
namespace, created again when deleted, restored when its data or annotation changes, other
ConfigMaps left alone (publisher.go's syncNamespace; the API server's NamespaceLifecycle refuses
it in a terminating namespace, which the publisher does not retry)."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.workload_builders import make_env
from kubetaint.controllers.rootcacertpublisher import (
    DESCRIPTION,
    DESCRIPTION_ANNOTATION,
    ROOT_CA_CERT_CONFIG_MAP_NAME,
    Publisher,
)

JSON = dict[str, Any]
CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def namespace(name: str, phase: str = "Active") -> JSON:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}, "status": {"phase": phase}}


def root_ca(store: Any, ns: str) -> JSON | None:
    found = [o for o in store.list("configmaps").items if o["metadata"]["namespace"] == ns]
    return next((o for o in found if o["metadata"]["name"] == ROOT_CA_CERT_CONFIG_MAP_NAME), None)


def start() -> tuple[Any, Any]:
    clock, store, _ = make_env()
    Publisher(store, clock, CA).start()
    return clock, store


def test_upstreams_constants() -> None:
    assert ROOT_CA_CERT_CONFIG_MAP_NAME == "kube-root-ca.crt"
    assert DESCRIPTION_ANNOTATION == "kubernetes.io/description"
    assert DESCRIPTION == (
        "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such "
        "as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions "
        "of Kubernetes clusters."
    )


def test_a_new_namespace_gets_the_config_map() -> None:
    clock, store = start()
    store.create("namespaces", namespace("team-a"))
    clock.advance(0)
    config_map = root_ca(store, "team-a")
    assert config_map is not None
    assert config_map["data"] == {"ca.crt": CA}
    assert config_map["metadata"]["annotations"] == {DESCRIPTION_ANNOTATION: DESCRIPTION}


def test_namespaces_existing_at_start_get_theirs() -> None:
    clock, store, _ = make_env()
    store.create("namespaces", namespace("a"))
    store.create("namespaces", namespace("b"))
    Publisher(store, clock, CA).start()
    clock.advance(0)
    assert root_ca(store, "a") is not None and root_ca(store, "b") is not None


def test_a_deleted_config_map_comes_back() -> None:
    clock, store = start()
    store.create("namespaces", namespace("a"))
    clock.advance(0)
    store.delete("configmaps", "a", ROOT_CA_CERT_CONFIG_MAP_NAME)
    clock.advance(0)
    assert root_ca(store, "a") is not None


@pytest.mark.parametrize(
    ("change", "restored"),
    [
        pytest.param({"data": {"ca.crt": "other"}}, {"ca.crt": CA}, id="changed data is restored"),
        pytest.param({"data": {"ca.crt": CA, "extra": "x"}}, {"ca.crt": CA}, id="an added key is removed"),
    ],
)
def test_a_changed_config_map_is_restored(change: JSON, restored: dict[str, str]) -> None:
    clock, store = start()
    store.create("namespaces", namespace("a"))
    clock.advance(0)
    current = root_ca(store, "a")
    assert current is not None
    store.update("configmaps", {**current, **change})
    clock.advance(0)
    after = root_ca(store, "a")
    assert after is not None and after["data"] == restored


def test_a_removed_description_comes_back_and_other_annotations_stay() -> None:
    clock, store = start()
    store.create("namespaces", namespace("a"))
    clock.advance(0)
    current = root_ca(store, "a")
    assert current is not None
    store.update(
        "configmaps", {**current, "metadata": {**current["metadata"], "annotations": {"mine": "yes"}}}
    )
    clock.advance(0)
    after = root_ca(store, "a")
    assert after is not None
    assert after["metadata"]["annotations"] == {"mine": "yes", DESCRIPTION_ANNOTATION: DESCRIPTION}


def test_other_config_maps_are_left_alone() -> None:
    clock, store = start()
    store.create("namespaces", namespace("a"))
    clock.advance(0)
    other = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "app", "namespace": "a"},
        "data": {"k": "v"},
    }
    store.create("configmaps", other)
    store.delete("configmaps", "a", "app")
    clock.advance(0)
    names = sorted(o["metadata"]["name"] for o in store.list("configmaps").items)
    assert names == [ROOT_CA_CERT_CONFIG_MAP_NAME]
