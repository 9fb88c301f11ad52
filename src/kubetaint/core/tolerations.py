"""Toleration set algebra used by admission (mirrors pkg/util/tolerations/tolerations.go).

`is_superset`, `verify_against_whitelist` and `merge_tolerations` work on Kubernetes JSON toleration
dicts. Go compares structs, so a missing field equals its zero value ("" or nil seconds).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

JSONDict = dict[str, Any]

EXISTS = "Exists"
EQUAL = "Equal"
NO_EXECUTE = "NoExecute"

_STRING_FIELDS = ("key", "operator", "value", "effect")


def _s(toleration: Mapping[str, Any], field: str) -> str:
    value = toleration.get(field)
    return "" if value is None else str(value)


def tolerations_equal(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Go's Semantic.DeepEqual on two Tolerations: every field, zero values filled in."""
    if any(_s(a, f) != _s(b, f) for f in _STRING_FIELDS):
        return False
    return a.get("tolerationSeconds") == b.get("tolerationSeconds")


def is_superset(ss: Mapping[str, Any], t: Mapping[str, Any]) -> bool:
    """isSuperset: whether `ss` tolerates every taint that `t` tolerates (for at least as long)."""
    if tolerations_equal(t, ss):
        return True
    ss_key, ss_op, ss_effect = _s(ss, "key"), _s(ss, "operator"), _s(ss, "effect")
    # An empty key with Exists matches every key and value.
    if _s(t, "key") != ss_key and (ss_key != "" or ss_op != EXISTS):
        return False
    # An empty effect matches every effect.
    if _s(t, "effect") != ss_effect and ss_effect != "":
        return False
    if ss_effect == NO_EXECUTE:
        ss_seconds = ss.get("tolerationSeconds")
        if ss_seconds is not None:
            t_seconds = t.get("tolerationSeconds")
            if t_seconds is None or t_seconds > ss_seconds:
                return False
    if ss_op in (EQUAL, ""):
        # Literally "Equal": an empty operator on `t` is not accepted here, as upstream.
        return _s(t, "operator") == EQUAL and _s(t, "value") == _s(ss, "value")
    # Exists covers everything left; any other operator (Lt, Gt, unknown) covers nothing.
    return ss_op == EXISTS


def verify_against_whitelist(tolerations: Sequence[Mapping[str, Any]], whitelist: Sequence[Any]) -> bool:
    """VerifyAgainstWhitelist: every toleration has a whitelist entry that is a superset of it.

    An empty whitelist or an empty toleration list always passes.
    """
    if not whitelist or not tolerations:
        return True
    return all(any(is_superset(w, t) for w in whitelist) for t in tolerations)


def merge_tolerations(first: Sequence[JSONDict], second: Sequence[JSONDict]) -> list[JSONDict]:
    """MergeTolerations: `first ++ second` in order, dropping every redundant toleration.

    A toleration is dropped when one already kept is a superset of it, or when a later,
    non-identical one is (identical tolerations keep the first occurrence).
    """
    everything = [*first, *second]
    merged: list[JSONDict] = []
    for i, t in enumerate(everything):
        if any(is_superset(kept, t) for kept in merged):
            continue
        if any(not tolerations_equal(t, later) and is_superset(later, t) for later in everything[i + 1 :]):
            continue
        merged.append(t)
    return merged
