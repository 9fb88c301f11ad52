"""The bounded memo: answers what was stored, counts hits and misses, starts afresh when full,
and answers nothing in reference mode."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from kubetaint.speed.memo import (
    Memo,
    clear_all,
    counting,
    counting_on,
    format_memo_table,
    memo_table,
    memos,
)


@pytest.fixture
def counted() -> Iterator[None]:
    """Memo lookups counted for the test (as `benchmarks/memo_stats.py` counts them)."""
    before = counting_on()
    counting(True)
    yield
    counting(before)


@pytest.mark.usefixtures("default_mode", "counted")
def test_a_stored_answer_is_found_and_counted_as_a_hit() -> None:
    memo: Memo[str, int] = Memo("tests.memo.stored", limit=4)
    assert memo.get("a") is None
    assert memo.put("a", 1) == 1
    assert memo.get("a") == 1
    assert (memo.hits, memo.misses, len(memo)) == (1, 1, 1)


@pytest.mark.usefixtures("default_mode")
def test_a_full_memo_starts_afresh_and_never_holds_more_than_its_limit() -> None:
    memo: Memo[int, int] = Memo("tests.memo.full", limit=3)
    for key in range(10):
        memo.put(key, key)
        assert len(memo) <= 3
    assert memo.get(9) == 9
    assert memo.get(0) is None


def test_in_reference_mode_a_memo_keeps_nothing(switch_reference_mode: Callable[[bool], None]) -> None:
    switch_reference_mode(False)
    memo: Memo[str, int] = Memo("tests.memo.reference", limit=4)
    memo.put("before", 1)
    switch_reference_mode(True)
    clear_all()
    assert memo.put("a", 1) == 1
    assert memo.get("a") is None
    assert memo.get("before") is None
    assert len(memo) == 0


def test_a_stored_answer_dropped_when_the_reference_mode_is_switched_on(
    switch_reference_mode: Callable[[bool], None],
) -> None:
    switch_reference_mode(False)
    memo: Memo[str, int] = Memo("tests.memo.switched", limit=4)
    memo.put("a", 1)
    switch_reference_mode(True)
    memo.put("b", 2)  # the next store sees the mode and drops everything
    assert memo.get("a") is None
    assert memo.get("b") is None


@pytest.mark.usefixtures("default_mode", "counted")
def test_the_table_sums_the_memos_of_one_name() -> None:
    first: Memo[str, int] = Memo("tests.memo.table", limit=8)
    second: Memo[str, int] = Memo("tests.memo.table", limit=8)
    first.put("a", 1)
    first.get("a")
    second.get("a")
    assert first in memos() and second in memos()
    (row,) = [row for row in memo_table() if row.name == "tests.memo.table"]
    assert (row.instances, row.limit, row.size, row.hits, row.misses) == (2, 8, 1, 1, 1)
    lines = list(format_memo_table([row]))
    assert lines[0].split() == ["memo", "limit", "size", "hits", "misses"]
    assert lines[1].split() == ["tests.memo.table", "8", "1", "1", "1"]


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match=r"tests\.memo\.empty: limit must be positive"):
        Memo("tests.memo.empty", limit=0)


@pytest.mark.usefixtures("default_mode")
def test_lookups_are_counted_only_while_counting_is_on() -> None:
    memo: Memo[str, int] = Memo("tests.memo.counting", limit=4)
    memo.put("a", 1)
    before = counting_on()
    try:
        counting(False)
        assert memo.get("a") == 1 and memo.get("b") is None
        assert (memo.hits, memo.misses) == (0, 0)
        counting(True)  # (also for the memos made before it)
        assert memo.get("a") == 1 and memo.get("b") is None
        assert (memo.hits, memo.misses) == (1, 1)
        made_while_counting: Memo[str, int] = Memo("tests.memo.counting", limit=4)
        assert made_while_counting.get("a") is None and made_while_counting.misses == 1
    finally:
        counting(before)
