"""What every backend does to an object on create/update/delete, so all of them agree byte for
byte: system metadata (uid, creationTimestamp, generation), preconditions with upstream's messages
(apiserver pkg/storage/interfaces.go `Preconditions.Check`, pkg/registry/rest/update.go), no-op
detection, and the opaque `continue` tokens of paged lists.

None of these functions touch storage: a backend reads the current object, calls them, and
commits the result with its own resourceVersion.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

from kubetaint.api import errors
from kubetaint.api.resources import RESOURCES
from kubetaint.clock.base import Clock, format_time
from kubetaint.store.interface import JSON, object_key

#: Resources whose objects carry metadata.generation, bumped by the store when spec changes (their
#: strategies' rule). Other resources keep the generation their writer sets: a custom resource's
#: is its strategy's (any change outside metadata, or outside status too when status is a
#: subresource: the API server's custom resource strategy sets it before the write).
GENERATION_RESOURCES = frozenset(
    {
        "customresourcedefinitions.apiextensions.k8s.io",
        "pods",
        "deployments.apps",
        "replicasets.apps",
        "daemonsets.apps",
        "statefulsets.apps",
        "jobs.batch",
        "cronjobs.batch",
        "poddisruptionbudgets.policy",
    }
)


def prepare_create(resource: str, obj: JSON, clock: Clock, uid_factory: Callable[[], str]) -> JSON:
    """The object to store (without resourceVersion): uid, creationTimestamp and generation set.

    Raises 400 when the name is missing (the registry normally generates one earlier)."""
    _, name = object_key(obj)
    if not name:
        raise errors.StatusError(400, "BadRequest", "name is required")
    meta = dict(obj.get("metadata") or {})
    meta.setdefault("uid", uid_factory())
    meta.setdefault("creationTimestamp", format_time(clock.now()))
    if resource in GENERATION_RESOURCES:
        meta.setdefault("generation", 1)
    meta.pop("resourceVersion", None)
    return {**obj, "metadata": meta}


def prepare_update(resource: str, obj: JSON, old: JSON) -> JSON | None:
    """The object to store in place of `old` (keeping old's resourceVersion, which the backend
    replaces), or None when the update changes nothing (upstream then keeps the resourceVersion).

    Raises Conflict when the body's uid or resourceVersion does not match `old`'s."""
    old_meta: JSON = old["metadata"]
    if (
        obj.get("metadata") is old_meta
        and "uid" in old_meta
        and "creationTimestamp" in old_meta
        and "resourceVersion" in old_meta
    ):
        return _prepare_unchanged_meta(resource, obj, old)
    check_update_preconditions(resource, obj, old)
    meta = dict(obj.get("metadata") or {})
    meta["uid"] = old_meta.get("uid")
    meta["creationTimestamp"] = old_meta.get("creationTimestamp")
    if "generation" in old_meta and resource in GENERATION_RESOURCES:
        changed_spec = obj.get("spec") != old.get("spec")
        meta["generation"] = old_meta["generation"] + (1 if changed_spec else 0)
    meta["resourceVersion"] = old_meta.get("resourceVersion")
    stored = {**obj, "metadata": meta}
    return None if stored == old else stored


def check_update_preconditions(resource: str, obj: JSON, old: JSON) -> None:
    """Raise Conflict when the body's uid (the update's precondition, rest.DefaultUpdatedObjectInfo)
    or resourceVersion does not match `old`'s. kube-apiserver checks both before admission's
    validation and rest.BeforeUpdate's, so a registry calls this before validating."""
    meta = obj.get("metadata") or {}
    old_meta = old["metadata"]
    uid = meta.get("uid")
    if uid and uid != old_meta.get("uid"):
        detail = f"Precondition failed: UID in precondition: {uid}, UID in object meta: {old_meta.get('uid')}"
        raise errors.conflict(resource, object_key(obj)[1], detail)
    precondition = meta.get("resourceVersion")
    if precondition and precondition != old_meta.get("resourceVersion"):
        raise errors.conflict(resource, object_key(obj)[1], errors.OBJECT_MODIFIED)


def _prepare_unchanged_meta(resource: str, obj: JSON, old: JSON) -> JSON | None:
    """`prepare_update` of an update that carries the stored object's own metadata (a copy of the
    stored object with other fields changed, as a lease renewal is): its uid and resourceVersion
    preconditions hold and the system fields prepare_update sets (uid, creationTimestamp,
    resourceVersion) are old's already, so only generation can move."""
    if obj == old:
        return None
    old_meta = old["metadata"]
    meta = dict(old_meta)
    if "generation" in old_meta and resource in GENERATION_RESOURCES and obj.get("spec") != old.get("spec"):
        meta["generation"] = old_meta["generation"] + 1
    return {**obj, "metadata": meta}


def check_delete_preconditions(
    resource: str, name: str, old: JSON, resource_version: str | None, uid: str | None
) -> None:
    """Raise Conflict when a delete precondition (uid first, then resourceVersion) fails."""
    old_meta = old["metadata"]
    if uid and uid != old_meta.get("uid"):
        detail = f"Precondition failed: UID in precondition: {uid}, UID in object meta: {old_meta.get('uid')}"
        raise errors.conflict(resource, name, detail)
    if resource_version and resource_version != old_meta.get("resourceVersion"):
        detail = (
            f"Precondition failed: ResourceVersion in precondition: {resource_version}, "
            f"ResourceVersion in object meta: {old_meta.get('resourceVersion')}"
        )
        raise errors.conflict(resource, name, detail)


def with_resource_version(obj: JSON, resource_version: int) -> JSON:
    """A copy of `obj` whose metadata.resourceVersion is `resource_version` (other fields shared)."""
    return {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(resource_version)}}


#: Revisions are int64 (SQLite integers, etcd revisions) and a watch starts after one (etcd: at
#: since + 1); a larger resourceVersion is as much in the future as this one.
MAX_REVISION = 2**63 - 2
_UINT64_MAX = 2**64 - 1


def parse_resource_version(text: str) -> int:
    """A resourceVersion parameter as an int; 400 with upstream's message when malformed.
    Upstream parses it with strconv.ParseUint(text, 10, 64) (ASCII digits, at most 2^64-1); a
    version beyond the int64 revisions a store can reach reads as MAX_REVISION, equally in the future."""
    if not (text.isascii() and text.isdigit()) or int(text) > _UINT64_MAX:
        raise errors.bad_request(f'invalid resource version "{text}"')
    return min(int(text), MAX_REVISION)


def too_old(since: int, compacted: int) -> errors.StatusError:
    """410 Expired as the watch cache words it (`oldest retained - 1` is the compacted version)."""
    return errors.expired(f"too old resource version: {since} ({compacted})")


def encode_continue(key: tuple[str, str], list_rv: int) -> str:
    raw = json.dumps({"v": 1, "rv": list_rv, "start": list(key)}).encode()
    return base64.urlsafe_b64encode(raw).decode()


def decode_continue(token: str) -> tuple[str, str]:
    """The (namespace, name) after which the next page starts."""
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode()))
        namespace, name = data["start"]
        return str(namespace), str(name)
    except (ValueError, KeyError, TypeError):
        raise errors.bad_request(
            "continue key is not valid: incorrect encoded start resourceVersion"
        ) from None


def continue_resource_version(token: str) -> int:
    """The resourceVersion of the list a continue token continues (-1: the current state).
    Call after `decode_continue` accepted the token."""
    try:
        value = json.loads(base64.urlsafe_b64decode(token.encode())).get("rv", 0)
    except (ValueError, AttributeError):
        value = 0
    return value if type(value) is int else 0


def namespace_order(namespace: str) -> str:
    """Sort key of a namespace so that lists come in etcd key order (`<ns>/<name>`): `team-a/x`
    sorts before `team/x`, as kube-apiserver lists them."""
    return namespace + "/"


def key_order(key: tuple[str, str]) -> tuple[str, str]:
    """Sort key of a (namespace, name) pair in etcd key order."""
    return key[0] + "/", key[1]


#: The group-qualified built-in resources, whose keys drop the group.
GROUPED_BUILTINS = frozenset(
    {
        *(r.store_resource for r in RESOURCES if r.group),
        "controllerrevisions.apps",
        "csinodes.storage.k8s.io",
        "storageclasses.storage.k8s.io",
    }
)


def key_segment(resource: str) -> str:
    """The key segment of a resource: the plural for the built-in kinds (the group dropped as
    upstream does: `deployments.apps` is stored under `/registry/deployments`), `<group>/<plural>`
    for custom resources (apiextensions-apiserver's `/registry/<group>/<plural>`)."""
    plural, dot, group = resource.partition(".")
    if not dot or resource in GROUPED_BUILTINS:
        return plural
    return f"{group}/{plural}"


def registry_key(prefix: str, resource: str, namespace: str, name: str) -> str:
    """kube-apiserver's key layout: `<prefix>/<segment>/<namespace>/<name>` (no namespace segment
    for cluster-scoped objects; the segment is `key_segment`'s)."""
    segment = key_segment(resource)
    base = prefix.rstrip("/")
    return f"{base}/{segment}/{namespace}/{name}" if namespace else f"{base}/{segment}/{name}"
