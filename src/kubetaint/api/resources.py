"""The one table of API resources kubetaint serves, as kube-apiserver's discovery reports them
(group, version, kind, plural, singular, short names, scope, verbs, subresources)."""

from __future__ import annotations

from dataclasses import dataclass

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
NAMESPACE_VERBS = ("create", "delete", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class Resource:
    """One discovery row (metav1.APIResource plus its group/version)."""

    group: str
    version: str
    kind: str
    plural: str
    singular: str
    short_names: tuple[str, ...] = ()
    namespaced: bool = True
    verbs: tuple[str, ...] = ALL_VERBS
    subresources: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        """`v1` for the core group, else `group/version`."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def list_kind(self) -> str:
        """The kind of the collection (`NodeList`)."""
        return f"{self.kind}List"

    @property
    def group_resource(self) -> str:
        """`plural` or `plural.group`, as kubectl and error messages spell it."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


RESOURCES: tuple[Resource, ...] = (
    Resource(
        "",
        "v1",
        "Namespace",
        "namespaces",
        "namespace",
        ("ns",),
        False,
        NAMESPACE_VERBS,
        ("finalize", "status"),
    ),
    Resource("", "v1", "Node", "nodes", "node", ("no",), False, subresources=("proxy", "status")),
    Resource(
        "",
        "v1",
        "Pod",
        "pods",
        "pod",
        ("po",),
        subresources=("binding", "eviction", "status"),
        categories=("all",),
    ),
    Resource("", "v1", "Binding", "bindings", "binding", verbs=("create",)),
    Resource("", "v1", "Event", "events", "event", ("ev",)),
    Resource("events.k8s.io", "v1", "Event", "events", "event", ("ev",)),
    Resource("coordination.k8s.io", "v1", "Lease", "leases", "lease"),
    Resource(
        "policy",
        "v1",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        "poddisruptionbudget",
        ("pdb",),
        subresources=("status",),
    ),
    Resource("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", "priorityclass", ("pc",), False),
    Resource("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", "runtimeclass", (), False),
    Resource(
        "apps",
        "v1",
        "DaemonSet",
        "daemonsets",
        "daemonset",
        ("ds",),
        subresources=("status",),
        categories=("all",),
    ),
    Resource(
        "apps",
        "v1",
        "ReplicaSet",
        "replicasets",
        "replicaset",
        ("rs",),
        subresources=("scale", "status"),
        categories=("all",),
    ),
    Resource(
        "apps",
        "v1",
        "Deployment",
        "deployments",
        "deployment",
        ("deploy",),
        subresources=("scale", "status"),
        categories=("all",),
    ),
)

#: Kinds that are only ever posted to a subresource: (apiVersion, kind) -> (resource, subresource).
SUBRESOURCE_KINDS: dict[tuple[str, str], tuple[str, str]] = {
    ("policy/v1", "Eviction"): ("pods", "eviction"),
    ("v1", "Binding"): ("pods", "binding"),
}

_BY_GVK = {(r.api_version, r.kind): r for r in RESOURCES}


def by_api_version_kind(api_version: str, kind: str) -> Resource | None:
    """The resource of a manifest's apiVersion and kind."""
    return _BY_GVK.get((api_version, kind))


def by_plural(plural: str, group: str | None = None) -> Resource | None:
    """The first resource (table order) with that plural, optionally in one group."""
    return next((r for r in RESOURCES if r.plural == plural and (group is None or r.group == group)), None)


def by_kind(kind: str, group: str | None = None) -> Resource | None:
    """The first resource (table order) with that kind, optionally in one group."""
    return next((r for r in RESOURCES if r.kind == kind and (group is None or r.group == group)), None)


def by_short_name(short: str) -> Resource | None:
    """The resource with that short name (`no`, `po`, `ds`, ...)."""
    return next((r for r in RESOURCES if short in r.short_names), None)


def resolve(name: str) -> Resource | None:
    """kubectl's resource argument: plural, singular, short name or kind, case-insensitive,
    optionally qualified by group (`deployments.apps`) or version and group (`deployments.v1.apps`)."""
    text = name.lower()
    base, _, qualifier = text.partition(".")
    group: str | None = None
    if qualifier:
        version, _, rest = qualifier.partition(".")
        group = rest if version.startswith("v") and rest and version[1:2].isdigit() else qualifier
    for resource in RESOURCES:
        if group is not None and resource.group != group:
            continue
        if base in (resource.plural, resource.singular, resource.kind.lower(), *resource.short_names):
            return resource
    return None


def api_groups() -> list[str]:
    """Every group served, core ("") first, then in table order."""
    groups: list[str] = []
    for resource in RESOURCES:
        if resource.group not in groups:
            groups.append(resource.group)
    return groups
