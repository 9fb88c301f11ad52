"""managedFields on the HTTP writes and server-side apply (apiserver/pkg/endpoints/handlers:
create.go, update.go and patch.go with their field manager; the options' checks of
apimachinery/pkg/apis/meta/v1/validation).

The field manager of a request is `?fieldManager=`, or the User-Agent's product name
(`managerOrUserAgent`: `kubectl/v1.33.0 (linux/amd64)` records `kubectl`). Writes through
the main resource of a kind with a status subresource record no status fields (the strategies'
reset fields), writes through `/status` record only status. `/scale` writes leave managedFields
as they are (upstream's scale handler, which converts `.spec.replicas` ownership between the
Scale and its parent, is not modelled).
"""

from __future__ import annotations

import unicodedata
from typing import Any

from starlette.requests import Request

from kubetaint.api import errors
from kubetaint.api.crd import CustomResource
from kubetaint.api.jsonview import meta_of
from kubetaint.api.validation import field as fe
from kubetaint.apiserver import fieldvalidation, query
from kubetaint.apiserver.rest import Target
from kubetaint.clock.base import Clock, format_time
from kubetaint.core.fieldmanager import manager as fm
from kubetaint.core.fieldmanager.entries import identity_of
from kubetaint.core.fieldmanager.fieldpath import path_string
from kubetaint.core.fieldmanager.merge import ConflictsError

JSON = dict[str, Any]

#: The warning of an apply to `/scale`, whose field ownership kubetaint does not track.
SCALE_APPLY_WARNING = (
    "not modelled: an apply to /scale merges into the Scale without field ownership "
    "(managedFields of the parent are left as they are)"
)
#: apimachinery validation.FieldManagerMaxLength.
FIELD_MANAGER_MAX_LENGTH = 128


def _printable(char: str) -> bool:
    """Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space."""
    return char == " " or unicodedata.category(char)[0] in "LMNPS"


def prefix_from_user_agent(user_agent: str) -> str:
    """prefixFromUserAgent: the User-Agent up to its first `/`, printable characters only,
    at most 128 bytes."""
    out: list[str] = []
    size = 0
    for char in user_agent.split("/", 1)[0]:
        if not _printable(char):
            continue
        width = len(char.encode())
        if size + width > FIELD_MANAGER_MAX_LENGTH:
            break
        out.append(char)
        size += width
    return "".join(out)


def manager_of(request: Request) -> str:
    """managerOrUserAgent: `?fieldManager=`, else the User-Agent's prefix."""
    return query.of(request).get("fieldManager") or prefix_from_user_agent(
        request.headers.get("user-agent", "")
    )


def _field_manager_errors(manager: str) -> list[fe.FieldError]:
    """ValidateFieldManager."""
    out = []
    if len(manager.encode()) > FIELD_MANAGER_MAX_LENGTH:
        out.append(fe.too_long("fieldManager", FIELD_MANAGER_MAX_LENGTH))
    position = 0
    for char in manager:
        if not _printable(char):
            out.append(
                fe.invalid(
                    "fieldManager", manager, f"invalid character U+{ord(char):04X} (at position {position})"
                )
            )
        position += len(char.encode())
    return out


def _options_invalid(kind: str, causes: list[fe.FieldError]) -> errors.StatusError:
    texts = [str(c) for c in causes]
    joined = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    return errors.StatusError(
        422,
        "Invalid",
        f'{kind}.meta.k8s.io "" is invalid: {joined}',
        kind=kind,
        group="meta.k8s.io",
        causes=[{"reason": c.reason, "message": c.message, "field": c.field} for c in causes],
    )


def check_options(request: Request, kind: str, apply: bool = False) -> None:
    """ValidateCreateOptions / ValidateUpdateOptions / ValidatePatchOptions for the field
    manager, `force` and `fieldValidation` (422 `CreateOptions.meta.k8s.io "" is invalid: ...`)."""
    params = query.of(request)
    manager = params.get("fieldManager") or ""
    causes: list[fe.FieldError] = []
    if kind == "PatchOptions":
        if not apply and "force" in params:
            causes.append(fe.forbidden("force", "may not be specified for non-apply patch"))
        if apply and not manager:
            causes.append(fe.required("fieldManager", "is required for apply patch"))
    causes += _field_manager_errors(manager)
    validation = params.get("fieldValidation") or ""
    if validation not in fieldvalidation.SUPPORTED:  # ValidateFieldValidation
        causes.append(fe.not_supported("fieldValidation", validation, sorted(fieldvalidation.SUPPORTED)))
    if causes:
        raise _options_invalid(kind, causes)


def _request(target: Target, request: Request, clock: Clock) -> fm.Request:
    return fm.Request(
        manager_of(request), target.res.api_version, target.subresource, format_time(clock.now())
    )


def _schema(target: Target) -> JSON | None:
    """A custom resource's structural schema (its fields are typed by it, not deduced)."""
    res = target.res
    return res.schema if isinstance(res, CustomResource) and res.schema else None


def effective(target: Target, new: JSON, old: JSON | None) -> JSON:
    """What a write changes, as the registry keeps it: through `/status` only the status;
    through the main resource of a kind with a status subresource everything but the status."""
    if old is None:
        return new
    if target.subresource == "status":
        out = {**old, "metadata": {**meta_of(old), "managedFields": meta_of(new).get("managedFields")}}
        if "status" in new:
            out["status"] = new["status"]
        else:
            out.pop("status", None)
        if out["metadata"]["managedFields"] is None:
            del out["metadata"]["managedFields"]
        return out
    if target.res.has_status and not target.subresource:
        out = {k: v for k, v in new.items() if k != "status"}
        if "status" in old:
            out["status"] = old["status"]
        return out
    return new


def record(target: Target, new: JSON, old: JSON | None, request: Request, clock: Clock) -> JSON:
    """`new` with managedFields updated for this write (create when `old` is None)."""
    if target.subresource not in ("", "status"):
        return new
    recorded = fm.update(
        old, effective(target, new, old), _request(target, request, clock), schema=_schema(target)
    )
    meta = {**meta_of(new)}
    if "managedFields" in meta_of(recorded):
        meta["managedFields"] = meta_of(recorded)["managedFields"]
    else:
        meta.pop("managedFields", None)
    return {**new, "metadata": meta}


def apply(target: Target, old: JSON | None, config: JSON, request: Request, clock: Clock) -> JSON:
    """Server-side apply of `config` over `old` (None: the object is created): the merged object
    with its managedFields; a 409 listing the conflicts unless `?force=true`."""
    force = query.of(request).flag("force")
    if target.res.has_status and not target.subresource:
        config = {k: v for k, v in config.items() if k != "status"}
    elif target.subresource == "status":
        config = {k: v for k, v in config.items() if k in ("apiVersion", "kind", "metadata", "status")}
    try:
        return fm.apply(
            old, config, _request(target, request, clock), target.res.kind, force, schema=_schema(target)
        )
    except ConflictsError as exc:
        raise conflict_error(exc) from None
    except fm.ApplyError as exc:
        if exc.code == 400:
            raise errors.bad_request(exc.message) from None
        raise errors.StatusError(500, "InternalError", f"Internal error occurred: {exc.message}") from None


def print_manager(manager_id: str) -> str:
    """printManager: `"kubectl"`, `"kubelet" with subresource "status"`, `"x" using v1`."""
    who = identity_of(manager_id)
    text = '"' + who.manager.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if who.subresource:
        text += f' with subresource "{who.subresource}"'
    if who.operation == "Update":
        text += f" using {who.api_version}"
    return text


def conflict_error(exc: ConflictsError) -> errors.StatusError:
    """NewConflictError: 409 Conflict, one `FieldManagerConflict` cause per conflicting field."""
    conflicts = exc.conflicts
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {print_manager(c.manager)}",
            "field": path_string(c.path),
        }
        for c in conflicts
    ]
    if len(conflicts) == 1:
        only = conflicts[0]
        who, where = print_manager(only.manager), path_string(only.path)
        message = f"Apply failed with 1 conflict: conflict with {who}: {where}"
    else:
        by_manager: dict[str, list[str]] = {}
        for c in conflicts:
            by_manager.setdefault(c.manager, []).append(path_string(c.path))
        lines = []
        for manager in sorted(by_manager):
            lines.append(f"conflicts with {print_manager(manager)}:")
            lines.extend(f"- {p}" for p in by_manager[manager])
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return errors.StatusError(409, "Conflict", message, causes=causes)
