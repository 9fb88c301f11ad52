"""Request limits: body size (kube-apiserver's --max-request-bytes-style 3 MiB for JSON bodies),
nesting depth and alias expansion of decoded bodies, the largest list page, and open watches
per client (body limit mirrors apiserver/pkg/endpoints/handlers/rest.go limitedReadBody and
the 3 MiB `MaxRequestBodyBytes` default; the others are kubetaint's own guards, reported as
4xx `Status` answers so that no input can crash the server).
"""

from __future__ import annotations

import json
import math
import threading
from dataclasses import dataclass
from typing import Any

import yaml

from kubetaint.api import errors
from kubetaint.apiserver.query import Query

#: apiserver's DefaultMaxRequestBodyBytes (3 MiB).
MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024
#: Deeper bodies are refused: no Kubernetes object comes close, and Python recursion does.
MAX_BODY_DEPTH = 100
MAX_LIST_PAGE = 10_000
MAX_WATCHES_PER_CLIENT = 1_000


#: kube-apiserver's http.Server ReadHeaderTimeout and IdleTimeout, and its --request-timeout.
READ_HEADER_TIMEOUT = 32.0
IDLE_TIMEOUT = 90.0
REQUEST_TIMEOUT = 60.0


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-request and per-connection bounds (`serving` applies the connection ones);
    `max_connections` None means the open-file limit less a reserve."""

    max_request_body_bytes: int = MAX_REQUEST_BODY_BYTES
    max_list_page: int = MAX_LIST_PAGE
    max_watches_per_client: int = MAX_WATCHES_PER_CLIENT
    read_header_timeout: float = READ_HEADER_TIMEOUT
    request_timeout: float = REQUEST_TIMEOUT
    idle_timeout: float = IDLE_TIMEOUT
    max_connections: int | None = None


def too_large(limit: int) -> errors.StatusError:
    """apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", limit))."""
    return errors.StatusError(413, "RequestEntityTooLarge", f"Request entity too large: limit is {limit}")


def too_many_requests() -> errors.StatusError:
    """apierrors.NewTooManyRequests as the max-in-flight filter answers, with Retry-After 1."""
    return errors.StatusError(
        429, "TooManyRequests", "Too many requests, please try again later.", retry_after_seconds=1
    )


class _JSONLoader(yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader):  # type: ignore[misc]
    """YAML as sigs.k8s.io/yaml reads it for JSON: timestamps stay strings; the keys a mapping
    gives twice are recorded as go-yaml's strict decoding reports them (yaml.v2 decode.go)."""

    def __init__(self, stream: bytes) -> None:
        super().__init__(stream)
        self.duplicates: list[str] = []

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[str] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                if key_node.value in seen:
                    key = json.dumps(key_node.value, ensure_ascii=False)
                    self.duplicates.append(
                        f"line {key_node.start_mark.line + 1}: key {key} already set in map"
                    )
                seen.add(key_node.value)
        return super().construct_mapping(node, deep)  # type: ignore[no-any-return]


_JSONLoader.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_yaml_str)
_SCALARS = (str, bool, int, type(None))


def load_yaml_json_recording(raw: bytes) -> tuple[Any, str | None]:
    """Decode a YAML body into JSON values (checked by `check_decoded`; errors are 400s), with
    go-yaml's strict decoding error for the keys given twice
    (`yaml: unmarshal errors:\n  line 3: key "name" already set in map`), None without any."""
    loader = _JSONLoader(raw)  # a SafeLoader subclass
    try:
        value = loader.get_single_data()
    except (yaml.YAMLError, UnicodeDecodeError, RecursionError) as exc:
        raise errors.bad_request(f"error decoding YAML body: {_one_line(exc)}") from None
    except ValueError as exc:  # an integer of more digits than Python converts (sys.int_info)
        raise errors.bad_request(f"error decoding YAML body: {_one_line(exc)}") from None
    finally:
        loader.dispose()
    repeated = "yaml: unmarshal errors:\n  " + "\n  ".join(loader.duplicates) if loader.duplicates else None
    return check_decoded(value, len(raw), "YAML"), repeated


def _one_line(exc: BaseException) -> str:
    # Too deep a document trips Python's recursion limit or, from PyYAML 6.0.4, the scanner's
    # own nesting limit: either way the answer is the apiserver's depth message.
    if isinstance(exc, RecursionError) or "exceeded maximum nesting depth" in str(exc):
        return _DEPTH_TEXT
    return " ".join(str(exc).split())


_DEPTH_TEXT = f"exceeded max depth of {MAX_BODY_DEPTH} nested objects"


def check_decoded(value: Any, raw_size: int, what: str) -> Any:
    """Refuse values JSON cannot carry (non-string keys, NaN, sets, bytes), bodies nested deeper
    than MAX_BODY_DEPTH, and YAML whose aliases expand to more nodes than the raw text could
    hold (a "billion laughs" document). Returns `value`."""
    budget = raw_size + 1_000
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        budget -= 1
        if budget < 0:
            raise errors.bad_request(f"error decoding {what} body: document contains excessive aliasing")
        if isinstance(item, dict):
            if not all(isinstance(key, str) for key in item):
                raise errors.bad_request(f"error decoding {what} body: object keys must be strings")
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise errors.bad_request(f"error decoding {what} body: unsupported value: {item}")
            continue
        elif isinstance(item, _SCALARS):
            continue
        else:
            raise errors.bad_request(f"error decoding {what} body: unsupported {type(item).__name__} value")
        if depth >= MAX_BODY_DEPTH and children:
            raise errors.bad_request(f"error decoding {what} body: {_DEPTH_TEXT}")
        stack.extend((child, depth + 1) for child in children)
    return value


def cap_limit(query: Query, max_page: int) -> Query:
    """Lower an explicit `limit=N` above `max_page` to it (the client pages on with `continue`);
    lists without a limit stay whole, as clients that do not page expect."""
    value = query.get("limit")
    if value is not None and value.isascii() and value.isdigit() and max_page < int(value) < 2**63:
        return query.replaced("limit", str(max_page))
    return query


class WatchCounter:
    """Open watches per client key, at most `limit` each."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open: dict[str, int] = {}
        self._lock = threading.Lock()

    def count(self, key: str) -> int:
        with self._lock:
            return self._open.get(key, 0)

    def acquire(self, key: str) -> bool:
        """Take a slot for `key`; False when it already has `limit` open watches."""
        with self._lock:
            if self._open.get(key, 0) >= self.limit:
                return False
            self._open[key] = self._open.get(key, 0) + 1
            return True

    def release(self, key: str) -> None:
        with self._lock:
            self._open[key] -= 1
            if not self._open[key]:
                del self._open[key]
