"""Pod updates that keep the stored spec: the checks that cannot fail are not run again.

Most pod writes change metadata or status only: the ReplicaSet controller adopting a bare pod
(ownerReferences), a kubelet posting status, the node lifecycle controller marking pods not
ready. kube-apiserver admits and validates each as a full update (ValidatePodUpdate,
pkg/apis/core/validation/validation.go; the admission chain's Admit and Validate on UPDATE).
When the update carries the stored spec (an equal one) and the stored pod is at the
resourceVersion this registry admitted, validated and stored it at, under the same configuration
(`registry.trust.Configuration`: nobody wrote it since, and the chain is the one that admitted
it), the outcome of most of that work is known:

- Admission: of the plugins kubetaint implements, only Priority and DefaultTolerationSeconds
  act on pod updates without reading anything but the spec; ExtendedResourceToleration and
  PodTolerationRestriction do too, but the latter reads the namespace (which can change) and the
  former may rewrite tolerations a later plugin merged, so a chain holding either is never
  trusted. On an update keeping old's spec, Priority's Admit keeps the old priority fields,
  present or absent alike: no change. DefaultTolerationSeconds adds a toleration only when the
  spec does not tolerate not-ready / unreachable NoExecute, and the stored spec is the output of
  a chain that ran DefaultTolerationSeconds (create and update alike; the later plugins of the
  chain only add tolerations or drop ones a kept superset covers): no change. No plugin of such
  a chain validates pod updates (Priority validates PriorityClasses only). So the admitted
  object is the object itself.
- Validation: `kubetaint.api.validation.validate_pod_keeping_spec` (the spec passed before; the
  metadata fields it reads are checked again unless they are old's own).
- NamespaceLifecycle acts on every update but changes nothing and reads one thing: whether the
  pod's namespace exists (a missing one is a NotFound). A chain holding it is trusted, and the
  registry checks that the namespace exists (`namespace_exists`, one store read) before trusting
  an update (`Configuration.reads_namespace`).
- Storage is the ordinary `Store.update`: preconditions (a stale resourceVersion, another uid),
  the new resourceVersion and the watch event are the store's as ever.

The resourceVersion tells "nobody wrote it since" on every backend. In reference mode the
registry trusts nothing (every update is admitted and validated afresh).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kubetaint.admission import UPDATE
from kubetaint.admission.defaulttolerationseconds import DefaultTolerationSeconds
from kubetaint.admission.namespacelifecycle import checks_namespace
from kubetaint.admission.plugin import AdmissionPlugin
from kubetaint.admission.priority import Priority
from kubetaint.admission.runtimeclass import RuntimeClass
from kubetaint.api.errors import StatusError
from kubetaint.api.validation import FieldError
from kubetaint.api.validation.names import name_is_dns_subdomain
from kubetaint.api.validation.objectmeta import owner_reference_errors
from kubetaint.store.interface import JSON, Store, object_key

if TYPE_CHECKING:
    from kubetaint.registry.trust import Configuration

Key = tuple[str, str]

#: Plugins whose Admit on a pod update keeping the stored spec is known to change nothing
#: (above); the chain may hold these and plugins that never act on pods.
SPEC_ONLY_UPDATE_PLUGINS: frozenset[type[AdmissionPlugin]] = frozenset({Priority, DefaultTolerationSeconds})
#: Plugins acting on pod creation only whose changes keep DefaultTolerationSeconds' result
#: (RuntimeClass merges tolerations: it only adds, or drops one a kept superset covers).
CREATE_ONLY_PLUGINS: frozenset[type[AdmissionPlugin]] = frozenset({RuntimeClass})


def chain_keeps_stored_specs(plugins: Sequence[AdmissionPlugin]) -> bool:
    """Whether a chain of `plugins` admits every pod update keeping the stored spec of a pod it
    admitted as it is (see the module docstring): each plugin acting on pods is a known one."""
    return _known_pod_plugins(plugins)


def _known_pod_plugins(plugins: Sequence[AdmissionPlugin]) -> bool:
    for plugin in plugins:
        if plugin.resources is not None and "pods" not in plugin.resources:
            continue
        if plugin.users_only:  # trust covers the control plane's own writes, which it passes
            continue
        if checks_namespace(plugin):  # the registry reads the namespace as it does (namespace_exists)
            continue
        kind = type(plugin)
        if kind in SPEC_ONLY_UPDATE_PLUGINS:
            continue
        if kind in CREATE_ONLY_PLUGINS and not plugin.handles(UPDATE):
            continue
        return False
    return True


class PodTrust:
    """The pods a registry admitted, validated and stored, as the store returned them (so at the
    resourceVersion they were stored at), for the configuration they passed."""

    def __init__(self) -> None:
        self._stored: dict[Key, JSON] = {}
        self._config: Configuration | None = None

    def remember(self, key: Key, stored: JSON, config: Configuration) -> None:
        """`stored` (the store's result of a pod write under `key`) passed admission and
        validation as `config` does them."""
        if self._config is not config:
            self._stored.clear()
            self._config = config
        if stored.get("kind") == "Pod" and stored.get("apiVersion") == "v1":
            self._stored[key] = stored
        else:
            self._stored.pop(key, None)

    def remember_all(self, items: Iterable[tuple[Key, JSON]], config: Configuration) -> None:
        """`remember(key, stored, config)` of each (key, stored) in turn (a run of 100
        adoptions: the configuration looked at once)."""
        known = self._stored if self._config is config else None
        for key, stored in items:
            if known is None:  # another configuration: what `remember` does at the first item
                self._stored.clear()
                self._config = config
                known = self._stored
            if stored.get("kind") == "Pod" and stored.get("apiVersion") == "v1":
                known[key] = stored
            else:
                known.pop(key, None)

    def remember_created(self, created: Sequence[JSON], config: Configuration) -> None:
        """`remember(object_key(stored), stored, config)` of each pod the store returned, in turn."""
        if created and self._config is not config:
            self._stored.clear()
            self._config = config
        known = self._stored
        for stored in created:
            key = object_key(stored)
            if stored.get("kind") == "Pod" and stored.get("apiVersion") == "v1":
                known[key] = stored
            else:
                known.pop(key, None)

    def remember_binding(self, key: Key, pod: JSON, stored: JSON, node: str, config: Configuration) -> None:
        """`stored` is the store's result of binding `pod` (under `key`) to `node` without
        binding annotations (registry.binding): its spec is pod's with spec.nodeName set and its
        metadata fields are pod's own. When `pod` is trusted and `node` passes the one spec check
        that reads nodeName (a DNS subdomain; binding itself only requires a name, as upstream),
        `stored` passes what `pod` passed: no admission plugin of a trusted chain reads nodeName."""
        known = self._stored.pop(key, None)
        if known is None or not same_version(known, pod):
            return
        if self._config is config and not name_is_dns_subdomain(node):
            self.remember(key, stored, config)

    def forget(self, key: Key) -> None:
        """The pod under `key` is being deleted (or was written by other means)."""
        self._stored.pop(key, None)

    def keeps_spec(self, key: Key, obj: JSON, old: JSON, config: Configuration) -> bool:
        """Whether `obj`, an update of `old` (stored under `key`), carries old's spec (an equal
        one), claims to be a v1 Pod, and `old` is at the resourceVersion remembered under
        `config`."""
        if self._config is not config or type(obj) is not dict:
            return False
        known = self._stored.get(key)
        if known is None or not same_version(known, old):
            return False
        spec, old_spec = obj.get("spec"), old.get("spec")
        return (
            old_spec is not None
            and (spec is old_spec or spec == old_spec)
            and obj.get("kind") == "Pod"
            and obj.get("apiVersion") == "v1"
        )

    def __len__(self) -> int:
        return len(self._stored)


def namespace_exists(store: Store, namespace: str) -> bool:
    """Whether the namespace NamespaceLifecycle would find on an update in `namespace` exists."""
    try:
        store.get("namespaces", "", namespace)
    except StatusError:
        return False
    return True


def same_version(known: JSON, current: JSON) -> bool:
    """Whether `current` is at the resourceVersion of `known` (an object the store returned)."""
    if known is current:  # (the same object: the same version)
        return True
    meta, known_meta = current.get("metadata"), known["metadata"]
    return type(meta) is dict and meta.get("resourceVersion") == known_meta.get("resourceVersion")


class OwnerErrorsOfRun:
    """owner_reference_errors for the pod updates of one run that are checked before any of them
    is stored (a Registry.commit of updates), remembered for the last owner reference list object: the
    run's objects are the caller's, handed over at once, and nothing else runs between those
    checks, so the very list has the very contents it had (an adoption run shares one list).
    A new run takes a new memo."""

    def __init__(self) -> None:
        self._refs: object = _NOTHING
        self._errors: tuple[FieldError, ...] = ()

    def __call__(self, meta: Mapping[str, Any]) -> list[FieldError]:
        refs = meta.get("ownerReferences")
        if refs is not self._refs:
            errors = owner_reference_errors(meta)
            self._refs, self._errors = refs, tuple(errors)
            return errors
        return list(self._errors)


_NOTHING = object()
