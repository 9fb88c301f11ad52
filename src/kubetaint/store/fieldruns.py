"""An informer's field-write runs: the same objects rewritten round after round (bookkeeping for
`.informer`; client-go's indexer has no such thing, it stores every update under its key).

A heartbeat group renews the same leases, in the same order, every renewal interval: each round
is a field-write group (`fieldwrite.FieldWriteGroup`) whose old objects are exactly the new
objects of the round before. Following one into an informer's cache means a dict store per key
per round, on entries a large cluster has long let go cold. A `FieldRuns` lets such a group's
new objects stand for their keys instead: once a group is seen to rewrite the objects of the one
before, its keys are mapped to a *run* (`_FieldRun`) holding the newest objects, and each later
round that rewrites exactly them only swaps the run's list. The cache keeps every key (so its key
set and size are right) with an older object behind a run; `get` looks in the runs first and
everything else that reads or writes the cache `settle`s first: the runs' objects are written to
the cache and the runs are dropped. So every read answers as the plain cache would.
"""

from __future__ import annotations

from itertools import repeat
from operator import is_
from typing import Any

JSON = dict[str, Any]
Key = tuple[str, str]


class _FieldRun:
    """Keys whose newest objects are `news` (in the same order)."""

    __slots__ = ("keys", "news")

    def __init__(self, keys: list[Key], news: list[JSON]) -> None:
        self.keys = keys
        self.news = news


def _same_objects(a: list[JSON], b: list[JSON]) -> bool:
    """The same objects, in the same order (identity)."""
    return len(a) == len(b) and all(map(is_, a, b))


class FieldRuns:
    """The runs of one informer's cache (see the module doc)."""

    #: groups of fewer updates are followed into the cache as they are
    AT_LEAST = 16
    #: how many recent groups' objects are remembered as candidates for a run
    CANDIDATES = 8

    __slots__ = ("_by_first", "_cache", "_candidates", "_of", "at_least")

    def __init__(self, cache: dict[Key, JSON], *, at_least: int | None = None) -> None:
        self._cache = cache
        self.at_least = self.AT_LEAST if at_least is None else at_least
        self._of: dict[Key, tuple[_FieldRun, int]] = {}  # key -> its run and place in it
        self._by_first: dict[int, _FieldRun] = {}  # id of a run's first object -> the run
        #: id of the first object -> the new objects of a recent group not in a run (a run starts
        #: when a group rewrites exactly these)
        self._candidates: dict[int, list[JSON]] = {}

    def __bool__(self) -> bool:
        """Whether any key stands in a run."""
        return bool(self._of)

    def get(self, key: Key) -> JSON | None:
        """The newest object of `key` when it stands in a run, else None (the cache has it)."""
        entry = self._of.get(key)
        return None if entry is None else entry[0].news[entry[1]]

    def rewritten_by(self, olds: list[JSON]) -> _FieldRun | None:
        """The run whose newest objects are exactly `olds` (a group's old objects), if any."""
        if not self._by_first or not olds:
            return None
        run = self._by_first.get(id(olds[0]))
        if run is None or (run.news is not olds and not _same_objects(run.news, olds)):
            return None
        return run

    def advance(self, run: _FieldRun, news: list[JSON]) -> None:
        """`run`'s objects were rewritten as `news` (the same keys, in order)."""
        by_first = self._by_first
        del by_first[id(run.news[0])]
        run.news = news
        by_first[id(news[0])] = run

    def settle_any_of(self, keys: list[Key]) -> None:
        """`settle` when any of `keys` stands in a run."""
        of = self._of
        if of and any(map(of.__contains__, keys)):
            self.settle()

    def settle(self) -> None:
        """Write every run's objects to the cache and drop the runs."""
        if not self._of:
            return
        cache = self._cache
        for run in self._by_first.values():
            cache.update(zip(run.keys, run.news, strict=True))
        self._of.clear()
        self._by_first.clear()

    def start(self, keys: list[Key], olds: list[JSON], news: list[JSON]) -> bool:
        """A group whose keys stand in no run replaced `olds` (as cached) by `news`: True when it
        rewrote exactly the objects of a recent group, and `news` now stand for `keys` in a new
        run (the cache still holding `olds`); False: the caller writes `news` to the cache."""
        candidates = self._candidates
        if len(news) < self.at_least:
            return False
        earlier = candidates.pop(id(olds[0]), None)
        if earlier is None or not _same_objects(earlier, olds):
            candidates[id(news[0])] = news
            if len(candidates) > self.CANDIDATES:
                del candidates[next(iter(candidates))]
            return False
        run = _FieldRun(keys, news)
        self._of.update(zip(keys, zip(repeat(run), range(len(keys))), strict=False))
        self._by_first[id(news[0])] = run
        return True
