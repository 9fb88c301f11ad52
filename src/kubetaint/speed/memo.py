"""Bounded memos with a name and hit/miss counts; none answers in reference mode (`KUBETAINT_REFERENCE=1`).

Every memo of kubetaint is a `Memo`: a dictionary from a key to an answer worked out before,
holding at most `limit` entries (when full, it starts afresh), and listed by `memos()` under its
dotted name (`memo_table()` sums the memos of one name, for `benchmarks/memo_stats.py` and
docs/performance.md). Hits and misses are counted while `counting(True)` is in force (the
statistics tool and tests switch it on): otherwise a lookup is the dictionary's own `get`, with
no Python-level call on the way, since memos sit on the hottest paths. The answer a memo gives must be the one
working it out again would give: a memo is a shortcut, and in reference mode
(`kubetaint.speed.reference`) no memo keeps anything, so every answer is worked out afresh.

The usual shape, for a pure function of a hashable key::

    _VALUES: Memo[str, int] = Memo("api.quantity.value", limit=1 << 12)

    def value(raw: str) -> int:
        found = _VALUES.get(raw)
        if found is None:
            found = _VALUES.put(raw, compute(raw))
        return found

Answers are never None (None means "not remembered"): wrap an answer that may be None in a tuple.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from kubetaint.speed.reference import reference_mode

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

#: Every memo alive (per-run memos go with their run).
_MEMOS: weakref.WeakSet[Memo[Hashable, object]] = weakref.WeakSet()


class _Counting:
    """Whether lookups are counted (`counting`)."""

    on = False


class Memo(Generic[K, V]):
    """A named dictionary of answers, at most `limit` of them, counting hits and misses while
    `counting(True)` is in force.

    The reference mode is read when an answer is stored: in reference mode nothing is stored (and
    what was stored before is dropped), so `get` finds nothing. A test that switches the mode in
    the middle of a process calls `clear_all()` as well."""

    __slots__ = ("__weakref__", "_entries", "get", "hits", "limit", "misses", "name")

    #: The answer remembered for a key, or None: the dictionary's own `get`, or `counted_get`
    #: while lookups are counted.
    get: Callable[[K], V | None]

    def __init__(self, name: str, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"memo {name}: limit must be positive, not {limit}")
        #: dotted name: the module, then what is remembered (`api.quantity.value`)
        self.name = name
        #: entries held at most; storing one more first empties the memo
        self.limit = limit
        #: lookups answered
        self.hits = 0
        #: lookups not answered
        self.misses = 0
        #: (never replaced: `get` may be its bound method)
        self._entries: dict[K, V] = {}
        self.get = self.counted_get if _Counting.on else self._entries.get
        _MEMOS.add(self)  # type: ignore[arg-type]  # (listed whatever its key and answer types)

    def counted_get(self, key: K) -> V | None:
        """The answer remembered for `key`, or None, counted as a hit or a miss."""
        found = self._entries.get(key)
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found

    def put(self, key: K, value: V) -> V:
        """Remember `value` for `key` (not in reference mode) and return it."""
        entries = self._entries
        if reference_mode():
            entries.clear()
        else:
            if len(entries) >= self.limit:
                entries.clear()
            entries[key] = value
        return value

    def discard(self, key: K) -> None:
        """Forget the answer for `key`, if any."""
        self._entries.pop(key, None)

    def clear(self) -> None:
        """Forget every answer (the counts stay)."""
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        """Whether an answer is held for `key` (not counted: for tests and tools)."""
        return key in self._entries

    def __repr__(self) -> str:
        counts = f"size={len(self)}, hits={self.hits}, misses={self.misses}"
        return f"Memo({self.name!r}, limit={self.limit}, {counts})"


@dataclass(frozen=True)
class MemoCounts:
    """The memos of one name, summed (`memo_table`)."""

    name: str
    #: how many memos of this name are alive
    instances: int
    limit: int
    size: int
    hits: int
    misses: int


def memos() -> list[Memo[Hashable, object]]:
    """Every memo alive, by name."""
    return sorted(_MEMOS, key=lambda memo: memo.name)


def memo_table() -> list[MemoCounts]:
    """One row per memo name: the live memos of that name, their entries, hits and misses summed."""
    rows: dict[str, list[int]] = {}
    for memo in memos():
        row = rows.setdefault(memo.name, [0, 0, 0, 0, 0])
        row[0] += 1
        row[1] = max(row[1], memo.limit)
        row[2] += len(memo)
        row[3] += memo.hits
        row[4] += memo.misses
    return [MemoCounts(name, *row) for name, row in rows.items()]


def format_memo_table(rows: list[MemoCounts] | None = None) -> Iterator[str]:
    """Lines of a plain-text table of `memo_table()` (or of `rows`)."""
    rows = memo_table() if rows is None else rows
    width = max([len("memo"), *(len(row.name) for row in rows)])
    yield f"{'memo':<{width}}  {'limit':>8}  {'size':>8}  {'hits':>12}  {'misses':>12}"
    for row in rows:
        yield f"{row.name:<{width}}  {row.limit:>8}  {row.size:>8}  {row.hits:>12}  {row.misses:>12}"


def counting(on: bool) -> None:
    """Count every memo's hits and misses from now on (or stop counting): for
    `benchmarks/memo_stats.py` and tests. Uncounted lookups cost one dictionary lookup each."""
    _Counting.on = on
    for memo in list(_MEMOS):
        memo.get = memo.counted_get if on else memo._entries.get


def counting_on() -> bool:
    """Whether memo lookups are counted (`counting`)."""
    return _Counting.on


def clear_all() -> None:
    """Empty every memo alive (counts stay): for a test that switches the reference mode."""
    for memo in list(_MEMOS):
        memo.clear()
