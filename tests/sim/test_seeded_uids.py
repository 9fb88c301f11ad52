"""Seeded uids are RFC 4122 version-4 uids, exactly uuid.UUID's for the same random bits."""

from __future__ import annotations

import random
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubetaint.sim.cluster import SeededUidStream, seeded_uids


class Bits(random.Random):
    """A Random whose getrandbits returns the given values in turn."""

    def __init__(self, values: list[int]) -> None:
        super().__init__(0)
        self.values = list(values)

    def getrandbits(self, k: int) -> int:
        assert k == 128
        return self.values.pop(0)


@pytest.mark.parametrize(
    "bits",
    [
        pytest.param(0, id="all bits clear"),
        pytest.param((1 << 128) - 1, id="all bits set"),
        pytest.param(0x0123456789ABCDEF0123456789ABCDEF, id="every hex digit"),
    ],
)
def test_a_uid_is_uuid4_of_the_drawn_bits(bits: int) -> None:
    assert seeded_uids(Bits([bits]))() == str(uuid.UUID(int=bits, version=4))


@given(st.lists(st.integers(min_value=0, max_value=(1 << 128) - 1), min_size=1, max_size=20))
def test_uids_match_uuid4_for_any_bits(values: list[int]) -> None:
    factory = seeded_uids(Bits(values))
    assert [factory() for _ in values] == [str(uuid.UUID(int=v, version=4)) for v in values]


def test_the_same_seed_gives_the_same_uids() -> None:
    a, b = seeded_uids(random.Random(9)), seeded_uids(random.Random(9))
    assert [a() for _ in range(5)] == [b() for _ in range(5)]


@pytest.mark.parametrize(
    ("seed", "batch", "count"),
    [
        pytest.param(9, 1, 5, id="a batch of one uid draws as each call did"),
        pytest.param(9, 7, 50, id="batches not dividing the count cross their boundaries in order"),
        pytest.param(2**63 + 11, 1024, 3000, id="the default batch over a 64-bit seed"),
        pytest.param(0, 3, 3, id="exactly one batch used up"),
    ],
)
def test_the_stream_gives_the_uids_of_one_draw_per_uid(seed: int, batch: int, count: int) -> None:
    one_by_one = seeded_uids(random.Random(seed))
    stream = SeededUidStream(seed, batch)
    assert [stream() for _ in range(count)] == [one_by_one() for _ in range(count)]


@given(st.integers(min_value=0, max_value=(1 << 64) - 1), st.integers(1, 40), st.integers(1, 120))
def test_the_stream_equals_seeded_uids_for_any_seed_and_batch(seed: int, batch: int, count: int) -> None:
    one_by_one = seeded_uids(random.Random(seed))
    stream = SeededUidStream(seed, batch)
    assert [stream() for _ in range(count)] == [one_by_one() for _ in range(count)]


def test_a_wide_draw_is_the_narrow_draws_lowest_first() -> None:
    # the CPython fact the stream rests on
    wide = random.Random(5).getrandbits(128 * 4)
    narrow = random.Random(5)
    assert [(wide >> (128 * i)) & ((1 << 128) - 1) for i in range(4)] == [
        narrow.getrandbits(128) for _ in range(4)
    ]
