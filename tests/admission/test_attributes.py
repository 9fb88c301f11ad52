"""Attributes: one admission request, built for every write (a plain slotted class): positional
or keyword fields with upstream's names, value equality, an unknown operation refused."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.admission import CREATE, DELETE, UPDATE, Attributes

POD: dict[str, Any] = {"metadata": {"name": "p"}}


@pytest.mark.parametrize(
    ("built", "expected"),
    [
        pytest.param(
            Attributes(CREATE, "pods"),
            {
                "object": None,
                "old_object": None,
                "namespace": "",
                "name": "",
                "subresource": "",
                "dry_run": False,
            },
            id="defaults for every optional field",
        ),
        pytest.param(
            Attributes(UPDATE, "pods", POD, POD, "ns", "p", "status", True),
            {
                "object": POD,
                "old_object": POD,
                "namespace": "ns",
                "name": "p",
                "subresource": "status",
                "dry_run": True,
            },
            id="every field given by position",
        ),
        pytest.param(
            Attributes(operation=DELETE, resource="pods", old_object=POD, namespace="ns", name="p"),
            {
                "object": None,
                "old_object": POD,
                "namespace": "ns",
                "name": "p",
                "subresource": "",
                "dry_run": False,
            },
            id="fields given by name",
        ),
    ],
)
def test_fields_are_kept_as_given(built: Attributes, expected: dict[str, Any]) -> None:
    assert {name: getattr(built, name) for name in expected} == expected


def test_with_object_changes_only_the_object() -> None:
    attrs = Attributes(UPDATE, "pods", POD, {"old": 1}, "ns", "p", "", True)
    changed = attrs.with_object({"new": 1})
    assert changed == Attributes(UPDATE, "pods", {"new": 1}, {"old": 1}, "ns", "p", "", True)
    assert attrs.object is POD and changed != attrs


def test_equal_requests_are_equal_and_shown_by_field() -> None:
    assert Attributes(CREATE, "pods", POD) == Attributes(CREATE, "pods", {"metadata": {"name": "p"}})
    assert Attributes(CREATE, "pods") != Attributes(CREATE, "nodes")
    assert Attributes(CREATE, "pods") != ("CREATE", "pods")
    assert repr(Attributes(CREATE, "pods", name="p")) == (
        "Attributes(operation='CREATE', resource='pods', object=None, old_object=None, namespace='', "
        "name='p', subresource='', dry_run=False, user=None)"
    )


@pytest.mark.parametrize(
    "operation", ["create", "PATCH", ""], ids=["lower case", "not an operation", "empty"]
)
def test_an_unknown_operation_is_refused(operation: str) -> None:
    with pytest.raises(ValueError, match="unknown admission operation"):
        Attributes(operation, "pods")
