"""The query of one request, parsed once, read by everyone: authentication and authorization
(`security`), request info, admission and the handlers all take their parameters from the one
`Query` the security middleware puts on the request's scope (`of`).

A repeated parameter reads as upstream reads it: scalar options take the first value (Go's
`url.Values.Get` and apimachinery's runtime.Convert_Slice_string_To_{string,bool,int64}), list
options (`dryRun`) take every value. So `?watch=0&watch=1` is a list for the authorizer, the
watch counter and the handler alike, and `?fieldSelector=a&fieldSelector=` selects `a` everywhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from starlette.requests import HTTPConnection
from starlette.types import Scope

from kubetaint.api import errors

#: Where the parsed query lives on an ASGI scope (`scope["state"][STATE_KEY]`).
STATE_KEY = "query"
_INT64 = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class Query:
    """Query parameters in order of appearance; `get` is the first value of a name."""

    __slots__ = ("_values",)

    def __init__(self, pairs: Iterable[tuple[str, str]] = ()) -> None:
        values: dict[str, list[str]] = {}
        for key, value in pairs:
            values.setdefault(key, []).append(value)
        self._values = values

    def get(self, name: str) -> str | None:
        """The first value (url.Values.Get), or None when the parameter is absent."""
        values = self._values.get(name)
        return values[0] if values else None

    def getlist(self, name: str) -> list[str]:
        return list(self._values.get(name, ()))

    def __contains__(self, name: object) -> bool:
        return name in self._values

    def first_values(self) -> Mapping[str, str]:
        return {key: values[0] for key, values in self._values.items()}

    def flag(self, name: str) -> bool:
        return go_bool(self.get(name))

    def int64(self, name: str) -> int:
        """runtime.Convert_Slice_string_To_int64 (strconv.ParseInt base 10, 64 bits): 0 when
        absent or empty, a 400 for anything else that is not a 64-bit integer."""
        value = self.get(name)
        if not value:
            return 0
        return parse_int64(value, name)

    def replaced(self, name: str, value: str) -> Query:
        """A copy with every value of `name` replaced by `value` (the page cap)."""
        copy = Query()
        copy._values = {**self._values, name: [value]}
        return copy


def go_bool(value: str | None) -> bool:
    """runtime.Convert_Slice_string_To_bool of a first value: absent, "false" or "0" (any case)
    are false; every other value, the empty string included, is true."""
    return value is not None and value.lower() not in ("false", "0")


def parse_int64(text: str, name: str) -> int:
    """strconv.ParseInt(text, 10, 64) for the parameter `name`; errors are 400s with Go's text."""
    if not _INT64.fullmatch(text):
        raise errors.bad_request(f'strconv.ParseInt: parsing "{text}": invalid syntax for {name}')
    number = int(text)
    if not _INT64_MIN <= number <= _INT64_MAX:
        raise errors.bad_request(f'strconv.ParseInt: parsing "{text}": value out of range for {name}')
    return number


_ESCAPE = re.compile(rb"%([0-9A-Fa-f]{2})")


def _unescape(raw: bytes) -> str | None:
    """url.QueryUnescape: `+` is a space, `%XX` a byte; a malformed escape is an error (None)."""
    raw = raw.replace(b"+", b" ")
    if raw.count(b"%") != len(_ESCAPE.findall(raw)):
        return None
    return _ESCAPE.sub(lambda m: bytes([int(m.group(1), 16)]), raw).decode("utf-8", "replace")


def parse(query_string: bytes) -> Query:
    """A raw query string as Go's url.ParseQuery reads it: `&`-separated pairs; a pair with a
    `;` or a malformed escape is skipped (req.URL.Query() drops what does not parse)."""
    pairs = []
    for segment in query_string.split(b"&"):
        if not segment or b";" in segment:
            continue
        raw_key, _, raw_value = segment.partition(b"=")
        key, value = _unescape(raw_key), _unescape(raw_value)
        if key is not None and value is not None:
            pairs.append((key, value))
    return Query(pairs)


def attach(scope: Scope) -> Query:
    """Parse the scope's query string once and keep it on the scope; later calls return it."""
    state = scope.setdefault("state", {})
    query = state.get(STATE_KEY)
    if not isinstance(query, Query):
        query = parse(scope.get("query_string", b""))
        state[STATE_KEY] = query
    return query


def store(scope: Scope, query: Query) -> None:
    scope.setdefault("state", {})[STATE_KEY] = query


def of(request: HTTPConnection) -> Query:
    """The request's query as the middleware parsed it."""
    return attach(request.scope)
