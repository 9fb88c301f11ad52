"""Seeded uids are RFC 4122 version-4 uids, exactly uuid.UUID's for the same random bits."""

from __future__ import annotations

import random
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubetaint.sim.cluster import seeded_uids


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
