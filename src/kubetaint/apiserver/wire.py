"""Wire conventions: JSON responses with a Content-Length, `Status` bodies, Accept negotiation
(Table or plain JSON), request-body decoding and Go-style query parameters
(mirrors apiserver/pkg/endpoints/handlers/negotiation and responsewriters).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from kubetaint.api import errors
from kubetaint.apiserver import limits, protobuf, query

JSON = dict[str, Any]
JSON_TYPE = "application/json"
TABLE_GROUP = "meta.k8s.io"


def dumps(body: Any) -> bytes:
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


def json_response(body: Any, status: int = 200, content_type: str = JSON_TYPE) -> Response:
    """A JSON response; starlette sets Content-Length so client-go can reuse the connection."""
    return Response(dumps(body), status_code=status, media_type=content_type)


def status_response(err: errors.StatusError) -> Response:
    return json_response(err.to_status(), err.code)


def success_status(code: int, details: JSON | None = None) -> JSON:
    status: JSON = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
    if details:
        status["details"] = details
    status["code"] = code
    return status


def not_found_path() -> errors.StatusError:
    """What kube-apiserver answers for a path no handler serves."""
    return errors.StatusError(404, "NotFound", "the server could not find the requested resource")


def dry_run(request: Request, body_values: list[Any] | None = None) -> bool:
    """`dryRun=All` (query or DeleteOptions body); any other value is a 400 as upstream."""
    values = list(query.of(request).getlist("dryRun")) + [str(v) for v in body_values or []]
    for value in values:
        if value != "All":
            raise errors.StatusError(
                400, "BadRequest", f'dryRun: Unsupported value: "{value}": supported values: "All"'
            )
    return bool(values)


@dataclass(frozen=True, slots=True)
class Rendering:
    """How to render a GET/LIST/WATCH response: plain objects, or a Table of `table_version`."""

    table: bool
    table_version: str = "v1"


def _media_params(item: str) -> tuple[str, dict[str, str]]:
    parts = [p.strip() for p in item.split(";")]
    params: dict[str, str] = {}
    for part in parts[1:]:
        key, _, value = part.partition("=")
        params[key.strip().lower()] = value.strip()
    return parts[0].lower(), params


def negotiate(accept: str | None) -> Rendering:
    """The first acceptable Accept entry wins (client-go orders them by preference)."""
    for item in (accept or "").split(","):
        media, params = _media_params(item)
        if media not in (JSON_TYPE, "application/*", "*/*", "application/yaml"):
            continue  # protobuf and others: every client also offers JSON
        wanted = params.get("as")
        if wanted is None:
            return Rendering(False)
        if wanted == "Table" and params.get("g") == TABLE_GROUP and params.get("v") in ("v1", "v1beta1"):
            return Rendering(True, params["v"])
    return Rendering(False)


_BODY_TYPES = f"application/json, application/yaml, {protobuf.MEDIA_TYPE}"


def unsupported_media(accepted: str) -> errors.StatusError:
    return errors.StatusError(
        415,
        "UnsupportedMediaType",
        f"the body of the request was in an unknown format - accepted media types include: {accepted}",
    )


def media_type(request: Request) -> str:
    return (request.headers.get("content-type") or "").split(";")[0].strip().lower()


#: id(dict) -> the keys a JSON body gave more than once in that object (the dicts are the
#: decoded body's own, so the mapping is valid while the body is).
Duplicates = dict[int, tuple[str, ...]]


def decode_object(raw: bytes, content_type: str, accepted: str = _BODY_TYPES) -> JSON:
    """Decode a create/update body: JSON (also when no Content-Type is sent, as Python client 37.x
    does), YAML or protobuf (kubectl's typed clients); anything else is 415."""
    return decode_object_recording(raw, content_type, accepted)[0]


def decode_object_recording(
    raw: bytes, content_type: str, accepted: str = _BODY_TYPES
) -> tuple[JSON, Duplicates, str | None]:
    """`decode_object` with the duplicate keys of a JSON body (last value wins, as in Go), or
    go-yaml's strict decoding error for those of a YAML body (`load_yaml_recording`)."""
    if content_type in ("", JSON_TYPE):
        value, duplicates = load_json_recording(raw)
        return _as_object(value), duplicates, None
    if content_type == protobuf.MEDIA_TYPE:
        return load_protobuf(raw), {}, None
    if content_type in ("application/yaml", "application/apply-patch+yaml"):
        value, repeated = load_yaml_recording(raw)
        return _as_object(value), {}, repeated
    raise unsupported_media(accepted)


def load_protobuf(raw: bytes) -> JSON:
    """A protobuf body as the JSON object it stands for; a malformed one is a 400."""
    try:
        return protobuf.decode_body(raw)
    except protobuf.ProtobufError as exc:
        raise errors.bad_request(str(exc)) from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"invalid character {name[0]!r} looking for beginning of value")


_SURROGATE_ESCAPE = re.compile(rb"\\[uU]0{0,4}[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _without_surrogates(value: Any) -> Any:
    """Lone UTF-16 surrogates replaced by U+FFFD, as Go's decoders do (Python keeps them, and
    they cannot be encoded back to UTF-8)."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_surrogates(v) for v in value]
    return value


def _clean_member(value: Any) -> Any:
    """A decoded member without lone surrogates; objects are already clean (their own hook ran)."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_clean_member(v) for v in value]
    return value


def load_json_recording(raw: bytes) -> tuple[Any, Duplicates]:
    """`_load_json`, recording the keys each object gives more than once (compared after lone
    surrogates become U+FFFD, as Go compares them); the dicts keep their identity."""
    duplicates: Duplicates = {}
    clean = _SURROGATE_ESCAPE.search(raw) is not None

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        if clean:
            pairs = [(_SURROGATE.sub("\ufffd", k), _clean_member(v)) for k, v in pairs]
        obj = dict(pairs)
        if len(obj) != len(pairs):
            seen: set[str] = set()
            twice = [key for key, _ in pairs if key in seen or seen.add(key)]  # type: ignore[func-returns-value]
            duplicates[id(obj)] = tuple(dict.fromkeys(twice))
        return obj

    value = _load_json(raw, pairs_hook, clean)
    return value, duplicates


def _load_json(raw: bytes, pairs_hook: Any = None, clean: bool = False) -> Any:
    """JSON as Go decodes it (no NaN/Infinity), then the depth and type guards of `limits`
    (`pairs_hook`: json's object_pairs_hook, which then owns replacing surrogates in objects)."""
    try:
        value = json.loads(raw, parse_constant=_reject_constant, object_pairs_hook=pairs_hook)
    except (ValueError, UnicodeDecodeError) as exc:
        raise errors.bad_request(f"error decoding JSON body: {exc}") from None
    except RecursionError:
        raise errors.bad_request(
            f"error decoding JSON body: exceeded max depth of {limits.MAX_BODY_DEPTH} nested objects"
        ) from None
    if pairs_hook is not None:
        value = _clean_member(value) if clean else value
    elif _SURROGATE_ESCAPE.search(raw):
        value = _without_surrogates(value)
    return limits.check_decoded(value, len(raw), "JSON")


_YAML_SURROGATE_ESCAPE = re.compile(rb"\\(?:u|U0000)[dD][89a-fA-F][0-9a-fA-F]{2}")


def load_yaml_recording(raw: bytes) -> tuple[Any, str | None]:
    """YAML bodies (each surrogate escape decodes to U+FFFD as go-yaml does; libyaml refuses them), with
    go-yaml's strict decoding error for keys given twice (None without any)."""
    return limits.load_yaml_json_recording(_YAML_SURROGATE_ESCAPE.sub(rb"\\uFFFD", raw))


def load_json_any(raw: bytes) -> Any:
    return _load_json(raw)


def _as_object(value: Any) -> JSON:
    if not isinstance(value, dict):
        raise errors.bad_request("Object 'Kind' is missing in request body: expected a JSON object")
    meta = value.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        raise errors.bad_request("metadata: expected an object")
    return value
