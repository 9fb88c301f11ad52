"""rest.BeforeCreate and the decoding steps before it, for every create through the registry (an
HTTP request and a component's write alike)."""

from __future__ import annotations

import random

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock, format_time
from kubetaint.core import namespaces
from kubetaint.core.defaults import default_pod_requests
from kubetaint.core.names import generate_name
from kubetaint.registry.defaulting import defaulted_for_create, pod_prepared_for_create
from kubetaint.registry.deletion import CRDS, NAMESPACES
from kubetaint.registry.validator import resource_info, with_type_meta
from kubetaint.store.interface import JSON, Store


def _custom_namespaced(store: Store, resource: str) -> bool:
    """Whether a resource the table does not know is namespaced: a custom resource is as
    its CustomResourceDefinition (`<plural>.<group>`) says; anything else is taken as
    namespaced."""
    try:
        crd = store.get(CRDS, "", resource)
    except StatusError:
        return True
    return (crd.get("spec") or {}).get("scope") != "Cluster"


def before_create(
    resource: str, obj: JSON, *, store: Store, clock: Clock | None, rng: random.Random, restore: bool = False
) -> JSON:
    """The object a create stores before admission: its type meta, a pod's SetDefaults_Pod and
    (unless restored from declared state) the pod strategy's PrepareForCreate, a name generated
    from generateName, the namespace a namespaced object defaults to ("default") or a
    cluster-scoped one drops, and the kind's defaults and PrepareForCreate (registry.defaulting)."""
    obj = with_type_meta(resource, obj)
    if resource == "pods":
        # decoding a v1.Pod body runs SetDefaults_Pod; the pod strategy's PrepareForCreate
        # resets the status of every pod created, not of one restored
        if restore:
            obj = default_pod_requests(obj)
        else:
            now = format_time(clock.now()) if clock is not None else None
            obj = pod_prepared_for_create(obj, now)
    meta = dict(obj.get("metadata") or {})
    if not meta.get("name") and meta.get("generateName"):
        meta["name"] = generate_name(str(meta["generateName"]), rng)
    info = resource_info(resource)
    if info.namespaced if info is not None else _custom_namespaced(store, resource):
        if not meta.get("namespace"):
            meta["namespace"] = "default"
    elif "namespace" in meta:
        del meta["namespace"]  # BeforeCreate: a cluster-scoped object's namespace is dropped
    if resource == NAMESPACES:
        return namespaces.prepare_for_create({**obj, "metadata": meta})
    if resource == "pods":
        return {**obj, "metadata": meta}
    return defaulted_for_create({**obj, "metadata": meta})  # the kind's defaults (registry.defaulting)
