"""HTTP verbs on resources: get, list, create, update (PUT), patch, delete, deletecollection,
the pods/binding, bindings and pods/eviction subresources, and deployments|replicasets/scale
(mirrors apiserver/pkg/endpoints/handlers/{get,create,update,patch,delete}.go and
pkg/registry/core/pod/storage/storage.go for binding and eviction). Every write goes through
`apiserver.rest.REST` to the one write path, `kubetaint.registry.Registry`.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from kubetaint.api import crformats, errors
from kubetaint.api.crd import GROUP as CRD_GROUP
from kubetaint.api.crd import CustomResource
from kubetaint.api.events_conversion import to_served, to_stored
from kubetaint.api.omitempty import omit_empty
from kubetaint.api.resources import Resource, stored_only_warning
from kubetaint.apiserver import crd_served, eventsv1, fieldmanagement, fieldvalidation, query, scale
from kubetaint.apiserver import patch as patches
from kubetaint.apiserver.limits import Limits
from kubetaint.apiserver.listing import list_read, validate_list_options
from kubetaint.apiserver.protobuf import MEDIA_TYPE as PROTOBUF
from kubetaint.apiserver.query import parse_int64
from kubetaint.apiserver.rest import REST, Target, check_decodable, grace_period, invalid, requesting_user
from kubetaint.apiserver.tables import build_table, include_object_policy, with_type
from kubetaint.apiserver.wire import (
    JSON,
    Duplicates,
    decode_object,
    decode_object_recording,
    dry_run,
    json_response,
    load_json_any,
    load_json_recording,
    load_protobuf,
    load_yaml_recording,
    media_type,
    negotiate,
    success_status,
    unsupported_media,
)
from kubetaint.clock.base import Clock
from kubetaint.registry import binding, eviction

_CONFLICT_RETRIES = 5


def _out(res: Resource, obj: JSON) -> JSON:
    """An object as served at the request's version (a custom resource's apiVersion, an
    events.k8s.io/v1 Event converted from the stored core Event)."""
    if isinstance(res, CustomResource):
        return crd_served.at_version(res, obj)
    return to_served(obj) if eventsv1.converts(res) else obj


def _in(res: Resource, obj: JSON, old: JSON | None) -> JSON:
    """A request's object as stored: an events.k8s.io/v1 Event as the core Event, checked as
    events.k8s.io/v1 writes are (`old`: the stored object an update replaces)."""
    if not eventsv1.converts(res):
        return obj
    # decoded as the target's kind (a patched object too, whatever a patch did to its kind and
    # apiVersion, as an update keeps the stored ones): the conversion reads well-typed fields only
    obj = {**obj, "apiVersion": res.api_version, "kind": res.kind}
    check_decodable(obj)
    stored = to_stored(obj)
    eventsv1.check_write(stored, old)
    return stored


def _field_selector(res: Resource, params: query.Query) -> str | None:
    """The request's field selector on the stored objects (events.k8s.io/v1 labels converted)."""
    return eventsv1.stored_field_selector(res, params.get("fieldSelector"))


def _to_scale(res: Resource, obj: JSON) -> JSON:
    return crd_served.to_scale(res, obj) if isinstance(res, CustomResource) else scale.to_scale(obj)


def _from_scale(res: Resource, parent: JSON, body: Any) -> JSON:
    if isinstance(res, CustomResource):
        return crd_served.from_scale(res, parent, body)
    return scale.from_scale(parent, body)


class Handlers:
    """The verbs: each reads and decodes its request, then writes through `rest` (the request's
    preparation, then the registry's write path)."""

    def __init__(self, rest: REST, clock: Clock, limits: Limits | None = None) -> None:
        self.rest = rest
        self.store = rest.store
        self.clock = clock
        self.limits = limits or Limits()

    # reads ---------------------------------------------------------------------------------

    def get(self, target: Target, request: Request) -> Response:
        res = target.res
        obj = self.store.get(res.store_resource, target.namespace, target.name)
        if target.subresource == "scale":
            return json_response(_to_scale(res, obj))
        rendering = negotiate(request.headers.get("accept"))
        if rendering.table:
            policy = include_object_policy(query.of(request).get("includeObject"))
            table = build_table(
                res, [obj], self.clock.now(), policy=policy, table_version=rendering.table_version
            )
            return json_response(table)
        return json_response(with_type(res, _out(res, obj)))

    def list(self, target: Target, request: Request) -> Response:
        res = target.res
        params = query.of(request)
        validate_list_options(params, watch=False)
        crd_served.check_field_labels(res, params.get("fieldSelector"))
        read = list_read(params, self.store)
        result = self.store.list(
            res.store_resource,
            namespace=target.namespace,
            label_selector=params.get("labelSelector"),
            field_selector=_field_selector(res, params),
            limit=read.limit,
            continue_token=params.get("continue") or None,
            resource_version=read.resource_version,
        )
        rendering = negotiate(request.headers.get("accept"))
        if rendering.table:
            policy = include_object_policy(params.get("includeObject"))
            table = build_table(
                res,
                result.items,
                self.clock.now(),
                policy=policy,
                table_version=rendering.table_version,
                resource_version=result.resource_version,
                continue_token=result.continue_token,
                remaining_item_count=result.remaining_item_count,
            )
            return json_response(table)
        meta: JSON = {"resourceVersion": result.resource_version}
        if result.continue_token:
            meta["continue"] = result.continue_token
        if result.remaining_item_count is not None:
            meta["remainingItemCount"] = result.remaining_item_count
        items = [omit_empty(_out(res, item)) for item in result.items]
        body = {"kind": res.list_kind, "apiVersion": res.api_version, "metadata": meta, "items": items}
        return json_response(body)

    # writes --------------------------------------------------------------------------------

    async def create(self, target: Target, request: Request) -> Response:
        fieldmanagement.check_options(request, "CreateOptions")
        obj, twice, yaml_error = decode_object_recording(await request.body(), media_type(request))
        validation = query.of(request).get("fieldValidation")
        obj, warnings = fieldvalidation.decode(
            target.res, obj, validation, duplicates=twice, yaml_error=yaml_error
        )
        obj = self.rest.check_namespace(target, self.rest.check_type(target.res, obj))
        if isinstance(target.res, CustomResource):
            obj, pruned = crd_served.decode(target.res, obj, validation)
            warnings = [*warnings, *pruned]
        obj = fieldmanagement.record(target, obj, None, request, self.clock)
        created = self.rest.create(target, _in(target.res, obj, None), dry_run(request))
        warnings = [*_created_warnings(target, warnings), *_strategy_warnings(target, created, None)]
        return fieldvalidation.with_warnings(json_response(_out(target.res, created), 201), warnings)

    async def update(self, target: Target, request: Request) -> Response:
        fieldmanagement.check_options(request, "UpdateOptions")
        obj, twice, yaml_error = decode_object_recording(await request.body(), media_type(request))
        if target.subresource == "scale":  # the body is a Scale; the parent's spec.replicas changes
            old = self.store.get(target.res.store_resource, target.namespace, target.name)
            parent = Target(target.res, target.namespace, target.name)
            stored = self.rest.update(parent, _from_scale(target.res, old, obj), old, dry_run(request))
            return json_response(_to_scale(target.res, stored))
        validation = query.of(request).get("fieldValidation")
        obj, warnings = fieldvalidation.decode(
            target.res, obj, validation, duplicates=twice, yaml_error=yaml_error
        )
        self.rest.check_name(target, obj)
        obj = self.rest.check_namespace(target, self.rest.check_type(target.res, obj))
        obj = {**obj, "metadata": {**obj["metadata"], "name": target.name}}
        if isinstance(target.res, CustomResource):
            obj, pruned = crd_served.decode(target.res, obj, validation)
            warnings = [*warnings, *pruned]
        old = self.store.get(target.res.store_resource, target.namespace, target.name)
        obj = fieldmanagement.record(target, obj, _out(target.res, old), request, self.clock)
        updated = self.rest.update(target, _in(target.res, obj, old), old, dry_run(request))
        warnings = [*warnings, *_strategy_warnings(target, updated, old)]
        return fieldvalidation.with_warnings(json_response(_out(target.res, updated)), warnings)

    async def patch(self, target: Target, request: Request) -> Response:
        kind = media_type(request)
        if isinstance(target.res, CustomResource):  # no Go struct to merge strategically
            accepted = [t for t in patches.PATCH_TYPES if t != patches.STRATEGIC_PATCH]
            if kind not in accepted:
                raise unsupported_media(", ".join(accepted))
        elif kind not in patches.PATCH_TYPES:
            raise unsupported_media(", ".join(patches.PATCH_TYPES))
        fieldmanagement.check_options(request, "PatchOptions", apply=kind == patches.APPLY_PATCH)
        raw = await request.body()
        yaml_error: str | None = None
        twice: Duplicates = {}
        if kind == patches.APPLY_PATCH:
            body, yaml_error = load_yaml_recording(raw)
        else:
            body, twice = load_json_recording(raw)
        warnings: list[str] = []
        if kind != patches.JSON_PATCH:
            validation = query.of(request).get("fieldValidation")
            body, warnings = fieldvalidation.decode(
                target.res, body, validation, patch=True, duplicates=twice
            )
            warnings = [*fieldvalidation.check_apply_yaml(yaml_error, validation), *warnings]
        is_dry_run = dry_run(request)
        res = target.res
        for attempt in range(_CONFLICT_RETRIES):
            try:
                old = self.store.get(res.store_resource, target.namespace, target.name)
            except errors.StatusError as exc:
                if exc.code == 404 and kind == patches.APPLY_PATCH and not target.subresource:
                    created = self._apply_create(target, body, request, is_dry_run)
                    return fieldvalidation.with_warnings(created, _created_warnings(target, warnings))
                raise
            caller_rv = _mentions_resource_version(body)
            scaling = target.subresource == "scale"
            stored = old
            if eventsv1.converts(res):  # the patch applies to the events.k8s.io/v1 Event
                old = to_served(stored)
            if scaling:  # the patch applies to the Scale; the parent's spec.replicas changes
                patched = _from_scale(res, old, self._apply_patch(kind, _to_scale(res, old), body, request))
            elif kind == patches.APPLY_PATCH:
                patched = self._server_side_apply(target, old, body, request)
            else:
                patched = self._apply_patch(kind, old, body, request)
                patched = fieldmanagement.record(target, patched, old, request, self.clock)
                if kind == patches.JSON_PATCH:  # the patched object decodes into its Go type
                    validation = query.of(request).get("fieldValidation")
                    patched, warnings = fieldvalidation.decode_patched(res, patched, validation)
            if isinstance(res, CustomResource) and not scaling:
                validation = query.of(request).get("fieldValidation")
                patched, pruned = crd_served.decode(res, patched, validation, patch=True)
                warnings = [*warnings, *pruned]
            patches.check_size(patched, self.limits.max_request_body_bytes)
            try:
                if scaling:
                    parent = Target(res, target.namespace, target.name)
                    written = self._store_patched(parent, patched, stored, caller_rv, is_dry_run)
                    applied = [fieldmanagement.SCALE_APPLY_WARNING] if kind == patches.APPLY_PATCH else []
                    return fieldvalidation.with_warnings(json_response(_to_scale(res, written)), applied)
                if kind == patches.APPLY_PATCH and patched == old:  # a no-op apply writes nothing
                    return fieldvalidation.with_warnings(json_response(_out(res, stored)), warnings)
                written = self._store_patched(
                    target, _in(res, patched, stored), stored, caller_rv, is_dry_run
                )
                warnings = [*warnings, *_strategy_warnings(target, written, stored)]
                return fieldvalidation.with_warnings(json_response(_out(res, written)), warnings)
            except errors.StatusError as exc:
                # Patches without a resourceVersion are retried on conflict, as upstream.
                if (
                    exc.code != 409
                    or exc.reason != "Conflict"
                    or caller_rv
                    or attempt == _CONFLICT_RETRIES - 1
                ):
                    raise
        raise AssertionError("unreachable")

    def _apply_patch(self, kind: str, old: JSON, body: Any, request: Request) -> JSON:
        if kind == patches.JSON_PATCH:
            patched = patches.json_patch(old, body, self.limits.max_request_body_bytes)
        elif kind == patches.MERGE_PATCH:
            if not isinstance(body, dict):
                raise errors.bad_request("the patch must be a JSON object")
            patched = patches.merge_patch(old, body)
        elif kind == patches.STRATEGIC_PATCH:
            patched = patches.strategic_merge(old, body)
        else:  # an apply to /scale merges into the Scale; ownership of spec.replicas is not tracked
            if not isinstance(body, dict):
                raise errors.bad_request("error decoding YAML: the apply configuration must be an object")
            patched = patches.merge_patch(old, {k: v for k, v in body.items() if k != "metadata"})
        if not isinstance(patched, dict):
            raise errors.StatusError(422, "Invalid", "the patched object must be a JSON object")
        return patched

    def _server_side_apply(self, target: Target, old: JSON | None, body: Any, request: Request) -> JSON:
        """Server-side apply (kubetaint.core.fieldmanager): the applied configuration merged by
        the kind's schema, with field ownership, conflicts and removal of fields the manager
        no longer applies."""
        if not isinstance(body, dict):
            raise errors.bad_request("error decoding YAML: the apply configuration must be an object")
        return fieldmanagement.apply(target, old, body, request, self.clock)

    def _apply_create(self, target: Target, body: Any, request: Request, is_dry_run: bool) -> Response:
        if not isinstance(body, dict):
            raise errors.bad_request("error decoding YAML: the apply configuration must be an object")
        obj = self._server_side_apply(target, None, body, request)
        obj = self.rest.check_namespace(target, self.rest.check_type(target.res, obj))
        if isinstance(target.res, CustomResource):
            obj, _ = crd_served.decode(target.res, obj, query.of(request).get("fieldValidation"), patch=True)
        self.rest.check_name(target, obj)
        obj = {**obj, "metadata": {**obj["metadata"], "name": target.name}}
        created = self.rest.create(target, _in(target.res, obj, None), is_dry_run)
        response = json_response(_out(target.res, created), 201)
        return fieldvalidation.with_warnings(response, _strategy_warnings(target, created, None))

    def _store_patched(
        self, target: Target, patched: JSON, old: JSON, caller_rv: bool, is_dry_run: bool
    ) -> JSON:
        meta = patched.get("metadata")
        meta = dict(meta) if isinstance(meta, dict) else {}
        old_meta = old.get("metadata") or {}
        meta["name"] = old_meta.get("name")
        if target.res.namespaced:
            meta["namespace"] = old_meta.get("namespace")
        if not caller_rv:
            meta["resourceVersion"] = old_meta.get("resourceVersion")
        patched = {**patched, "metadata": meta}
        if patched.get("apiVersion") and patched.get("kind"):
            check_decodable(patched)  # the patched object is decoded into its Go type: 400 when it cannot be
        return self.rest.update(target, patched, old, is_dry_run)

    async def delete(self, target: Target, request: Request) -> Response:
        options = await _delete_options(request)
        is_dry_run = dry_run(
            request, options.get("dryRun") if isinstance(options.get("dryRun"), list) else None
        )
        gone = self.rest.delete(target, options, is_dry_run)
        res = target.res
        meta = gone.get("metadata") or {}
        # pending, pods and namespaces (ReturnDeletedObject): the object itself
        if res.store_resource in ("pods", "namespaces") or meta.get("deletionTimestamp"):
            return json_response(with_type(res, _out(res, gone)))
        details: JSON = {"name": target.name, "kind": res.plural, "uid": meta.get("uid", "")}
        if res.group:
            details["group"] = res.group
        return json_response(success_status(200, details))

    async def delete_collection(self, target: Target, request: Request) -> Response:
        validate_list_options(query.of(request), watch=False)  # delete.go DeleteCollection
        crd_served.check_field_labels(target.res, query.of(request).get("fieldSelector"))
        options = await _delete_options(request)
        is_dry_run = dry_run(
            request, options.get("dryRun") if isinstance(options.get("dryRun"), list) else None
        )
        res = target.res
        listed = self.store.list(
            res.store_resource,
            namespace=target.namespace,
            label_selector=query.of(request).get("labelSelector"),
            field_selector=_field_selector(res, query.of(request)),
        )
        deleted = []
        for obj in listed.items:
            meta = obj.get("metadata") or {}
            one = Target(res, str(meta.get("namespace") or ""), str(meta.get("name")))
            try:
                deleted.append(self.rest.delete(one, options, is_dry_run))
            except errors.StatusError as exc:
                if exc.code != 404:
                    raise
        items = [_out(res, obj) for obj in deleted]
        body = {"kind": res.list_kind, "apiVersion": res.api_version, "metadata": {}, "items": items}
        return json_response(body)

    # pods/binding, bindings, pods/eviction --------------------------------------------------

    async def bind(self, target: Target, request: Request) -> Response:
        body = decode_object(await request.body(), media_type(request))
        body = self.rest.check_type(target.res, body, kind="Binding")
        meta = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
        assert isinstance(meta, dict)
        name = target.name or str(meta.get("name") or "")
        if target.name and meta.get("name") and meta["name"] != target.name:
            raise errors.bad_request("name in URL does not match name in Binding object")
        if meta.get("namespace") and meta["namespace"] != target.namespace:
            raise errors.bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
        node = _binding_node(body, name)
        is_dry_run = dry_run(request)
        annotations = meta.get("annotations")
        for attempt in range(_CONFLICT_RETRIES):
            try:
                binding.bind(
                    self.rest.registry,
                    target.namespace,
                    name,
                    node,
                    annotations=annotations if isinstance(annotations, dict) else None,
                    dry_run=is_dry_run,
                    user=requesting_user(),
                )
                break
            except errors.StatusError as exc:
                if exc.reason != "Conflict" or attempt == _CONFLICT_RETRIES - 1:
                    raise
        return json_response(success_status(201), 201)

    async def evict(self, target: Target, request: Request) -> Response:
        """Eviction deletes the pod once admission allows it and no PodDisruptionBudget forbids
        it (429 when one does: kubetaint.registry.eviction)."""
        body = decode_object(await request.body(), media_type(request))
        body = self.rest.check_type(target.res, body, kind="Eviction")
        options = body.get("deleteOptions") if isinstance(body.get("deleteOptions"), dict) else {}
        assert isinstance(options, dict)
        is_dry_run = dry_run(
            request, options.get("dryRun") if isinstance(options.get("dryRun"), list) else None
        )
        eviction.evict(
            self.rest.registry,
            self.clock,
            target.namespace,
            target.name,
            grace_period_seconds=grace_period(options),
            eviction=body,
            dry_run=is_dry_run,
            user=requesting_user(),
        )
        return json_response(success_status(201), 201)


def _created_warnings(target: Target, warnings: list[str]) -> list[str]:
    """The warnings of a create: the body's, then, for a kind kubetaint stores without running
    its controller, a warning saying so (never a silent store)."""
    extra = stored_only_warning(target.res)
    return [*warnings, extra] if extra else warnings


def _strategy_warnings(target: Target, written: JSON, old: JSON | None) -> list[str]:
    """The warnings of a write besides the decoder's: the strategy's (WarningsOnCreate /
    WarningsOnUpdate: a custom resource's finalizer names it added, a CRD's unrecognized
    formats), then what of a written CRD kubetaint does not model (crd_served.crd_warnings)."""
    if isinstance(target.res, CustomResource):
        return crd_served.finalizer_warnings(written, old)
    if (target.res.group, target.res.kind) != (CRD_GROUP, "CustomResourceDefinition") or target.subresource:
        return []
    return [*crformats.format_warnings(written, old), *crd_served.crd_warnings(written)]


def _binding_node(binding: JSON, name: str) -> str:
    target = binding.get("target") if isinstance(binding.get("target"), dict) else {}
    assert isinstance(target, dict)
    causes = []
    if target.get("kind") not in (None, "", "Node"):
        causes.append(
            (
                "target.kind",
                "FieldValueNotSupported",
                f'Unsupported value: "{target["kind"]}": supported values: "Node", "<empty>"',
            )
        )
    if not target.get("name"):
        causes.append(("target.name", "FieldValueRequired", "Required value"))
    if causes:
        raise invalid("Binding", name, causes)
    return str(target["name"])


def _mentions_resource_version(body: Any) -> bool:
    if isinstance(body, dict):
        meta = body.get("metadata")
        return isinstance(meta, dict) and bool(meta.get("resourceVersion"))
    if isinstance(body, list):
        return any(isinstance(op, dict) and op.get("path") == "/metadata/resourceVersion" for op in body)
    return False


async def _delete_options(request: Request) -> JSON:
    raw = await request.body()
    options: JSON = {}
    if raw.strip() and media_type(request) in ("", "application/json"):
        value = load_json_any(raw)
        if not isinstance(value, dict):
            raise errors.bad_request("DeleteOptions: expected a JSON object")
        options = value
    elif raw and media_type(request) == PROTOBUF:  # kubectl drain --disable-eviction
        options = load_protobuf(raw)
        if options.get("kind") != "DeleteOptions":
            raise errors.bad_request(f"the kind in the data ({options.get('kind')}) must be DeleteOptions")
    grace = query.of(request).get("gracePeriodSeconds")
    if grace is not None:
        seconds = parse_int64(grace, "gracePeriodSeconds")
        options.setdefault("gracePeriodSeconds", seconds)  # the body's DeleteOptions win
    return options
