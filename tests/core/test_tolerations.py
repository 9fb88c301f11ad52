"""pkg/util/tolerations tests ported as data: TestIsSuperset, TestVerifyAgainstWhitelist,
TestMergeTolerations, and TestFuzzed's two laws as hypothesis properties."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.core.tolerations import (
    is_superset,
    merge_tolerations,
    tolerations_equal,
    verify_against_whitelist,
)

TOLERATIONS: dict[str, dict[str, Any]] = {
    "all": {"operator": "Exists"},
    "all-nosched": {"operator": "Exists", "effect": "NoSchedule"},
    "all-noexec": {"operator": "Exists", "effect": "NoExecute"},
    "foo": {"key": "foo", "operator": "Exists"},
    "foo-bar": {"key": "foo", "operator": "Equal", "value": "bar"},
    "foo-nosched": {"key": "foo", "operator": "Exists", "effect": "NoSchedule"},
    "foo-bar-nosched": {"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"},
    "foo-baz-nosched": {"key": "foo", "operator": "Equal", "value": "baz", "effect": "NoSchedule"},
    "faz-nosched": {"key": "faz", "operator": "Exists", "effect": "NoSchedule"},
    "faz-baz-nosched": {"key": "faz", "operator": "Equal", "value": "baz", "effect": "NoSchedule"},
    "foo-prefnosched": {"key": "foo", "operator": "Exists", "effect": "PreferNoSchedule"},
    "foo-noexec": {"key": "foo", "operator": "Exists", "effect": "NoExecute"},
    "foo-bar-noexec": {"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoExecute"},
    "foo-noexec-10": {"key": "foo", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10},
    "foo-noexec-0": {"key": "foo", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 0},
    "foo-bar-noexec-10": {
        "key": "foo",
        "operator": "Equal",
        "value": "bar",
        "effect": "NoExecute",
        "tolerationSeconds": 10,
    },
}


def tols(*names: str) -> list[dict[str, Any]]:
    # An unknown name is Go's zero-value toleration, as upstream's map lookup gives.
    return [dict(TOLERATIONS.get(name, {})) for name in names]


SUPERSETS = [
    ("all", [n for n in TOLERATIONS if n != "all"], "the match-everything toleration covers every other one"),
    ("all-nosched", ["foo-nosched", "foo-bar-nosched", "foo-baz-nosched", "faz-nosched", "faz-baz-nosched"],
     "an any-key NoSchedule toleration covers every NoSchedule toleration"),
    ("all-noexec", ["foo-noexec", "foo-bar-noexec", "foo-noexec-10", "foo-noexec-0", "foo-bar-noexec-10"],
     "an any-key NoExecute toleration covers every NoExecute toleration whatever its seconds"),
    ("foo", ["foo-bar", "foo-nosched", "foo-bar-nosched", "foo-baz-nosched", "foo-prefnosched", "foo-noexec",
             "foo-bar-noexec", "foo-noexec-10", "foo-noexec-0", "foo-bar-noexec-10"],
     "key Exists with no effect covers every toleration of that key"),
    ("foo-bar", ["foo-bar-nosched", "foo-bar-noexec", "foo-bar-noexec-10"],
     "key=value with no effect covers that key=value for every effect"),
    ("foo-nosched", ["foo-bar-nosched", "foo-baz-nosched"], "key Exists NoSchedule covers any value of it"),
    ("foo-bar-nosched", [], "a fully specified toleration covers only itself"),
    ("faz-nosched", ["faz-baz-nosched"], "Exists on another key covers only that key's values"),
    ("faz-baz-nosched", [], "a fully specified toleration on another key covers only itself"),
    ("foo-prenosched", [], "an unknown name is the empty toleration, which covers nothing (upstream typo)"),
    ("foo-noexec", ["foo-bar-noexec", "foo-noexec-10", "foo-noexec-0", "foo-bar-noexec-10"],
     "NoExecute without seconds covers every NoExecute toleration of that key"),
    ("foo-bar-noexec", ["foo-bar-noexec-10"], "forever covers a bounded time for the same key=value"),
    ("foo-noexec-10", ["foo-noexec-0", "foo-bar-noexec-10"], "10 seconds covers 0 and 10 seconds, not forever"),
    ("foo-noexec-0", [], "zero seconds covers only itself"),
    ("foo-bar-noexec-10", [], "a bounded key=value NoExecute toleration covers only itself"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "covered"), [pytest.param(n, c, id=i) for n, c, i in SUPERSETS])
def test_is_superset(name: str, covered: list[str]) -> None:
    (superset,) = tols(name)
    for other, toleration in TOLERATIONS.items():
        expected = other == name or other in covered
        assert is_superset(superset, toleration) is expected, f"{name} ⊇ {other}"


def test_is_superset_requires_a_literal_equal_operator_on_the_covered_toleration() -> None:
    assert not is_superset(
        {"key": "foo", "value": "bar"}, {"key": "foo", "value": "bar", "effect": "NoSchedule"}
    )
    assert is_superset({"key": "foo", "value": "bar"}, {"key": "foo", "operator": "Equal", "value": "bar"})


def test_is_superset_never_holds_for_comparison_operators() -> None:
    lt = {"key": "foo", "operator": "Lt", "value": "5", "effect": "NoSchedule"}
    assert is_superset(lt, dict(lt))  # identical tolerations are always covered
    assert not is_superset(lt, {"key": "foo", "operator": "Lt", "value": "3", "effect": "NoSchedule"})


@pytest.mark.parametrize(
    ("tolerations", "whitelist", "expected"),
    [
        pytest.param(["foo-bar-nosched", "foo-baz-nosched"], ["foo-bar-nosched", "foo-baz-nosched"], True,
                     id="input equal to the whitelist passes"),
        pytest.param(["foo-bar-nosched", "foo-bar-nosched"], ["foo-bar-nosched", "foo-baz-nosched"], True,
                     id="duplicate input tolerations are allowed"),
        pytest.param(["foo-bar-nosched", "foo-bar-nosched"], ["all"], True,
                     id="the match-everything whitelist entry allows everything"),
        pytest.param(["foo-bar-nosched", "foo-bar-nosched"], ["foo-baz-nosched"], False,
                     id="duplicate input not in the whitelist is forbidden"),
        pytest.param(["foo-bar-nosched", "foo-baz-nosched"], ["foo-baz-nosched"], False,
                     id="a value mismatch is forbidden"),
        pytest.param(["foo-bar-nosched"], ["foo-baz-nosched"], False,
                     id="an input missing from the whitelist is forbidden"),
        pytest.param(["foo-bar"], ["foo-nosched"], False, id="disjoint sets are forbidden"),
        pytest.param(["foo-bar"], [], True, id="an empty whitelist allows everything"),
        pytest.param([], ["foo-bar"], True, id="no tolerations always pass"),
    ],
)  # fmt: skip
def test_verify_against_whitelist(tolerations: list[str], whitelist: list[str], expected: bool) -> None:
    assert verify_against_whitelist(tols(*tolerations), tols(*whitelist)) is expected


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        pytest.param(["foo-bar-nosched", "faz-baz-nosched", "foo-noexec-10"], ["foo-prefnosched", "foo-baz-nosched"],
                     ["foo-bar-nosched", "faz-baz-nosched", "foo-noexec-10", "foo-prefnosched", "foo-baz-nosched"],
                     id="disjoint lists are concatenated in order"),
        pytest.param(["foo-bar-nosched", "faz-baz-nosched", "foo-noexec-10"],
                     ["foo-bar-nosched", "faz-baz-nosched", "foo-noexec-10"],
                     ["foo-bar-nosched", "faz-baz-nosched", "foo-noexec-10"],
                     id="duplicates keep the first occurrence"),
        pytest.param(["foo-bar-nosched", "foo-baz-nosched"], ["foo-nosched", "faz-baz-nosched"],
                     ["foo-nosched", "faz-baz-nosched"], id="tolerations covered by a later superset are dropped"),
        pytest.param(["foo-bar-nosched", "foo-baz-nosched", "foo-noexec-10"], ["all"], ["all"],
                     id="merging in the match-everything toleration leaves only it"),
        pytest.param(["all"], ["foo-bar-nosched", "foo-baz-nosched", "foo-noexec-10"], ["all"],
                     id="merging into the match-everything toleration leaves only it"),
    ],
)  # fmt: skip
def test_merge_tolerations(a: list[str], b: list[str], expected: list[str]) -> None:
    assert merge_tolerations(tols(*a), tols(*b)) == tols(*expected)


def test_merge_tolerations_does_not_modify_its_inputs() -> None:
    a, b = tols("foo-bar-nosched"), tols("foo-nosched")
    merge_tolerations(a, b)
    assert a == tols("foo-bar-nosched") and b == tols("foo-nosched")


def test_tolerations_equal_treats_missing_fields_as_zero_values() -> None:
    assert tolerations_equal({"key": "a", "value": ""}, {"key": "a"})
    assert not tolerations_equal({"key": "a", "tolerationSeconds": 0}, {"key": "a"})


# Upstream's fuzz generator: a small key/value space to encourage collisions, only valid tolerations.
def _toleration() -> st.SearchStrategy[dict[str, Any]]:
    effects = st.sampled_from(["", "NoExecute", "NoSchedule", "PreferNoSchedule"])

    def build(effect: str, key: str, exists: bool, value: str, seconds: int | None) -> dict[str, Any]:
        tol: dict[str, Any] = {"key": key, "operator": "Exists" if exists else "Equal", "effect": effect}
        if not exists:
            tol["value"] = value
        if effect == "NoExecute" and seconds is not None:
            tol["tolerationSeconds"] = seconds
        return tol

    specific = st.builds(
        build,
        effects,
        st.integers(1, 6).map(lambda n: "a" * n),
        st.booleans(),
        st.integers(1, 6).map(lambda n: "b" * n),
        st.none() | st.integers(0, 9),
    )
    return st.one_of(st.just({"operator": "Exists"}), specific)


TOLERATION_LISTS = st.lists(_toleration(), max_size=9)


@settings(max_examples=200, deadline=None)
@given(TOLERATION_LISTS, TOLERATION_LISTS, _toleration())
def test_verify_against_whitelist_is_exactly_containment(
    tolerations: list[dict[str, Any]], whitelist: list[dict[str, Any]], extra: dict[str, Any]
) -> None:
    whitelist = [*whitelist, extra]  # non-empty
    contained = all(any(is_superset(w, t) for w in whitelist) for t in tolerations)
    assert verify_against_whitelist(tolerations, whitelist) is contained


@settings(max_examples=200, deadline=None)
@given(TOLERATION_LISTS, TOLERATION_LISTS)
def test_merge_keeps_every_toleration_covered(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> None:
    merged = merge_tolerations(a, b)
    for toleration in [*a, *b]:
        assert any(is_superset(kept, toleration) for kept in merged)
