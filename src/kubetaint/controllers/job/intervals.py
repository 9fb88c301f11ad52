"""Ordered index intervals, as pkg/controller/job/indexed_job_utils.go's orderedIntervals: the
`status.completedIndexes`, `status.failedIndexes` and success-policy `succeededIndexes` of an
Indexed Job (`"1,3-5"`), kept as sorted, disjoint `(first, last)` pairs."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

Interval = tuple[int, int]
Intervals = list[Interval]
_ATOI = re.compile(r"[+-]?[0-9]+")


def is_atoi(text: str) -> bool:
    """Whether strconv.Atoi reads `text`: an optionally signed decimal."""
    return _ATOI.fullmatch(text) is not None


def _atoi(text: str) -> int | None:
    return int(text) if is_atoi(text) else None


def parse(text: str, completions: int) -> Intervals:
    """parseIndexesFromString: a corrupted interval is skipped, parsing stops at the first interval
    starting at or past `completions`, and a last index past it is cut to `completions - 1`."""
    if not text:
        return []
    result: Intervals = []
    for part in text.split(","):
        limits = part.split("-")
        first = _atoi(limits[0])
        if first is None:
            continue
        if first >= completions:
            break
        last = first
        if len(limits) > 1:
            parsed = _atoi(limits[1])
            if parsed is None:
                continue
            last = min(parsed, completions - 1)
        if result and result[-1][1] == first - 1:
            result[-1] = (result[-1][0], last)
        else:
            result.append((first, last))
    return result


def merge(ours: Sequence[Interval], theirs: Sequence[Interval]) -> Intervals:
    """orderedIntervals.merge: the union, adjacent intervals joined."""
    result: Intervals = []

    def append(interval: Interval) -> None:
        if not result or interval[0] > result[-1][1] + 1:
            result.append(interval)
        elif result[-1][1] < interval[1]:
            result[-1] = (result[-1][0], interval[1])

    i = j = 0
    while i < len(ours) and j < len(theirs):
        if ours[i][0] < theirs[j][0]:
            append(ours[i])
            i += 1
        else:
            append(theirs[j])
            j += 1
    for interval in ours[i:]:
        append(interval)
    for interval in theirs[j:]:
        append(interval)
    return result


def with_indexes(intervals: Sequence[Interval], indexes: Iterable[int]) -> Intervals:
    """withOrderedIndexes: the intervals with these indexes added."""
    return merge(intervals, [(index, index) for index in sorted(set(indexes))])


def total(intervals: Sequence[Interval]) -> int:
    """The number of indexes the intervals hold."""
    return sum(last - first + 1 for first, last in intervals)


def has(intervals: Sequence[Interval], index: int) -> bool:
    """Whether an interval holds `index` (a binary search, as upstream's)."""
    lo, hi = 0, len(intervals)
    while hi > lo:
        mid = lo + (hi - lo) // 2
        if intervals[mid][1] >= index:
            hi = mid
        else:
            lo = mid + 1
    return hi != len(intervals) and intervals[hi][0] <= index


def to_string(intervals: Sequence[Interval]) -> str:
    """orderedIntervals.String: `a-b` for three or more, `a,b` for two."""
    parts = []
    for first, last in intervals:
        if last == first:
            parts.append(str(first))
        elif last == first + 1:
            parts.append(f"{first},{last}")
        else:
            parts.append(f"{first}-{last}")
    return ",".join(parts)
