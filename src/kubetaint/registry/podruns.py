"""`Registry.update_each` and `Registry.update_owner_references_each`: consecutive pod updates
keeping the stored spec (registry.podtrust), checked one by one and stored in runs.

Each update is checked as `Registry.update` checks it; the checked updates of distinct pods are
stored by one `update_many` of the store per run of them (`update_group` with the in-memory
store: one watch group): the same writes in the same order, each its own resourceVersion and
watch event, in commit order, once the run is stored (watchers only record work: none writes
these pods while told of them). Any other update ends the run and takes `Registry.update`.

`update_owner_references_each` is the ReplicaSet controller's adoption (AdoptPod: ClaimPods
setting metadata.ownerReferences, pkg/controller/controller_ref_manager.go) of pods that had no
references. Its updates are built by the registry from the pods given, so when a pod is the very
object this registry stored and the store still holds (and trusted, podtrust), its update is
known to carry the stored object but for ownerReferences: the preconditions are the stored
object's own, no deletion field is kept over, and of validate_pod_keeping_spec only the owner
reference checks can fail, which depend on the (shared, read-only) reference list alone and are
made once for it. Such a pod joins the run without `_checked`'s look-ups; any other takes them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubetaint.api.errors import StatusError
from kubetaint.api.validation.objectmeta import owner_reference_errors
from kubetaint.core.deletion import keep_deletion_fields
from kubetaint.registry.podtrust import OwnerErrorsOfRun
from kubetaint.registry.validator import APIValidator, with_type_meta
from kubetaint.store.interface import JSON, object_key, update_many
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


def update_owner_references_each(registry: Registry, pods: list[JSON], refs: list[JSON]) -> list[Result]:
    """`update_each(registry, "pods", [with_references(pod, refs) for pod in pods])`: the same
    results, writes, events and order. `refs` is the one (read-only) list every update takes."""
    run = PodUpdateRun(registry, "pods")
    if run.config[0] is None or owner_reference_errors({"ownerReferences": refs}):
        for pod in pods:  # refused ones take update's errors, pod by pod
            run.add(with_references(pod, refs))
        return run.finish()
    store_get, keeps_spec, config = registry.store.get, registry._pods.keeps_spec, run.config
    add_checked, run_keys = run.add_checked, run.keys
    for pod in pods:
        # a pod whose metadata is a dict naming it by strings (object_key's answer) and holding
        # no deletionTimestamp (keep_deletion_fields would copy it)
        meta = pod.get("metadata") if type(pod) is dict else None
        if type(meta) is dict and not meta.get("deletionTimestamp"):
            key = (meta.get("namespace") or "", meta.get("name") or "")
            if type(key[0]) is str and type(key[1]) is str and key not in run_keys:
                try:
                    stored: JSON | None = store_get("pods", *key)
                except StatusError:
                    stored = None
                # (keeps_spec of the update itself answers as of the pod: the same spec, kind,
                # apiVersion and type; the stored object is `pod`, so its preconditions hold)
                if stored is pod and keeps_spec(key, pod, pod, config):
                    add_checked(key, {**pod, "metadata": {**meta, "ownerReferences": refs}})
                    continue
        run.add(with_references(pod, refs))
    return run.finish()


def with_references(pod: JSON, refs: list[JSON]) -> JSON:
    """`pod` with metadata.ownerReferences set to `refs` (every other field shared)."""
    return {**pod, "metadata": {**pod["metadata"], "ownerReferences": refs}}


class PodUpdateRun:
    """The results of consecutive updates of `resource` and the run of checked pod updates not
    yet stored (`finish` stores it and answers the results)."""

    def __init__(self, registry: Registry, resource: str) -> None:
        self._registry = registry
        self.resource = resource
        #: the registry's pod configuration, (None, None) when every update takes `update`
        self.config = registry._pod_config() if resource == "pods" else (None, None)
        self.results: list[Result] = []
        self._run: list[tuple[int, Key, JSON]] = []  # (place in results, key, object)
        #: the keys of the run (a second update of one of them ends it)
        self.keys: set[Key] = set()
        self._owner_errors = OwnerErrorsOfRun()

    def add(self, obj: JSON) -> None:
        """The next update: into the run when `update` would keep the stored spec, else made
        by `update` after the run is stored."""
        if self.config[0] is not None:
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
        what `update` raises before storing."""
        registry = self._registry
        obj = with_type_meta("pods", obj)
        namespace, name = key = object_key(obj)
        if key in self.keys:
            return None
        old = registry.store.get("pods", namespace, name)
        check_update_preconditions("pods", obj, old)
        config = self.config
        if not registry._pods.keeps_spec(key, obj, old, config):
            return None
        obj = keep_deletion_fields(obj, old)
        validator = config[0]
        assert isinstance(validator, APIValidator)  # _pod_config checked it
        validator.check_pod_keeping_spec(obj, old, self._owner_errors)
        return key, obj

    def _store_run(self) -> None:
        """Store the run, each result in its place; a failing write takes its error, the ones
        after it are stored still. The next run starts afresh (keys and owner errors memo)."""
        run, results, registry = self._run, self.results, self._registry
        update_group = getattr(registry.store, "update_group", None)
        while run:
            objects = [obj for _, _, obj in run]
            stored, failure = (
                update_group("pods", objects)
                if update_group is not None
                else update_many(registry.store, "pods", objects)
            )
            registry._pods.remember_all(zip([key for _, key, _ in run], stored, strict=False), self.config)
            for (place, _, _), result in zip(run, stored, strict=False):
                results[place] = result
            if failure is None:
                break
            results[run[len(stored)][0]] = failure
            del run[: len(stored) + 1]
        run.clear()
        self.keys.clear()
        self._owner_errors = OwnerErrorsOfRun()
