"""The one table of API resources kubetaint serves, as kube-apiserver's discovery reports them
(group, version, kind, plural, singular, short names, scope, verbs, subresources, categories),
plus what each subresource answers with (mirrors pkg/registry/*/rest/storage_*.go and
api/discovery/aggregated_v2.json). The HTTP server derives its routes and discovery from it."""

from __future__ import annotations

from dataclasses import dataclass

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
NAMESPACE_VERBS = ("create", "delete", "get", "list", "patch", "update", "watch")
STATUS_VERBS = ("get", "patch", "update")


@dataclass(frozen=True)
class Subresource:
    """A subresource as discovery reports it: `kind` is the response kind, in `group`/`version`."""

    name: str
    kind: str
    verbs: tuple[str, ...]
    group: str
    version: str = "v1"


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
    #: False for a resource the HTTP server leaves out of discovery and routing.
    served: bool = True
    #: The store resource of a resource kept in another's storage, served through a conversion
    #: (events.k8s.io/v1 Events are core Events: apiserver.eventsv1); "" for its own.
    storage: str = ""

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

    @property
    def store_resource(self) -> str:
        """The store's resource name: the group-qualified plural (`leases.coordination.k8s.io`),
        or the resource whose storage it shares (`events` for events.k8s.io/v1 Events)."""
        return self.storage or self.group_resource

    @property
    def has_status(self) -> bool:
        """Whether `status` is a subresource (then main-resource writes keep the old status)."""
        return "status" in self.subresources

    def subresource(self, name: str) -> Subresource | None:
        """What subresource `name` answers with, or None when the resource has none of that name."""
        if name not in self.subresources:
            return None
        if name == "status":
            return Subresource(name, self.kind, STATUS_VERBS, self.group, self.version)
        return _SUBRESOURCES.get(name)


#: The subresources whose response kind is not the parent's (status is the parent's kind).
_SUBRESOURCES: dict[str, Subresource] = {
    "binding": Subresource("binding", "Binding", ("create",), ""),
    "attach": Subresource("attach", "PodAttachOptions", ("create", "get"), ""),
    "exec": Subresource("exec", "PodExecOptions", ("create", "get"), ""),
    "log": Subresource("log", "Pod", ("get",), ""),
    "portforward": Subresource("portforward", "PodPortForwardOptions", ("create", "get"), ""),
    "eviction": Subresource("eviction", "Eviction", ("create",), "policy"),
    "scale": Subresource("scale", "Scale", STATUS_VERBS, "autoscaling"),
    "finalize": Subresource("finalize", "Namespace", ("update",), ""),
    "proxy": Subresource("proxy", "NodeProxyOptions", ("create", "delete", "get", "patch", "update"), ""),
}


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
        subresources=("attach", "binding", "eviction", "exec", "log", "portforward", "status"),
        categories=("all",),
    ),
    Resource("", "v1", "Binding", "bindings", "binding", verbs=("create",)),
    Resource("", "v1", "ConfigMap", "configmaps", "configmap", ("cm",)),
    Resource("", "v1", "Secret", "secrets", "secret"),
    Resource("", "v1", "ServiceAccount", "serviceaccounts", "serviceaccount", ("sa",)),
    Resource(
        "",
        "v1",
        "Service",
        "services",
        "service",
        ("svc",),
        subresources=("proxy", "status"),
        categories=("all",),
    ),
    Resource("", "v1", "Endpoints", "endpoints", "endpoints", ("ep",)),
    Resource("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", "endpointslice"),
    Resource("", "v1", "Event", "events", "event", ("ev",)),
    Resource("events.k8s.io", "v1", "Event", "events", "event", ("ev",), storage="events"),
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
    Resource("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", "clusterrole", (), False),
    Resource(
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRoleBinding",
        "clusterrolebindings",
        "clusterrolebinding",
        (),
        False,
    ),
    Resource("rbac.authorization.k8s.io", "v1", "Role", "roles", "role"),
    Resource("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", "rolebinding"),
    *(
        Resource("authorization.k8s.io", "v1", kind, kind.lower() + "s", kind.lower(), (), False, ("create",))
        for kind in ("SelfSubjectAccessReview", "SelfSubjectRulesReview", "SubjectAccessReview")
    ),
    Resource(
        "authorization.k8s.io",
        "v1",
        "LocalSubjectAccessReview",
        "localsubjectaccessreviews",
        "localsubjectaccessreview",
        verbs=("create",),
    ),
    Resource(
        "authentication.k8s.io",
        "v1",
        "SelfSubjectReview",
        "selfsubjectreviews",
        "selfsubjectreview",
        (),
        False,
        ("create",),
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
    Resource(
        "apps",
        "v1",
        "StatefulSet",
        "statefulsets",
        "statefulset",
        ("sts",),
        subresources=("scale", "status"),
        categories=("all",),
    ),
    Resource("apps", "v1", "ControllerRevision", "controllerrevisions", "controllerrevision"),
    Resource("batch", "v1", "Job", "jobs", "job", subresources=("status",), categories=("all",)),
    Resource(
        "",
        "v1",
        "PersistentVolume",
        "persistentvolumes",
        "persistentvolume",
        ("pv",),
        False,
        subresources=("status",),
    ),
    Resource(
        "",
        "v1",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        "persistentvolumeclaim",
        ("pvc",),
        subresources=("status",),
    ),
    Resource("storage.k8s.io", "v1", "StorageClass", "storageclasses", "storageclass", ("sc",), False),
    Resource("storage.k8s.io", "v1", "CSINode", "csinodes", "csinode", (), False),
    Resource("storage.k8s.io", "v1", "CSIDriver", "csidrivers", "csidriver", (), False),
    Resource(
        "batch",
        "v1",
        "CronJob",
        "cronjobs",
        "cronjob",
        ("cj",),
        subresources=("status",),
        categories=("all",),
    ),
    Resource(
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        "customresourcedefinition",
        ("crd", "crds"),
        False,
        subresources=("status",),
        categories=("api-extensions",),
    ),
)

#: Kinds kubetaint stores and serves but whose controller it does not run (none at present: the
#: StatefulSet, Job and CronJob controllers run): a create of one is
#: answered with a warning saying so (kube-apiserver's `Warning: 299` header).
STORED_ONLY: dict[tuple[str, str], str] = {}
#: Stored kinds whose controllers kubetaint runs in part, with what that leaves undone (no
#: provisioner creates the volume a claim asks for).
STORED_ONLY_DETAIL: dict[tuple[str, str], str] = {
    ("", "PersistentVolumeClaim"): (
        "kubetaint binds this PersistentVolumeClaim to existing PersistentVolumes but runs no "
        "provisioner: no volume is created for it"
    ),
}


def stored_only_warning(resource: Resource) -> str | None:
    """The warning a create of a kind kubetaint stores but does not run carries, else None."""
    detail = STORED_ONLY_DETAIL.get((resource.group, resource.kind))
    if detail is not None:
        return detail
    controller = STORED_ONLY.get((resource.group, resource.kind))
    if controller is None:
        return None
    return (
        f"kubetaint stores this {resource.kind} but does not run the {controller} controller: "
        "no pods are created for it"
    )


#: Groups whose resources are reviews: created to get an answer, never stored (upstream's
#: authorization.k8s.io and authentication.k8s.io REST storage).
REVIEW_GROUPS = ("authorization.k8s.io", "authentication.k8s.io")

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
