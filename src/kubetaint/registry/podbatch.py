"""A registry commit of pod creates (a scenario's pods being loaded) stored at once.

With pod admission, the pods are admitted and validated one after another exactly as
`Registry.create` does it, then stored by one store commit: the same writes in the same order,
each its own uid, resourceVersion and event (delivered once all are stored). The pod admission
plugins kubetaint implements (Priority, DefaultTolerationSeconds, PodTolerationRestriction,
ExtendedResourceToleration, RuntimeClass) look up Namespaces, PriorityClasses and
RuntimeClasses, never pods, and kube-apiserver's validation (`APIValidator`) reads no store: so
admitting a pod before the ones ahead of it are stored changes nothing. A pod the store refuses
(a name taken) is reported before a later pod that admission refused, as one create after
another would report it. Otherwise (no pod admission, an admission plugin or validator of
another kind, which might read pods) each pod takes `Registry.create`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubetaint.admission import AdmissionChain
from kubetaint.api.errors import StatusError
from kubetaint.registry.before_create import RunDefaults
from kubetaint.registry.validator import APIValidator
from kubetaint.store.interface import JSON, Create, object_key, until_failure

if TYPE_CHECKING:
    from kubetaint.registry.registry import Registry


def create_pods(
    registry: Registry, objects: list[JSON], *, restore: bool = False
) -> tuple[list[JSON], StatusError | None]:
    """The pods created (in order) and the failure that stopped the run (None: none did);
    `restore` as `Registry.create`'s."""
    admission = registry.admission
    if (
        admission is None
        or not admission.acts_on("pods")
        or not _reads_no_pods(admission)
        or (registry.validator is not None and type(registry.validator) is not APIValidator)
    ):
        return create_each(registry, objects, restore=restore)
    admitted: list[JSON] = []
    refused: StatusError | None = None
    defaults = RunDefaults()
    for obj in objects:
        try:
            # Registry.create's steps for a pod, but the store write (the registry's own steps)
            before = registry._before_create("pods", obj, restore=restore, defaults=defaults)
            admitted.append(registry._admitted_pod(before))
        except StatusError as err:
            refused = err
            break
    creates = [Create("pods", obj) for obj in admitted]
    stored, failure = until_failure(registry.store.commit(creates, stop_at_failure=True))
    _remember(registry, stored)
    return stored, failure if failure is not None else refused


def _reads_no_pods(admission: AdmissionChain) -> bool:
    """Whether no plugin of `admission` that acts on pods reads pods (each declares what it
    reads: `AdmissionPlugin.looks_up`), so that admitting a run of pods before storing any of it
    answers as admitting each after the ones before are stored."""
    return all(
        (plugin.resources is not None and "pods" not in plugin.resources)
        or (plugin.looks_up is not None and "pods" not in plugin.looks_up)
        for plugin in admission.plugins
    )


def _remember(registry: Registry, stored: list[JSON]) -> None:
    """What `Registry._create_pod` records after each store write, for each pod of the run."""
    registry._pod_memo.stored_run(stored)
    config = registry._pod_config()
    if config is None:
        for created in stored:
            registry._pods.forget(object_key(created))
    else:
        registry._pods.remember_created(stored, config)


def create_each(
    registry: Registry, objects: list[JSON], *, restore: bool = False
) -> tuple[list[JSON], StatusError | None]:
    """`Registry.create` of each pod in turn, stopping at the first failure."""
    created: list[JSON] = []
    for obj in objects:
        try:
            created.append(registry.create("pods", obj, restore=restore))
        except StatusError as err:
            return created, err
    return created, None
