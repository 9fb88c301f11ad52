"""The resource table the HTTP server serves: group, version, kind, plural, scope, verbs and
subresources for each kind (what kube-apiserver's registry installs and discovery advertises;
mirrors pkg/registry/*/rest/storage_*.go and api/discovery/aggregated_v2.json).

The lead will unify this with `kubetaint.api.resources`; nothing else in the server hard-codes
resource metadata.
"""

from __future__ import annotations

from dataclasses import dataclass

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
STATUS_VERBS = ("get", "patch", "update")


@dataclass(frozen=True, slots=True)
class Subresource:
    """A subresource such as `status` or `binding`; `kind` is the response kind."""

    name: str
    kind: str
    verbs: tuple[str, ...]
    group: str = ""
    version: str = "v1"


@dataclass(frozen=True, slots=True)
class ResourceInfo:
    """One served resource."""

    group: str
    version: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    subresources: tuple[Subresource, ...] = ()
    categories: tuple[str, ...] = ()
    #: Whether `status` is a subresource (main-resource writes keep the old status).
    has_status: bool = False

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_version(self) -> str:
        return self.api_version

    @property
    def store_resource(self) -> str:
        """The group-qualified plural the store and Status messages use (`leases.coordination.k8s.io`)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    def subresource(self, name: str) -> Subresource | None:
        for sub in self.subresources:
            if sub.name == name:
                return sub
        return None


def _status(kind: str, group: str = "") -> Subresource:
    return Subresource("status", kind, STATUS_VERBS, group=group)


RESOURCES: tuple[ResourceInfo, ...] = (
    ResourceInfo(
        "",
        "v1",
        "Binding",
        "bindings",
        "binding",
        True,
        verbs=("create",),
    ),
    ResourceInfo(
        "",
        "v1",
        "Event",
        "events",
        "event",
        True,
        short_names=("ev",),
    ),
    ResourceInfo(
        "",
        "v1",
        "Namespace",
        "namespaces",
        "namespace",
        False,
        short_names=("ns",),
        verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
        subresources=(_status("Namespace"),),
        has_status=True,
    ),
    ResourceInfo(
        "",
        "v1",
        "Node",
        "nodes",
        "node",
        False,
        short_names=("no",),
        subresources=(_status("Node"),),
        has_status=True,
    ),
    ResourceInfo(
        "",
        "v1",
        "Pod",
        "pods",
        "pod",
        True,
        short_names=("po",),
        categories=("all",),
        subresources=(
            Subresource("binding", "Binding", ("create",)),
            Subresource("eviction", "Eviction", ("create",), group="policy"),
            _status("Pod"),
        ),
        has_status=True,
    ),
    ResourceInfo(
        "apps",
        "v1",
        "DaemonSet",
        "daemonsets",
        "daemonset",
        True,
        short_names=("ds",),
        categories=("all",),
        subresources=(_status("DaemonSet", "apps"),),
        has_status=True,
    ),
    ResourceInfo(
        "apps",
        "v1",
        "Deployment",
        "deployments",
        "deployment",
        True,
        short_names=("deploy",),
        categories=("all",),
        subresources=(_status("Deployment", "apps"),),
        has_status=True,
    ),
    ResourceInfo(
        "apps",
        "v1",
        "ReplicaSet",
        "replicasets",
        "replicaset",
        True,
        short_names=("rs",),
        categories=("all",),
        subresources=(_status("ReplicaSet", "apps"),),
        has_status=True,
    ),
    ResourceInfo("coordination.k8s.io", "v1", "Lease", "leases", "lease", True),
    ResourceInfo(
        "node.k8s.io",
        "v1",
        "RuntimeClass",
        "runtimeclasses",
        "runtimeclass",
        False,
    ),
    ResourceInfo(
        "policy",
        "v1",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        "poddisruptionbudget",
        True,
        short_names=("pdb",),
        subresources=(_status("PodDisruptionBudget", "policy"),),
        has_status=True,
    ),
    ResourceInfo(
        "scheduling.k8s.io",
        "v1",
        "PriorityClass",
        "priorityclasses",
        "priorityclass",
        False,
        short_names=("pc",),
    ),
)

_BY_PATH: dict[tuple[str, str, str], ResourceInfo] = {(r.group, r.version, r.plural): r for r in RESOURCES}


def lookup(group: str, version: str, plural: str) -> ResourceInfo | None:
    """The resource served at /api(s)/<group>/<version>/<plural>, if any."""
    return _BY_PATH.get((group, version, plural))


def group_versions() -> dict[str, list[str]]:
    """Served group -> versions, core group ("") first, groups in upstream's discovery order."""
    out: dict[str, list[str]] = {}
    for res in RESOURCES:
        versions = out.setdefault(res.group, [])
        if res.version not in versions:
            versions.append(res.version)
    return dict(sorted(out.items(), key=lambda item: (item[0] != "", item[0])))


def resources_in(group: str, version: str) -> list[ResourceInfo]:
    return [r for r in RESOURCES if r.group == group and r.version == version]
