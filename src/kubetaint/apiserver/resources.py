"""What the HTTP server serves, derived from the shared table `kubetaint.api.resources`: the
resources marked `served` and, of their subresources, those the server implements (status,
binding, eviction, scale). Discovery advertises exactly this; nothing else in the server hard-codes
resource metadata.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubetaint.api.resources import RESOURCES, Resource, Subresource

#: Subresources with handlers (pods' log, exec, attach and portforward answer that the hollow node has
#: no container runtime: apiserver.streaming); the others in the shared table (finalize, proxy) are left
#: out of discovery and answer 404, as any unknown subresource does.
SERVED_SUBRESOURCES = (
    "attach",
    "binding",
    "eviction",
    "exec",
    "finalize",
    "log",
    "portforward",
    "scale",
    "status",
)

ResourceInfo = Resource

SERVED: tuple[Resource, ...] = tuple(
    sorted((r for r in RESOURCES if r.served), key=lambda r: (r.group != "", r.group, r.version, r.plural))
)

_BY_PATH: dict[tuple[str, str, str], Resource] = {(r.group, r.version, r.plural): r for r in SERVED}


def lookup(group: str, version: str, plural: str) -> Resource | None:
    """The resource served at /api(s)/<group>/<version>/<plural>, if any."""
    return _BY_PATH.get((group, version, plural))


def subresources(res: Resource) -> list[Subresource]:
    """The served subresources of `res`, in the shared table's order."""
    found = (res.subresource(name) for name in res.subresources if name in SERVED_SUBRESOURCES)
    return [sub for sub in found if sub is not None]


def subresource(res: Resource, name: str) -> Subresource | None:
    """Subresource `name` of `res` when the server serves it."""
    return res.subresource(name) if name in SERVED_SUBRESOURCES else None


def group_versions(extra: Sequence[Resource] = ()) -> dict[str, list[str]]:
    """Served group -> versions, core group ("") first, then groups by name; `extra` (the custom
    resources, in their groups' version priority) after the built-in groups."""
    out: dict[str, list[str]] = {}
    for res in (*SERVED, *extra):
        versions = out.setdefault(res.group, [])
        if res.version not in versions:
            versions.append(res.version)
    return out


def resources_in(group: str, version: str, extra: Sequence[Resource] = ()) -> list[Resource]:
    """The served resources of one group version, by plural (as kube-apiserver's discovery)."""
    found = [r for r in SERVED if r.group == group and r.version == version]
    custom = [r for r in extra if r.group == group and r.version == version]
    return found + sorted(custom, key=lambda r: r.plural)
