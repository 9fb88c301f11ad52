"""A registry commit of updates that does not stop at a failure: consecutive pod updates keeping
the stored spec (registry.podtrust) are checked one by one and stored in runs.

Each update is checked as `Registry.update` checks it; the checked updates of distinct pods are
stored by one store commit per run of them (the in-memory store delivers its events as one
group): the same writes in the same order, each its own resourceVersion and watch event, in
commit order, once the run is stored (watchers only record work: none writes these pods while
told of them). Any other update ends the run and takes `Registry.update`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubetaint.api.errors import StatusError
from kubetaint.api.validation import validate_pod_keeping_spec
from kubetaint.core.deletion import keep_deletion_fields
from kubetaint.registry.podtrust import OwnerErrorsOfRun
from kubetaint.registry.validator import APIValidator, with_type_meta
from kubetaint.store.interface import JSON, Update, object_key, until_failure
from kubetaint.store.mutation import check_update_preconditions

if TYPE_CHECKING:
    from kubetaint.registry.registry import Registry

Key = tuple[str, str]
Result = JSON | StatusError


def update_each(registry: Registry, resource: str, objects: list[JSON]) -> list[Result]:
    """`registry.update(resource, obj)` of each object in turn: the stored object, or the
    StatusError `update` raised, in its place (a failure does not stop the later ones)."""
    run = PodUpdateRun(registry, resource)
    for obj in objects:
        run.add(obj)
    return run.finish()


class PodUpdateRun:
    """The results of consecutive updates of `resource` and the run of checked pod updates not
    yet stored (`finish` stores it and answers the results)."""

    def __init__(self, registry: Registry, resource: str) -> None:
        self._registry = registry
        self.resource = resource
        #: the registry's pod configuration, None when every update takes `update`
        self.config = registry._pod_config() if resource == "pods" else None
        self.results: list[Result] = []
        self._run: list[tuple[int, Key, JSON]] = []  # (place in results, key, object)
        #: the keys of the run (a second update of one of them ends it)
        self.keys: set[Key] = set()
        #: the namespaces found to exist while the run is checked (nothing is written meanwhile)
        self._namespaces: set[str] = set()
        self._owner_errors = OwnerErrorsOfRun()

    def add(self, obj: JSON) -> None:
        """The next update: into the run when `update` would keep the stored spec, else made
        by `update` after the run is stored."""
        if self.config is not None:
            try:
                checked = self._checked(obj)
            except StatusError as err:
                self.results.append(err)
                return
            if checked is not None:
                self.add_checked(*checked)
                return
        self._store_run()
        try:
            self.results.append(self._registry.update(self.resource, obj))
        except StatusError as err:
            self.results.append(err)

    def add_checked(self, key: Key, obj: JSON) -> None:
        """The next update, of a pod not in the run, checked as `update` checks it: `obj` is what
        it stores."""
        self._run.append((len(self.results), key, obj))
        self.keys.add(key)
        self.results.append(obj)  # until stored: _store_run puts the result

    def finish(self) -> list[Result]:
        self._store_run()
        return self.results

    def _checked(self, obj: JSON) -> tuple[Key, JSON] | None:
        """`update`'s checks of a pod update keeping the stored spec: (key, the object to store),
        None when `update` would take another way (or the pod is in the run already); raises
        what `update` raises before storing. The steps that cannot change or fail an update
        carrying old's own uid and resourceVersion objects (an adoption, built from the stored
        pod) and no deletionTimestamp to keep are left out."""
        registry = self._registry
        if not (obj.get("apiVersion") and obj.get("kind")):
            obj = with_type_meta("pods", obj)
        namespace, name = key = object_key(obj)
        if key in self.keys:
            return None
        old = registry.store.get("pods", namespace, name)
        meta, old_meta = obj.get("metadata"), old["metadata"]
        if (
            type(meta) is not dict
            or meta.get("uid") is not old_meta.get("uid")
            or meta.get("resourceVersion") is not old_meta.get("resourceVersion")
        ):
            check_update_preconditions("pods", obj, old)
        config = self.config
        if config is None or not registry.keeps_spec(key, obj, old, config, self._namespaces):
            return None
        if old_meta.get("deletionTimestamp"):
            obj = keep_deletion_fields(obj, old)
        if validate_pod_keeping_spec(obj, old, self._owner_errors):
            validator = config.validator
            assert isinstance(validator, APIValidator)  # the configuration keeps stored specs
            validator.check_pod_keeping_spec(obj, old)  # raises what `update` raises
        return key, obj

    def _store_run(self) -> None:
        """Store the run, each result in its place; a failing write takes its error, the ones
        after it are stored still. The next run starts afresh (keys and owner errors memo)."""
        run, results, registry = self._run, self.results, self._registry
        while run:
            updates = [Update("pods", obj) for _, _, obj in run]
            stored, failure = until_failure(registry.store.commit(updates, stop_at_failure=True))
            if self.config is not None:
                registry._pods.remember_all(
                    zip([key for _, key, _ in run], stored, strict=False), self.config
                )
            for (place, _, _), result in zip(run, stored, strict=False):
                results[place] = result
            if failure is None:
                break
            results[run[len(stored)][0]] = failure
            del run[: len(stored) + 1]
        run.clear()
        self.keys.clear()
        self._namespaces.clear()
        self._owner_errors = OwnerErrorsOfRun()
