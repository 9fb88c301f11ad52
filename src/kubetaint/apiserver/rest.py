"""What the HTTP handlers do to a request's object before the write path: the body's kind,
group version, namespace and name checks, generateName, and what of the resource strategies'
preparation only a request has (PrepareForCreate / PrepareForUpdate: a created pod's status,
the status-subresource split, a Service's ClusterIP and NodePort allocation, custom resources'
schemas); then `kubetaint.registry.Registry` (defaulting, admission, validation, the store)
with the requesting user (mirrors apiserver/pkg/registry/rest/create.go, rest/update.go and the
registry strategies). The kinds' defaults are the registry's (`registry.defaulting`), for an
HTTP request and an in-process write alike.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass
from typing import Any

from kubetaint.api import errors
from kubetaint.api.crd import CRDS, CustomResource
from kubetaint.api.gobase64 import corrupt_input_offset
from kubetaint.api.gojson import json_kind
from kubetaint.api.goquote import go_quote
from kubetaint.api.jsonview import meta_of
from kubetaint.api.models import DecodeError, decode, model_for
from kubetaint.api.omitempty import omit_empty
from kubetaint.api.user import UserInfo
from kubetaint.apiserver import crd_served
from kubetaint.apiserver.authn import CURRENT_USER
from kubetaint.apiserver.resources import ResourceInfo
from kubetaint.clock.base import Clock
from kubetaint.core.deletion import POLICIES, keep_deletion_fields, propagation_from_options
from kubetaint.core.names import generate_name
from kubetaint.core.services import (
    AllocationError,
    ServiceNetwork,
    allocate,
    allocated_values,
    drop_type_dependent_fields,
    keep_allocated_values,
)
from kubetaint.registry import Registry
from kubetaint.registry.defaulting import defaulted
from kubetaint.store.mutation import check_update_preconditions

JSON = dict[str, Any]
#: (field path, cause reason such as `FieldValueRequired`, error body such as `Required value`).
FieldCause = tuple[str, str, str]


@dataclass(frozen=True, slots=True)
class Target:
    """What a request addresses: a resource, a namespace ("" for cluster scope or all
    namespaces), a name ("" for the collection) and a subresource ("" for the main resource)."""

    res: ResourceInfo
    namespace: str = ""
    name: str = ""
    subresource: str = ""


def invalid(kind: str, name: str, causes: list[FieldCause]) -> errors.StatusError:
    """422 Invalid as `errors.NewInvalid` renders it."""
    texts = [f"{field}: {message}" if field else message for field, _, message in causes]
    joined = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    return errors.StatusError(
        422,
        "Invalid",
        f'{kind} "{name}" is invalid: {joined}',
        name=name,
        kind=kind,
        causes=[{"reason": reason, "message": message, "field": field} for field, reason, message in causes],
    )


def check_decodable(obj: JSON) -> None:
    """kube-apiserver decodes a body into its Go type before anything else: a field of the wrong
    JSON type is a 400 with the decoder's message (`Pod in version "v1" cannot be handled as a
    Pod: json: cannot unmarshal number into Go struct field Pod.spec of type v1.PodSpec`)."""
    if (obj["apiVersion"], obj["kind"]) == ("v1", "Secret"):
        _check_secret_maps(obj)
    if model_for(str(obj["apiVersion"]), str(obj["kind"])) is None:
        return
    try:
        decode(obj)
    except DecodeError as exc:
        raise errors.bad_request(str(exc)) from None


def _check_secret_maps(secret: JSON) -> None:
    """A Secret's `data` values are `[]byte` (base64 text) and `stringData` values strings."""
    for field, go_type in (("data", "[]uint8"), ("stringData", "string")):
        values = secret.get(field)
        if values is None:
            continue
        if not isinstance(values, dict):
            raise _secret_decode_error(
                f"json: cannot unmarshal {json_kind(values)} into Go struct field "
                f"Secret.{field} of type map[string]{go_type}"
            )
        for value in values.values():
            if value is None:
                continue
            if not isinstance(value, str):
                raise _secret_decode_error(
                    f"json: cannot unmarshal {json_kind(value)} into Go struct field Secret.{field} "
                    f"of type {go_type}"
                )
            offset = corrupt_input_offset(value) if field == "data" else None
            if offset is not None:
                raise _secret_decode_error(f"illegal base64 data at input byte {offset}")


def _secret_decode_error(message: str) -> errors.StatusError:
    return errors.bad_request(f'Secret in version "v1" cannot be handled as a Secret: {message}')


def requesting_user() -> UserInfo | None:
    """The user of the request being served (request.UserFrom): what admission sees."""
    return CURRENT_USER.get()


class REST:
    """Prepares request objects and writes them through `registry` for the HTTP handlers."""

    def __init__(
        self,
        registry: Registry,
        rng: random.Random,
        clock: Clock,
        network: ServiceNetwork | None = None,
    ) -> None:
        self.registry = registry
        self.store = registry.store
        self.rng = rng
        self.clock = clock
        self.network = network or ServiceNetwork()

    def _allocate_service(self, obj: JSON, old: JSON | None) -> JSON:
        """The Service REST storage's allocation (before validation, as upstream's beginCreate
        and beginUpdate): its ClusterIP and NodePorts, from the values other Services hold."""
        key = (meta_of(obj).get("namespace"), meta_of(obj).get("name"))
        others = (
            s
            for s in self.store.list("services").items
            if (meta_of(s).get("namespace"), meta_of(s).get("name")) != key
        )
        try:
            return allocate(obj, old, allocated_values(others), self.network, self.rng)
        except AllocationError as err:
            causes = [(c.field, c.reason, c.message) for c in err.causes]
            raise invalid("Service", str(key[1] or ""), causes) from None

    # preparation ---------------------------------------------------------------------------

    def check_type(self, res: ResourceInfo, obj: JSON, kind: str | None = None) -> JSON:
        """Reject a body of another kind or group version; fill in kind/apiVersion."""
        want_kind = kind or res.kind
        api_version = obj.get("apiVersion")
        if api_version not in (None, "") and api_version != res.api_version and kind is None:
            raise errors.bad_request(
                f"the API version in the data ({api_version}) does not match the expected API version "
                f"({res.api_version})"
            )
        if obj.get("kind") not in (None, "", want_kind):
            raise errors.bad_request(
                f"the kind in the data ({obj.get('kind')}) does not match the expected kind ({want_kind})"
            )
        if kind is not None:
            return obj
        typed = {**obj, "kind": res.kind, "apiVersion": res.api_version}
        check_decodable(typed)
        return typed

    def check_namespace(self, target: Target, obj: JSON) -> JSON:
        meta = dict(meta_of(obj))
        if target.res.namespaced:
            given = meta.get("namespace") or ""
            if given and given != target.namespace:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            meta["namespace"] = target.namespace
        else:
            meta.pop("namespace", None)
        return {**obj, "metadata": meta}

    def check_name(self, target: Target, obj: JSON) -> None:
        name = meta_of(obj).get("name") or ""
        if name != target.name:
            if not name:
                return
            raise errors.bad_request(
                f"the name of the object ({name}) does not match the name on the URL ({target.name})"
            )

    def generate_name(self, res: ResourceInfo, obj: JSON) -> JSON:
        meta = meta_of(obj)
        if meta.get("name"):
            return obj
        base = meta.get("generateName")
        if not base:
            raise invalid(
                res.kind,
                "",
                [("metadata.name", "FieldValueRequired", "Required value: name or generateName is required")],
            )
        return {**obj, "metadata": {**meta, "name": generate_name(str(base), self.rng)}}

    # writes --------------------------------------------------------------------------------

    def create(self, target: Target, obj: JSON, dry_run: bool) -> JSON:
        obj = self.generate_name(target.res, obj)
        meta = {
            k: v
            for k, v in meta_of(obj).items()
            if k not in ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp", "generation")
        }
        obj = {**obj, "metadata": meta}
        if (target.res.group, target.res.kind) == ("batch", "Job"):
            # the generic store fills the uid before the Job strategy derives its selector from it
            # (in the registry's defaulting step)
            uid = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
            obj = {**obj, "metadata": {**meta_of(obj), "uid": uid}}
        if _is_services(target.res):
            obj = self._allocate_service(defaulted(obj), None)
        resource = target.res.store_resource
        return self.registry.create(
            resource, omit_empty(obj), dry_run=dry_run, user=requesting_user(), strategy=_strategy(target)
        )

    def update(self, target: Target, obj: JSON, old: JSON, dry_run: bool) -> JSON:
        """Replace `old` by `obj` honouring the status-subresource split; a resourceVersion in
        `obj` is a precondition (409 Conflict when stale)."""
        res = target.res
        if not _allows_unconditional_update(res) and not meta_of(obj).get("resourceVersion"):
            raise _resource_version_required(res, target.name)
        if _is_services(res) and not target.subresource:
            obj = drop_type_dependent_fields(keep_allocated_values(defaulted(obj), old), old)
            obj = self._allocate_service(obj, old)
        if target.subresource == "status":
            rv = meta_of(obj).get("resourceVersion")
            merged_meta = {**meta_of(old)}
            if rv:
                merged_meta["resourceVersion"] = rv
            if "managedFields" in meta_of(obj):  # recorded by the handler's field manager
                merged_meta["managedFields"] = meta_of(obj)["managedFields"]
            obj = {**old, "metadata": merged_meta, "status": obj.get("status")}
            if obj["status"] is None:
                obj.pop("status")
        elif res.has_status and not target.subresource:
            obj = {k: v for k, v in obj.items() if k != "status"}
            if "status" in old:
                obj["status"] = old["status"]
        obj = {**obj, "kind": old.get("kind", res.kind), "apiVersion": old.get("apiVersion", res.api_version)}
        check_update_preconditions(res.store_resource, obj, old)  # 409 before any 422, as upstream
        obj = omit_empty(keep_deletion_fields(_generation_of(obj, old), old))
        user = requesting_user()
        strategy = _strategy(target)
        if target.subresource == "status":
            return self.registry.update_status(
                res.store_resource, obj, dry_run=dry_run, user=user, strategy=strategy
            )
        if target.subresource == "finalize" and _is_namespaces(res):
            return self.registry.finalize_namespace(obj, dry_run=dry_run, user=user)
        return self.registry.update(res.store_resource, obj, dry_run=dry_run, user=user, strategy=strategy)

    def delete(self, target: Target, options: JSON, dry_run: bool) -> JSON:
        pre = options.get("preconditions") if isinstance(options.get("preconditions"), dict) else {}
        assert isinstance(pre, dict)
        policy = propagation_policy(options)  # a bad policy is a 422 for every kind
        grace = grace_period(options)
        return self.registry.delete(
            target.res.store_resource,
            target.namespace,
            target.name,
            resource_version=pre.get("resourceVersion") or None,
            uid=pre.get("uid") or None,
            dry_run=dry_run,
            grace_period_seconds=grace,
            propagation_policy=policy,
            graceful=True,
            user=requesting_user(),
        )


def _allows_unconditional_update(res: ResourceInfo) -> bool:
    """The strategy's AllowUnconditionalUpdate: false for custom resources and
    CustomResourceDefinitions (their main and status strategies), whose updates must name the
    resourceVersion they replace; true for the other kinds kubetaint serves."""
    return not isinstance(res, CustomResource) and res.store_resource != CRDS


def _resource_version_required(res: ResourceInfo, name: str) -> errors.StatusError:
    """The generic store's 422 for an update without a resourceVersion when the strategy
    allows no unconditional update (NewInvalid of the GroupKind {group, resource}; the value is
    the uint64 0, which field.Error prints as `%#v`)."""
    qualified = f"{res.plural}.{res.group}" if res.group else res.plural
    detail = "Invalid value: 0x0: must be specified for an update"
    return errors.StatusError(
        422,
        "Invalid",
        f'{qualified} "{name}" is invalid: metadata.resourceVersion: {detail}',
        name=name,
        group=res.group,
        kind=res.plural,
        causes=[{"reason": "FieldValueInvalid", "message": detail, "field": "metadata.resourceVersion"}],
    )


def _strategy(target: Target) -> crd_served.CustomResourceStrategy | None:
    """The strategy the registry runs between mutating and validating admission for a request
    on `target` (a custom resource's: its PrepareForCreate/PrepareForUpdate and validation)."""
    if isinstance(target.res, CustomResource):
        return crd_served.CustomResourceStrategy(target.res, target.subresource)
    return None


def _generation_of(obj: JSON, old: JSON) -> JSON:
    """rest.BeforeUpdate: a request cannot set metadata.generation; it is old's until the
    strategy (or, for the kinds whose spec changes bump it, the store) moves it."""
    meta = meta_of(obj)
    generation = meta_of(old).get("generation")
    if meta.get("generation") == generation and ("generation" in meta) == (generation is not None):
        return obj
    meta = {k: v for k, v in meta.items() if k != "generation"}
    if generation is not None:
        meta["generation"] = generation
    return {**obj, "metadata": meta}


def _is_namespaces(res: ResourceInfo) -> bool:
    return res.plural == "namespaces" and not res.group


def _is_services(res: ResourceInfo) -> bool:
    return res.plural == "services" and not res.group


def propagation_policy(options: JSON) -> str | None:
    """DeleteOptions' propagation policy, checked as ValidateDeleteOptions checks it (422)."""
    policy = options.get("propagationPolicy")
    if policy is not None and options.get("orphanDependents") is not None:
        message = "orphanDependents and deletionPropagation cannot be both set"
        raise _invalid_delete_options(f"propagationPolicy: Invalid value: {_shown(policy)}: {message}")
    if policy is not None and policy not in POLICIES:
        supported = '"Foreground", "Background", "Orphan", "nil"'
        detail = f"Unsupported value: {_shown(policy)}: supported values: {supported}"
        raise _invalid_delete_options(f"propagationPolicy: {detail}")
    return propagation_from_options(options)


def _shown(value: object) -> str:
    return go_quote(value) if isinstance(value, str) else str(value)


def _invalid_delete_options(detail: str) -> errors.StatusError:
    return errors.StatusError(
        422, "Invalid", f'DeleteOptions.meta.k8s.io "" is invalid: {detail}', kind="DeleteOptions"
    )


def grace_period(options: JSON) -> int | None:
    """DeleteOptions.gracePeriodSeconds (an int64; anything else is a 400)."""
    value = options.get("gracePeriodSeconds")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise errors.bad_request(f"DeleteOptions.gracePeriodSeconds: expected an integer, got {value!r}")
    if not -(2**63) <= value < 2**63:
        raise errors.bad_request(
            f"json: cannot unmarshal number {value} into Go struct field "
            "DeleteOptions.gracePeriodSeconds of type int64"
        )
    return value
