"""Remembers the checks of stored objects' unchanged parts by identity (off with `KUBETAINT_REFERENCE=1`).

An update usually carries parts of the stored object unchanged, as the very same dicts: a kubelet
renewing its lease keeps the lease's metadata, a status update keeps the pod's metadata and spec.
Stored objects are read-only (the store contract), so such a part validates the same way every
time: the result is computed once and reused while the part stays stored. Only parts that ARE
(by identity) the stored object's own are looked up, never a caller's fresh dicts, which a caller
may still change; every validation that does the work records its result afresh, so an entry
always describes its part as it was last validated, which is how it was stored.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from kubetaint.api.validation.field import FieldError
from kubetaint.speed.memo import Memo

#: Entries kept before the memo starts afresh (bounds the stored parts it keeps alive).
LIMIT = 1 << 18


class PartMemo:
    """id(part) -> (part, key, errors); `part` is held so its id cannot be reused meanwhile."""

    def __init__(self, limit: int = LIMIT) -> None:
        self._entries: Memo[int, tuple[Any, Hashable, tuple[FieldError, ...]]] = Memo(
            "api.validation.memo.stored_parts", limit
        )

    def errors(self, part: Any, key: Hashable, compute: Callable[[], list[FieldError]]) -> list[FieldError]:
        """compute() for `part` (a read-only part of a stored object) under `key`, remembered."""
        entry = self._entries.get(id(part))
        if entry is not None and entry[0] is part and entry[1] == key:
            return list(entry[2])
        result = compute()
        self._entries.put(id(part), (part, key, tuple(result)))
        return result

    def put(self, part: Any, key: Hashable, errors: list[FieldError]) -> None:
        """Remember `errors` for `part` under `key` (just computed for that very object)."""
        self._entries.put(id(part), (part, key, tuple(errors)))

    def clear(self) -> None:
        self._entries.clear()


STORED_PARTS = PartMemo()


def stored_part(obj: Any, old: Any, name: str) -> Any | None:
    """obj[name] when it is the very same object as old[name] (both present), else None."""
    if old is None or not hasattr(old, "get") or not hasattr(obj, "get"):
        return None
    part = obj.get(name)
    return part if part is not None and part is old.get(name) else None
