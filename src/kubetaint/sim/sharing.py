"""Shares equal spec parts of a parsed scenario's pods so memos find them (off with `KUBETAINT_REFERENCE=1`).

Equal parts of the pods of a scenario text are made one shared object (bookkeeping only).

A scenario given as data keeps what its author shared shared (`copy_document` copies a shared
part once), so the pods stamped from one template carry the very same container lists: the load's
memos find them by identity (`sim.decoding.DecodeMemo`, `registry.bulk.PodAdmissionMemo`, the
request defaulting memo) and the store holds one copy. A text parsed from JSON has a fresh object
for every value. `PartSharing` gives the pods of a parsed text what the data form gives: each list
or object value of a Pod's `spec` equal to one met before is replaced by that one. Values are
compared by their `marshal` serialization (format 2: no back-references), which tells every
value and type a JSON parser makes apart (1, 1.0, True and "1"; dict key order included) and
which equal bytes only equal values have; a value marshal cannot write (a YAML timestamp) is
compared by repr, which tells those apart as well.

Nothing reads an object's identity but those memos, and the parsed document is the scenario's
own (no caller holds it): the objects stored and every message stay the same.
"""

from __future__ import annotations

import marshal
from typing import Any

from kubetaint.speed.memo import Memo

#: Distinct parts kept before the table starts afresh.
LIMIT = 1 << 12


class PartSharing:
    """Shares equal list and object values of Pod specs across the objects given to `share`."""

    def __init__(self, limit: int = LIMIT) -> None:
        self._parts: Memo[tuple[type, bytes | str], Any] = Memo("sim.sharing.parts", limit)

    def share(self, obj: Any) -> None:
        """Replace each list or dict value of `obj`'s spec (a plain-dict Pod's) by an equal one
        met before, else remember it."""
        if type(obj) is not dict or obj.get("kind") != "Pod":
            return
        spec = obj.get("spec")
        if type(spec) is not dict:
            return
        parts = self._parts
        for key, value in spec.items():
            kind = type(value)
            if kind is not list and kind is not dict:
                continue
            try:
                part_key: tuple[type, bytes | str] = (kind, marshal.dumps(value, 2))
            except ValueError:  # (bytes and str keys never meet)
                part_key = (kind, repr(value))
            known = parts.get(part_key)
            if known is None:
                parts.put(part_key, value)
            elif known is not value:
                spec[key] = known  # (a value replaced: the keys stay as they are)
