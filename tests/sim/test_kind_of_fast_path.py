"""kind_of answers a manifest with a known kind string and its apiVersion at once: whatever the
manifest, the answer (a Kind, or the KindError message) is that of the general checks."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.sim.kinds import _BY_KIND, KINDS, KindError, kind_of


def general(obj: dict[str, Any]) -> Any:
    """The reference: kind_of's checks, without the fast path."""
    kind_name = str(obj.get("kind") or "")
    api_version = str(obj.get("apiVersion") or "")
    if not kind_name:
        return "kind: Required value: kind not set"
    if not api_version:
        return "apiVersion: Required value: apiVersion not set"
    kind = _BY_KIND.get(kind_name)
    if kind is None or kind.api_version != api_version:
        supported = ", ".join(f"{k.api_version}/{k.kind}" for k in KINDS)
        return f'no kind "{kind_name}" is registered for version "{api_version}" (supported: {supported})'
    return kind


def answer(obj: dict[str, Any]) -> Any:
    try:
        return kind_of(obj)
    except KindError as err:
        return str(err)


class Named(str):
    """A str subclass (the general path's str() gives its plain value)."""

    __slots__ = ()


VALUES = (
    st.sampled_from([k.kind for k in KINDS] + [k.api_version for k in KINDS] + ["", "pod", "Foo", "v2"])
    | st.none()
    | st.integers(0, 2)
    | st.booleans()
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["kind", "apiVersion", "metadata"]), VALUES))
def test_kind_of_is_the_general_checks(obj: dict[str, Any]) -> None:
    assert answer(obj) == general(obj)


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param({"kind": "Pod", "apiVersion": "v1"}, id="a pod"),
        pytest.param({"kind": "Pod", "apiVersion": "apps/v1"}, id="a known kind of another version"),
        pytest.param({"kind": Named("Pod"), "apiVersion": "v1"}, id="a kind given as a str subclass"),
        pytest.param({"kind": "Pod", "apiVersion": Named("v1")}, id="an apiVersion given as a str subclass"),
        pytest.param({"kind": "ReplicaSet", "apiVersion": "apps/v1"}, id="a replica set"),
        pytest.param({"kind": "ReplicaSet"}, id="no apiVersion"),
    ],
)
def test_kind_of_table(obj: dict[str, Any]) -> None:
    assert answer(obj) == general(obj)
