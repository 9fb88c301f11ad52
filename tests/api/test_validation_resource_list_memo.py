"""Node capacity/allocatable checks are remembered by content: each result must be what checking
afresh gives, for lists that look alike but differ in a value, a type or the field path."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.api.validation import quantities

CAPACITY = {"cpu": "4", "memory": "16Gi", "pods": "110"}


@pytest.mark.parametrize(
    ("resources", "path"),
    [
        pytest.param(dict(CAPACITY), "status.capacity", id="the same capacity again"),
        pytest.param(dict(CAPACITY), "status.allocatable", id="the same list under another field"),
        pytest.param({**CAPACITY, "pods": "110.5"}, "status.capacity", id="a fractional pod count"),
        pytest.param({**CAPACITY, "cpu": "-1"}, "status.capacity", id="a negative quantity"),
        pytest.param({**CAPACITY, "cpu": "four"}, "status.capacity", id="a malformed quantity"),
        pytest.param({**CAPACITY, "pods": 110}, "status.capacity", id="a number instead of a string"),
        pytest.param({**CAPACITY, "pods": True}, "status.capacity", id="a boolean instead of a quantity"),
        pytest.param(
            {"memory": "16Gi", "cpu": "4", "pods": "110"}, "status.capacity", id="another key order"
        ),
        pytest.param({}, "status.capacity", id="an empty list"),
    ],
)
def test_a_remembered_resource_list_check_gives_what_checking_afresh_gives(
    resources: dict[str, Any], path: str
) -> None:
    quantities._RESOURCE_LISTS.clear()
    assert quantities.validate_resource_list(CAPACITY, "status.capacity") == []
    expected = quantities._validate_resource_list(resources, path)
    assert quantities.validate_resource_list(resources, path) == expected
    assert quantities.validate_resource_list(dict(resources), path) == expected


def test_results_are_copies_a_caller_may_extend() -> None:
    quantities._RESOURCE_LISTS.clear()
    first = quantities.validate_resource_list({"cpu": "-1"}, "status.capacity")
    first.append(first[0])
    assert len(quantities.validate_resource_list({"cpu": "-1"}, "status.capacity")) == 1


def test_the_memo_starts_afresh_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    quantities._RESOURCE_LISTS.clear()
    monkeypatch.setattr(quantities._RESOURCE_LISTS, "limit", 2)
    for n in range(5):
        assert quantities.validate_resource_list({"pods": f"{n}.5"}, "status.capacity") != []
    assert len(quantities._RESOURCE_LISTS) <= 2
