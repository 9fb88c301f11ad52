"""rest.BeforeCreate and the decoding steps before it, for every create through the registry (an
HTTP request and a component's write alike)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock, format_time
from kubetaint.core import namespaces
from kubetaint.core.defaults import default_pod_requests
from kubetaint.core.names import generate_name
from kubetaint.registry.defaulting import defaulted_for_create, pod_prepared_for_create
from kubetaint.registry.deletion import CRDS, NAMESPACES
from kubetaint.registry.validator import resource_info, with_type_meta
from kubetaint.speed.reference import reference_mode
from kubetaint.store.interface import JSON, Store

#: SetDefaults_Pod's request defaulting of a pod (default_pod_requests, or a RunDefaults).
PodDefaults = Callable[[JSON], JSON]


class RunDefaults:
    """Speeds up SetDefaults_Pod for a run of pod creates (registry.podbatch; off in reference
    mode): consecutive pods holding the very same container lists (a scenario's pods of one
    template share them, `sim.sharing`) are defaulted as the first of them was, their defaulted
    lists shared. The run's objects are handed over at once and nothing changes them while the
    run is admitted, so the same lists hold the same values."""

    def __init__(self) -> None:
        #: the last pod's (containers, initContainers) and their defaulted lists (None: kept)
        self._last: tuple[Any, Any, Any, Any] | None = None
        self._reference = reference_mode()

    def __call__(self, pod: JSON) -> JSON:
        spec = pod.get("spec")
        if type(spec) is not dict or self._reference:
            return default_pod_requests(pod)
        containers, init = spec.get("containers"), spec.get("initContainers")
        last = self._last
        if last is None or last[0] is not containers or last[1] is not init:
            defaulted = default_pod_requests(pod)
            new_spec = defaulted["spec"] if defaulted is not pod else spec
            last = self._last = (
                containers,
                init,
                None if new_spec.get("containers") is containers else new_spec["containers"],
                None if new_spec.get("initContainers") is init else new_spec["initContainers"],
            )
            return defaulted
        if last[2] is None and last[3] is None:
            return pod
        new_spec = spec.copy()  # (the defaulted lists in their keys' places)
        if last[2] is not None:
            new_spec["containers"] = last[2]
        if last[3] is not None:
            new_spec["initContainers"] = last[3]
        return {**pod, "spec": new_spec}


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
    resource: str,
    obj: JSON,
    *,
    store: Store,
    clock: Clock | None,
    rng: random.Random,
    restore: bool = False,
    defaults: PodDefaults = default_pod_requests,
) -> JSON:
    """The object a create stores before admission: its type meta, a pod's SetDefaults_Pod and
    (unless restored from declared state) the pod strategy's PrepareForCreate, a name generated
    from generateName, the namespace a namespaced object defaults to ("default") or a
    cluster-scoped one drops, and the kind's defaults and PrepareForCreate (registry.defaulting).
    `defaults`: SetDefaults_Pod's request defaulting (a run's RunDefaults)."""
    obj = with_type_meta(resource, obj)
    if resource == "pods":
        # decoding a v1.Pod body runs SetDefaults_Pod; the pod strategy's PrepareForCreate
        # resets the status of every pod created, not of one restored
        if restore:
            obj = defaults(obj)
        else:
            now = format_time(clock.now()) if clock is not None else None
            obj = pod_prepared_for_create(obj, now, defaults)
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
